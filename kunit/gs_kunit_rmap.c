// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "ghostswap_rmap": the backing store's slot allocator and its
 * reverse map (backing slot -> ghost slot), alone and as the writeback
 * tier keeps it in step with the table: after writeback, free, overwrite
 * and relocation, both ways agree.
 */
#include <kunit/test.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/xarray.h>
#include "gs_backing.h"
#include "gs_store.h"
#include "gs_kunit.h"

KUNIT_DEFINE_ACTION_WRAPPER(gs_kunit_bk_destroy, gs_backing_destroy,
			    struct gs_backing *);

/* A bare backing store, destroyed at the end (all slots freed first). */
static struct gs_backing *gs_rmap_bk(struct kunit *test, u64 nr)
{
	struct gs_backing *bk;
	struct gs_kbk *k;

	bk = gs_kbk_create(test, nr, &k);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							gs_kunit_bk_destroy,
							bk), 0);
	return bk;
}

static unsigned long gs_bk_clusters(struct gs_backing *bk)
{
	return atomic_long_read(&bk->meta_bytes) / gs_bk_cluster_bytes();
}

static void gs_free_all(struct gs_backing *bk)
{
	u64 b;

	for (b = 0; b < bk->nr_slots; b++)
		if (gs_backing_owner(bk, b) != U64_MAX)
			gs_backing_free(bk, b);
}

/* Runs are contiguous, next-fit, and the reverse map names each owner. */
static void gs_rmap_sequential(struct kunit *test)
{
	struct gs_backing *bk = gs_rmap_bk(test, 4096);
	u64 owners[10], first, b;
	int i, got;

	for (i = 0; i < 10; i++)
		owners[i] = 1000 + i;
	got = gs_backing_alloc(bk, owners, 10, &first, U64_MAX, false);
	KUNIT_EXPECT_EQ(test, got, 10);
	KUNIT_EXPECT_EQ(test, first, 0ULL);
	got = gs_backing_alloc(bk, owners, 10, &first, U64_MAX, false);
	KUNIT_EXPECT_EQ(test, got, 10);
	KUNIT_EXPECT_EQ(test, first, 10ULL);
	for (b = 0; b < 20; b++)
		KUNIT_EXPECT_EQ(test, gs_backing_owner(bk, b), 1000 + b % 10);
	KUNIT_EXPECT_EQ(test, gs_backing_owner(bk, 20), U64_MAX);
	KUNIT_EXPECT_EQ(test, gs_backing_used(bk), 20ULL);
	KUNIT_EXPECT_EQ(test, gs_bk_clusters(bk), 1UL);
	KUNIT_EXPECT_EQ(test, gs_backing_last_used(bk), 19ULL);

	/* Ghost slot 0 and the highest ghost slot are both owners. */
	owners[0] = 0;
	owners[1] = GS_BK_MAX_OWNER;
	got = gs_backing_alloc(bk, owners, 2, &first, U64_MAX, false);
	KUNIT_EXPECT_EQ(test, got, 2);
	KUNIT_EXPECT_EQ(test, gs_backing_owner(bk, first), 0ULL);
	KUNIT_EXPECT_EQ(test, gs_backing_owner(bk, first + 1), GS_BK_MAX_OWNER);
	gs_free_all(bk);
	KUNIT_EXPECT_EQ(test, gs_backing_used(bk), 0ULL);
	KUNIT_EXPECT_EQ(test, gs_bk_clusters(bk), 0UL);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&bk->meta_bytes), 0L);
	KUNIT_EXPECT_TRUE(test, xa_empty(&bk->clusters));
	KUNIT_EXPECT_EQ(test, gs_backing_last_used(bk), U64_MAX);
}

