// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "ghostswap_writeback": pages move to a backing store and
 * back intact, chosen by kind, idleness and coldness, under a budget and a
 * pool limit; writeback and backing reads race with reads, overwrites and
 * frees of the same slot (made to happen mid-I/O by the memory backing
 * store's hook, and at random by threads); a full backing store and I/O
 * errors lose nothing. One case runs on a real block device (brd).
 */
#include <kunit/test.h>
#include <linux/blkdev.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/kthread.h>
#include <linux/major.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/shrinker.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include "gs_backing.h"
#include "gs_extent.h"
#include "gs_comp.h"
#include "gs_dev.h"
#include "gs_store.h"
#include "gs_kunit.h"

/* Compresses, but not below zsmalloc's huge class size: RAW, not INCOMP. */
static void *gs_wb_semi(struct kunit *test)
{
	u8 *p = gs_kunit_page(test);

	get_random_bytes(p, 3800);
	memset(p + 3800, 0, PAGE_SIZE - 3800);
	return p;
}

static void *gs_wb_text(struct kunit *test, u32 n)
{
	void *p = gs_kunit_page(test);

	gs_kunit_fill_text(p, n);
	return p;
}

static void gs_wb_write(struct kunit *test, struct gs_store *s, u64 slot,
			const void *p)
{
	KUNIT_ASSERT_EQ(test, gs_store_write(s, slot, p, GFP_KERNEL), 0);
}

static void gs_wb_expect(struct kunit *test, struct gs_store *s, u64 slot,
			 const void *want)
{
	void *got = gs_kunit_page(test);

	KUNIT_ASSERT_EQ(test, gs_store_read(s, slot, got), 0);
	KUNIT_EXPECT_MEMEQ(test, got, want, PAGE_SIZE);
	kunit_kfree(test, got);
}

static enum gs_kind gs_wb_kind(struct gs_store *s, u64 slot)
{
	return gs_store_kind(s, slot, NULL);
}

static long gs_stat(atomic_long_t *v)
{
	return atomic_long_read(v);
}

/* Every kind of page through writeback and back, per algorithm. */
static void gs_wb_round_trip(struct kunit *test)
{
	static const char *const algs[] = { "lz4", "zstd", "lzo-rle", "842" };
	unsigned int i, len;

	for (i = 0; i < ARRAY_SIZE(algs); i++) {
		struct gs_kbk *k;
		struct gs_store *s;
		void *pages[5];
		u64 done;
		int j;

		if (!gs_comp_available(algs[i]))
			continue;
		s = gs_kunit_wb_store(test, algs[i], 1024, 64, &k);
		pages[0] = gs_kunit_same(test, 0);
		pages[1] = gs_kunit_same(test, 0x0123456789abcdefUL);
		pages[2] = gs_wb_text(test, i);
		pages[3] = gs_kunit_random(test);
		pages[4] = gs_wb_semi(test);
		for (j = 0; j < 5; j++)
			gs_wb_write(test, s, 100 + j, pages[j]);
		KUNIT_EXPECT_EQ(test, gs_store_writeback(s, GS_WB_ALL, U64_MAX,
							 &done), 0);
		KUNIT_EXPECT_EQ_MSG(test, done, 3ULL, "%s", algs[i]);
		/* Same-filled pages cost nothing: they stay. */
		KUNIT_EXPECT_EQ(test, gs_wb_kind(s, 100), GS_KIND_SAME);
		KUNIT_EXPECT_EQ(test, gs_wb_kind(s, 101), GS_KIND_SAME);
		KUNIT_EXPECT_EQ(test, gs_store_kind(s, 102, &len),
				GS_KIND_WRITTEN_BACK);
		KUNIT_EXPECT_LT(test, len, PAGE_SIZE);
		KUNIT_EXPECT_EQ(test, gs_store_kind(s, 103, &len),
				GS_KIND_WRITTEN_BACK);
		KUNIT_EXPECT_EQ(test, len, PAGE_SIZE);
		KUNIT_EXPECT_EQ(test, gs_wb_kind(s, 104), GS_KIND_WRITTEN_BACK);
		KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_WB_PAGES), 3);
		KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_COMP_PAGES), 0);
		KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_HUGE_PAGES), 0);
		KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_COMPR_BYTES), 0);
		KUNIT_EXPECT_EQ(test, gs_stat(&s->stats.bd_writes), 3);
		KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_SLOTS_USED), 5);
		KUNIT_EXPECT_EQ(test, gs_store_pool_pages(s), 0UL);
		for (j = 0; j < 5; j++)
			gs_wb_expect(test, s, 100 + j, pages[j]);
		KUNIT_EXPECT_EQ(test, gs_stat(&s->stats.bd_reads), 3);
		/* Read again: still there (a read does not move it back). */
		gs_wb_expect(test, s, 102, pages[2]);
		KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0L);
		gs_store_free_range(s, 0, 1024);
		KUNIT_EXPECT_EQ(test, gs_backing_used(s->bk), 0ULL);
		KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_WB_PAGES), 0);
		KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_SLOTS_USED), 0);
	}
}

/* idle, huge, huge_idle, incompressible, all: each takes what it says. */
static void gs_wb_modes(struct kunit *test)
{
	struct gs_kbk *k;
	struct gs_store *s = gs_kunit_wb_store(test, "lz4", 1024, 64, &k);
	void *p[10];
	u64 done;
	u32 secs;
	int i;

	for (i = 0; i < 4; i++)
		p[i] = gs_wb_text(test, i);
	p[4] = gs_kunit_random(test);
	p[5] = gs_kunit_random(test);
	p[6] = gs_wb_semi(test);
	p[7] = gs_wb_semi(test);
	for (i = 0; i < 8; i++)
		gs_wb_write(test, s, i, p[i]);
	KUNIT_EXPECT_TRUE(test, gs_store_entry(s, 4) & GS_FLAG_INCOMP);
	KUNIT_EXPECT_EQ(test, gs_wb_kind(s, 6), GS_KIND_RAW);
	KUNIT_EXPECT_FALSE(test, gs_store_entry(s, 6) & GS_FLAG_INCOMP);

	KUNIT_EXPECT_EQ(test, gs_store_writeback(s, GS_WB_INCOMP, U64_MAX,
						 &done), 0);
	KUNIT_EXPECT_EQ(test, done, 2ULL);
	KUNIT_EXPECT_EQ(test, gs_wb_kind(s, 5), GS_KIND_WRITTEN_BACK);
	KUNIT_EXPECT_EQ(test, gs_wb_kind(s, 6), GS_KIND_RAW);
	KUNIT_EXPECT_EQ(test, gs_store_writeback(s, GS_WB_HUGE, U64_MAX, &done),
			0);
	KUNIT_EXPECT_EQ(test, done, 2ULL);
	KUNIT_EXPECT_EQ(test, gs_wb_kind(s, 7), GS_KIND_WRITTEN_BACK);

	/* Nothing is idle until marked; a read clears the mark. */
	KUNIT_EXPECT_EQ(test, gs_store_writeback(s, GS_WB_IDLE, U64_MAX, &done),
			0);
	KUNIT_EXPECT_EQ(test, done, 0ULL);
	gs_store_mark_idle(s, 0);
	KUNIT_EXPECT_TRUE(test, gs_store_idle(s, 1, &secs));
	gs_wb_expect(test, s, 1, p[1]);
	KUNIT_EXPECT_FALSE(test, gs_store_idle(s, 1, &secs));
	KUNIT_EXPECT_EQ(test, gs_store_writeback(s, GS_WB_IDLE, U64_MAX, &done),
			0);
	KUNIT_EXPECT_EQ(test, done, 3ULL);
	KUNIT_EXPECT_EQ(test, gs_wb_kind(s, 1), GS_KIND_COMPRESSED);
	KUNIT_EXPECT_EQ(test, gs_wb_kind(s, 3), GS_KIND_WRITTEN_BACK);

	p[8] = gs_kunit_random(test);
	p[9] = gs_wb_semi(test);
	gs_wb_write(test, s, 8, p[8]);
	gs_wb_write(test, s, 9, p[9]);
	gs_store_mark_idle(s, 0);
	gs_wb_expect(test, s, 9, p[9]);
	KUNIT_EXPECT_EQ(test, gs_store_writeback(s, GS_WB_HUGE_IDLE, U64_MAX,
						 &done), 0);
	KUNIT_EXPECT_EQ(test, done, 1ULL);
	KUNIT_EXPECT_EQ(test, gs_wb_kind(s, 8), GS_KIND_WRITTEN_BACK);
	KUNIT_EXPECT_EQ(test, gs_wb_kind(s, 9), GS_KIND_RAW);

	/* A page count bounds any mode. */
	KUNIT_EXPECT_EQ(test, gs_store_writeback(s, GS_WB_ALL, 1, &done), 0);
	KUNIT_EXPECT_EQ(test, done, 1ULL);
	KUNIT_EXPECT_EQ(test, gs_store_writeback(s, GS_WB_ALL, U64_MAX, &done),
			0);
	KUNIT_EXPECT_EQ(test, done, 1ULL);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_WB_PAGES), 10);
	for (i = 0; i < 10; i++)
		gs_wb_expect(test, s, i, p[i]);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0L);
}

/*
 * The user's idle mark and the cold clock's are apart: a page read after
 * `idle` is not taken by `writeback idle` once the cold sweep has passed
 * it, and a cold sweep does not mark anything idle.
 */
static void gs_wb_idle_not_cold(struct kunit *test)
{
	struct gs_kbk *k;
	struct gs_store *s = gs_kunit_wb_store(test, "lz4", 1024, 64, &k);
	void *p = gs_kunit_page(test);
	u64 done;
	u32 secs;
	int i;

	gs_kunit_fill_slots(test, s, 0, 1, 6);
	gs_store_mark_idle(s, 0);
	KUNIT_EXPECT_TRUE(test, gs_store_idle(s, 1, &secs));
	gs_kunit_fill_text(p, 1);
	gs_wb_expect(test, s, 1, p);
	KUNIT_EXPECT_FALSE(test, gs_store_idle(s, 1, &secs));
	/* One lap marks all six cold, the next takes slot 0. */
	KUNIT_EXPECT_EQ(test, gs_store_writeback(s, GS_WB_COLD, 1, &done), 0);
	KUNIT_EXPECT_EQ(test, done, 1ULL);
	KUNIT_EXPECT_EQ(test, gs_wb_kind(s, 0), GS_KIND_WRITTEN_BACK);
	KUNIT_EXPECT_TRUE(test, gs_store_entry(s, 1) & GS_FLAG_COLD);
	KUNIT_EXPECT_FALSE(test, gs_store_idle(s, 1, &secs));
	KUNIT_EXPECT_EQ(test, gs_store_writeback(s, GS_WB_IDLE, U64_MAX, &done),
			0);
	KUNIT_EXPECT_EQ(test, done, 4ULL);
	KUNIT_EXPECT_EQ(test, gs_wb_kind(s, 1), GS_KIND_COMPRESSED);
	for (i = 2; i < 6; i++)
		KUNIT_EXPECT_EQ(test, gs_wb_kind(s, i), GS_KIND_WRITTEN_BACK);
	/* Cold but never marked idle: writeback idle leaves it. */
	gs_kunit_fill_slots(test, s, 8, 1, 2);
	KUNIT_EXPECT_EQ(test, gs_store_writeback(s, GS_WB_COLD, 1, &done), 0);
	KUNIT_EXPECT_EQ(test, gs_store_writeback(s, GS_WB_IDLE, U64_MAX, &done),
			0);
	KUNIT_EXPECT_EQ(test, done, 0ULL);
	gs_kunit_verify_slots(test, s, 0, 1, 6);
	gs_kunit_verify_slots(test, s, 8, 1, 2);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0L);
}

/* The cold sweep: second chance for what was read since it was marked. */
static void gs_wb_cold(struct kunit *test)
{
	struct gs_kbk *k;
	struct gs_store *s = gs_kunit_wb_store(test, "lz4", 1024, 64, &k);
	void *p = gs_kunit_page(test);
	u64 done;
	int i;

	gs_kunit_fill_slots(test, s, 0, 1, 8);
	/* First lap marks everything, the second takes the first four. */
	KUNIT_EXPECT_EQ(test, gs_store_writeback(s, GS_WB_COLD, 4, &done), 0);
	KUNIT_EXPECT_EQ(test, done, 4ULL);
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, gs_wb_kind(s, i), GS_KIND_WRITTEN_BACK);
	/* Slot 5 is read: it is skipped (and marked) by the next sweep. */
	gs_kunit_fill_text(p, 5);
	gs_wb_expect(test, s, 5, p);
	KUNIT_EXPECT_EQ(test, gs_store_writeback(s, GS_WB_COLD, 3, &done), 0);
	KUNIT_EXPECT_EQ(test, done, 3ULL);
	KUNIT_EXPECT_EQ(test, gs_wb_kind(s, 5), GS_KIND_COMPRESSED);
	KUNIT_EXPECT_EQ(test, gs_wb_kind(s, 7), GS_KIND_WRITTEN_BACK);
	/* Not read again: the next sweep takes it. */
	KUNIT_EXPECT_EQ(test, gs_store_writeback(s, GS_WB_COLD, 10, &done), 0);
	KUNIT_EXPECT_EQ(test, done, 1ULL);
	KUNIT_EXPECT_EQ(test, gs_wb_kind(s, 5), GS_KIND_WRITTEN_BACK);
	KUNIT_EXPECT_EQ(test, gs_store_writeback(s, GS_WB_COLD, 10, &done), 0);
	KUNIT_EXPECT_EQ(test, done, 0ULL);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0L);
}

