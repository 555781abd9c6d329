// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "ghostswap_store": what goes into a slot comes back out, for
 * every kind of page and every compression algorithm the kernel offers, and
 * the store's statistics say exactly what it holds.
 */
#include <kunit/test.h>
#include <linux/crypto.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/string.h>
#include "gs_comp.h"
#include "gs_compat.h"
#include "gs_store.h"
#include "gs_kunit.h"

static const char *const gs_store_algs[] = {
	"lzo", "lzo-rle", "lz4", "lz4hc", "zstd", "deflate", "842",
};

static void gs_store_alg_desc(const char *const *alg, char *desc)
{
	strscpy(desc, *alg, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(gs_store_alg, gs_store_algs, gs_store_alg_desc);

static const char *gs_param_alg(struct kunit *test)
{
	const char *alg = *(const char **)test->param_value;

	if (!gs_comp_available(alg))
		kunit_skip(test, "%s not in this kernel", alg);
	return alg;
}

/* Compressed size of @src by a transform of our own, for comparison. */
static int gs_reference_len(struct kunit *test, const char *alg,
			    const void *src)
{
	struct gs_acomp_bufs bufs;
	struct crypto_acomp *tfm;
	struct acomp_req *req;
	DECLARE_CRYPTO_WAIT(wait);
	void *dst;
	int ret;

	dst = kunit_kmalloc(test, PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, dst);
	tfm = crypto_alloc_acomp(alg, 0, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(tfm));
	req = acomp_request_alloc(tfm);
	KUNIT_ASSERT_NOT_NULL(test, req);
	acomp_request_set_callback(req, CRYPTO_TFM_REQ_MAY_BACKLOG,
				   crypto_req_done, &wait);
	gs_acomp_set_bufs(req, &bufs, src, PAGE_SIZE, dst, PAGE_SIZE);
	ret = crypto_wait_req(crypto_acomp_compress(req), &wait);
	if (!ret)
		ret = req->dlen;
	acomp_request_free(req);
	crypto_free_acomp(tfm);
	return ret;
}

static void gs_expect_roundtrip(struct kunit *test, struct gs_store *s,
				u64 slot, const void *src, enum gs_kind kind)
{
	void *dst = kunit_kmalloc(test, PAGE_SIZE, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, dst);
	KUNIT_ASSERT_EQ(test, gs_store_write(s, slot, src, GFP_KERNEL), 0);
	KUNIT_EXPECT_EQ(test, gs_store_kind(s, slot, NULL), kind);
	memset(dst, 0xcc, PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, gs_store_read(s, slot, dst), 0);
	KUNIT_EXPECT_MEMEQ(test, dst, src, PAGE_SIZE);
}

/* Every kind of page, one algorithm per run, with exact statistics. */
static void gs_store_kinds(struct kunit *test)
{
	const char *alg = gs_param_alg(test);
	struct gs_store *s = gs_kunit_store(test, alg, 1ULL << 20);
	void *zero = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	void *same = gs_kunit_same(test, 0xfedcba9876543210UL);
	void *text = gs_kunit_text(test, 1);
	void *rnd = gs_kunit_random(test);
	unsigned int len;
	int ref;

	KUNIT_ASSERT_NOT_NULL(test, zero);
	KUNIT_EXPECT_STREQ(test, gs_store_algorithm(s), alg);
	gs_expect_roundtrip(test, s, 0, zero, GS_KIND_SAME);
	gs_expect_roundtrip(test, s, 1, same, GS_KIND_SAME);
	gs_expect_roundtrip(test, s, 2, text, GS_KIND_COMPRESSED);
	gs_expect_roundtrip(test, s, 3, rnd, GS_KIND_RAW);

	/* The stored length is what the algorithm makes of the page. */
	ref = gs_reference_len(test, alg, text);
	KUNIT_ASSERT_GT(test, ref, 0);
	kunit_info(test, "%s: text page %d bytes, huge class %zu\n", alg, ref,
		   s->huge_size);
	KUNIT_EXPECT_EQ(test, gs_store_kind(s, 2, &len), GS_KIND_COMPRESSED);
	KUNIT_EXPECT_EQ(test, len, ref);
	KUNIT_EXPECT_LT(test, len, (unsigned int)s->huge_size);
	KUNIT_EXPECT_EQ(test, gs_store_kind(s, 3, &len), GS_KIND_RAW);
	KUNIT_EXPECT_EQ(test, len, PAGE_SIZE);

	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_SLOTS_USED), 4);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_SAME_PAGES), 2);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_COMP_PAGES), 1);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_HUGE_PAGES), 1);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_HUGE_PAGES_SINCE), 1);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_COMPR_BYTES),
			ref + PAGE_SIZE);
	KUNIT_EXPECT_GE(test, gs_store_pool_pages(s), 2);

	/* An unwritten slot reads as zeroes. */
	gs_expect_roundtrip(test, s, 100, zero, GS_KIND_SAME);
	gs_store_free(s, 100);
	KUNIT_EXPECT_EQ(test, gs_store_kind(s, 100, NULL), GS_KIND_EMPTY);
}