/* A run never crosses a cluster; clusters come and go with their slots. */
static void gs_rmap_clusters(struct kunit *test)
{
	struct gs_backing *bk = gs_rmap_bk(test, 3 * GS_BK_CLUSTER_SLOTS);
	u64 owners[32] = {}, first, total;
	int got;

	total = gs_backing_alloc(bk, owners, 20, &first, U64_MAX, false);
	KUNIT_ASSERT_EQ(test, total, 20ULL);
	while (total + 32 <= GS_BK_CLUSTER_SLOTS) {
		got = gs_backing_alloc(bk, owners, 32, &first, U64_MAX, false);
		KUNIT_ASSERT_EQ(test, got, 32);
		KUNIT_ASSERT_EQ(test, first, total);
		total += got;
	}
	/* 12 slots are left in the first cluster: the run stops there. */
	got = gs_backing_alloc(bk, owners, 32, &first, U64_MAX, false);
	KUNIT_EXPECT_EQ(test, got, 12);
	KUNIT_EXPECT_EQ(test, first, total);
	KUNIT_EXPECT_EQ(test, first + got, (u64)GS_BK_CLUSTER_SLOTS);
	KUNIT_EXPECT_EQ(test, gs_bk_clusters(bk), 1UL);
	got = gs_backing_alloc(bk, owners, 32, &first, U64_MAX, false);
	KUNIT_EXPECT_EQ(test, first, (u64)GS_BK_CLUSTER_SLOTS);
	KUNIT_EXPECT_EQ(test, gs_bk_clusters(bk), 2UL);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&bk->meta_bytes),
			2L * gs_bk_cluster_bytes());
	/* The second cluster goes with its last slot. */
	for (got = 0; got < 32; got++)
		gs_backing_free(bk, GS_BK_CLUSTER_SLOTS + got);
	KUNIT_EXPECT_EQ(test, gs_bk_clusters(bk), 1UL);
	KUNIT_EXPECT_NULL(test, xa_load(&bk->clusters, 1));
	gs_free_all(bk);
}

/* Full, freed, reused: next-fit wraps; "low" takes the lowest hole. */
static void gs_rmap_full_reuse(struct kunit *test)
{
	/* Not a multiple of the cluster size: the last one is partial. */
	const u64 nr = GS_BK_CLUSTER_SLOTS + 188;
	struct gs_backing *bk = gs_rmap_bk(test, nr);
	u64 owners[64], first, total = 0;
	int i, got;

	for (i = 0; i < 64; i++)
		owners[i] = i;
	while ((got = gs_backing_alloc(bk, owners, 64, &first, U64_MAX,
				       false)) > 0)
		total += got;
	KUNIT_EXPECT_EQ(test, got, 0);
	KUNIT_EXPECT_EQ(test, total, nr);
	KUNIT_EXPECT_EQ(test, gs_backing_used(bk), nr);

	/* Two holes; next-fit wraps to the first, then the second. */
	gs_backing_free(bk, 100);
	gs_backing_free(bk, 600);
	got = gs_backing_alloc(bk, owners, 4, &first, U64_MAX, false);
	KUNIT_EXPECT_EQ(test, got, 1);
	KUNIT_EXPECT_EQ(test, first, 100ULL);
	got = gs_backing_alloc(bk, owners, 4, &first, U64_MAX, false);
	KUNIT_EXPECT_EQ(test, got, 1);
	KUNIT_EXPECT_EQ(test, first, 600ULL);
	KUNIT_EXPECT_EQ(test, gs_backing_alloc(bk, owners, 1, &first,
					       U64_MAX, false), 0);

	/* Lowest free below a bound. */
	gs_backing_free(bk, 50);
	gs_backing_free(bk, 7);
	KUNIT_EXPECT_EQ(test, gs_backing_alloc(bk, owners, 1, &first, 7, true),
			0);
	KUNIT_EXPECT_EQ(test, gs_backing_alloc(bk, owners, 1, &first, 8, true),
			1);
	KUNIT_EXPECT_EQ(test, first, 7ULL);
	KUNIT_EXPECT_EQ(test, gs_backing_alloc(bk, owners, 1, &first, U64_MAX,
					       true), 1);
	KUNIT_EXPECT_EQ(test, first, 50ULL);
	KUNIT_EXPECT_EQ(test, gs_backing_last_used(bk), nr - 1);
	gs_free_all(bk);
	KUNIT_EXPECT_TRUE(test, xa_empty(&bk->clusters));
}

/* The last slot in use, the slow way. */
static u64 gs_rmap_last_slow(struct gs_backing *bk)
{
	u64 b;

	for (b = bk->nr_slots; b--;)
		if (gs_backing_owner(bk, b) != U64_MAX)
			return b;
	return U64_MAX;
}

/*
 * gs_backing_last_used() keeps a mark above the last used slot instead of
 * walking the map: it must agree with a walk as slots come and go, far
 * apart, with whole clusters gone in between.
 */