/* writeback_limit: a budget of pages, used up by writes that happened. */
static void gs_wb_budget(struct kunit *test)
{
	struct gs_kbk *k;
	struct gs_store *s = gs_kunit_wb_store(test, "lz4", 1024, 64, &k);
	u64 done;

	gs_kunit_fill_slots(test, s, 0, 1, 10);
	gs_store_set_wb_budget(s, 3);
	gs_store_set_wb_limit_enable(s, true);
	KUNIT_EXPECT_EQ(test, gs_store_writeback(s, GS_WB_ALL, U64_MAX, &done),
			-EIO);
	KUNIT_EXPECT_EQ(test, done, 3ULL);
	KUNIT_EXPECT_EQ(test, gs_stat(&s->wb.budget), 0);
	/* A failed write gives its budget back. */
	gs_store_set_wb_budget(s, 100);
	atomic_set(&k->fail_writes, 1);
	KUNIT_EXPECT_EQ(test, gs_store_writeback(s, GS_WB_ALL, U64_MAX, &done),
			-EIO);
	KUNIT_EXPECT_EQ(test, done, 0ULL);
	KUNIT_EXPECT_EQ(test, gs_stat(&s->wb.budget), 100);
	KUNIT_EXPECT_EQ(test, gs_store_writeback(s, GS_WB_ALL, U64_MAX, &done),
			0);
	KUNIT_EXPECT_EQ(test, done, 7ULL);
	KUNIT_EXPECT_EQ(test, gs_stat(&s->wb.budget), 93);
	gs_kunit_verify_slots(test, s, 0, 1, 10);
}

/* Mid-write: the budget is switched off (and the write fails). */
static void gs_wb_hook_budget_off(struct gs_kbk *k, bool write, u64 b)
{
	gs_store_set_wb_limit_enable(k->arg, false);
}

/*
 * Switching the budget on and off leaves what is left of it alone, and
 * pages that were taken from it go back to it if they fail, even if it
 * was switched off meanwhile.
 */
static void gs_wb_budget_switch(struct kunit *test)
{
	struct gs_kbk *k;
	struct gs_store *s = gs_kunit_wb_store(test, "lz4", 1024, 64, &k);
	u64 done;

	gs_kunit_fill_slots(test, s, 0, 1, 12);
	gs_store_set_wb_budget(s, 10);
	gs_store_set_wb_limit_enable(s, true);
	gs_store_set_wb_limit_enable(s, false);
	gs_store_set_wb_limit_enable(s, true);
	KUNIT_EXPECT_EQ(test, gs_stat(&s->wb.budget), 10);
	KUNIT_EXPECT_EQ(test, gs_store_writeback(s, GS_WB_ALL, 4, &done), 0);
	KUNIT_EXPECT_EQ(test, done, 4ULL);
	KUNIT_EXPECT_EQ(test, gs_stat(&s->wb.budget), 6);
	/* Off: writeback does not use it; on again: it is still there. */
	gs_store_set_wb_limit_enable(s, false);
	KUNIT_EXPECT_EQ(test, gs_store_writeback(s, GS_WB_ALL, 2, &done), 0);
	KUNIT_EXPECT_EQ(test, done, 2ULL);
	gs_store_set_wb_limit_enable(s, true);
	KUNIT_EXPECT_EQ(test, gs_stat(&s->wb.budget), 6);
	/* Taken, switched off mid-write, failed: given back all the same. */
	k->hook = gs_wb_hook_budget_off;
	k->arg = s;
	k->hook_runs = 1;
	atomic_set(&k->fail_writes, 1);
	KUNIT_EXPECT_EQ(test, gs_store_writeback(s, GS_WB_ALL, U64_MAX, &done),
			-EIO);
	KUNIT_EXPECT_EQ(test, done, 0ULL);
	KUNIT_EXPECT_FALSE(test, READ_ONCE(s->wb.limit_enable));
	KUNIT_EXPECT_EQ(test, gs_stat(&s->wb.budget), 6);
	gs_kunit_verify_slots(test, s, 0, 1, 12);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0L);
}

/* A full backing store: what fits goes, the rest stays, all intact. */
static void gs_wb_backing_full(struct kunit *test)
{
	struct gs_kbk *k;
	struct gs_store *s = gs_kunit_wb_store(test, "lz4", 1024, 4, &k);
	u64 done;
	int i;

	gs_kunit_fill_slots(test, s, 0, 1, 10);
	KUNIT_EXPECT_EQ(test, gs_store_writeback(s, GS_WB_ALL, U64_MAX, &done),
			-ENOSPC);
	KUNIT_EXPECT_EQ(test, done, 4ULL);
	for (i = 4; i < 10; i++) {
		KUNIT_EXPECT_EQ(test, gs_wb_kind(s, i), GS_KIND_COMPRESSED);
		KUNIT_EXPECT_FALSE(test, gs_store_entry(s, i) & GS_FLAG_WB);
	}
	gs_kunit_verify_slots(test, s, 0, 1, 10);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_COMP_PAGES), 6);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0L);
	/* A freed slot makes room for one more. */
	gs_store_free(s, 0);
	KUNIT_EXPECT_EQ(test, gs_store_writeback(s, GS_WB_ALL, U64_MAX, &done),
			-ENOSPC);
	KUNIT_EXPECT_EQ(test, done, 1ULL);
}

/* Write errors leave entries in the pool; read errors fail the read only. */
static void gs_wb_io_errors(struct kunit *test)
{
	struct gs_kbk *k;
	struct gs_store *s = gs_kunit_wb_store(test, "lz4", 1024, 64, &k);
	void *p = gs_kunit_page(test), *got = gs_kunit_page(test);
	u64 done;
	int i;

	gs_kunit_fill_slots(test, s, 0, 1, 10);
	atomic_set(&k->fail_writes, 1);
	KUNIT_EXPECT_EQ(test, gs_store_writeback(s, GS_WB_ALL, U64_MAX, &done),
			-EIO);
	KUNIT_EXPECT_EQ(test, done, 0ULL);
	KUNIT_EXPECT_EQ(test, gs_stat(&s->stats.bd_write_errors), 10);
	KUNIT_EXPECT_EQ(test, gs_backing_used(s->bk), 0ULL);
	for (i = 0; i < 10; i++) {
		KUNIT_EXPECT_EQ(test, gs_store_entry(s, i) &
				(GS_KIND_MASK | GS_FLAG_WB),
				(unsigned long)GS_KIND_COMPRESSED);
		gs_kunit_fill_text(p, i);
		gs_wb_expect(test, s, i, p);
	}
	KUNIT_EXPECT_EQ(test, gs_store_writeback(s, GS_WB_ALL, U64_MAX, &done),
			0);
	KUNIT_EXPECT_EQ(test, done, 10ULL);

	atomic_set(&k->fail_reads, 1);
	KUNIT_EXPECT_EQ(test, gs_store_read(s, 3, got), -EIO);
	/* failed_reads is the block device's: it counts failed bios once. */
	KUNIT_EXPECT_EQ(test, gs_stat(&s->stats.failed_reads), 0);
	KUNIT_EXPECT_EQ(test, gs_stat(&s->stats.bd_read_errors), 1);
	/* Not pinned any more, and still there. */
	KUNIT_EXPECT_FALSE(test, gs_store_entry(s, 3) & GS_FLAG_IO);
	gs_kunit_fill_text(p, 3);
	gs_wb_expect(test, s, 3, p);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0L);
}

/*
 * Allocation failures (injected): a store that cannot allocate fails and
 * leaves the slot as it was; with a backing store, the page goes there.
 */
static void gs_wb_alloc_failure(struct kunit *test)
{
	struct gs_store *s = gs_kunit_store(test, "lz4", 4096);
	void *a = gs_wb_text(test, 1), *b = gs_wb_text(test, 2);
	void *same = gs_kunit_same(test, 0x1111111111111111UL);
	struct gs_kbk *k;
	struct gs_store *w;

	gs_wb_write(test, s, 0, a);
	atomic_set(&s->fail_alloc, 1);
	KUNIT_EXPECT_EQ(test, gs_store_write(s, 0, b, GFP_KERNEL), -ENOMEM);
	gs_wb_expect(test, s, 0, a);
	/*
	 * A same-filled page needs no pool object, but a new cluster: its
	 * allocation fails, the reserve has one.
	 */
	atomic_set(&s->fail_alloc, 1);
	gs_wb_write(test, s, GS_CLUSTER_SLOTS, same);
	KUNIT_EXPECT_EQ(test, gs_wb_kind(s, GS_CLUSTER_SLOTS), GS_KIND_SAME);
	KUNIT_EXPECT_EQ(test, gs_stat(&s->stats.clusters), 2);
	KUNIT_EXPECT_EQ(test, gs_stat(&s->stats.injected), 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&s->fail_alloc), 0);
	KUNIT_EXPECT_EQ(test, gs_store_reserve_bytes(s),
			(GS_CLUSTER_RESERVE - 1) * gs_cluster_bytes());

	w = gs_kunit_wb_store(test, "lz4", 4096, 64, &k);
	gs_wb_write(test, w, 0, a);
	atomic_set(&w->fail_alloc, 1);
	/* No room in the pool: to the backing device, as it is. */
	KUNIT_EXPECT_EQ(test, gs_store_write_nowait(w, 0, b, GFP_KERNEL),
			GS_WRITE_DIRECT);
	gs_wb_expect(test, w, 0, a);
	atomic_set(&w->fail_alloc, 1);
	gs_wb_write(test, w, 0, b);
	KUNIT_EXPECT_EQ(test, gs_wb_kind(w, 0), GS_KIND_WRITTEN_BACK);
	gs_wb_expect(test, w, 0, b);
	KUNIT_EXPECT_EQ(test, gs_store_check(w, NULL), 0L);
}

/* ------------------------------------------------- races, made to happen */

struct gs_wb_race {
	struct kunit *test;
	struct gs_store *s;
	void *newp;
	void *buf;
	void *want;
	int read_ret;
};

/* Mid-writeback: overwrite slot 3, free slot 2, read slot 1. */
static void gs_wb_hook_writeback(struct gs_kbk *k, bool write, u64 b)
{
	struct gs_wb_race *r = k->arg;

	KUNIT_EXPECT_TRUE(r->test, write);
	KUNIT_EXPECT_TRUE(r->test, gs_store_entry(r->s, 3) & GS_FLAG_WB);
	KUNIT_EXPECT_EQ(r->test, gs_store_write(r->s, 3, r->newp, GFP_KERNEL),
			0);
	gs_store_free(r->s, 2);
	r->read_ret = gs_store_read(r->s, 1, r->buf);
}

static void gs_wb_race_writeback(struct kunit *test)
{
	struct gs_kbk *k;
	struct gs_store *s = gs_kunit_wb_store(test, "lz4", 1024, 64, &k);
	struct gs_wb_race r = { .test = test, .s = s };
	void *p = gs_kunit_page(test);
	u64 done;
	int i;

	gs_kunit_fill_slots(test, s, 0, 1, 6);
	r.newp = gs_wb_text(test, 100);
	r.buf = gs_kunit_page(test);
	k->hook = gs_wb_hook_writeback;
	k->arg = &r;
	k->hook_runs = 1;
	KUNIT_EXPECT_EQ(test, gs_store_writeback(s, GS_WB_ALL, U64_MAX, &done),
			0);
	KUNIT_EXPECT_EQ(test, done, 4ULL);
	/* The read during writeback saw the page. */
	KUNIT_EXPECT_EQ(test, r.read_ret, 0);
	gs_kunit_fill_text(p, 1);
	KUNIT_EXPECT_MEMEQ(test, r.buf, p, PAGE_SIZE);
	/* Overwritten: the new data, in the pool; freed: empty. */
	KUNIT_EXPECT_EQ(test, gs_wb_kind(s, 3), GS_KIND_COMPRESSED);
	KUNIT_EXPECT_FALSE(test, gs_store_entry(s, 3) & GS_FLAG_WB);
	gs_wb_expect(test, s, 3, r.newp);
	KUNIT_EXPECT_EQ(test, gs_wb_kind(s, 2), GS_KIND_EMPTY);
	KUNIT_EXPECT_EQ(test, gs_backing_used(s->bk), 4ULL);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_WB_PAGES), 4);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_COMP_PAGES), 1);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_SLOTS_USED), 5);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0L);
	for (i = 0; i < 6; i++) {
		if (i == 2 || i == 3)
			continue;
		gs_kunit_fill_text(p, i);
		gs_wb_expect(test, s, i, p);
	}
}

/*
 * A round of two batches (slots 0..31, then 32..63): while the first
 * one's write is out, slot 3 of it is overwritten and slot 2 freed, and
 * slot 40, which the second batch has not taken yet, is overwritten.
 */
static void gs_wb_hook_round(struct gs_kbk *k, bool write, u64 b)
{
	struct gs_wb_race *r = k->arg;

	KUNIT_EXPECT_TRUE(r->test, write);
	KUNIT_EXPECT_TRUE(r->test, gs_store_entry(r->s, 3) & GS_FLAG_WB);
	KUNIT_EXPECT_FALSE(r->test, gs_store_entry(r->s, 40) & GS_FLAG_WB);
	KUNIT_EXPECT_EQ(r->test, gs_store_write(r->s, 3, r->newp, GFP_KERNEL),
			0);
	gs_store_free(r->s, 2);
	KUNIT_EXPECT_EQ(r->test, gs_store_write(r->s, 40, r->want, GFP_KERNEL),
			0);
}

