// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "ghostswap_recomp": the store with several algorithms.
 * Parameters (level, dictionary) in the store's streams; each page
 * compressed once on its way in, the heuristic's pages not at all;
 * recompression by request (zram's types, threshold, max_pages,
 * priority) and in the background; recompressed pages read back, written
 * back and moved on the backing device with the algorithm they need; a
 * recompression and a reader in the same window.
 */
#include <kunit/static_stub.h>
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include "gs_backend.h"
#include "gs_comp.h"
#include "gs_core.h"
#include "gs_recomp.h"
#include "gs_store.h"
#include "gs_kunit.h"

#define GS_RC_PAGES	64

/* Algorithm @alg with @level (GS_PARAM_UNSET: default) at @prio of @s. */
static void gs_rc_set(struct kunit *test, struct gs_store *s,
		      unsigned int prio, const char *alg, s32 level,
		      const void *dict, size_t dict_len)
{
	struct gs_comp_params *p = kzalloc_obj(*p);

	KUNIT_ASSERT_NOT_NULL(test, p);
	KUNIT_ASSERT_EQ(test, gs_comp_params_init(p, alg), 0);
	p->level = level;
	if (dict)
		KUNIT_ASSERT_EQ(test, gs_comp_params_set_dict(p, dict,
							      dict_len), 0);
	KUNIT_ASSERT_EQ(test, gs_comp_params_setup(p), 0);
	KUNIT_ASSERT_EQ(test, gs_store_set_comp(s, prio, p), 0);
	KUNIT_ASSERT_STREQ(test, gs_store_comp_name(s, prio), alg);
}

/* Pages 0..n-1: text; n..n+3 random; n+4 same-filled. Kept in @pages. */
static void **gs_rc_fill(struct kunit *test, struct gs_store *s,
			 unsigned int n)
{
	void **pages = kunit_kcalloc(test, n + 5, sizeof(*pages), GFP_KERNEL);
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, pages);
	for (i = 0; i < n + 5; i++) {
		if (i < n) {
			pages[i] = gs_kunit_page(test);
			gs_kunit_fill_text(pages[i], i);
		} else if (i < n + 4) {
			pages[i] = gs_kunit_random(test);
		} else {
			pages[i] = gs_kunit_same(test, 0x0123456789abcdefUL);
		}
		KUNIT_ASSERT_EQ(test, gs_store_write(s, i, pages[i],
						     GFP_KERNEL), 0);
	}
	return pages;
}

static void gs_rc_expect_all(struct kunit *test, struct gs_store *s,
			     void **pages, unsigned int n)
{
	void *got = gs_kunit_page(test);
	unsigned int i;

	for (i = 0; i < n + 5; i++) {
		memset(got, 0x5a, PAGE_SIZE);
		KUNIT_EXPECT_EQ(test, gs_store_read(s, i, got), 0);
		KUNIT_EXPECT_MEMEQ_MSG(test, got, pages[i], PAGE_SIZE,
				       "slot %u", i);
	}
}

/* A secondary algorithm in use cannot be replaced. */
static void gs_rc_expect_busy(struct kunit *test, struct gs_store *s)
{
	struct gs_comp_params *p = kzalloc_obj(*p);

	KUNIT_ASSERT_NOT_NULL(test, p);
	KUNIT_ASSERT_EQ(test, gs_comp_params_init(p, "deflate"), 0);
	KUNIT_ASSERT_EQ(test, gs_comp_params_setup(p), 0);
	KUNIT_EXPECT_EQ(test, gs_store_set_comp(s, 1, p), -EBUSY);
	KUNIT_EXPECT_STREQ(test, gs_store_comp_name(s, 1), "zstd");
}

static unsigned int gs_rc_count_prio(struct gs_store *s, unsigned int n,
				     unsigned int prio)
{
	unsigned int i, c = 0;
	unsigned long e;

	for (i = 0; i < n; i++) {
		e = gs_store_entry(s, i);
		c += gs_entry_kind(e) == GS_KIND_COMPRESSED &&
		     gs_entry_prio(e) == prio;
	}
	return c;
}