static void gs_rmap_last_used(struct kunit *test)
{
	const u64 nr = 64 * GS_BK_CLUSTER_SLOTS + 100;
	const u64 keep[] = { 5, 3 * GS_BK_CLUSTER_SLOTS + 7,
			     40 * GS_BK_CLUSTER_SLOTS + 100, nr - 1 };
	struct gs_backing *bk = gs_rmap_bk(test, nr);
	u64 owners[64] = {}, first, b;
	int i, k;

	KUNIT_EXPECT_EQ(test, gs_backing_last_used(bk), U64_MAX);
	while (gs_backing_alloc(bk, owners, 64, &first, U64_MAX, false) > 0)
		;
	KUNIT_ASSERT_EQ(test, gs_backing_used(bk), nr);
	KUNIT_EXPECT_EQ(test, gs_backing_last_used(bk), nr - 1);
	/* Only the kept ones stay. */
	for (b = 0, k = 0; b < nr; b++) {
		if (k < ARRAY_SIZE(keep) && b == keep[k]) {
			k++;
			continue;
		}
		gs_backing_free(bk, b);
	}
	for (i = ARRAY_SIZE(keep) - 1; i >= 0; i--) {
		KUNIT_EXPECT_EQ(test, gs_backing_last_used(bk), keep[i]);
		KUNIT_EXPECT_EQ(test, gs_backing_last_used(bk),
				gs_rmap_last_slow(bk));
		gs_backing_free(bk, keep[i]);
	}
	KUNIT_EXPECT_EQ(test, gs_backing_last_used(bk), U64_MAX);
	/* It goes up again with new allocations, low and next-fit. */
	KUNIT_EXPECT_EQ(test, gs_backing_alloc(bk, owners, 1, &first, U64_MAX,
					       true), 1);
	KUNIT_EXPECT_EQ(test, gs_backing_last_used(bk), first);
	KUNIT_EXPECT_EQ(test, gs_backing_alloc(bk, owners, 3, &first, U64_MAX,
					       false), 3);
	KUNIT_EXPECT_EQ(test, gs_backing_last_used(bk), gs_rmap_last_slow(bk));
	KUNIT_EXPECT_EQ(test, gs_backing_last_used(bk), first + 2);
	gs_free_all(bk);
	KUNIT_EXPECT_EQ(test, gs_backing_last_used(bk), U64_MAX);
}

/* Each WRITTEN_BACK entry names its backing slot; that slot names it. */
static void gs_rmap_expect_pairs(struct kunit *test, struct gs_store *s,
				 u64 base, u64 step, int n)
{
	unsigned long e;
	int i;

	for (i = 0; i < n; i++) {
		e = gs_store_entry(s, base + i * step);
		if (gs_entry_kind(e) != GS_KIND_WRITTEN_BACK)
			continue;
		KUNIT_EXPECT_EQ(test, gs_backing_owner(s->bk,
						       gs_entry_value(e)),
				base + i * step);
	}
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0L);
}

/* After writeback, free and overwrite the two sides agree. */
static void gs_rmap_store_agrees(struct kunit *test)
{
	const u64 base = (1ULL << 32) - 4096, step = 3;
	struct gs_kbk *k;
	struct gs_store *s = gs_kunit_wb_store(test, "lz4", GS_BK_MAX_OWNER + 1,
					       256, &k);
	void *p = gs_kunit_page(test);
	u64 done;

	gs_kunit_fill_slots(test, s, base, step, 100);
	KUNIT_EXPECT_EQ(test, gs_store_writeback(s, GS_WB_ALL, U64_MAX, &done),
			0);
	KUNIT_EXPECT_EQ(test, done, 100ULL);
	KUNIT_EXPECT_EQ(test, gs_backing_used(s->bk), 100ULL);
	gs_rmap_expect_pairs(test, s, base, step, 100);

	/* Free some, overwrite others with new pool data. */
	gs_store_free(s, base + 10 * step);
	gs_store_free_range(s, base + 20 * step, 10 * step);
	gs_kunit_fill_text(p, 40);
	KUNIT_ASSERT_EQ(test, gs_store_write(s, base + 41 * step, p,
					     GFP_KERNEL), 0);
	KUNIT_EXPECT_EQ(test, gs_store_kind(s, base + 41 * step, NULL),
			GS_KIND_COMPRESSED);
	KUNIT_EXPECT_EQ(test, gs_backing_used(s->bk), 100ULL - 1 - 10 - 1);
	gs_rmap_expect_pairs(test, s, base, step, 100);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_WB_PAGES), 88L);

	/* The overwritten one goes back out, to a new backing slot. */
	KUNIT_EXPECT_EQ(test, gs_store_writeback(s, GS_WB_ALL, U64_MAX, &done),
			0);
	KUNIT_EXPECT_EQ(test, done, 1ULL);
	gs_rmap_expect_pairs(test, s, base, step, 100);
	gs_store_free_range(s, 0, 1ULL << 32);
	KUNIT_EXPECT_EQ(test, gs_backing_used(s->bk), 0ULL);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->bk->meta_bytes), 0L);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0L);
}