static void gs_wb_race_round(struct kunit *test)
{
	struct gs_kbk *k;
	struct gs_store *s = gs_kunit_wb_store(test, "lz4", 1024, 256, &k);
	struct gs_wb_race r = { .test = test, .s = s };
	void *p = gs_kunit_page(test);
	u64 done;
	int i;

	gs_kunit_fill_slots(test, s, 0, 1, 100);
	r.newp = gs_wb_text(test, 1003);
	r.want = gs_wb_text(test, 1040);
	KUNIT_ASSERT_EQ(test, gs_store_set_wb_batch_size(s, 64), 0);
	k->hook = gs_wb_hook_round;
	k->arg = &r;
	k->hook_runs = 1;
	KUNIT_EXPECT_EQ(test, gs_store_writeback(s, GS_WB_ALL, U64_MAX, &done),
			0);
	/* 30 of the first batch, the rest whole; slot 40 with its new data. */
	KUNIT_EXPECT_EQ(test, done, 98ULL);
	KUNIT_EXPECT_EQ(test, gs_wb_kind(s, 3), GS_KIND_COMPRESSED);
	KUNIT_EXPECT_FALSE(test, gs_store_entry(s, 3) & GS_FLAG_WB);
	KUNIT_EXPECT_EQ(test, gs_wb_kind(s, 2), GS_KIND_EMPTY);
	KUNIT_EXPECT_EQ(test, gs_wb_kind(s, 40), GS_KIND_WRITTEN_BACK);
	gs_wb_expect(test, s, 3, r.newp);
	gs_wb_expect(test, s, 40, r.want);
	KUNIT_EXPECT_EQ(test, gs_backing_used(s->bk), 98ULL);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_WB_PAGES), 98);
	KUNIT_EXPECT_EQ(test, gs_stat(&s->stats.bd_writes), 100);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0L);
	for (i = 0; i < 100; i++) {
		if (i == 2 || i == 3 || i == 40)
			continue;
		gs_kunit_fill_text(p, i);
		gs_wb_expect(test, s, i, p);
	}
}

/* Mid-read of a written-back slot: it is freed. */
static void gs_wb_hook_read_free(struct gs_kbk *k, bool write, u64 b)
{
	struct gs_wb_race *r = k->arg;

	KUNIT_EXPECT_FALSE(r->test, write);
	KUNIT_EXPECT_TRUE(r->test, gs_store_entry(r->s, 7) & GS_FLAG_IO);
	gs_store_free(r->s, 7);
	/* The reader still holds the backing slot: not reusable yet. */
	KUNIT_EXPECT_EQ(r->test, gs_backing_owner(r->s->bk, b), 7ULL);
}

/* Mid-read: overwritten, and the new data is written back too. */
static void gs_wb_hook_read_overwrite(struct gs_kbk *k, bool write, u64 b)
{
	struct gs_wb_race *r = k->arg;
	unsigned long e;
	u64 done;

	KUNIT_EXPECT_EQ(r->test, gs_store_write(r->s, 7, r->newp, GFP_KERNEL),
			0);
	KUNIT_EXPECT_EQ(r->test, gs_store_writeback(r->s, GS_WB_ALL, U64_MAX,
						    &done), 0);
	KUNIT_EXPECT_EQ(r->test, done, 1ULL);
	e = gs_store_entry(r->s, 7);
	KUNIT_EXPECT_EQ(r->test, gs_entry_kind(e), GS_KIND_WRITTEN_BACK);
	/* Not on the slot still being read. */
	KUNIT_EXPECT_NE(r->test, gs_entry_value(e), b);
}

static void gs_wb_race_read(struct kunit *test)
{
	struct gs_kbk *k;
	struct gs_store *s = gs_kunit_wb_store(test, "lz4", 1024, 64, &k);
	struct gs_wb_race r = { .test = test, .s = s };
	void *p = gs_wb_text(test, 7), *got = gs_kunit_page(test);
	u64 done;

	gs_wb_write(test, s, 7, p);
	KUNIT_ASSERT_EQ(test, gs_store_writeback(s, GS_WB_ALL, U64_MAX, &done),
			0);
	k->hook = gs_wb_hook_read_free;
	k->arg = &r;
	k->hook_runs = 1;
	/* The read returns what was there when it began. */
	KUNIT_EXPECT_EQ(test, gs_store_read(s, 7, got), 0);
	KUNIT_EXPECT_MEMEQ(test, got, p, PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, gs_wb_kind(s, 7), GS_KIND_EMPTY);
	KUNIT_EXPECT_EQ(test, gs_backing_used(s->bk), 0ULL);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_WB_PAGES), 0);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0L);

	gs_wb_write(test, s, 7, p);
	KUNIT_ASSERT_EQ(test, gs_store_writeback(s, GS_WB_ALL, U64_MAX, &done),
			0);
	r.newp = gs_wb_text(test, 8);
	k->hook = gs_wb_hook_read_overwrite;
	k->hook_runs = 1;
	KUNIT_EXPECT_EQ(test, gs_store_read(s, 7, got), 0);
	KUNIT_EXPECT_MEMEQ(test, got, p, PAGE_SIZE);
	/* The old backing slot went with the read; the new one stays. */
	KUNIT_EXPECT_EQ(test, gs_backing_used(s->bk), 1ULL);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0L);
	gs_wb_expect(test, s, 7, r.newp);
}

/* Reads that need backing I/O are refused by the _nowait variants. */
static void gs_wb_nowait(struct kunit *test)
{
	struct gs_kbk *k;
	struct gs_store *s = gs_kunit_wb_store(test, "lz4", 1024, 64, &k);
	void *p = gs_wb_text(test, 1), *got = gs_kunit_page(test);
	void *rnd = gs_kunit_random(test);
	u64 done;

	gs_wb_write(test, s, 1, p);
	KUNIT_ASSERT_EQ(test, gs_store_writeback(s, GS_WB_ALL, U64_MAX, &done),
			0);
	memset(got, 0xaa, PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, gs_store_read_nowait(s, 1, got), -EAGAIN);
	KUNIT_EXPECT_EQ(test, *(u8 *)got, 0xaa);
	KUNIT_EXPECT_EQ(test, gs_stat(&s->stats.bd_reads), 0);
	/*
	 * Direct policy: an incompressible page cannot be stored now; it is
	 * to go to the backing device as it is.
	 */
	WRITE_ONCE(s->wb.direct, GS_DIRECT_INCOMP);
	KUNIT_EXPECT_EQ(test, gs_store_write_nowait(s, 2, rnd, GFP_KERNEL),
			GS_WRITE_DIRECT);
	KUNIT_EXPECT_EQ(test, gs_wb_kind(s, 2), GS_KIND_EMPTY);
	/* But text and same-filled pages can. */
	KUNIT_EXPECT_EQ(test, gs_store_write_nowait(s, 3, p, GFP_KERNEL), 0);
	KUNIT_EXPECT_EQ(test, gs_wb_kind(s, 3), GS_KIND_COMPRESSED);
}

/* The direct policy sends pages past the pool, straight to the device. */
static void gs_wb_direct(struct kunit *test)
{
	struct gs_kbk *k;
	struct gs_store *s = gs_kunit_wb_store(test, "lz4", 1024, 64, &k);
	void *rnd = gs_kunit_random(test), *semi = gs_wb_semi(test);
	void *text = gs_wb_text(test, 1);
	unsigned long n;
	unsigned int len;

	WRITE_ONCE(s->wb.direct, GS_DIRECT_INCOMP);
	gs_wb_write(test, s, 4, rnd);
	gs_wb_write(test, s, 1, semi);
	gs_wb_write(test, s, 2, text);
	KUNIT_EXPECT_EQ(test, gs_store_kind(s, 4, &len), GS_KIND_WRITTEN_BACK);
	KUNIT_EXPECT_EQ(test, len, PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, gs_wb_kind(s, 1), GS_KIND_RAW);
	KUNIT_EXPECT_EQ(test, gs_wb_kind(s, 2), GS_KIND_COMPRESSED);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_HUGE_PAGES), 1);
	KUNIT_EXPECT_EQ(test, gs_stat(&s->stats.bd_writes), 1);

	WRITE_ONCE(s->wb.direct, GS_DIRECT_HUGE);
	gs_wb_write(test, s, 3, semi);
	KUNIT_EXPECT_EQ(test, gs_wb_kind(s, 3), GS_KIND_WRITTEN_BACK);
	/* Overwriting a direct slot frees its backing slot. */
	gs_wb_write(test, s, 4, text);
	KUNIT_EXPECT_EQ(test, gs_wb_kind(s, 4), GS_KIND_COMPRESSED);
	KUNIT_EXPECT_EQ(test, gs_backing_used(s->bk), 1ULL);
	gs_wb_expect(test, s, 4, text);
	/*
	 * Every page past the pool, none compressed, but slot 0: swap's
	 * header stays in the pool (as it is).
	 */
	WRITE_ONCE(s->wb.direct, GS_DIRECT_ALL);
	n = gs_stat_read(&s->stats, GS_STAT_COMPRESSIONS);
	gs_wb_write(test, s, 0, text);
	gs_wb_write(test, s, 5, text);
	KUNIT_EXPECT_EQ(test, gs_wb_kind(s, 0), GS_KIND_RAW);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_COMPRESSIONS), n);
	KUNIT_EXPECT_EQ(test, gs_wb_kind(s, 5), GS_KIND_WRITTEN_BACK);
	KUNIT_EXPECT_EQ(test, gs_backing_used(s->bk), 2ULL);
	gs_wb_expect(test, s, 0, text);
	gs_wb_expect(test, s, 5, text);
	gs_wb_expect(test, s, 1, semi);
	gs_wb_expect(test, s, 3, semi);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0L);
}

/* A pool limit with a backing store: writes never fail, the pool obeys. */
static void gs_wb_pool_limit(struct kunit *test)
{
	const int n = 600;
	struct gs_kbk *k;
	struct gs_store *s = gs_kunit_wb_store(test, "lz4", 4096, 1024, &k);
	void *p = gs_kunit_page(test);
	int i;

	WRITE_ONCE(s->limit_pages, 16);
	for (i = 0; i < n; i++) {
		gs_kunit_fill_text(p, i);
		gs_wb_write(test, s, i, p);
		KUNIT_ASSERT_LE(test, gs_store_pool_pages(s), 16UL);
	}
	flush_work(&s->wb.work);
	kunit_info(test, "%d pages: %ld in the pool (%lu pool pages), %ld written back\n",
		   n, gs_stat_read(&s->stats, GS_STAT_COMP_PAGES), gs_store_pool_pages(s),
		   gs_stat_read(&s->stats, GS_STAT_WB_PAGES));
	KUNIT_EXPECT_GT(test, gs_stat_read(&s->stats, GS_STAT_WB_PAGES), (long)n / 2);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_WB_PAGES) +
			gs_stat_read(&s->stats, GS_STAT_COMP_PAGES), (long)n);
	KUNIT_EXPECT_EQ(test, gs_stat(&s->stats.failed_writes), 0);
	gs_kunit_verify_slots(test, s, 0, 1, n);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0L);
}

/*
 * A page for the backing device that finds no room there (the device
 * full, or the budget spent) goes into the pool as it is: swap sees no
 * error, and writeback moves it once there is room. Over the pool limit
 * as well, the write fails and the slot is left as it was.
 */
static void gs_wb_direct_no_room(struct kunit *test)
{
	struct gs_kbk *k;
	struct gs_store *s = gs_kunit_wb_store(test, "lz4", 1024, 4, &k);
	void *p = gs_kunit_page(test);
	u64 done;
	long n;
	int i;

	WRITE_ONCE(s->wb.direct, GS_DIRECT_ALL);
	n = gs_stat_read(&s->stats, GS_STAT_COMPRESSIONS);
	gs_kunit_fill_slots(test, s, 1, 1, 6);
	KUNIT_EXPECT_EQ(test, gs_backing_used(s->bk), 4ULL);
	for (i = 1; i <= 6; i++)
		KUNIT_EXPECT_EQ(test, gs_wb_kind(s, i), i <= 4 ?
				GS_KIND_WRITTEN_BACK : GS_KIND_RAW);
	/*
	 * The submit path saw room that another store took before the
	 * worker got to it: gs_store_write_direct() finds none.
	 */
	gs_kunit_fill_text(p, 6);
	KUNIT_EXPECT_EQ(test, gs_store_write_direct(s, 7, p, GFP_KERNEL), 0);
	KUNIT_EXPECT_EQ(test, gs_wb_kind(s, 7), GS_KIND_RAW);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_COMPRESSIONS), n);
	KUNIT_EXPECT_EQ(test, gs_stat(&s->stats.bd_write_errors), 0);
	gs_kunit_verify_slots(test, s, 1, 1, 6);
	gs_wb_expect(test, s, 7, p);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0L);

	/* Room again: writeback takes them. */
	KUNIT_EXPECT_EQ(test, gs_store_free_range(s, 1, 4), 4ULL);
	KUNIT_EXPECT_EQ(test, gs_store_writeback(s, GS_WB_ALL, U64_MAX, &done),
			0);
	KUNIT_EXPECT_EQ(test, done, 3ULL);
	KUNIT_EXPECT_EQ(test, gs_wb_kind(s, 7), GS_KIND_WRITTEN_BACK);

	/* The budget spent: the same, in the pool. */
	gs_store_set_wb_budget(s, 0);
	gs_store_set_wb_limit_enable(s, true);
	gs_kunit_fill_slots(test, s, 8, 1, 2);
	KUNIT_EXPECT_EQ(test, gs_wb_kind(s, 8), GS_KIND_RAW);
	KUNIT_EXPECT_EQ(test, gs_wb_kind(s, 9), GS_KIND_RAW);
	KUNIT_EXPECT_EQ(test, gs_backing_used(s->bk), 3ULL);

	/* And the pool over its limit: -ENOSPC, nothing stored. */
	WRITE_ONCE(s->limit_pages, gs_store_pool_pages(s) - 1);
	KUNIT_EXPECT_EQ(test, gs_store_write(s, 10, p, GFP_KERNEL), -ENOSPC);
	KUNIT_EXPECT_EQ(test, gs_wb_kind(s, 10), GS_KIND_EMPTY);
	KUNIT_EXPECT_EQ(test, gs_store_write_direct(s, 10, p, GFP_KERNEL),
			-ENOSPC);
	KUNIT_EXPECT_EQ(test, gs_wb_kind(s, 10), GS_KIND_EMPTY);
	WRITE_ONCE(s->limit_pages, 0);
	gs_kunit_verify_slots(test, s, 8, 1, 2);
	gs_wb_expect(test, s, 7, p);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0L);
}