/*
 * Everything recompressed with zstd: text pages move to priority 1 and
 * take less pool, random ones stay as they are (and are not tried again),
 * every page reads back, the counters stay exact.
 */
static void gs_rc_all(struct kunit *test)
{
	struct gs_store *s = gs_kunit_store(test, "lz4", 4096);
	struct gs_recomp_req r = {};
	long compr0, compr1;
	void **pages;
	u64 done;

	gs_rc_set(test, s, 1, "zstd", GS_PARAM_UNSET, NULL, 0);
	pages = gs_rc_fill(test, s, GS_RC_PAGES);
	compr0 = gs_stat_read(&s->stats, GS_STAT_COMPR_BYTES);
	KUNIT_ASSERT_EQ(test, gs_rc_count_prio(s, GS_RC_PAGES, 0), GS_RC_PAGES);

	KUNIT_EXPECT_EQ(test, gs_store_recompress(s, &r, &done), 0);
	kunit_info(test, "recompressed %llu of %u text pages, pool bytes %ld -> %ld\n",
		   done, GS_RC_PAGES, compr0,
		   gs_stat_read(&s->stats, GS_STAT_COMPR_BYTES));
	KUNIT_EXPECT_GT(test, done, 0ULL);
	KUNIT_EXPECT_EQ(test, gs_rc_count_prio(s, GS_RC_PAGES, 1),
			(unsigned int)done);
	compr1 = gs_stat_read(&s->stats, GS_STAT_COMPR_BYTES);
	KUNIT_EXPECT_LT(test, compr1, compr0);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->stats.recompressed),
			(long)done);
	/* Random pages: tried with the highest algorithm, no gain, marked. */
	KUNIT_EXPECT_EQ(test, gs_store_kind(s, GS_RC_PAGES, NULL), GS_KIND_RAW);
	KUNIT_EXPECT_TRUE(test, gs_store_entry(s, GS_RC_PAGES) &
			  GS_FLAG_NOGAIN);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_HUGE_PAGES), 4);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_COMP_PAGES),
			GS_RC_PAGES);
	gs_rc_expect_all(test, s, pages, GS_RC_PAGES);

	/* A second pass finds nothing left to do. */
	KUNIT_EXPECT_EQ(test, gs_store_recompress(s, &r, &done), 0);
	KUNIT_EXPECT_EQ(test, done, 0ULL);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_COMPR_BYTES),
			compr1);
	/* The secondary algorithm is in use now: it cannot change. */
	gs_rc_expect_busy(test, s);
}