/* Overwrites replace the old object; frees give everything back. */
static void gs_store_overwrite_free(struct kunit *test)
{
	const char *alg = gs_param_alg(test);
	struct gs_store *s = gs_kunit_store(test, alg, 4096);
	void *text = gs_kunit_text(test, 2);
	void *text2 = gs_kunit_text(test, 3);
	void *rnd = gs_kunit_random(test);
	void *same = gs_kunit_same(test, 7);
	unsigned int len;

	gs_expect_roundtrip(test, s, 5, text, GS_KIND_COMPRESSED);
	gs_expect_roundtrip(test, s, 5, rnd, GS_KIND_RAW);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_COMP_PAGES), 0);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_COMPR_BYTES),
			PAGE_SIZE);
	gs_expect_roundtrip(test, s, 5, text2, GS_KIND_COMPRESSED);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_HUGE_PAGES), 0);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_HUGE_PAGES_SINCE), 1);
	gs_store_kind(s, 5, &len);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_COMPR_BYTES), len);
	gs_expect_roundtrip(test, s, 5, same, GS_KIND_SAME);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_COMPR_BYTES), 0);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_SLOTS_USED), 1);

	gs_expect_roundtrip(test, s, 6, text, GS_KIND_COMPRESSED);
	KUNIT_EXPECT_EQ(test, gs_store_free_range(s, 0, 4096), 2);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_SLOTS_USED), 0);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_SAME_PAGES), 0);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_COMP_PAGES), 0);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_COMPR_BYTES), 0);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->stats.clusters), 0);
	/* zsmalloc frees a zspage as soon as its last object goes. */
	KUNIT_EXPECT_EQ(test, gs_store_pool_pages(s), 0);
}

/* Past mem_limit writes fail with -ENOMEM; what was stored stays intact. */
static void gs_store_mem_limit(struct kunit *test)
{
	struct gs_store *s = gs_kunit_store(test, "lz4", 4096);
	void *same = gs_kunit_same(test, 0x1234);
	void *dst = kunit_kmalloc(test, PAGE_SIZE, GFP_KERNEL);
	void **pages;
	int i, ret = 0, stored;

	KUNIT_ASSERT_NOT_NULL(test, dst);
	pages = kunit_kcalloc(test, 64, sizeof(*pages), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pages);
	s->limit_pages = 8;
	for (i = 0; i < 64; i++) {
		pages[i] = gs_kunit_random(test);
		ret = gs_store_write(s, i, pages[i], GFP_KERNEL);
		if (ret)
			break;
	}
	stored = i;
	KUNIT_EXPECT_EQ(test, ret, -ENOMEM);
	/* One pool page per RAW object. */
	KUNIT_ASSERT_EQ(test, stored, 8);
	KUNIT_EXPECT_LE(test, gs_store_pool_pages(s), 8);
	KUNIT_EXPECT_EQ(test, gs_store_kind(s, stored, NULL), GS_KIND_EMPTY);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_HUGE_PAGES), stored);
	for (i = 0; i < stored; i++) {
		KUNIT_ASSERT_EQ(test, gs_store_read(s, i, dst), 0);
		KUNIT_EXPECT_MEMEQ(test, dst, pages[i], PAGE_SIZE);
	}
	/* Same-filled pages take no pool memory: still accepted. */
	KUNIT_EXPECT_EQ(test, gs_store_write(s, 100, same, GFP_KERNEL), 0);
	/* A failed overwrite leaves the old data in place. */
	KUNIT_EXPECT_EQ(test, gs_store_write(s, 0, pages[stored], GFP_KERNEL),
			-ENOMEM);
	KUNIT_ASSERT_EQ(test, gs_store_read(s, 0, dst), 0);
	KUNIT_EXPECT_MEMEQ(test, dst, pages[0], PAGE_SIZE);
	s->limit_pages = 0;
	KUNIT_EXPECT_EQ(test, gs_store_write(s, stored, pages[stored],
					     GFP_KERNEL), 0);
}

