// SPDX-License-Identifier: GPL-2.0
/*
 * What an lz4 compression of a page costs with the compressor's state
 * cleared before each page (the library's LZ4_compress_fast(), as zram's
 * backend and ghostswap's, gs_be_lz4.c, call it) and with the state kept
 * from page to page (each page the next block of a stream with an empty
 * dictionary: the way ghostswap's backend took before 2026-12-06), over
 * the same pages, and how many bytes each makes of them. A benchmark,
 * not a test: it is built with GHOSTSWAP_KUNIT_BENCH (bench/lookup.sh)
 * and prints its figures; it fails only if a compression fails or a page
 * kept-state lz4 made does not read back alone.
 *
 * Under UML the code runs on the host CPU: hardware figures. Each figure
 * is the best of GS_BENCH_ROUNDS rounds over GS_BENCH_PAGES pages.
 */

#include <kunit/test.h>
#include <linux/ktime.h>
#include <linux/lz4.h>
#include "../gs_kunit.h"

#define GS_BENCH_ROUNDS		8
#define GS_BENCH_PAGES		32

enum { GS_BL_TEXT, GS_BL_RECORDS, GS_BL_MIXED, GS_BL_KINDS };

static const char *const gs_bl_names[GS_BL_KINDS] = {
	"text", "records", "mixed",
};

/*
 * A page of @kind: text; records of a counter and a pointer-like value,
 * as a heap holds them; text, then random bytes, then zeroes.
 */
static void *gs_bl_page(struct kunit *test, int kind, u32 seed)
{
	u64 *w, x = seed * 0x9e3779b97f4a7c15ULL + 1;
	void *p;
	int i;

	if (kind == GS_BL_TEXT)
		return gs_kunit_text(test, seed);
	if (kind == GS_BL_MIXED) {
		p = gs_kunit_text(test, seed);
		w = p + PAGE_SIZE / 3 / 8 * 8;
		for (i = 0; i < PAGE_SIZE / 3 / 8; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			w[i] = x;
		}
		memset(p + 2 * PAGE_SIZE / 3, 0, PAGE_SIZE - 2 * PAGE_SIZE / 3);
		return p;
	}
	w = gs_kunit_page(test);
	for (i = 0; i < PAGE_SIZE / 8; i += 2) {
		w[i] = seed * 1000 + i / 2;
		w[i + 1] = 0xffff888000000000ULL + ((u64)seed << 12) + i * 48;
	}
	return w;
}

static void gs_bench_lz4(struct kunit *test)
{
	LZ4_stream_t *st = kunit_kzalloc(test, sizeof(*st), GFP_KERNEL);
	void *wrk = kunit_kzalloc(test, LZ4_MEM_COMPRESS, GFP_KERNEL);
	char byte = 0;
	u8 *dst = kunit_kmalloc(test, 2 * PAGE_SIZE, GFP_KERNEL);
	u8 *out = kunit_kmalloc(test, PAGE_SIZE, GFP_KERNEL);
	void *pages[GS_BENCH_PAGES];
	u64 cleared, kept, t, bytes[2];
	int kind, round, i, n, ret = 0, alone = 0;

	KUNIT_ASSERT_NOT_NULL(test, st);
	KUNIT_ASSERT_NOT_NULL(test, wrk);
	/* The stream's first block, of one byte: its old table never matched. */
	LZ4_compress_fast_continue(st, &byte, (char *)dst, 1, 16, 1);
	KUNIT_ASSERT_NOT_NULL(test, dst);
	KUNIT_ASSERT_NOT_NULL(test, out);
	for (kind = 0; kind < GS_BL_KINDS; kind++) {
		for (i = 0; i < GS_BENCH_PAGES; i++)
			pages[i] = gs_bl_page(test, kind, kind * 100 + i + 1);
		cleared = U64_MAX;
		kept = U64_MAX;
		/* The best of several rounds: the least disturbed by other work. */
		for (round = 0; round < GS_BENCH_ROUNDS; round++) {
			bytes[0] = 0;
			bytes[1] = 0;
			t = ktime_get_ns();
			for (i = 0; i < GS_BENCH_PAGES; i++) {
				n = LZ4_compress_fast(pages[i], dst, PAGE_SIZE,
						      2 * PAGE_SIZE,
						      LZ4_ACCELERATION_DEFAULT,
						      wrk);
				ret |= n <= 0;
				bytes[0] += n;
			}
			cleared = min(cleared, ktime_get_ns() - t);
			t = ktime_get_ns();
			for (i = 0; i < GS_BENCH_PAGES; i++) {
				LZ4_loadDict(st, NULL, 0);
				n = LZ4_compress_fast_continue(st, pages[i],
							       dst, PAGE_SIZE,
							       2 * PAGE_SIZE,
							       LZ4_ACCELERATION_DEFAULT);
				ret |= n <= 0;
				bytes[1] += n;
				/* Outside the timing: the first round only. */
				if (!round && n > 0)
					alone += LZ4_decompress_safe(dst, out,
								     n,
								     PAGE_SIZE) ==
						 PAGE_SIZE &&
						 !memcmp(out, pages[i],
							 PAGE_SIZE);
			}
			kept = min(kept, ktime_get_ns() - t);
		}
		kunit_info(test, "lz4 ns, %s page: cleared %llu, kept %llu; bytes of %d pages: %llu, %llu\n",
			   gs_bl_names[kind], cleared / GS_BENCH_PAGES,
			   kept / GS_BENCH_PAGES, GS_BENCH_PAGES, bytes[0],
			   bytes[1]);
		for (i = 0; i < GS_BENCH_PAGES; i++)
			kunit_kfree(test, pages[i]);
	}
	KUNIT_EXPECT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ(test, alone, GS_BL_KINDS * GS_BENCH_PAGES);
}

static struct kunit_case gs_bench_lz4_cases[] = {
	KUNIT_CASE(gs_bench_lz4),
	{}
};

static struct kunit_suite gs_bench_lz4_suite = {
	.name = "ghostswap_bench_lz4",
	/* Left out of the test runs (kunit/run.sh): see tree/Kconfig. */
	.attr.speed = KUNIT_SPEED_VERY_SLOW,
	.test_cases = gs_bench_lz4_cases,
};

kunit_test_suite(gs_bench_lz4_suite);

MODULE_LICENSE("GPL");