/* zram's selectors: idle, huge, threshold, max_pages. */
static void gs_rc_select(struct kunit *test)
{
	struct gs_store *s = gs_kunit_store(test, "lz4", 4096);
	struct gs_recomp_req r = {};
	void *got = gs_kunit_page(test);
	unsigned int len;
	void **pages;
	u64 done;
	int i;

	gs_rc_set(test, s, 1, "zstd", GS_PARAM_UNSET, NULL, 0);
	pages = gs_rc_fill(test, s, GS_RC_PAGES);

	/* max_pages: at most that many tried. */
	r.max_pages = 5;
	KUNIT_EXPECT_EQ(test, gs_store_recompress(s, &r, &done), 0);
	KUNIT_EXPECT_LE(test, done, 5ULL);
	KUNIT_EXPECT_EQ(test, gs_rc_count_prio(s, GS_RC_PAGES, 1),
			(unsigned int)done);

	/* idle: only pages not read since they were marked. */
	gs_store_mark_idle(s, 0);
	for (i = 10; i < 20; i++)
		KUNIT_ASSERT_EQ(test, gs_store_read(s, i, got), 0);
	r = (struct gs_recomp_req){ .type = GS_RECOMP_IDLE };
	KUNIT_EXPECT_EQ(test, gs_store_recompress(s, &r, &done), 0);
	for (i = 10; i < 20; i++)
		KUNIT_EXPECT_EQ_MSG(test, gs_entry_prio(gs_store_entry(s, i)), 0U,
				    "slot %d was read, not idle", i);
	KUNIT_EXPECT_GT(test, done, 0ULL);

	/* huge: only RAW pages (none gains with zstd either). */
	r = (struct gs_recomp_req){ .type = GS_RECOMP_HUGE };
	KUNIT_EXPECT_EQ(test, gs_store_recompress(s, &r, &done), 0);
	KUNIT_EXPECT_EQ(test, done, 0ULL);
	for (i = 10; i < 20; i++)
		KUNIT_EXPECT_EQ(test, gs_entry_prio(gs_store_entry(s, i)), 0U);

	/*
	 * threshold: pages of at least that many bytes only; those below
	 * it stay as they are.
	 */
	gs_store_kind(s, 10, &len);
	r = (struct gs_recomp_req){ .threshold = len };
	KUNIT_EXPECT_EQ(test, gs_store_recompress(s, &r, &done), 0);
	for (i = 0; i < GS_RC_PAGES; i++) {
		unsigned long e = gs_store_entry(s, i);

		gs_store_kind(s, i, &len);
		if (gs_entry_prio(e) == 0 && !(e & GS_FLAG_NOGAIN))
			KUNIT_EXPECT_LT_MSG(test, len, r.threshold,
					    "slot %d not recompressed", i);
	}
	r = (struct gs_recomp_req){ .threshold = PAGE_SIZE };
	KUNIT_EXPECT_EQ(test, gs_store_recompress(s, &r, &done), 0);
	KUNIT_EXPECT_EQ(test, done, 0ULL);	/* RAW ones: no gain */
	gs_rc_expect_all(test, s, pages, GS_RC_PAGES);

	/* No secondary algorithm at that priority. */
	r = (struct gs_recomp_req){ .prio_min = 2, .prio_max = 2 };
	KUNIT_EXPECT_EQ(test, gs_store_recompress(s, &r, &done), -EINVAL);
}

/*
 * Recompressed pages written back, read back (at once and started
 * without waiting) and moved by backing compaction: with zstd.
 */
static void gs_rc_written_back(struct kunit *test)
{
	struct gs_recomp_req r = {};
	struct page *dst = alloc_page(GFP_KERNEL);
	struct gs_kbk *k;
	struct gs_store *s;
	void **pages;
	u64 done, moved;
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, dst);
	s = gs_kunit_wb_store(test, "lz4", 4096, 256, &k);
	gs_rc_set(test, s, 1, "zstd", GS_PARAM_UNSET, NULL, 0);
	pages = gs_rc_fill(test, s, GS_RC_PAGES);
	KUNIT_ASSERT_EQ(test, gs_store_recompress(s, &r, &done), 0);
	KUNIT_ASSERT_GT(test, done, 0ULL);
	KUNIT_ASSERT_EQ(test, gs_store_writeback(s, GS_WB_ALL, U64_MAX, &done),
			0);
	for (i = 0; i < GS_RC_PAGES; i += 2)
		gs_store_free(s, i);	/* holes for compaction */
	KUNIT_EXPECT_EQ(test, gs_store_backing_compact(s, &moved), 0);
	KUNIT_EXPECT_GT(test, moved, 0ULL);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0);
	for (i = 1; i < GS_RC_PAGES; i += 2) {
		void *got = page_address(dst);

		KUNIT_EXPECT_EQ(test, gs_store_kind(s, i, NULL),
				GS_KIND_WRITTEN_BACK);
		memset(got, 0, PAGE_SIZE);
		KUNIT_EXPECT_EQ(test, gs_store_read(s, i, got), 0);
		KUNIT_EXPECT_MEMEQ_MSG(test, got, pages[i], PAGE_SIZE,
				       "slot %u", i);
	}
	__free_page(dst);
}

static struct gs_store *gs_rc_window_store;

static void gs_rc_window_stub(struct gs_store *s, u64 slot)
{
	void *page = kmalloc(PAGE_SIZE, GFP_KERNEL);

	/* Pinned by the reader: not a candidate now. */
	if (page)
		WARN_ON(gs_slot_recompress(s, slot, 1, true, page) != -EAGAIN);
	kfree(page);
	gs_rc_window_store = s;
}