/*
 * The shrinker writes back cold pages, never for a reclaimer that may not
 * do I/O or enter a filesystem (the backing device may be a loop device
 * over a file): it counts nothing for one.
 */
static void gs_wb_shrinker(struct kunit *test)
{
	struct gs_kbk *k;
	struct gs_store *s = gs_kunit_wb_store(test, "lz4", 1024, 64, &k);
	struct shrink_control sc = { .gfp_mask = GFP_KERNEL, .nr_to_scan = 8 };
	struct shrinker *sh = s->wb.shrinker;

	KUNIT_ASSERT_NOT_NULL(test, sh);
	gs_kunit_fill_slots(test, s, 0, 1, 20);
	/* Switched off: nothing to count, nothing done. */
	KUNIT_EXPECT_EQ(test, sh->count_objects(sh, &sc), 0UL);
	KUNIT_EXPECT_EQ(test, sh->scan_objects(sh, &sc), SHRINK_STOP);
	WRITE_ONCE(s->wb.use_shrinker, true);
	KUNIT_EXPECT_EQ(test, sh->count_objects(sh, &sc), 20UL);
	sc.gfp_mask = GFP_NOIO;
	KUNIT_EXPECT_EQ(test, sh->count_objects(sh, &sc), 0UL);
	KUNIT_EXPECT_EQ(test, sh->scan_objects(sh, &sc), SHRINK_STOP);
	sc.gfp_mask = GFP_NOFS;
	KUNIT_EXPECT_EQ(test, sh->count_objects(sh, &sc), 0UL);
	KUNIT_EXPECT_EQ(test, sh->scan_objects(sh, &sc), SHRINK_STOP);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_WB_PAGES), 0);
	sc.gfp_mask = GFP_KERNEL;
	KUNIT_EXPECT_EQ(test, sh->scan_objects(sh, &sc), 8UL);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_WB_PAGES), 8);
	KUNIT_EXPECT_EQ(test, sh->count_objects(sh, &sc), 12UL);
	/* Busy with another writeback: it does not wait. */
	mutex_lock(&s->wb.lock);
	KUNIT_EXPECT_EQ(test, sh->scan_objects(sh, &sc), SHRINK_STOP);
	mutex_unlock(&s->wb.lock);
	gs_kunit_verify_slots(test, s, 0, 1, 20);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0L);
}

/*
 * Idle by age, per page: a store and a read are accesses, as in zram;
 * pages of one cluster age apart.
 */
static void gs_wb_idle_age(struct kunit *test)
{
	struct gs_kbk *k;
	struct gs_store *s = gs_kunit_wb_store(test, "lz4", 4096, 64, &k);
	void *p = gs_wb_text(test, 1);
	u64 done;
	u32 secs;

	gs_wb_write(test, s, 0, p);
	gs_wb_write(test, s, 1, p);
	gs_wb_write(test, s, GS_CLUSTER_SLOTS, p);
	msleep(2100);
	gs_wb_write(test, s, 2, p);
	gs_wb_expect(test, s, 1, p);
	gs_store_mark_idle(s, 2);
	KUNIT_EXPECT_TRUE(test, gs_store_idle(s, 0, &secs));
	KUNIT_EXPECT_GE(test, secs, 2U);
	KUNIT_EXPECT_LE(test, secs, 4U);
	KUNIT_EXPECT_TRUE(test, gs_store_idle(s, GS_CLUSTER_SLOTS, &secs));
	/* Read and stored just now: not idle for 2 s. */
	KUNIT_EXPECT_FALSE(test, gs_store_idle(s, 1, &secs));
	KUNIT_EXPECT_LE(test, secs, 1U);
	KUNIT_EXPECT_FALSE(test, gs_store_idle(s, 2, &secs));
	/* writeback idle takes exactly the two old pages. */
	KUNIT_EXPECT_EQ(test, gs_store_writeback(s, GS_WB_IDLE, U64_MAX, &done),
			0);
	KUNIT_EXPECT_EQ(test, done, 2ULL);
	KUNIT_EXPECT_EQ(test, gs_wb_kind(s, 0), GS_KIND_WRITTEN_BACK);
	KUNIT_EXPECT_EQ(test, gs_wb_kind(s, 1), GS_KIND_COMPRESSED);
	gs_store_mark_idle(s, 0);
	KUNIT_EXPECT_TRUE(test, gs_store_idle(s, 1, &secs));
	KUNIT_EXPECT_TRUE(test, gs_store_idle(s, 2, &secs));
}

/*
 * Discard of freed backing slots: a freed slot is discarded in runs and
 * only then handed out again, a free during a discard in flight waits for
 * the next pass, turning it off frees at once, and the pages still held
 * stay intact.
 */
static void gs_wb_discard(struct kunit *test)
{
	struct gs_kbk *k;
	struct gs_store *s = gs_kunit_wb_store(test, "lz4", 1024, 64, &k);
	struct gs_backing *bk = s->bk;
	DECLARE_COMPLETION_ONSTACK(gate);
	u64 done, owner = 100, b;
	int i;

	KUNIT_ASSERT_EQ(test, gs_backing_set_discard(bk, true), 0);
	KUNIT_EXPECT_TRUE(test, bk->discard);
	gs_kunit_fill_slots(test, s, 0, 1, 8);
	KUNIT_ASSERT_EQ(test, gs_store_writeback(s, GS_WB_ALL, U64_MAX, &done),
			0);
	KUNIT_ASSERT_EQ(test, done, 8ULL);
	for (i = 0; i < 8; i++)
		KUNIT_EXPECT_EQ(test, gs_backing_owner(bk, i), (u64)i);

	/* Slots 2-4 and 6 freed; the worker stops in the first discard. */
	k->discard_gate = &gate;
	gs_store_free(s, 2);
	gs_store_free(s, 3);
	gs_store_free(s, 4);
	gs_store_free(s, 6);
	KUNIT_EXPECT_EQ(test, gs_backing_used(bk), 4ULL);
	KUNIT_EXPECT_EQ(test, gs_backing_owner(bk, 3), U64_MAX);
	msleep(300);
	/* A free while a discard is in flight. */
	gs_store_free(s, 7);
	/* Not handed out before their discard: the lowest free is 8. */
	KUNIT_ASSERT_EQ(test, gs_backing_alloc(bk, &owner, 1, &b, U64_MAX,
					       true), 1);
	KUNIT_EXPECT_EQ(test, b, 8ULL);
	gs_backing_free(bk, b);
	KUNIT_EXPECT_EQ(test, atomic_read(&k->discarded), 0);
	complete_all(&gate);
	gs_backing_drain(bk);
	k->discard_gate = NULL;
	/* 2-4 in one request; 6 and 7 (and 8) in their own or together. */
	KUNIT_EXPECT_EQ(test, atomic_read(&k->discarded), 6);
	KUNIT_EXPECT_LE(test, atomic_read(&k->discards), 4);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&bk->discarded), 6L);
	KUNIT_EXPECT_EQ(test, k->mem[3 * PAGE_SIZE + 100], 0x5a);
	KUNIT_EXPECT_EQ(test, gs_backing_used(bk), 3ULL);
	KUNIT_EXPECT_EQ(test, bk->used, 3ULL);
	KUNIT_ASSERT_EQ(test, gs_backing_alloc(bk, &owner, 1, &b, U64_MAX,
					       true), 1);
	KUNIT_EXPECT_EQ(test, b, 2ULL);
	/* Off: a free is at once, with no discard. */
	KUNIT_EXPECT_EQ(test, gs_backing_set_discard(bk, false), 0);
	gs_backing_free(bk, b);
	KUNIT_EXPECT_EQ(test, gs_backing_used(bk), 3ULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&k->discarded), 6);
	gs_kunit_verify_slots(test, s, 0, 1, 2);
	KUNIT_EXPECT_EQ(test, gs_wb_kind(s, 5), GS_KIND_WRITTEN_BACK);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0L);
	/* Pending discards at the end are done before the device goes. */
	KUNIT_EXPECT_EQ(test, gs_backing_set_discard(bk, true), 0);
	gs_store_free(s, 0);
	gs_store_free(s, 1);
	gs_store_free(s, 5);
	KUNIT_EXPECT_EQ(test, gs_store_clear_backing(s), 0);
}

/*
 * The last slot of the largest device, GS_BK_MAX_OWNER, through
 * writeback, a direct store and the discard of both backing slots it
 * held: its owner is its own, and the slots come back free. One slot
 * more and the reverse map could not tell its owner from
 * GS_BK_DISCARDING: such a store takes no backing store and cannot grow
 * to that size with one, and the map refuses the owner.
 */
static void gs_wb_last_slot(struct kunit *test)
{
	u64 last = GS_BK_MAX_OWNER, past = last + 1, done, b;
	struct gs_kbk *k, *k2;
	struct gs_store *s = gs_kunit_wb_store(test, "lz4", last + 1, 8, &k);
	struct gs_store *s2 = gs_kunit_store(test, "lz4", past + 1);
	struct gs_backing *bk = s->bk;
	void *p = gs_wb_text(test, 7), *q = gs_wb_text(test, 8);

	KUNIT_EXPECT_EQ(test, GS_MAX_DISKSIZE >> PAGE_SHIFT, last + 1);
	KUNIT_EXPECT_EQ(test, past + 1, (u64)GS_BK_DISCARDING);
	KUNIT_ASSERT_EQ(test, gs_backing_set_discard(bk, true), 0);

	gs_wb_write(test, s, last, p);
	KUNIT_ASSERT_EQ(test, gs_store_writeback_range(s, GS_WB_ALL, last,
						       last + 1, U64_MAX,
						       &done), 0);
	KUNIT_ASSERT_EQ(test, done, 1ULL);
	KUNIT_EXPECT_EQ(test, gs_wb_kind(s, last), GS_KIND_WRITTEN_BACK);
	KUNIT_EXPECT_EQ(test, gs_backing_owner(bk, 0), last);
	gs_wb_expect(test, s, last, p);

	/* A direct store replaces it: the old backing slot waits for its discard. */
	KUNIT_ASSERT_EQ(test, gs_store_write_direct(s, last, q, GFP_KERNEL), 0);
	KUNIT_EXPECT_EQ(test, gs_wb_kind(s, last), GS_KIND_WRITTEN_BACK);
	KUNIT_EXPECT_EQ(test, gs_backing_used(bk), 1ULL);
	gs_wb_expect(test, s, last, q);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0L);

	gs_store_free(s, last);
	gs_backing_drain(bk);
	KUNIT_EXPECT_EQ(test, atomic_read(&k->discarded), 2);
	KUNIT_EXPECT_EQ(test, gs_backing_used(bk), 0ULL);
	KUNIT_EXPECT_EQ(test, bk->used, 0ULL);
	/* Both are free again, to anybody. */
	KUNIT_ASSERT_EQ(test, gs_backing_alloc(bk, &last, 1, &b, 2, true), 1);
	KUNIT_ASSERT_EQ(test, gs_backing_alloc(bk, &last, 1, &b, 2, true), 1);
	gs_backing_free(bk, 0);
	gs_backing_free(bk, 1);
	gs_backing_drain(bk);

	/* One past: refused everywhere, nothing allocated. */
	KUNIT_EXPECT_EQ(test, gs_backing_alloc(bk, &past, 1, &b, U64_MAX,
					       false), -ERANGE);
	KUNIT_EXPECT_EQ(test, gs_backing_alloc_at(bk, &past, 1, &b, false),
			-ERANGE);
	KUNIT_EXPECT_EQ(test, bk->used, 0ULL);
	KUNIT_EXPECT_EQ(test, gs_store_set_size(s, past + 1), -EFBIG);
	KUNIT_EXPECT_EQ(test, s->nr_slots, last + 1);
	KUNIT_EXPECT_EQ(test, gs_store_set_backing(s2, gs_kbk_create(test, 8,
								     &k2)),
			-EFBIG);
	KUNIT_EXPECT_NULL(test, s2->bk);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0L);
}