/* The algorithm changes only while the store is empty. */
static void gs_store_algorithm_switch(struct kunit *test)
{
	struct gs_store *s = gs_kunit_store(test, "lz4", 4096);
	void *text = gs_kunit_text(test, 4);

	KUNIT_EXPECT_EQ(test, gs_store_set_algorithm(s, "no-such-alg"),
			-ENOENT);
	KUNIT_EXPECT_EQ(test, gs_store_set_algorithm(s, ""), -ENOENT);
	KUNIT_EXPECT_STREQ(test, gs_store_algorithm(s), "lz4");
	gs_expect_roundtrip(test, s, 0, text, GS_KIND_COMPRESSED);
	KUNIT_EXPECT_EQ(test, gs_store_set_algorithm(s, "lzo"), -EBUSY);
	gs_store_free(s, 0);
	KUNIT_EXPECT_EQ(test, gs_store_set_algorithm(s, "lzo"), 0);
	KUNIT_EXPECT_STREQ(test, gs_store_algorithm(s), "lzo");
	gs_expect_roundtrip(test, s, 0, text, GS_KIND_COMPRESSED);
}

/* Compaction after freeing every other object keeps the rest intact. */
static void gs_store_compaction(struct kunit *test)
{
	struct gs_store *s = gs_kunit_store(test, "lz4", 4096);
	void *dst = kunit_kmalloc(test, PAGE_SIZE, GFP_KERNEL);
	void *text;
	unsigned long before;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, dst);
	for (i = 0; i < 1024; i++) {
		text = gs_kunit_text(test, 100 + i);
		KUNIT_ASSERT_EQ(test, gs_store_write(s, i, text, GFP_KERNEL), 0);
		kunit_kfree(test, text);
	}
	for (i = 1; i < 1024; i += 2)
		gs_store_free(s, i);
	before = gs_store_pool_pages(s);
	gs_store_compact(s);
	KUNIT_EXPECT_GT(test, gs_store_pages_compacted(s), 0);
	KUNIT_EXPECT_LT(test, gs_store_pool_pages(s), before);
	for (i = 0; i < 1024; i += 2) {
		text = gs_kunit_text(test, 100 + i);
		KUNIT_ASSERT_EQ(test, gs_store_read(s, i, dst), 0);
		KUNIT_EXPECT_MEMEQ(test, dst, text, PAGE_SIZE);
		kunit_kfree(test, text);
	}
}

static struct kunit_case gs_store_cases[] = {
	KUNIT_CASE_PARAM(gs_store_kinds, gs_store_alg_gen_params),
	KUNIT_CASE_PARAM(gs_store_overwrite_free, gs_store_alg_gen_params),
	KUNIT_CASE(gs_store_mem_limit),
	KUNIT_CASE(gs_store_algorithm_switch),
	KUNIT_CASE(gs_store_compaction),
	{}
};

static struct kunit_suite gs_store_suite = {
	.name = "ghostswap_store",
	.suite_init = gs_kunit_core_init,
	.suite_exit = gs_kunit_core_exit,
	.test_cases = gs_store_cases,
};

kunit_test_suite(gs_store_suite);