/* A recompression meets a reader's pin: it leaves the entry alone. */
static void gs_rc_reader(struct kunit *test)
{
	struct gs_store *s = gs_kunit_store(test, "lz4", 4096);
	void *page = gs_kunit_text(test, 9), *got = gs_kunit_page(test);
	void *buf = gs_kunit_page(test);

	gs_rc_set(test, s, 1, "zstd", GS_PARAM_UNSET, NULL, 0);
	KUNIT_ASSERT_EQ(test, gs_store_write(s, 3, page, GFP_KERNEL), 0);
	gs_rc_window_store = NULL;
	kunit_activate_static_stub(test, gs_read_window, gs_rc_window_stub);
	KUNIT_EXPECT_EQ(test, gs_store_read(s, 3, got), 0);
	kunit_deactivate_static_stub(test, gs_read_window);
	KUNIT_EXPECT_PTR_EQ(test, gs_rc_window_store, s);
	KUNIT_EXPECT_MEMEQ(test, got, page, PAGE_SIZE);
	/* Unpinned, it can be recompressed. */
	KUNIT_EXPECT_EQ(test, gs_slot_recompress(s, 3, 1, true, buf), 1);
	KUNIT_EXPECT_EQ(test, gs_store_read(s, 3, got), 0);
	KUNIT_EXPECT_MEMEQ(test, got, page, PAGE_SIZE);
	gs_store_free(s, 3);
	KUNIT_EXPECT_EQ(test, gs_store_pool_pages(s), 0UL);
}

/*
 * Levels and a dictionary reach the store's streams; a store with a
 * dictionary round-trips and takes less pool than one without.
 */
static void gs_rc_params(struct kunit *test)
{
	struct gs_store *plain = gs_kunit_store(test, "zstd", 4096);
	struct gs_store *dict = gs_kunit_store(test, "zstd", 4096);
	size_t dict_len = 8 * PAGE_SIZE;
	char *d = kunit_kmalloc(test, dict_len, GFP_KERNEL);
	void **a, **b;
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, d);
	/* A raw-content dictionary: text of the same kind, other pages. */
	for (i = 0; i < 8; i++)
		gs_kunit_fill_text(d + i * PAGE_SIZE, 1000 + i);
	gs_rc_set(test, plain, 0, "zstd", 1, NULL, 0);
	gs_rc_set(test, dict, 0, "zstd", 1, d, dict_len);
	KUNIT_EXPECT_EQ(test, gs_comp_get_params(dict->comp, 0)->level, 1);
	a = gs_rc_fill(test, plain, GS_RC_PAGES);
	b = gs_rc_fill(test, dict, GS_RC_PAGES);
	kunit_info(test, "pool bytes: zstd level 1 %ld, with a dictionary %ld\n",
		   gs_stat_read(&plain->stats, GS_STAT_COMPR_BYTES),
		   gs_stat_read(&dict->stats, GS_STAT_COMPR_BYTES));
	KUNIT_EXPECT_LT(test, gs_stat_read(&dict->stats, GS_STAT_COMPR_BYTES),
			gs_stat_read(&plain->stats, GS_STAT_COMPR_BYTES));
	gs_rc_expect_all(test, plain, a, GS_RC_PAGES);
	gs_rc_expect_all(test, dict, b, GS_RC_PAGES);
	/* The dictionary's memory is counted with the streams. */
	KUNIT_EXPECT_GT(test, gs_comp_bytes(dict->comp),
			gs_comp_bytes(plain->comp));
}

/*
 * Compressions per page stored: one each, none for what the heuristic
 * finds incompressible, also past a pool limit with a backing device.
 */