/*
 * A discard the backing device fails: counted once per request, nothing
 * counted as discarded, the slots free again all the same, and the pages
 * still held intact.
 */
static void gs_wb_discard_error(struct kunit *test)
{
	struct gs_kbk *k;
	struct gs_store *s = gs_kunit_wb_store(test, "lz4", 1024, 64, &k);
	struct gs_backing *bk = s->bk;
	void *want = gs_kunit_page(test), *got = gs_kunit_page(test);
	u64 done, owner = 100, b;
	int i;

	KUNIT_ASSERT_EQ(test, gs_backing_set_discard(bk, true), 0);
	gs_kunit_fill_slots(test, s, 0, 1, 8);
	KUNIT_ASSERT_EQ(test, gs_store_writeback(s, GS_WB_ALL, U64_MAX, &done),
			0);
	KUNIT_ASSERT_EQ(test, done, 8ULL);
	k->fail_discards = true;
	gs_store_free(s, 2);
	gs_store_free(s, 3);
	gs_store_free(s, 6);
	gs_backing_drain(bk);
	/* 2-3 in one request, 6 in another. */
	KUNIT_EXPECT_EQ(test, atomic_long_read(&bk->discard_errors), 2L);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&bk->discarded), 0L);
	KUNIT_EXPECT_EQ(test, atomic_read(&k->discarded), 0);
	KUNIT_EXPECT_EQ(test, gs_backing_used(bk), 5ULL);
	KUNIT_ASSERT_EQ(test, gs_backing_alloc(bk, &owner, 1, &b, U64_MAX,
					       true), 1);
	KUNIT_EXPECT_EQ(test, b, 2ULL);
	gs_backing_free(bk, b);
	gs_backing_drain(bk);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&bk->discard_errors), 3L);
	k->fail_discards = false;
	for (i = 0; i < 8; i++) {
		if (i == 2 || i == 3 || i == 6)
			continue;
		gs_kunit_fill_text(want, i);
		KUNIT_ASSERT_EQ(test, gs_store_read(s, i, got), 0);
		KUNIT_EXPECT_MEMEQ(test, got, want, PAGE_SIZE);
	}
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0L);
	gs_store_free_range(s, 0, 8);
	KUNIT_EXPECT_EQ(test, gs_store_clear_backing(s), 0);
}

/* The block device backing: a brd ramdisk, real bios. */
static void gs_wb_bdev(struct kunit *test)
{
	struct gs_store *s = gs_kunit_store(test, "lz4", 4096);
	void *p = gs_kunit_page(test), *rnd = gs_kunit_random(test);
	struct gs_backing *bk;
	struct file *file;
	u64 done;
	int i;

	file = bdev_file_open_by_dev(MKDEV(RAMDISK_MAJOR, 0),
				     BLK_OPEN_READ | BLK_OPEN_WRITE |
				     BLK_OPEN_EXCL, test, NULL);
	if (IS_ERR(file))
		kunit_skip(test, "no ramdisk: %ld", PTR_ERR(file));
	bk = gs_backing_from_file(file);
	KUNIT_ASSERT_FALSE(test, IS_ERR(bk));
	kunit_info(test, "ramdisk: %llu pages\n", bk->nr_slots);
	KUNIT_ASSERT_EQ(test, gs_store_set_backing(s, bk), 0);
	for (i = 0; i < 100; i++) {
		gs_kunit_fill_text(p, i);
		gs_wb_write(test, s, i * 7, p);
	}
	gs_wb_write(test, s, 3000, rnd);
	KUNIT_EXPECT_EQ(test, gs_store_writeback(s, GS_WB_ALL, U64_MAX, &done),
			0);
	KUNIT_EXPECT_EQ(test, done, 101ULL);
	for (i = 0; i < 100; i++) {
		gs_kunit_fill_text(p, i);
		gs_wb_expect(test, s, i * 7, p);
	}
	gs_wb_expect(test, s, 3000, rnd);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0L);
}

/* ------------------------------------------- what is held across I/O */

#define GS_WB_PROBES	8

/*
 * A thread bound to a CPU that goes through the store as reclaim or swap-in
 * would on that CPU: a store into the pool (needs a stream), then reads
 * of slots whose contents are known. It must finish in time: if a stream
 * or a lock it needs is held across backing I/O, it waits for that I/O.
 */
struct gs_wb_probe {
	struct gs_store *s;
	u64 store_slot;			/* U64_MAX: no store */
	const void *store_page;
	u64 slots[4];
	const void *want[4];		/* NULL: all zero */
	int nr;
	int ret;
	struct completion done;
};

static int gs_wb_probe_fn(void *arg)
{
	struct gs_wb_probe *p = arg;
	void *buf = kmalloc(PAGE_SIZE, GFP_KERNEL);
	int i;

	p->ret = buf ? 0 : -ENOMEM;
	if (!p->ret && p->store_slot != U64_MAX)
		p->ret = gs_store_write_nowait(p->s, p->store_slot,
					       p->store_page, GFP_KERNEL);
	for (i = 0; !p->ret && i < p->nr; i++) {
		p->ret = gs_store_read(p->s, p->slots[i], buf);
		if (!p->ret && (p->want[i] ?
				memcmp(buf, p->want[i], PAGE_SIZE) :
				!!memchr_inv(buf, 0, PAGE_SIZE)))
			p->ret = -EBADMSG;
	}
	kfree(buf);
	complete(&p->done);
	return 0;
}

static bool gs_wb_probe_start(struct gs_wb_probe *p, int cpu)
{
	struct task_struct *t;

	init_completion(&p->done);
	t = kthread_create(gs_wb_probe_fn, p, "gs_probe/%d", cpu);
	if (IS_ERR(t))
		return false;
	kthread_bind(t, cpu);
	wake_up_process(t);
	return true;
}

struct gs_wb_unlocked {
	struct kunit *test;
	struct gs_store *s;
	struct gs_wb_probe p[GS_WB_PROBES];
	bool in_time[GS_WB_PROBES];
	int n;
};

/* Mid-write of a direct store: a probe on every CPU, in time. */
static void gs_wb_hook_direct(struct gs_kbk *k, bool write, u64 b)
{
	struct gs_wb_unlocked *r = k->arg;
	int cpu, i;

	KUNIT_EXPECT_TRUE(r->test, write);
	KUNIT_EXPECT_FALSE(r->test, mutex_is_locked(&r->s->wb.lock));
	for_each_online_cpu(cpu) {
		if (r->n == GS_WB_PROBES)
			break;
		if (gs_wb_probe_start(&r->p[r->n], cpu))
			r->n++;
	}
	for (i = 0; i < r->n; i++)
		r->in_time[i] = wait_for_completion_timeout(&r->p[i].done,
							    5 * HZ);
}

/*
 * A direct store holds no stream and no lock while it writes to the
 * backing device: stores into the pool and reads on any CPU go on.
 */
static void gs_wb_direct_unlocked(struct kunit *test)
{
	struct gs_kbk *k;
	struct gs_store *s = gs_kunit_wb_store(test, "lz4", 1024, 64, &k);
	void *text = gs_wb_text(test, 5), *rnd = gs_kunit_random(test);
	void *same = gs_kunit_same(test, 0x7777777777777777UL);
	struct gs_wb_unlocked *r;
	unsigned int len;
	int i;

	r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r);
	r->test = test;
	r->s = s;
	gs_wb_write(test, s, 10, text);
	gs_wb_write(test, s, 11, same);
	for (i = 0; i < GS_WB_PROBES; i++) {
		r->p[i] = (struct gs_wb_probe){
			.s = s, .store_slot = 100 + i, .store_page = text,
			.slots = { 10, 11, 12, 600 },
			.want = { text, same, NULL, NULL }, .nr = 4,
		};
	}
	WRITE_ONCE(s->wb.direct, GS_DIRECT_INCOMP);
	k->hook = gs_wb_hook_direct;
	k->arg = r;
	k->hook_runs = 1;
	gs_wb_write(test, s, 1, rnd);
	KUNIT_EXPECT_GT(test, r->n, 0);
	for (i = 0; i < r->n; i++) {
		/* The timed wait took the completion if it came in time. */
		if (!r->in_time[i])
			wait_for_completion(&r->p[i].done);
		KUNIT_EXPECT_TRUE_MSG(test, r->in_time[i],
				      "probe %d waited for the backing write", i);
		KUNIT_EXPECT_EQ(test, r->p[i].ret, 0);
		gs_wb_expect(test, s, 100 + i, text);
	}
	KUNIT_EXPECT_EQ(test, gs_store_kind(s, 1, &len), GS_KIND_WRITTEN_BACK);
	KUNIT_EXPECT_EQ(test, len, PAGE_SIZE);
	gs_wb_expect(test, s, 1, rnd);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0L);
}

/*
 * Reads of EMPTY, SAME and RAW slots need no stream: they go on while the
 * stream of their CPU is taken (by a store that waits for memory, say).
 */
static void gs_wb_read_unlocked(struct kunit *test)
{
	struct gs_store *s = gs_kunit_store(test, "lz4", 1024);
	void *same = gs_kunit_same(test, 0x0123456789abcdefUL);
	void *rnd = gs_kunit_random(test);
	struct gs_wb_probe *p;
	struct gs_stream *st;
	bool in_time;
	int cpu;

	p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	gs_wb_write(test, s, 1, same);
	gs_wb_write(test, s, 2, rnd);
	KUNIT_ASSERT_EQ(test, gs_wb_kind(s, 2), GS_KIND_RAW);
	*p = (struct gs_wb_probe){
		.s = s, .store_slot = U64_MAX,
		.slots = { 1, 2, 3, 700 }, .want = { same, rnd, NULL, NULL },
		.nr = 4,
	};
	/* The stream of this CPU, which the probe (bound to it) would take. */
	migrate_disable();
	cpu = smp_processor_id();
	st = gs_stream_get(s->comp);
	migrate_enable();
	KUNIT_ASSERT_TRUE(test, gs_wb_probe_start(p, cpu));
	in_time = wait_for_completion_timeout(&p->done, 5 * HZ);
	gs_stream_put(st);
	if (!in_time)
		wait_for_completion(&p->done);
	KUNIT_EXPECT_TRUE_MSG(test, in_time, "a read waited for a stream");
	KUNIT_EXPECT_EQ(test, p->ret, 0);
}

/* Mid-copy of backing compaction: the page is freed and stored anew. */
static void gs_wb_hook_relocate(struct gs_kbk *k, bool write, u64 b)
{
	struct gs_wb_race *r = k->arg;

	KUNIT_EXPECT_FALSE(r->test, write);
	KUNIT_EXPECT_TRUE(r->test, gs_store_entry(r->s, 7) & GS_FLAG_IO);
	gs_store_free(r->s, 7);
	/* Straight to the device (direct policy), never to slot @b. */
	KUNIT_EXPECT_EQ(r->test, gs_store_write(r->s, 7, r->newp, GFP_KERNEL),
			0);
	KUNIT_EXPECT_NE(r->test, gs_entry_value(gs_store_entry(r->s, 7)), b);
}

/*
 * Backing compaction pins the entry it copies: a direct store of the same
 * ghost slot meanwhile cannot get the backing slot being copied, and the
 * old copy does not replace the new data.
 */
static void gs_wb_relocate_pin(struct kunit *test)
{
	struct gs_kbk *k;
	struct gs_store *s = gs_kunit_wb_store(test, "lz4", 1024, 64, &k);
	struct gs_wb_race r = { .test = test, .s = s };
	void *old = gs_kunit_random(test);
	u64 done, moved;

	r.newp = gs_kunit_random(test);
	gs_kunit_fill_slots(test, s, 0, 1, 4);
	gs_wb_write(test, s, 7, old);
	KUNIT_ASSERT_EQ(test, gs_store_writeback(s, GS_WB_ALL, U64_MAX, &done),
			0);
	KUNIT_ASSERT_EQ(test, done, 5ULL);
	/* A hole below slot 7's page: compaction moves that page down. */
	gs_store_free(s, 1);
	WRITE_ONCE(s->wb.direct, GS_DIRECT_HUGE);
	k->hook = gs_wb_hook_relocate;
	k->arg = &r;
	k->hook_runs = 1;
	gs_store_backing_compact(s, &moved);
	KUNIT_EXPECT_EQ(test, k->hook_runs, 0);
	gs_wb_expect(test, s, 7, r.newp);
	KUNIT_EXPECT_EQ(test, gs_backing_used(s->bk), 4ULL);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0L);
	/* Compaction's own I/O is not in the zram columns. */
	KUNIT_EXPECT_EQ(test, gs_stat(&s->stats.bd_reads), 1);
	KUNIT_EXPECT_EQ(test, gs_stat(&s->stats.bd_writes), 6);
	KUNIT_EXPECT_EQ(test, gs_stat(&s->stats.bd_compact_reads), 2);
	KUNIT_EXPECT_EQ(test, gs_stat(&s->stats.bd_compact_writes), 2);
}

/*
 * A backing store that shrinks tells the store its slots in use are
 * spread out: the store moves them down in the background.
 */
