// SPDX-License-Identifier: GPL-2.0
/*
 * What the incompressible-page heuristic costs next to an lz4 compression
 * of the same page: a random page (which the heuristic sends past the
 * compressor) and a page of text (which it passes on). A benchmark, not a
 * test: it is built only with GHOSTSWAP_KUNIT_BENCH (bench/lookup.sh) and
 * prints its figures; it fails only if the heuristic's verdict on either
 * page is wrong or lz4 fails.
 *
 * Under UML the code runs on the host CPU: hardware figures. Each figure
 * is the best of GS_BENCH_ROUNDS rounds of GS_BENCH_CALLS calls.
 */

#include <kunit/test.h>
#include <linux/ktime.h>
#include "gs_heuristic.h"
#include "../gs_kunit.h"

#define GS_BENCH_ROUNDS		8
#define GS_BENCH_CALLS		256

static void gs_bench_heuristic(struct kunit *test)
{
	struct gs_kunit_comp *c = gs_kunit_comp(test, "lz4");
	struct gs_comp_params *p = &c->p;
	u8 *dst = kunit_kmalloc(test, 2 * PAGE_SIZE, GFP_KERNEL);
	u64 heur[2] = { U64_MAX, U64_MAX }, lz4[2] = { U64_MAX, U64_MAX };
	static const char *const names[2] = { "random", "text" };
	unsigned int incomp[2] = { 0, 0 };
	void *pages[2];
	int round, i, k, ret = 0;
	u64 t;

	KUNIT_ASSERT_NOT_NULL(test, dst);
	pages[0] = gs_kunit_random(test);
	pages[1] = gs_kunit_text(test, 3);
	/* The best of several rounds: the least disturbed by other work. */
	for (round = 0; round < GS_BENCH_ROUNDS; round++) {
		for (k = 0; k < 2; k++) {
			t = ktime_get_ns();
			for (i = 0; i < GS_BENCH_CALLS; i++)
				incomp[k] += gs_page_looks_incompressible(pages[k]);
			heur[k] = min(heur[k],
				      (ktime_get_ns() - t) / GS_BENCH_CALLS);
			t = ktime_get_ns();
			for (i = 0; i < GS_BENCH_CALLS; i++)
				ret |= p->be->compress(p, c->ctx, pages[k],
						       PAGE_SIZE, dst,
						       2 * PAGE_SIZE) <= 0;
			lz4[k] = min(lz4[k],
				     (ktime_get_ns() - t) / GS_BENCH_CALLS);
		}
	}
	KUNIT_EXPECT_EQ(test, ret, 0);
	/* Every call, the same verdict: random is skipped, text is not. */
	KUNIT_EXPECT_EQ(test, incomp[0], GS_BENCH_ROUNDS * GS_BENCH_CALLS);
	KUNIT_EXPECT_EQ(test, incomp[1], 0U);
	for (k = 0; k < 2; k++)
		kunit_info(test, "heuristic ns, %s page: %llu, lz4 %llu\n",
			   names[k], heur[k], lz4[k]);
}

static struct kunit_case gs_bench_heuristic_cases[] = {
	KUNIT_CASE(gs_bench_heuristic),
	{}
};

static struct kunit_suite gs_bench_heuristic_suite = {
	.name = "ghostswap_bench_heuristic",
	/* Left out of the test runs (kunit/run.sh): see tree/Kconfig. */
	.attr.speed = KUNIT_SPEED_VERY_SLOW,
	.test_cases = gs_bench_heuristic_cases,
};

kunit_test_suite(gs_bench_heuristic_suite);

MODULE_LICENSE("GPL");