static void gs_rc_once(struct kunit *test)
{
	struct gs_kbk *k;
	struct gs_store *s = gs_kunit_wb_store(test, "lz4", 8192, 4096, &k);
	void *page = gs_kunit_page(test), *rnd = gs_kunit_random(test);
	long c0, p0;
	int i;

	for (i = 0; i < 256; i++) {
		gs_kunit_fill_text(page, i);
		KUNIT_ASSERT_EQ(test, gs_store_write(s, i, page, GFP_KERNEL), 0);
	}
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_COMPRESSIONS), 256);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_PACKED), 256);

	/* The heuristic: a random page is stored as it is, not compressed. */
	c0 = gs_stat_read(&s->stats, GS_STAT_COMPRESSIONS);
	KUNIT_ASSERT_EQ(test, gs_store_write(s, 300, rnd, GFP_KERNEL), 0);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_COMPRESSIONS), c0);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_HEUR_RAW), 1);
	KUNIT_EXPECT_EQ(test, gs_store_kind(s, 300, NULL), GS_KIND_RAW);
	WRITE_ONCE(s->incomp_check, false);
	KUNIT_ASSERT_EQ(test, gs_store_write(s, 301, rnd, GFP_KERNEL), 0);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_COMPRESSIONS),
			c0 + 1);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_HEUR_RAW), 1);

	/* Over the pool limit: room is made first, then one compression. */
	WRITE_ONCE(s->limit_pages, gs_store_pool_pages(s) / 2);
	c0 = gs_stat_read(&s->stats, GS_STAT_COMPRESSIONS);
	p0 = gs_stat_read(&s->stats, GS_STAT_PACKED);
	for (i = 1000; i < 1256; i++) {
		gs_kunit_fill_text(page, i);
		KUNIT_ASSERT_EQ(test, gs_store_write(s, i, page, GFP_KERNEL), 0);
	}
	kunit_info(test, "over the limit: %ld compressions for %ld pages stored\n",
		   gs_stat_read(&s->stats, GS_STAT_COMPRESSIONS) - c0,
		   gs_stat_read(&s->stats, GS_STAT_PACKED) - p0);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_PACKED) - p0, 256);
	KUNIT_EXPECT_LE(test, gs_stat_read(&s->stats, GS_STAT_COMPRESSIONS) - c0,
			256);
	KUNIT_EXPECT_GT(test, gs_stat_read(&s->stats, GS_STAT_WB_PAGES), 0);
}

/* The background sweep recompresses idle pages by itself. */
static void gs_rc_auto(struct kunit *test)
{
	struct gs_store *s = gs_kunit_store(test, "lz4", 4096);
	unsigned long timeout = jiffies + 20 * HZ;
	void **pages;

	gs_rc_set(test, s, 1, "zstd", GS_PARAM_UNSET, NULL, 0);
	pages = gs_rc_fill(test, s, GS_RC_PAGES);
	gs_store_mark_idle(s, 0);
	gs_store_set_recomp_auto(s, 100, 0);
	while (!atomic_long_read(&s->stats.recomp_auto) &&
	       time_before(jiffies, timeout))
		msleep(20);
	gs_store_set_recomp_auto(s, 0, 0);
	kunit_info(test, "background: %ld pages recompressed\n",
		   atomic_long_read(&s->stats.recomp_auto));
	KUNIT_EXPECT_GT(test, atomic_long_read(&s->stats.recomp_auto), 0L);
	KUNIT_EXPECT_GT(test, gs_rc_count_prio(s, GS_RC_PAGES, 1), 0U);
	gs_rc_expect_all(test, s, pages, GS_RC_PAGES);
}

static struct kunit_case gs_rc_cases[] = {
	KUNIT_CASE(gs_rc_all),
	KUNIT_CASE(gs_rc_select),
	KUNIT_CASE(gs_rc_written_back),
	KUNIT_CASE(gs_rc_reader),
	KUNIT_CASE(gs_rc_params),
	KUNIT_CASE(gs_rc_once),
	KUNIT_CASE(gs_rc_auto),
	{}
};

static struct kunit_suite gs_rc_suite = {
	.name = "ghostswap_recomp",
	.suite_init = gs_kunit_core_init,
	.suite_exit = gs_kunit_core_exit,
	.test_cases = gs_rc_cases,
};

kunit_test_suite(gs_rc_suite);