static void gs_wb_sparse_compacts(struct kunit *test)
{
	struct gs_kbk *k;
	struct gs_store *s = gs_kunit_wb_store(test, "lz4", 1024, 64, &k);
	void *p = gs_kunit_page(test);
	u64 done;
	int i;

	gs_kunit_fill_slots(test, s, 0, 1, 8);
	KUNIT_ASSERT_EQ(test, gs_store_writeback(s, GS_WB_ALL, U64_MAX, &done),
			0);
	KUNIT_ASSERT_EQ(test, done, 8ULL);
	KUNIT_ASSERT_EQ(test, gs_backing_last_used(s->bk), 7ULL);
	gs_store_free_range(s, 0, 5);
	gs_backing_sparse(s->bk);
	flush_work(&s->wb.compact_work);
	KUNIT_EXPECT_EQ(test, gs_stat(&s->stats.bd_relocated), 3);
	KUNIT_EXPECT_EQ(test, gs_backing_last_used(s->bk), 2ULL);
	for (i = 5; i < 8; i++) {
		gs_kunit_fill_text(p, i);
		gs_wb_expect(test, s, i, p);
	}
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0L);
}

/* Flip one bit of backing slot @b's page in the fake device. */
static void gs_wb_flip(struct gs_kbk *k, u64 b, unsigned int byte)
{
	k->mem[b * PAGE_SIZE + byte] ^= 0x10;
}

static u64 gs_wb_backing_slot(struct gs_store *s, u64 slot)
{
	return gs_entry_value(gs_store_entry(s, slot));
}

/*
 * A backing device that returns other data than was written (one bit
 * flipped, in a compressed page, in a page stored as is, or in one
 * written directly) fails the read with -EIO, counted; the entry stays,
 * and reads again once the device returns the data. A compressed page's
 * padding is never read: a bit flipped there changes nothing.
 * Backing compaction does not move a page that fails its check.
 */
static void gs_wb_checksum(struct kunit *test)
{
	struct gs_kbk *k;
	struct gs_store *s = gs_kunit_wb_store(test, "lz4", 1024, 64, &k);
	void *rnd = gs_kunit_random(test), *direct = gs_kunit_random(test);
	void *p = gs_kunit_page(test), *got = gs_kunit_page(test);
	static const struct {
		u64 slot;
		unsigned int byte;
	} flips[] = {
		{ 3, 0 },		/* the compressed data */
		{ 10, 100 },		/* a page stored as is */
		{ 11, 2000 },		/* written directly */
	};
	unsigned int i;
	u64 done, moved, b;

	gs_kunit_fill_slots(test, s, 0, 1, 10);
	gs_wb_write(test, s, 10, rnd);
	KUNIT_ASSERT_EQ(test, gs_store_writeback(s, GS_WB_ALL, U64_MAX, &done),
			0);
	KUNIT_ASSERT_EQ(test, done, 11ULL);
	WRITE_ONCE(s->wb.direct, GS_DIRECT_HUGE);
	gs_wb_write(test, s, 11, direct);
	KUNIT_ASSERT_EQ(test, gs_wb_kind(s, 11), GS_KIND_WRITTEN_BACK);

	for (i = 0; i < ARRAY_SIZE(flips); i++) {
		b = gs_wb_backing_slot(s, flips[i].slot);
		gs_wb_flip(k, b, flips[i].byte);
		KUNIT_EXPECT_EQ_MSG(test, gs_store_read(s, flips[i].slot, got),
				    -EIO, "slot %llu", flips[i].slot);
		KUNIT_EXPECT_EQ(test, gs_stat(&s->stats.bd_sum_errors), i + 1);
		KUNIT_EXPECT_EQ(test, gs_stat(&s->stats.bd_read_errors), i + 1);
		KUNIT_EXPECT_EQ(test, gs_wb_kind(s, flips[i].slot),
				GS_KIND_WRITTEN_BACK);
		KUNIT_EXPECT_FALSE(test, gs_store_entry(s, flips[i].slot) &
				   GS_FLAG_IO);
		gs_wb_flip(k, b, flips[i].byte);
	}
	gs_wb_flip(k, gs_wb_backing_slot(s, 4), PAGE_SIZE - 1);
	gs_kunit_fill_text(p, 4);
	gs_wb_expect(test, s, 4, p);
	KUNIT_EXPECT_EQ(test, gs_stat(&s->stats.bd_sum_errors), 3);
	for (i = 0; i < 10; i++) {
		gs_kunit_fill_text(p, i);
		gs_wb_expect(test, s, i, p);
	}
	gs_wb_expect(test, s, 10, rnd);
	gs_wb_expect(test, s, 11, direct);

	/* A hole below slot 11's page; its page fails the check: stays. */
	gs_store_free(s, 0);
	b = gs_wb_backing_slot(s, 11);
	gs_wb_flip(k, b, 7);
	KUNIT_EXPECT_EQ(test, gs_store_backing_compact(s, &moved), -EIO);
	KUNIT_EXPECT_EQ(test, moved, 0ULL);
	KUNIT_EXPECT_EQ(test, gs_wb_backing_slot(s, 11), b);
	KUNIT_EXPECT_EQ(test, gs_stat(&s->stats.bd_sum_errors), 4);
	gs_wb_flip(k, b, 7);
	/* Moved with the device honest again, and its checksum with it. */
	KUNIT_EXPECT_EQ(test, gs_store_backing_compact(s, &moved), 0);
	KUNIT_EXPECT_EQ(test, moved, 1ULL);
	KUNIT_EXPECT_NE(test, gs_wb_backing_slot(s, 11), b);
	gs_wb_expect(test, s, 11, direct);
	KUNIT_EXPECT_EQ(test, gs_stat(&s->stats.bd_sum_errors), 4);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0L);
}

/* Does the page at backing slot @b hold @len bytes of @what anywhere? */
static bool gs_wb_on_disk(struct gs_kbk *k, u64 b, const void *what,
			  size_t len)
{
	const u8 *p = k->mem + b * PAGE_SIZE;
	size_t i;

	for (i = 0; i + len <= PAGE_SIZE; i++)
		if (!memcmp(p + i, what, len))
			return true;
	return false;
}

/*
 * Encryption at rest: what reaches the device (written back compressed
 * or as is, written directly, moved by compaction) holds none of the
 * data, the same page in two slots looks different, every page reads
 * back, and a changed ciphertext fails the read by its checksum.
 */
static void gs_wb_encrypt(struct kunit *test)
{
	struct gs_kbk *k;
	struct gs_store *s = gs_kunit_wb_store(test, "lz4", 1024, 64, &k);
	void *rnd = gs_kunit_random(test), *direct = gs_kunit_random(test);
	void *p = gs_kunit_page(test);
	u64 done, moved, b, i;

	KUNIT_ASSERT_EQ(test, gs_store_set_wb_encrypt(s, true), 0);
	KUNIT_ASSERT_NOT_NULL(test, s->wb.cipher);
	for (i = 0; i < 8; i++) {
		gs_kunit_fill_text(p, i);
		gs_wb_write(test, s, i, p);
	}
	gs_wb_write(test, s, 8, rnd);
	gs_wb_write(test, s, 9, rnd);
	KUNIT_ASSERT_EQ(test, gs_store_writeback(s, GS_WB_ALL, U64_MAX, &done),
			0);
	KUNIT_ASSERT_EQ(test, done, 10ULL);
	WRITE_ONCE(s->wb.direct, GS_DIRECT_HUGE);
	gs_wb_write(test, s, 10, direct);
	KUNIT_ASSERT_EQ(test, gs_wb_kind(s, 10), GS_KIND_WRITTEN_BACK);

	/* No plaintext: lz4 keeps text's first words as literals. */
	for (i = 0; i < 8; i++)
		KUNIT_EXPECT_FALSE_MSG(test,
				       gs_wb_on_disk(k, gs_wb_backing_slot(s, i),
						     "page ", 5) ||
				       gs_wb_on_disk(k, gs_wb_backing_slot(s, i),
						     "slot\n", 5),
				       "slot %llu", i);
	KUNIT_EXPECT_FALSE(test, gs_wb_on_disk(k, gs_wb_backing_slot(s, 8),
					       rnd, 16));
	KUNIT_EXPECT_FALSE(test, gs_wb_on_disk(k, gs_wb_backing_slot(s, 10),
					       direct, 16));
	/* The same page in two slots: two different ciphertexts. */
	KUNIT_EXPECT_NE(test, memcmp(k->mem + gs_wb_backing_slot(s, 8) *
				     PAGE_SIZE,
				     k->mem + gs_wb_backing_slot(s, 9) *
				     PAGE_SIZE, PAGE_SIZE), 0);
	for (i = 0; i < 8; i++) {
		gs_kunit_fill_text(p, i);
		gs_wb_expect(test, s, i, p);
	}
	gs_wb_expect(test, s, 8, rnd);
	gs_wb_expect(test, s, 9, rnd);
	gs_wb_expect(test, s, 10, direct);

	/* A changed ciphertext decrypts to noise: the checksum refuses it. */
	b = gs_wb_backing_slot(s, 8);
	gs_wb_flip(k, b, 1000);
	KUNIT_EXPECT_EQ(test, gs_store_read(s, 8, p), -EIO);
	KUNIT_EXPECT_EQ(test, gs_stat(&s->stats.bd_sum_errors), 1);
	gs_wb_flip(k, b, 1000);
	gs_wb_expect(test, s, 8, rnd);

	/* Moved down by compaction: encrypted again for its new slot. */
	b = gs_wb_backing_slot(s, 10);
	gs_store_free(s, 0);
	gs_store_free(s, 1);
	KUNIT_EXPECT_EQ(test, gs_store_backing_compact(s, &moved), 0);
	KUNIT_EXPECT_EQ(test, moved, 2ULL);
	KUNIT_EXPECT_NE(test, gs_wb_backing_slot(s, 10), b);
	KUNIT_EXPECT_FALSE(test, gs_wb_on_disk(k, gs_wb_backing_slot(s, 10),
					       direct, 16));
	gs_wb_expect(test, s, 10, direct);
	gs_wb_expect(test, s, 9, rnd);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0L);

	/* Off (the store empty): pages go as they are. */
	for (i = 2; i < 11; i++)
		gs_store_free(s, i);
	KUNIT_ASSERT_EQ(test, gs_store_set_wb_encrypt(s, false), 0);
	KUNIT_EXPECT_NULL(test, s->wb.cipher);
	gs_wb_write(test, s, 10, direct);
	KUNIT_EXPECT_TRUE(test, gs_wb_on_disk(k, gs_wb_backing_slot(s, 10),
					      direct, 16));
	gs_wb_expect(test, s, 10, direct);
}

/*
 * page_index= and page_indexes= (zram's forms): only slots in the range,
 * by the mode given; the range's ends are inclusive in sysfs, and
 * exclusive here.
 */
static void gs_wb_range(struct kunit *test)
{
	struct gs_kbk *k;
	struct gs_store *s = gs_kunit_wb_store(test, "lz4", 2048, 2048, &k);
	void *rnd = gs_kunit_random(test), *p = gs_kunit_page(test);
	u64 done, i;

	for (i = 0; i < 1200; i++) {
		gs_kunit_fill_text(p, i);
		gs_wb_write(test, s, i, i % 3 ? p : rnd);
	}
	KUNIT_EXPECT_EQ(test, gs_store_writeback_range(s, GS_WB_COLD, 0, 10,
						       U64_MAX, &done),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, gs_store_writeback_range(s, GS_WB_ALL, 5, 5,
						       U64_MAX, &done),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, gs_store_writeback_range(s, GS_WB_ALL, 0, 2049,
						       U64_MAX, &done),
			-EINVAL);
	/* One slot. */
	KUNIT_EXPECT_EQ(test, gs_store_writeback_range(s, GS_WB_ALL, 7, 8,
						       U64_MAX, &done), 0);
	KUNIT_EXPECT_EQ(test, done, 1ULL);
	KUNIT_EXPECT_EQ(test, gs_wb_kind(s, 7), GS_KIND_WRITTEN_BACK);
	KUNIT_EXPECT_EQ(test, gs_wb_kind(s, 6), GS_KIND_RAW);
	KUNIT_EXPECT_EQ(test, gs_wb_kind(s, 8), GS_KIND_COMPRESSED);
	/* A range across a cluster boundary, huge pages only: every third. */
	KUNIT_EXPECT_EQ(test, gs_store_writeback_range(s, GS_WB_HUGE, 500, 530,
						       U64_MAX, &done), 0);
	KUNIT_EXPECT_EQ(test, done, 10ULL);
	for (i = 495; i < 535; i++)
		KUNIT_EXPECT_EQ_MSG(test, gs_wb_kind(s, i),
				    i >= 500 && i < 530 && !(i % 3) ?
				    GS_KIND_WRITTEN_BACK :
				    i % 3 ? GS_KIND_COMPRESSED : GS_KIND_RAW,
				    "slot %llu", i);
	/* A page count caps a range; a range past the stored slots is empty. */
	KUNIT_EXPECT_EQ(test, gs_store_writeback_range(s, GS_WB_ALL, 1000, 2048,
						       50, &done), 0);
	KUNIT_EXPECT_EQ(test, done, 50ULL);
	KUNIT_EXPECT_EQ(test, gs_wb_kind(s, 1049), GS_KIND_WRITTEN_BACK);
	KUNIT_EXPECT_NE(test, gs_wb_kind(s, 1050), GS_KIND_WRITTEN_BACK);
	KUNIT_EXPECT_EQ(test, gs_store_writeback_range(s, GS_WB_ALL, 1500, 2048,
						       U64_MAX, &done), 0);
	KUNIT_EXPECT_EQ(test, done, 0ULL);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_WB_PAGES), 61);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0L);
	for (i = 0; i < 1200; i += 7) {
		gs_kunit_fill_text(p, i);
		gs_wb_expect(test, s, i, i % 3 ? p : rnd);
	}
}