/* Backing compaction moves pages down into holes; maps stay paired. */
static void gs_rmap_relocation(struct kunit *test)
{
	struct gs_kbk *k;
	struct gs_store *s = gs_kunit_wb_store(test, "lz4", 4096, 1024, &k);
	void *want = gs_kunit_page(test), *got = gs_kunit_page(test);
	u64 done, moved;
	long reads, writes;
	int i;

	gs_kunit_fill_slots(test, s, 0, 1, 600);
	KUNIT_ASSERT_EQ(test, gs_store_writeback(s, GS_WB_ALL, U64_MAX, &done),
			0);
	KUNIT_EXPECT_EQ(test, done, 600ULL);
	KUNIT_EXPECT_EQ(test, gs_backing_last_used(s->bk), 599ULL);
	/* Free every even ghost slot: holes all over the backing device. */
	for (i = 0; i < 600; i += 2)
		gs_store_free(s, i);
	KUNIT_EXPECT_EQ(test, gs_backing_used(s->bk), 300ULL);
	reads = atomic_long_read(&s->stats.bd_reads);
	writes = atomic_long_read(&s->stats.bd_writes);
	KUNIT_EXPECT_EQ(test, gs_store_backing_compact(s, &moved), 0);
	/* Its I/O has counters of its own, not zram's. */
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->stats.bd_reads), reads);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->stats.bd_writes), writes);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->stats.bd_compact_reads),
			(long)moved);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->stats.bd_compact_writes),
			(long)moved);
	kunit_info(test, "moved %llu pages\n", moved);
	KUNIT_EXPECT_GT(test, moved, 0ULL);
	KUNIT_EXPECT_EQ(test, gs_backing_last_used(s->bk), 299ULL);
	KUNIT_EXPECT_EQ(test, gs_backing_used(s->bk), 300ULL);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->stats.bd_relocated),
			(long)moved);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0L);
	for (i = 1; i < 600; i += 2) {
		gs_kunit_fill_text(want, i);
		KUNIT_ASSERT_EQ(test, gs_store_read(s, i, got), 0);
		KUNIT_EXPECT_MEMEQ(test, got, want, PAGE_SIZE);
	}
	/* Packed already: nothing moves. */
	KUNIT_EXPECT_EQ(test, gs_store_backing_compact(s, &moved), 0);
	KUNIT_EXPECT_EQ(test, moved, 0ULL);
	/* New writeback fills from the start again, after the packed part. */
	gs_kunit_fill_slots(test, s, 2000, 1, 10);
	KUNIT_ASSERT_EQ(test, gs_store_writeback(s, GS_WB_ALL, U64_MAX, &done),
			0);
	KUNIT_EXPECT_EQ(test, gs_backing_last_used(s->bk), 309ULL);
	gs_kunit_verify_slots(test, s, 2000, 1, 10);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0L);
}

/* The check finds what is broken (made broken here on purpose). */
static void gs_rmap_check_detects(struct kunit *test)
{
	struct gs_kbk *k;
	struct gs_store *s = gs_kunit_wb_store(test, "lz4", 4096, 64, &k);
	u64 done, owner = 3000, b;

	gs_kunit_fill_slots(test, s, 0, 1, 4);
	KUNIT_ASSERT_EQ(test, gs_store_writeback(s, GS_WB_ALL, U64_MAX, &done),
			0);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0L);
	/* A backing slot nobody points at, owned by an empty ghost slot. */
	KUNIT_ASSERT_EQ(test, gs_backing_alloc(s->bk, &owner, 1, &b, U64_MAX,
					       false), 1);
	/* One orphan, and the totals differ. */
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 2L);
	gs_backing_free(s->bk, b);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0L);
}

static struct kunit_case gs_rmap_cases[] = {
	KUNIT_CASE(gs_rmap_sequential),
	KUNIT_CASE(gs_rmap_clusters),
	KUNIT_CASE(gs_rmap_full_reuse),
	KUNIT_CASE(gs_rmap_last_used),
	KUNIT_CASE(gs_rmap_store_agrees),
	KUNIT_CASE(gs_rmap_relocation),
	KUNIT_CASE(gs_rmap_check_detects),
	{}
};

static struct kunit_suite gs_rmap_suite = {
	.name = "ghostswap_rmap",
	.suite_init = gs_kunit_core_init,
	.suite_exit = gs_kunit_core_exit,
	.test_cases = gs_rmap_cases,
};

kunit_test_suite(gs_rmap_suite);