/*
 * writeback_batch_size: 1, an odd size and the largest all move every
 * page; the buffers are counted, and changed while attached.
 */
static void gs_wb_batch_size(struct kunit *test)
{
	static const unsigned int sizes[] = { 1, 45, GS_WB_BATCH_SIZE_MAX };
	struct gs_kbk *k;
	struct gs_store *s = gs_kunit_wb_store(test, "lz4", 2048, 2048, &k);
	long bytes = atomic_long_read(&s->stats.wb_buffer_bytes);
	void *p = gs_kunit_page(test);
	u64 done, i;
	int j;

	KUNIT_EXPECT_EQ(test, s->wb.batch_size, GS_WB_BATCH_SIZE_DEFAULT);
	KUNIT_EXPECT_GE(test, bytes,
			(long)(GS_WB_BATCH_SIZE_DEFAULT * PAGE_SIZE));
	KUNIT_EXPECT_EQ(test, gs_store_set_wb_batch_size(s, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test,
			gs_store_set_wb_batch_size(s, GS_WB_BATCH_SIZE_MAX + 1),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, s->wb.batch_size, GS_WB_BATCH_SIZE_DEFAULT);
	for (j = 0; j < ARRAY_SIZE(sizes); j++) {
		KUNIT_ASSERT_EQ(test, gs_store_set_wb_batch_size(s, sizes[j]),
				0);
		KUNIT_EXPECT_EQ(test, s->wb.nr_batches,
				sizes[j] == 1 ? 1U :
				max(2U, DIV_ROUND_UP(sizes[j], 32)));
		bytes = atomic_long_read(&s->stats.wb_buffer_bytes);
		KUNIT_EXPECT_GE(test, bytes, (long)(sizes[j] * PAGE_SIZE));
		/* Bookkeeping: up to 8 batches (larger with lockdep). */
		KUNIT_EXPECT_LT(test, bytes,
				(long)(sizes[j] * PAGE_SIZE + 256 * 1024));
		for (i = 600 * j; i < 600 * j + 300; i++) {
			gs_kunit_fill_text(p, i);
			gs_wb_write(test, s, i, p);
		}
		KUNIT_EXPECT_EQ(test, gs_store_writeback(s, GS_WB_ALL, U64_MAX,
							 &done), 0);
		KUNIT_EXPECT_EQ(test, done, 300ULL);
		for (i = 600 * j; i < 600 * j + 300; i += 13) {
			gs_kunit_fill_text(p, i);
			gs_wb_expect(test, s, i, p);
		}
	}
	KUNIT_EXPECT_EQ(test, gs_stat(&s->stats.bd_writes), 900);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0L);
}

/* Checksums off: nothing is recorded or checked (what zram does). */
static void gs_wb_checksum_off(struct kunit *test)
{
	struct gs_kbk *k;
	struct gs_store *s = gs_kunit_wb_store(test, "lz4", 1024, 64, &k);
	void *rnd = gs_kunit_random(test), *got = gs_kunit_page(test);
	u64 done, b;

	s->wb.checksum = false;
	gs_wb_write(test, s, 0, rnd);
	KUNIT_ASSERT_EQ(test, gs_store_writeback(s, GS_WB_ALL, U64_MAX, &done),
			0);
	KUNIT_ASSERT_EQ(test, done, 1ULL);
	b = gs_wb_backing_slot(s, 0);
	KUNIT_EXPECT_EQ(test, gs_backing_sum_of(s->bk, b), 0U);
	gs_wb_flip(k, b, 9);
	KUNIT_EXPECT_EQ(test, gs_store_read(s, 0, got), 0);
	KUNIT_EXPECT_EQ(test, ((u8 *)got)[9], ((u8 *)rnd)[9] ^ 0x10);
	KUNIT_EXPECT_EQ(test, gs_stat(&s->stats.bd_sum_errors), 0);
}

/*
 * With the backing device full, or the budget spent, writeback cannot
 * move a page: the shrinker reports nothing, no background writeback is
 * started, nothing is copied for nothing; with room again, all resumes.
 */
static void gs_wb_stuck(struct kunit *test)
{
	struct gs_kbk *k;
	struct gs_store *s = gs_kunit_wb_store(test, "lz4", 1024, 2, &k);
	struct shrink_control sc = { .gfp_mask = GFP_KERNEL, .nr_to_scan = 8 };
	struct shrinker *sh = s->wb.shrinker;
	void *rnd = gs_kunit_random(test);
	unsigned int busy;
	int i, writes;
	u64 done;

	for (i = 0; i < 160; i++) {
		get_random_bytes(rnd, PAGE_SIZE);
		gs_wb_write(test, s, i, rnd);
	}
	KUNIT_EXPECT_EQ(test, gs_store_writeback(s, GS_WB_ALL, 2, &done), 0);
	KUNIT_EXPECT_EQ(test, done, 2ULL);
	WRITE_ONCE(s->wb.use_shrinker, true);
	KUNIT_EXPECT_EQ(test, sh->count_objects(sh, &sc), 0UL);
	writes = atomic_read(&k->writes);
	KUNIT_EXPECT_EQ(test, sh->scan_objects(sh, &sc), SHRINK_STOP);
	KUNIT_EXPECT_EQ(test, gs_store_writeback(s, GS_WB_ALL, U64_MAX, &done),
			-ENOSPC);
	KUNIT_EXPECT_EQ(test, done, 0ULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&k->writes), writes);

	/*
	 * Near the pool limit (but not over it: the store needs no room):
	 * a background writeback would only wait here for wb.lock.
	 */
	WRITE_ONCE(s->limit_pages, gs_store_pool_pages(s) + 8);
	mutex_lock(&s->wb.lock);
	get_random_bytes(rnd, PAGE_SIZE);
	gs_wb_write(test, s, 200, rnd);
	busy = work_busy(&s->wb.work);
	mutex_unlock(&s->wb.lock);
	flush_work(&s->wb.work);
	KUNIT_EXPECT_EQ(test, busy, 0U);
	gs_wb_expect(test, s, 200, rnd);
	WRITE_ONCE(s->limit_pages, 0);

	/* A backing slot is freed: there is work again. */
	gs_store_free(s, 0);
	KUNIT_EXPECT_GT(test, sh->count_objects(sh, &sc), 0UL);
	/* The budget: spent, nothing to do; given, work again. */
	gs_store_set_wb_budget(s, 0);
	gs_store_set_wb_limit_enable(s, true);
	KUNIT_EXPECT_EQ(test, sh->count_objects(sh, &sc), 0UL);
	KUNIT_EXPECT_EQ(test, sh->scan_objects(sh, &sc), SHRINK_STOP);
	KUNIT_EXPECT_EQ(test, atomic_read(&k->writes), writes);
	gs_store_set_wb_budget(s, 1);
	KUNIT_EXPECT_GT(test, sh->count_objects(sh, &sc), 0UL);
	KUNIT_EXPECT_EQ(test, sh->scan_objects(sh, &sc), 1UL);
	KUNIT_EXPECT_EQ(test, gs_stat(&s->wb.budget), 0);
	WRITE_ONCE(s->wb.use_shrinker, false);
	KUNIT_EXPECT_EQ(test, gs_backing_used(s->bk), 2ULL);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0L);
}

/*
 * Destroying a store frees every slot and releases the backing store,
 * even data where the store no longer looks (here: above a size that was
 * made smaller under it, which the module itself never does).
 */
static void gs_wb_destroy_all(struct kunit *test)
{
	struct gs_store *s = gs_store_create("lz4", 4096);
	void *p = gs_wb_text(test, 3);
	atomic_t released = ATOMIC_INIT(0);
	struct gs_kbk *k;
	u64 done;

	KUNIT_ASSERT_FALSE(test, IS_ERR(s));
	KUNIT_ASSERT_EQ(test, gs_store_set_backing(s, gs_kbk_create(test, 64,
								    &k)), 0);
	WRITE_ONCE(s->wb.use_shrinker, false);
	k->released = &released;
	gs_wb_write(test, s, 10, p);
	gs_wb_write(test, s, 3000, p);
	gs_wb_write(test, s, 3001, p);
	KUNIT_EXPECT_EQ(test, gs_store_writeback(s, GS_WB_ALL, 2, &done), 0);
	s->nr_slots = 1024;
	gs_store_destroy(s);
	KUNIT_EXPECT_EQ(test, atomic_read(&released), 1);
}

/* ------------------------------------------------- races, at random */

#define GS_WB_THREADS	3
#define GS_WB_OPS	1000
#define GS_WB_SLOTS	96
/*
 * Writebacks, idle marks and compactions the fourth thread must do
 * meanwhile: a tenth of an I/O thread's operations (it did 663 to 1186
 * beside 3000 or more under the sanitizers).
 */
#define GS_WB_WB_OPS	(GS_WB_OPS / 10)
/*
 * The share of the I/O threads' windows that must overlap the fourth
 * thread's, half the usual: it is one thread against three on two CPUs,
 * and at the edges of an I/O window often waits for a CPU or sleeps on
 * a lock (10% to 45% under the sanitizers, 10% twice only after going
 * on to 6191 and 7947 operations).
 */
#define GS_WB_IO_PCT	(GS_OVERLAP_PCT / 2)

struct gs_wb_stress {
	struct gs_store *s;
	atomic_t bad;		/* reads that returned something else */
	atomic_t errors;	/* failed stores or reads */
	atomic_t running;
	atomic_t at_ops;	/* I/O threads that did GS_WB_OPS */
	atomic_long_t io_ops;	/* ... all of them */
	long wb_ops;		/* the fourth thread's */
	bool io_stop;		/* the I/O threads stop */
	bool stop;		/* the fourth thread stops */
	struct completion done;
	/* Each I/O op, and each writeback, idle or compaction: windows. */
	struct gs_overlap io, wb;
};

/* Page contents name their slot and version: "page N ..." */
static bool gs_wb_valid(u64 slot, const void *buf, void *tmp)
{
	unsigned int n;

	if (!memchr_inv(buf, 0, PAGE_SIZE))
		return true;
	if (sscanf(buf, "page %u ", &n) != 1 || n / 1000 != slot)
		return false;
	gs_kunit_fill_text(tmp, n);
	return !memcmp(buf, tmp, PAGE_SIZE);
}

/*
 * After @done operations of an I/O thread: they all stop once each did
 * GS_WB_OPS, both sides overlapped enough and the fourth thread did its
 * share, or once one did GS_OVERLAP_MORE times as many.
 */
static void gs_wb_stress_next(struct gs_wb_stress *r, int done)
{
	if (done == GS_WB_OPS)
		atomic_inc(&r->at_ops);
	if ((atomic_read(&r->at_ops) == GS_WB_THREADS &&
	     gs_overlap_enough(&r->io, GS_WB_IO_PCT) &&
	     gs_overlap_enough(&r->wb, GS_OVERLAP_PCT) &&
	     READ_ONCE(r->wb_ops) >= GS_WB_WB_OPS) ||
	    done >= GS_OVERLAP_MORE * GS_WB_OPS) {
		gs_overlap_close(&r->io, &r->wb);
		WRITE_ONCE(r->io_stop, true);
	}
}

static int gs_wb_stress_io(void *arg)
{
	struct gs_wb_stress *r = arg;
	void *buf = kmalloc(PAGE_SIZE, GFP_KERNEL);
	void *tmp = kmalloc(PAGE_SIZE, GFP_KERNEL);
	unsigned int win;
	u64 slot;
	int i;

	for (i = 0; buf && tmp && !READ_ONCE(r->io_stop); i++) {
		slot = get_random_u32_below(GS_WB_SLOTS);
		win = gs_overlap_enter_vs(&r->io, &r->wb);
		switch (get_random_u32_below(5)) {
		case 0:
		case 1:
			gs_kunit_fill_text(buf, slot * 1000 + i % 1000);
			if (gs_store_write(r->s, slot, buf, GFP_KERNEL))
				atomic_inc(&r->errors);
			break;
		case 2:
		case 3:
			if (gs_store_read(r->s, slot, buf))
				atomic_inc(&r->errors);
			else if (!gs_wb_valid(slot, buf, tmp))
				atomic_inc(&r->bad);
			break;
		default:
			gs_store_free(r->s, slot);
			break;
		}
		gs_overlap_exit(&r->io, win);
		atomic_long_inc(&r->io_ops);
		gs_wb_stress_next(r, i + 1);
		cond_resched();
	}
	if (!buf || !tmp)
		atomic_inc(&r->errors);
	/* The others stop too, rather than race no one. */
	WRITE_ONCE(r->io_stop, true);
	kfree(buf);
	kfree(tmp);
	if (atomic_dec_and_test(&r->running))
		complete(&r->done);
	return 0;
}

static int gs_wb_stress_wb(void *arg)
{
	struct gs_wb_stress *r = arg;
	u64 done, moved;
	unsigned int win;
	int ret, i = 0;

	while (!READ_ONCE(r->stop)) {
		win = gs_overlap_enter_vs(&r->wb, &r->io);
		switch (i++ % 4) {
		case 0:
			ret = gs_store_writeback(r->s, GS_WB_ALL, 16, &done);
			break;
		case 1:
			gs_store_mark_idle(r->s, 0);
			ret = gs_store_writeback(r->s, GS_WB_COLD, 8, &done);
			break;
		case 2:
			ret = gs_store_backing_compact(r->s, &moved);
			break;
		default:
			ret = gs_store_writeback(r->s, GS_WB_IDLE, 32, &done);
			break;
		}
		gs_overlap_exit(&r->wb, win);
		WRITE_ONCE(r->wb_ops, r->wb_ops + 1);
		/* A small backing store fills up: that is expected. */
		if (ret && ret != -ENOSPC)
			atomic_inc(&r->errors);
		cond_resched();
	}
	if (atomic_dec_and_test(&r->running))
		complete(&r->done);
	return 0;
}

static void gs_wb_stress(struct kunit *test)
{
	struct gs_kbk *k;
	struct gs_store *s = gs_kunit_wb_store(test, "lz4", 1024, 64, &k);
	struct gs_wb_stress *r;
	struct task_struct *t;
	int i;

	r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r);
	r->s = s;
	init_completion(&r->done);
	atomic_set(&r->running, GS_WB_THREADS);
	for (i = 0; i < GS_WB_THREADS; i++) {
		t = kthread_run(gs_wb_stress_io, r, "gs_wb_io/%d", i);
		KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	}
	t = kthread_run(gs_wb_stress_wb, r, "gs_wb_wb");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	wait_for_completion(&r->done);
	/* The I/O threads are done: stop the writeback thread. */
	reinit_completion(&r->done);
	atomic_set(&r->running, 1);
	WRITE_ONCE(r->stop, true);
	wait_for_completion(&r->done);

	kunit_info(test, "%ld ops, %ld of writeback; %ld written back, %ld reads and %ld writes on the backing store, %ld relocated\n",
		   atomic_long_read(&r->io_ops), r->wb_ops,
		   gs_stat_read(&s->stats, GS_STAT_WB_PAGES),
		   gs_stat(&s->stats.bd_reads), gs_stat(&s->stats.bd_writes),
		   gs_stat(&s->stats.bd_relocated));
	gs_overlap_expect(test, &r->io, "I/O ops against writeback",
			  GS_WB_IO_PCT, r->wb_ops, GS_WB_WB_OPS);
	gs_overlap_expect(test, &r->wb, "writeback, idle, compaction against I/O",
			  GS_OVERLAP_PCT, atomic_long_read(&r->io_ops),
			  GS_WB_THREADS * GS_WB_OPS);
	KUNIT_EXPECT_EQ(test, atomic_read(&r->errors), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&r->bad), 0);
	KUNIT_EXPECT_GT(test, gs_stat(&s->stats.bd_reads), 0);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0L);
	gs_kunit_expect_unpinned(test, s);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_SLOTS_USED),
			gs_stat_read(&s->stats, GS_STAT_SAME_PAGES) +
			gs_stat_read(&s->stats, GS_STAT_COMP_PAGES) +
			gs_stat_read(&s->stats, GS_STAT_HUGE_PAGES) +
			gs_stat_read(&s->stats, GS_STAT_WB_PAGES));
	gs_store_free_range(s, 0, 1024);
	KUNIT_EXPECT_EQ(test, gs_backing_used(s->bk), 0ULL);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_SLOTS_USED), 0);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_WB_PAGES), 0);
	KUNIT_EXPECT_EQ(test, gs_store_pool_pages(s), 0UL);
}

/* ------------------------- one slot, read while compaction moves it */

#define GS_WS_SLOT	7	/* read by one thread, moved by the other */
#define GS_WS_FILL	3	/* written back below it, then freed: a hole */
#define GS_WS_READS	2000
/*
 * Steps of the other thread (writes and writebacks, then a compaction):
 * a fortieth of the reads, as a compaction may sleep ticks waiting for
 * a read (it did 102 to 956 beside 2000 to 5416 under the sanitizers).
 */
#define GS_WS_OPS	(GS_WS_READS / 40)
/*
 * The share of the reads that must overlap a step: 1%. A compaction
 * that finds the slot pinned by a read sleeps a tick (10 ms at HZ=100)
 * and tries again, so for much of its window the other thread runs
 * nothing, and the many short reads opened then overlap nothing: 2.8%
 * to 37% of the reads overlapped under the sanitizers, 2.8% after going
 * on to 20000 reads with a kernel build beside. The race is shown from
 * the other side: each compaction step must overlap a running read
 * (GS_OVERLAP_PCT; 65% to 95% measured).
 */
#define GS_WS_RD_PCT	1

struct gs_wb_same {
	struct gs_store *s;
	/* Each read; each step of the other thread. */
	struct gs_overlap rd, wb;
	long ops;		/* the other thread's steps */
	long busy;		/* compactions the reader held off */
	atomic_t bad;		/* reads that returned something else */
	atomic_t errors;
	bool stop;
	struct completion done;
};

/*
 * In turn, each in a window that waits first for the reader to run in a
 * read (2 ms at most: both wait for each other's pin asleep, a tick at a
 * time, and a step begun while the reader sleeps races nothing): the
 * slot written (a new version, text or incompressible), a filler written
 * back, then the slot (next to it, above), the filler freed; then
 * backing compaction, which moves the slot's page down into the
 * filler's hole.
 */
static int gs_wb_same_fn(void *arg)
{
	struct gs_wb_same *c = arg;
	void *buf = kmalloc(PAGE_SIZE, GFP_KERNEL);
	unsigned int win, v = 0;
	u64 done, moved;
	int ret;

	while (buf && !READ_ONCE(c->stop)) {
		v++;
		gs_kunit_fill_version(buf, GS_WS_SLOT * 1000 + v % 1000, v & 1);
		win = gs_overlap_enter_vs(&c->wb, &c->rd);
		gs_overlap_await_in(&c->wb, win);
		ret = gs_store_write(c->s, GS_WS_SLOT, buf, GFP_KERNEL);
		gs_kunit_fill_version(buf, GS_WS_FILL * 1000 + v % 1000, false);
		ret = ret ?: gs_store_write(c->s, GS_WS_FILL, buf, GFP_KERNEL);
		ret = ret ?: gs_store_writeback_range(c->s, GS_WB_ALL, GS_WS_FILL,
						      GS_WS_FILL + 1, 1, &done);
		ret = ret ?: gs_store_writeback_range(c->s, GS_WB_ALL, GS_WS_SLOT,
						      GS_WS_SLOT + 1, 1, &done);
		gs_store_free(c->s, GS_WS_FILL);
		gs_racer_turn_end(&c->wb, win, ret, &c->errors, &c->ops);

		win = gs_overlap_enter_vs(&c->wb, &c->rd);
		gs_overlap_await_in(&c->wb, win);
		ret = gs_store_backing_compact(c->s, &moved);
		/* The reader had it pinned 100 ticks in a row: not a fault. */
		if (ret == -EBUSY) {
			c->busy++;
			ret = 0;
		}
		gs_racer_turn_end(&c->wb, win, ret, &c->errors, &c->ops);
	}
	if (!buf)
		atomic_inc(&c->errors);
	kfree(buf);
	complete(&c->done);
	return 0;
}

/*
 * Backing compaction against reads of the page it moves, on two CPUs:
 * the other thread writes one slot, writes it back above a hole and
 * compacts the backing device (which moves it down into the hole), over
 * and over, while this thread reads that slot (each read a window).
 * Both pin the entry (GS_FLAG_IO) to do their I/O and wait for each
 * other. Every read returns a version written to the slot, byte for
 * byte, never zeroes (the slot is never freed); pages were read from
 * the device and moved on it; the maps agree, the counters balance, and
 * all freed the backing store and the pool are empty.
 */
static void gs_wb_relocate_read_same(struct kunit *test)
{
	void *buf = gs_kunit_page(test), *tmp = gs_kunit_page(test);
	struct gs_wb_same *c;
	struct task_struct *t;
	struct gs_store *s;
	struct gs_kbk *k;
	long lost = 0;
	unsigned int win;
	int i;

	c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c);
	s = gs_kunit_wb_store(test, "lz4", 1024, 64, &k);
	c->s = s;
	init_completion(&c->done);
	gs_kunit_fill_version(buf, GS_WS_SLOT * 1000, false);
	gs_wb_write(test, s, GS_WS_SLOT, buf);

	t = kthread_run(gs_wb_same_fn, c, "gs-kunit-wb-same");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	for (i = 0; gs_overlap_more(i, GS_WS_READS,
				    gs_overlap_enough(&c->rd, GS_WS_RD_PCT) &&
				    gs_overlap_enough(&c->wb, GS_OVERLAP_PCT) &&
				    READ_ONCE(c->ops) >= GS_WS_OPS); i++) {
		win = gs_overlap_enter_vs(&c->rd, &c->wb);
		if (gs_store_read(s, GS_WS_SLOT, buf))
			atomic_inc(&c->errors);
		else if (!gs_kunit_version_valid(GS_WS_SLOT, buf, tmp))
			atomic_inc(&c->bad);
		else
			lost += !memchr_inv(buf, 0, PAGE_SIZE);
		gs_overlap_exit(&c->rd, win);
		cond_resched();
	}
	gs_overlap_close(&c->rd, &c->wb);
	WRITE_ONCE(c->stop, true);
	wait_for_completion(&c->done);

	kunit_info(test, "%d reads of one slot, %ld from the device; %ld steps, %ld pages moved, %ld compactions held off\n",
		   i, gs_stat(&s->stats.bd_reads), c->ops,
		   gs_stat(&s->stats.bd_relocated), c->busy);
	gs_overlap_expect(test, &c->rd, "reads of a slot against compaction moving it",
			  GS_WS_RD_PCT, c->ops, GS_WS_OPS);
	gs_overlap_expect(test, &c->wb, "compaction moving a slot against its reads",
			  GS_OVERLAP_PCT, i, GS_WS_READS);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->errors), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->bad), 0);
	KUNIT_EXPECT_EQ(test, lost, 0L);
	KUNIT_EXPECT_GT(test, gs_stat(&s->stats.bd_reads), 0);
	KUNIT_EXPECT_GT(test, gs_stat(&s->stats.bd_relocated), 0);
	gs_kunit_wb_settle(s);
	gs_kunit_expect_unpinned(test, s);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0L);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_SLOTS_USED), 1);
	KUNIT_EXPECT_EQ(test, gs_backing_used(s->bk),
			(u64)gs_stat_read(&s->stats, GS_STAT_WB_PAGES));
	KUNIT_EXPECT_EQ(test, gs_store_read(s, GS_WS_SLOT, buf), 0);
	KUNIT_EXPECT_TRUE(test, gs_kunit_version_valid(GS_WS_SLOT, buf, tmp));
	gs_store_free(s, GS_WS_SLOT);
	KUNIT_EXPECT_EQ(test, gs_backing_used(s->bk), 0ULL);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_SLOTS_USED), 0);
	KUNIT_EXPECT_EQ(test, gs_store_pool_pages(s), 0UL);
}

static struct kunit_case gs_wb_cases[] = {
	KUNIT_CASE(gs_wb_round_trip),
	KUNIT_CASE(gs_wb_modes),
	KUNIT_CASE(gs_wb_cold),
	KUNIT_CASE(gs_wb_idle_not_cold),
	KUNIT_CASE(gs_wb_budget),
	KUNIT_CASE(gs_wb_budget_switch),
	KUNIT_CASE(gs_wb_backing_full),
	KUNIT_CASE(gs_wb_io_errors),
	KUNIT_CASE(gs_wb_alloc_failure),
	KUNIT_CASE(gs_wb_race_writeback),
	KUNIT_CASE(gs_wb_race_round),
	KUNIT_CASE(gs_wb_race_read),
	KUNIT_CASE(gs_wb_nowait),
	KUNIT_CASE(gs_wb_direct),
	KUNIT_CASE(gs_wb_pool_limit),
	KUNIT_CASE(gs_wb_direct_no_room),
	KUNIT_CASE(gs_wb_shrinker),
	KUNIT_CASE_SLOW(gs_wb_idle_age),
	KUNIT_CASE(gs_wb_discard),
	KUNIT_CASE(gs_wb_last_slot),
	KUNIT_CASE(gs_wb_discard_error),
	KUNIT_CASE(gs_wb_bdev),
	KUNIT_CASE(gs_wb_direct_unlocked),
	KUNIT_CASE(gs_wb_read_unlocked),
	KUNIT_CASE(gs_wb_relocate_pin),
	KUNIT_CASE(gs_wb_sparse_compacts),
	KUNIT_CASE(gs_wb_checksum),
	KUNIT_CASE(gs_wb_checksum_off),
	KUNIT_CASE(gs_wb_encrypt),
	KUNIT_CASE(gs_wb_range),
	KUNIT_CASE(gs_wb_batch_size),
	KUNIT_CASE(gs_wb_stuck),
	KUNIT_CASE(gs_wb_destroy_all),
	KUNIT_CASE_SLOW(gs_wb_stress),
	KUNIT_CASE_SLOW(gs_wb_relocate_read_same),
	{}
};

static struct kunit_suite gs_wb_suite = {
	.name = "ghostswap_writeback",
	.suite_init = gs_kunit_core_init,
	.suite_exit = gs_kunit_core_exit,
	.test_cases = gs_wb_cases,
};

kunit_test_suite(gs_wb_suite);
