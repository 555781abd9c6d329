// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "ghostswap_unit": runs of 4 to 16 pages stored as one unit
 * (gs_unit.h). They read back whole and page by page, same-filled pages
 * in a run stay SAME, a run that does not shrink is refused, frees of
 * single slots keep the unit until its last slot goes, an overwrite of
 * part of a run leaves the rest readable, the counters and the debug
 * check agree throughout, and everything returns when all is freed.
 * Units written back go whole, read back, survive a failed write, a
 * changed slot and backing compaction, and races with frees and reads
 * in the middle of their I/O. On two CPUs: reads of units (whole and of
 * one page) against frees and overwrites of their slots; writeback,
 * reads back and moves of units on the backing device against the same.
 */
#include <kunit/static_stub.h>
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/zsmalloc.h>
#include "gs_comp.h"
#include "gs_core.h"
#include "gs_heuristic.h"
#include "gs_recomp.h"
#include "gs_store.h"
#include "gs_unit.h"
#include "gs_kunit.h"

#define GS_KU_PAGES	GS_UNIT_MAX_PAGES

static const char *const gs_ku_algs[] = { "lz4", "zstd" };

static void gs_ku_alg_desc(const char *const *alg, char *desc)
{
	strscpy(desc, *alg, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(gs_ku_alg, gs_ku_algs, gs_ku_alg_desc);

/* A store with units of up to 16 pages. */
static struct gs_store *gs_ku_store(struct kunit *test, const char *alg,
				    u64 nr_slots)
{
	struct gs_store *s = gs_kunit_store(test, alg, nr_slots);

	KUNIT_ASSERT_EQ(test, gs_store_set_unit(s, GS_KU_PAGES), 0);
	KUNIT_ASSERT_EQ(test, gs_store_unit(s), GS_KU_PAGES);
	return s;
}

/* @n pages in one buffer, the text of slots @first.. (version base + v). */
static void gs_ku_fill_run(void *buf, u64 first, unsigned int n, u32 v)
{
	unsigned int k;

	for (k = 0; k < n; k++)
		gs_kunit_fill_version(buf + k * PAGE_SIZE,
				      (first + k) * 1000 + v, false);
}

static void *gs_ku_run_buf(struct kunit *test)
{
	void *p = kunit_kmalloc(test, GS_KU_PAGES * PAGE_SIZE, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, p);
	return p;
}

/* Runs 0..@n-1 of 16 slots stored as units of text (version @v), via @run. */
static void gs_ku_store_runs(struct kunit *test, struct gs_store *s,
			     void *run, unsigned int n, u32 v)
{
	unsigned int r;
	u64 first;
	int ret;

	for (r = 0; r < n; r++) {
		first = r * GS_KU_PAGES;
		gs_ku_fill_run(run, first, GS_KU_PAGES, v);
		ret = gs_store_write_unit_nowait(s, first, run, GS_KU_PAGES,
						 GFP_KERNEL);
		KUNIT_ASSERT_EQ(test, ret, 0);
	}
}

/* The store's accounts agree with each other and with its table. */
static void gs_ku_expect_counts(struct kunit *test, struct gs_store *s)
{
	struct gs_stats *st = &s->stats;

	KUNIT_EXPECT_EQ(test, gs_stat_read(st, GS_STAT_SLOTS_USED),
			gs_stat_read(st, GS_STAT_SAME_PAGES) +
			gs_stat_read(st, GS_STAT_COMP_PAGES) +
			gs_stat_read(st, GS_STAT_HUGE_PAGES) +
			gs_stat_read(st, GS_STAT_WB_PAGES) +
			gs_stat_read(st, GS_STAT_UNIT_PAGES));
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0L);
	gs_kunit_expect_unpinned(test, s);
}

/* Everything freed: no slot, no pool page, no unit, no cluster. */
static void gs_ku_expect_empty(struct kunit *test, struct gs_store *s)
{
	struct gs_stats *st = &s->stats;

	KUNIT_EXPECT_EQ(test, gs_stat_read(st, GS_STAT_SLOTS_USED), 0);
	KUNIT_EXPECT_EQ(test, gs_stat_read(st, GS_STAT_UNITS), 0);
	KUNIT_EXPECT_EQ(test, gs_stat_read(st, GS_STAT_UNIT_PAGES), 0);
	KUNIT_EXPECT_EQ(test, gs_stat_read(st, GS_STAT_COMPR_BYTES), 0);
	KUNIT_EXPECT_EQ(test, gs_store_pool_pages(s), 0UL);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&st->clusters), 0);
	KUNIT_EXPECT_TRUE(test, gs_kunit_index_empty(s));
}

/*
 * Runs of 16, 8 and 4 text pages are each one unit: read whole, and
 * page by page, they come back; the table holds UNIT entries, the pool
 * one object chain each.
 */
static void gs_unit_roundtrip(struct kunit *test)
{
	const char *const *alg = test->param_value;
	struct gs_store *s = gs_ku_store(test, *alg, 4 * GS_CLUSTER_SLOTS);
	void *run = gs_ku_run_buf(test), *got = gs_ku_run_buf(test);
	static const unsigned int sizes[] = { 16, 8, 4 };
	unsigned int i, k, n;
	long bytes = 0;
	u64 first;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		n = sizes[i];
		first = GS_CLUSTER_SLOTS + 64 * i;
		gs_ku_fill_run(run, first, n, 1);
		KUNIT_ASSERT_EQ(test, gs_store_write_unit_nowait(s, first, run,
								 n, GFP_KERNEL),
				0);
		for (k = 0; k < n; k++)
			KUNIT_EXPECT_EQ(test, gs_store_kind(s, first + k, NULL),
					GS_KIND_UNIT);
		memset(got, 0, n * PAGE_SIZE);
		KUNIT_EXPECT_EQ(test, gs_store_read_unit_nowait(s, first, got,
								n), 0);
		KUNIT_EXPECT_MEMEQ(test, got, run, n * PAGE_SIZE);
		for (k = 0; k < n; k++) {
			KUNIT_EXPECT_EQ(test, gs_store_read(s, first + k, got),
					0);
			KUNIT_EXPECT_MEMEQ(test, got, run + k * PAGE_SIZE,
					   PAGE_SIZE);
		}
		bytes = gs_stat_read(&s->stats, GS_STAT_COMPR_BYTES);
		kunit_info(test, "%s: %u text pages in %ld bytes so far\n",
			   *alg, n, bytes);
	}
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_UNITS), 3);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_UNIT_PAGES), 28);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->stats.unit_reads), 3);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->stats.unit_part_reads), 28);
	KUNIT_EXPECT_LT(test, bytes, 28L * PAGE_SIZE / 2);
	gs_ku_expect_counts(test, s);
	gs_store_free_range(s, 0, 4 * GS_CLUSTER_SLOTS);
	gs_ku_expect_empty(test, s);
}

/*
 * Zero and same-filled pages of a run stay SAME, outside the unit; a
 * whole read fills them in; a run of them alone, or with one page of
 * data, is no unit; nor is one that does not shrink, or does not fit
 * the rules (alignment, size, the store's end).
 */
static void gs_unit_kinds(struct kunit *test)
{
	struct gs_store *s = gs_ku_store(test, "lz4", GS_CLUSTER_SLOTS);
	void *run = gs_ku_run_buf(test), *got = gs_ku_run_buf(test);
	unsigned int k, tries;
	long comps;

	gs_ku_fill_run(run, 0, GS_KU_PAGES, 2);
	memset(run + 3 * PAGE_SIZE, 0, PAGE_SIZE);
	memset64(run + 9 * PAGE_SIZE, 0x0123456789abcdefUL, PAGE_SIZE / 8);
	KUNIT_ASSERT_EQ(test, gs_store_write_unit_nowait(s, 16, run,
							 GS_KU_PAGES,
							 GFP_KERNEL), 0);
	KUNIT_EXPECT_EQ(test, gs_store_kind(s, 16 + 3, NULL), GS_KIND_SAME);
	KUNIT_EXPECT_EQ(test, gs_store_kind(s, 16 + 9, NULL), GS_KIND_SAME);
	KUNIT_EXPECT_EQ(test, gs_store_kind(s, 16 + 4, NULL), GS_KIND_UNIT);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_UNIT_PAGES), 14);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_SAME_PAGES), 2);
	memset(got, 0xa5, GS_KU_PAGES * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, gs_store_read_unit_nowait(s, 16, got,
							GS_KU_PAGES), 0);
	KUNIT_EXPECT_MEMEQ(test, got, run, GS_KU_PAGES * PAGE_SIZE);
	for (k = 0; k < GS_KU_PAGES; k++) {
		KUNIT_EXPECT_EQ(test, gs_store_read(s, 16 + k, got), 0);
		KUNIT_EXPECT_MEMEQ(test, got, run + k * PAGE_SIZE, PAGE_SIZE);
	}

	/* Zeroes and one page of text: nothing to compress together. */
	memset(run, 0, GS_KU_PAGES * PAGE_SIZE);
	gs_kunit_fill_text(run + 5 * PAGE_SIZE, 5);
	KUNIT_EXPECT_EQ(test, gs_store_write_unit_nowait(s, 32, run,
							 GS_KU_PAGES,
							 GFP_KERNEL), -E2BIG);
	/*
	 * Random pages: refused, counted; not even compressed where the
	 * heuristic is on (the default), compressed and found not to
	 * shrink where it is off. The heuristic samples a page: now and
	 * then it takes a random one for one that may compress, so each
	 * page is drawn until it looks incompressible.
	 */
	for (k = 0; k < GS_KU_PAGES; k++) {
		for (tries = 0; tries < 100; tries++) {
			get_random_bytes(run + k * PAGE_SIZE, PAGE_SIZE);
			if (gs_page_looks_incompressible(run + k * PAGE_SIZE))
				break;
		}
		KUNIT_ASSERT_LT(test, tries, 100U);
	}
	comps = gs_stat_read(&s->stats, GS_STAT_COMPRESSIONS);
	KUNIT_EXPECT_EQ(test, gs_store_write_unit_nowait(s, 32, run,
							 GS_KU_PAGES,
							 GFP_KERNEL), -E2BIG);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_COMPRESSIONS),
			comps);
	s->incomp_check = false;
	KUNIT_EXPECT_EQ(test, gs_store_write_unit_nowait(s, 32, run,
							 GS_KU_PAGES,
							 GFP_KERNEL), -E2BIG);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_COMPRESSIONS),
			comps + 1);
	s->incomp_check = true;
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->stats.units_refused), 2);
	gs_ku_fill_run(run, 64, GS_KU_PAGES, 3);
	/* Misaligned, too short, too long, past the end. */
	KUNIT_EXPECT_EQ(test, gs_store_write_unit_nowait(s, 68, run, 8,
							 GFP_KERNEL), -EINVAL);
	KUNIT_EXPECT_EQ(test, gs_store_write_unit_nowait(s, 64, run, 2,
							 GFP_KERNEL), -EINVAL);
	KUNIT_EXPECT_EQ(test, gs_store_write_unit_nowait(s, 64, run, 32,
							 GFP_KERNEL), -EINVAL);
	KUNIT_EXPECT_EQ(test, gs_store_write_unit_nowait(s, GS_CLUSTER_SLOTS,
							 run, 4, GFP_KERNEL),
			-EINVAL);
	/* A whole read of what is not one unit: page by page, then. */
	KUNIT_EXPECT_EQ(test, gs_store_read_unit_nowait(s, 64, got, 16),
			-ENOENT);
	KUNIT_EXPECT_EQ(test, gs_store_read_unit_nowait(s, 16, got, 8),
			-ENOENT);
	KUNIT_EXPECT_EQ(test, gs_store_write(s, 17, run, GFP_KERNEL), 0);
	KUNIT_EXPECT_EQ(test, gs_store_read_unit_nowait(s, 16, got, 16),
			-ENOENT);
	gs_ku_expect_counts(test, s);

	/* The unit size changes only while the store is empty. */
	KUNIT_EXPECT_EQ(test, gs_store_set_unit(s, 8), -EBUSY);
	gs_store_free_range(s, 0, GS_CLUSTER_SLOTS);
	gs_ku_expect_empty(test, s);
	KUNIT_EXPECT_EQ(test, gs_store_set_unit(s, 3), -EINVAL);
	KUNIT_EXPECT_EQ(test, gs_store_set_unit(s, 32), -EINVAL);
	KUNIT_EXPECT_EQ(test, gs_store_set_unit(s, 8), 0);
	KUNIT_EXPECT_EQ(test, gs_store_write_unit_nowait(s, 0, run, 16,
							 GFP_KERNEL), -EINVAL);
	KUNIT_EXPECT_EQ(test, gs_store_write_unit_nowait(s, 0, run, 8,
							 GFP_KERNEL), 0);
	KUNIT_EXPECT_EQ(test, gs_store_set_unit(s, 0), -EBUSY);
	gs_store_free_range(s, 0, GS_CLUSTER_SLOTS);
	KUNIT_EXPECT_EQ(test, gs_store_set_unit(s, 0), 0);
	KUNIT_EXPECT_EQ(test, gs_store_write_unit_nowait(s, 0, run, 8,
							 GFP_KERNEL), -EINVAL);
	gs_ku_expect_empty(test, s);
}

/*
 * Freeing the slots of a unit one at a time frees nothing while half of
 * them or more are left; the others read back meanwhile. Once more than
 * half are gone, the worker stores the rest one by one and the unit goes
 * (a split); they still read back. An overwrite of a slot of a unit lets
 * go of it the same way.
 */
static void gs_unit_frees(struct kunit *test)
{
	struct gs_store *s = gs_ku_store(test, "zstd", GS_CLUSTER_SLOTS);
	void *run = gs_ku_run_buf(test), *got = gs_kunit_page(test);
	unsigned long pool;
	unsigned int k, j;

	gs_ku_fill_run(run, 0, GS_KU_PAGES, 4);
	KUNIT_ASSERT_EQ(test, gs_store_write_unit_nowait(s, 0, run,
							 GS_KU_PAGES,
							 GFP_KERNEL), 0);
	pool = gs_store_pool_pages(s);
	KUNIT_EXPECT_GT(test, pool, 0UL);
	for (k = 0; k < GS_KU_PAGES; k++) {
		/* An overwrite for the even ones, a free for the odd. */
		if (k & 1) {
			gs_store_free(s, k);
		} else {
			gs_kunit_fill_version(got, k * 1000 + 5, false);
			KUNIT_ASSERT_EQ(test, gs_store_write(s, k, got,
							     GFP_KERNEL), 0);
		}
		flush_work(&s->unit_split_work);
		/* 16 - (k + 1) left: split once fewer than 8. */
		KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_UNITS),
				k < GS_KU_PAGES / 2 ? 1 : 0);
		KUNIT_EXPECT_EQ(test,
				gs_stat_read(&s->stats, GS_STAT_UNIT_PAGES),
				k < GS_KU_PAGES / 2 ? GS_KU_PAGES - 1 - k : 0);
		for (j = k + 1; j < GS_KU_PAGES; j++) {
			KUNIT_EXPECT_EQ(test, gs_store_kind(s, j, NULL),
					k < GS_KU_PAGES / 2 ? GS_KIND_UNIT :
					GS_KIND_COMPRESSED);
			KUNIT_EXPECT_EQ(test, gs_store_read(s, j, got), 0);
			KUNIT_EXPECT_MEMEQ(test, got, run + j * PAGE_SIZE,
					   PAGE_SIZE);
		}
		gs_ku_expect_counts(test, s);
	}
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->stats.unit_splits), 1);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_COMP_PAGES),
			GS_KU_PAGES / 2);
	gs_store_free_range(s, 0, GS_CLUSTER_SLOTS);
	gs_ku_expect_empty(test, s);
}

/*
 * The pages of a unit read alone one after the other: the first
 * decompresses the unit into the stream's buffer, the others are copied
 * out of it (on one CPU: its stream). A new unit, or a write through the
 * buffer, makes the next read decompress again.
 */
static void gs_unit_part_cache(struct kunit *test)
{
	struct gs_store *s = gs_ku_store(test, "lz4", GS_CLUSTER_SLOTS);
	void *run = gs_ku_run_buf(test), *got = gs_kunit_page(test);
	struct gs_stats *st = &s->stats;
	unsigned int k;
	int ret;

	gs_ku_fill_run(run, 0, GS_KU_PAGES, 7);
	KUNIT_ASSERT_EQ(test, gs_store_write_unit_nowait(s, 0, run,
							 GS_KU_PAGES,
							 GFP_KERNEL), 0);
	migrate_disable();
	for (k = 0; k < GS_KU_PAGES; k++) {
		KUNIT_EXPECT_EQ(test, gs_store_read(s, k, got), 0);
		KUNIT_EXPECT_MEMEQ(test, got, run + k * PAGE_SIZE, PAGE_SIZE);
	}
	KUNIT_EXPECT_EQ(test, atomic_long_read(&st->unit_part_reads),
			GS_KU_PAGES);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&st->unit_part_cached),
			GS_KU_PAGES - 1);
	/*
	 * The same slots, new data, as a unit; then a run with a zero page,
	 * gathered in the unit buffer: each time, the next page read alone
	 * out of the first run is decompressed again.
	 */
	gs_ku_fill_run(run, 0, GS_KU_PAGES, 8);
	for (k = 0; k < 2; k++) {
		if (k)
			memset(run + 5 * PAGE_SIZE, 0, PAGE_SIZE);
		ret = gs_store_write_unit_nowait(s, k * GS_KU_PAGES, run,
						 GS_KU_PAGES, GFP_KERNEL);
		KUNIT_ASSERT_EQ(test, ret, 0);
		KUNIT_EXPECT_EQ(test, gs_store_read(s, 3 + k, got), 0);
		KUNIT_EXPECT_MEMEQ(test, got, run + (3 + k) * PAGE_SIZE,
				   PAGE_SIZE);
		KUNIT_EXPECT_EQ(test, atomic_long_read(&st->unit_part_cached),
				GS_KU_PAGES - 1);
	}
	migrate_enable();
	gs_ku_expect_counts(test, s);
	gs_store_free_range(s, 0, GS_CLUSTER_SLOTS);
	gs_ku_expect_empty(test, s);
}

/* Free slot @f; write version 9 of slot @w to it. */
static void gs_ku_free_and_write(struct gs_store *s, u64 f, u64 w)
{
	void *page = kmalloc(PAGE_SIZE, GFP_KERNEL);

	gs_store_free(s, f);
	if (page) {
		gs_kunit_fill_version(page, w * 1000 + 9, false);
		WARN_ON(gs_store_write(s, w, page, GFP_KERNEL));
		kfree(page);
	}
}

/* The split's window: free slot 9, overwrite slot 10. */
static void gs_ku_split_window(struct gs_store *s, u64 first)
{
	gs_ku_free_and_write(s, first + 9, first + 10);
}

/*
 * A split whose unit changes between its compressions and their
 * install: a slot freed, one overwritten meanwhile. Their new objects
 * are dropped, the rest are installed; the freed slot stays empty, the
 * overwritten one holds the new data; no pool object is left over.
 */
static void gs_unit_split_window(struct kunit *test)
{
	struct gs_store *s = gs_ku_store(test, "zstd", GS_CLUSTER_SLOTS);
	void *run = gs_ku_run_buf(test), *got = gs_kunit_page(test);
	void *want = gs_kunit_page(test);
	unsigned int k;

	disable_work_sync(&s->unit_split_work);
	gs_ku_fill_run(run, 0, GS_KU_PAGES, 3);
	KUNIT_ASSERT_EQ(test, gs_store_write_unit_nowait(s, 0, run,
							 GS_KU_PAGES,
							 GFP_KERNEL), 0);
	for (k = 0; k < 9; k++)
		gs_store_free(s, k);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_UNITS), 1);
	/* Marked for the worker, and counted so. */
	gs_ku_expect_counts(test, s);
	kunit_activate_static_stub(test, gs_read_window, gs_ku_split_window);
	s->unit_split_work.func(&s->unit_split_work);
	kunit_deactivate_static_stub(test, gs_read_window);
	enable_work(&s->unit_split_work);

	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_UNITS), 0);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->stats.unit_splits), 1);
	KUNIT_EXPECT_EQ(test, gs_store_kind(s, 9, NULL), GS_KIND_EMPTY);
	gs_kunit_fill_version(want, 10 * 1000 + 9, false);
	KUNIT_EXPECT_EQ(test, gs_store_read(s, 10, got), 0);
	KUNIT_EXPECT_MEMEQ(test, got, want, PAGE_SIZE);
	for (k = 11; k < GS_KU_PAGES; k++) {
		KUNIT_EXPECT_EQ(test, gs_store_kind(s, k, NULL),
				GS_KIND_COMPRESSED);
		KUNIT_EXPECT_EQ(test, gs_store_read(s, k, got), 0);
		KUNIT_EXPECT_MEMEQ(test, got, run + k * PAGE_SIZE, PAGE_SIZE);
	}
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_SLOTS_USED),
			GS_KU_PAGES - 10);
	gs_ku_expect_counts(test, s);
	gs_store_free_range(s, 0, GS_CLUSTER_SLOTS);
	gs_ku_expect_empty(test, s);
}

static int gs_ku_obj_calls;

/* The third object of a chain cannot be had. */
static unsigned long gs_ku_obj_alloc_third_fails(struct gs_store *s,
						 unsigned int size, gfp_t gfp)
{
	if (++gs_ku_obj_calls == 3)
		return (unsigned long)ERR_PTR(-ENOMEM);
	return zs_malloc(s->pool, size, gfp | __GFP_NOWARN, NUMA_NO_NODE);
}

/*
 * No memory in the middle of a unit's chain: the write fails, the run
 * keeps the unit it held (every page reads back), the objects already
 * taken are given back. A split with no memory for its first page
 * leaves the pages in the unit, which is not marked again.
 */
static void gs_unit_no_memory(struct kunit *test)
{
	struct gs_store *s = gs_ku_store(test, "lz4", GS_CLUSTER_SLOTS);
	void *run = gs_ku_run_buf(test), *run2 = gs_ku_run_buf(test);
	void *got = gs_kunit_page(test);
	unsigned long pool;
	long bytes;
	unsigned int k;

	gs_ku_fill_run(run, 0, GS_KU_PAGES, 1);
	KUNIT_ASSERT_EQ(test, gs_store_write_unit_nowait(s, 0, run,
							 GS_KU_PAGES,
							 GFP_KERNEL), 0);
	pool = gs_store_pool_pages(s);
	bytes = gs_stat_read(&s->stats, GS_STAT_COMPR_BYTES);
	/* 16 pages of text take more than two pool pages with lz4. */
	gs_ku_fill_run(run2, 0, GS_KU_PAGES, 2);
	gs_ku_obj_calls = 0;
	kunit_activate_static_stub(test, gs_unit_obj_alloc,
				   gs_ku_obj_alloc_third_fails);
	KUNIT_EXPECT_EQ(test, gs_store_write_unit_nowait(s, 0, run2,
							 GS_KU_PAGES,
							 GFP_KERNEL), -ENOMEM);
	kunit_deactivate_static_stub(test, gs_unit_obj_alloc);
	KUNIT_EXPECT_EQ(test, gs_ku_obj_calls, 3);
	KUNIT_EXPECT_EQ(test, gs_store_pool_pages(s), pool);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_COMPR_BYTES),
			bytes);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_UNITS), 1);
	for (k = 0; k < GS_KU_PAGES; k++) {
		KUNIT_EXPECT_EQ(test, gs_store_read(s, k, got), 0);
		KUNIT_EXPECT_MEMEQ(test, got, run + k * PAGE_SIZE, PAGE_SIZE);
	}
	gs_ku_expect_counts(test, s);

	/* The split's first page finds no memory. */
	disable_work_sync(&s->unit_split_work);
	for (k = 0; k < 9; k++)
		gs_store_free(s, k);
	atomic_set(&s->fail_alloc, 1);
	s->unit_split_work.func(&s->unit_split_work);
	KUNIT_EXPECT_EQ(test, atomic_read(&s->fail_alloc), 0);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_UNITS), 1);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->stats.unit_splits), 0);
	gs_store_free(s, 9);
	s->unit_split_work.func(&s->unit_split_work);
	enable_work(&s->unit_split_work);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_UNITS), 1);
	for (k = 10; k < GS_KU_PAGES; k++) {
		KUNIT_EXPECT_EQ(test, gs_store_kind(s, k, NULL), GS_KIND_UNIT);
		KUNIT_EXPECT_EQ(test, gs_store_read(s, k, got), 0);
		KUNIT_EXPECT_MEMEQ(test, got, run + k * PAGE_SIZE, PAGE_SIZE);
	}
	gs_ku_expect_counts(test, s);
	gs_store_free_range(s, 0, GS_CLUSTER_SLOTS);
	gs_ku_expect_empty(test, s);
}

/* zstd as the secondary algorithm (priority 1) of @s. */
static void gs_ku_secondary(struct kunit *test, struct gs_store *s)
{
	struct gs_comp_params *p = kzalloc_obj(*p);

	KUNIT_ASSERT_NOT_NULL(test, p);
	KUNIT_ASSERT_EQ(test, gs_comp_params_init(p, "zstd"), 0);
	KUNIT_ASSERT_EQ(test, gs_comp_params_setup(p), 0);
	KUNIT_ASSERT_EQ(test, gs_store_set_comp(s, 1, p), 0);
}

/* The recompression's window: free slot 2, overwrite slot 3 of the run. */
static void gs_ku_recomp_window(struct gs_store *s, u64 first)
{
	gs_ku_free_and_write(s, first + 2, first + 3);
}

/*
 * Recompression takes a unit whole: lz4 units recompressed with zstd
 * (by request, every page) take fewer bytes and read back, whole and a
 * page at a time; a unit with pages gone keeps only its live ones; a
 * second pass finds nothing to do; the secondary algorithm is in use
 * while a unit holds pages compressed with it. A unit whose slots are
 * freed and overwritten while it is being recompressed: the new unit
 * takes only the slots that still refer to the old one.
 */
static void gs_unit_recompress(struct kunit *test)
{
	struct gs_store *s = gs_ku_store(test, "lz4", GS_CLUSTER_SLOTS);
	struct gs_recomp_req req = { .type = GS_RECOMP_ALL, .prio_min = 1,
				     .prio_max = 1 };
	void *run = gs_ku_run_buf(test), *got = gs_ku_run_buf(test);
	void *want = gs_kunit_page(test);
	long bytes, meta;
	unsigned int r, k;
	u64 done, first;
	int ret;

	gs_ku_secondary(test, s);
	gs_ku_store_runs(test, s, run, 4, 1);
	/* Three pages of the third run gone. */
	for (k = 0; k < 3; k++)
		gs_store_free(s, 2 * GS_KU_PAGES + 5 + k);
	bytes = gs_stat_read(&s->stats, GS_STAT_COMPR_BYTES);
	meta = atomic_long_read(&s->stats.meta_bytes);
	KUNIT_EXPECT_EQ(test, gs_store_recompress(s, &req, &done), 0);
	KUNIT_EXPECT_EQ(test, done, 4ULL * GS_KU_PAGES - 3);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_UNITS), 4);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_UNIT_PAGES),
			4 * GS_KU_PAGES - 3);
	kunit_info(test, "4 units of text: %ld bytes with lz4, %ld with zstd\n",
		   bytes, gs_stat_read(&s->stats, GS_STAT_COMPR_BYTES));
	KUNIT_EXPECT_LT(test, gs_stat_read(&s->stats, GS_STAT_COMPR_BYTES),
			bytes);
	KUNIT_EXPECT_LE(test, atomic_long_read(&s->stats.meta_bytes), meta);
	for (r = 0; r < 4; r++) {
		first = r * GS_KU_PAGES;
		gs_ku_fill_run(run, first, GS_KU_PAGES, 1);
		if (r != 2) {
			ret = gs_store_read_unit_nowait(s, first, got,
							GS_KU_PAGES);
			KUNIT_EXPECT_EQ(test, ret, 0);
			KUNIT_EXPECT_MEMEQ(test, got, run,
					   GS_KU_PAGES * PAGE_SIZE);
		}
		for (k = 0; k < GS_KU_PAGES; k++) {
			KUNIT_EXPECT_EQ(test, gs_store_read(s, first + k, got),
					0);
			if (r == 2 && k >= 5 && k < 8)
				memset(run + k * PAGE_SIZE, 0, PAGE_SIZE);
			KUNIT_EXPECT_MEMEQ(test, got, run + k * PAGE_SIZE,
					   PAGE_SIZE);
		}
	}
	KUNIT_EXPECT_EQ(test, gs_store_recompress(s, &req, &done), 0);
	KUNIT_EXPECT_EQ(test, done, 0ULL);
	KUNIT_EXPECT_EQ(test, gs_store_set_comp(s, 1, NULL), -EBUSY);
	gs_ku_expect_counts(test, s);
	gs_store_free_range(s, 0, GS_CLUSTER_SLOTS);

	/* Changes in the window between repack and install. */
	gs_ku_fill_run(run, 0, GS_KU_PAGES, 2);
	KUNIT_ASSERT_EQ(test, gs_store_write_unit_nowait(s, 0, run,
							 GS_KU_PAGES,
							 GFP_KERNEL), 0);
	kunit_activate_static_stub(test, gs_read_window, gs_ku_recomp_window);
	KUNIT_EXPECT_EQ(test, gs_store_recompress(s, &req, &done), 0);
	kunit_deactivate_static_stub(test, gs_read_window);
	KUNIT_EXPECT_EQ(test, done, (u64)GS_KU_PAGES - 2);
	KUNIT_EXPECT_EQ(test, gs_store_kind(s, 2, NULL), GS_KIND_EMPTY);
	KUNIT_EXPECT_EQ(test, gs_store_kind(s, 3, NULL), GS_KIND_COMPRESSED);
	gs_kunit_fill_version(want, 3 * 1000 + 9, false);
	KUNIT_EXPECT_EQ(test, gs_store_read(s, 3, got), 0);
	KUNIT_EXPECT_MEMEQ(test, got, want, PAGE_SIZE);
	for (k = 4; k < GS_KU_PAGES; k++) {
		KUNIT_EXPECT_EQ(test, gs_store_kind(s, k, NULL), GS_KIND_UNIT);
		KUNIT_EXPECT_EQ(test, gs_store_read(s, k, got), 0);
		KUNIT_EXPECT_MEMEQ(test, got, run + k * PAGE_SIZE, PAGE_SIZE);
	}
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_UNITS), 1);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_UNIT_PAGES),
			GS_KU_PAGES - 2);
	gs_ku_expect_counts(test, s);
	gs_store_free_range(s, 0, GS_CLUSTER_SLOTS);
	gs_ku_expect_empty(test, s);
}

/*
 * Memory: 64 runs of 16 text pages take fewer pool pages as units than
 * page by page (zstd), and every byte of their descriptors is counted.
 */
static void gs_unit_memory(struct kunit *test)
{
	struct gs_store *u = gs_ku_store(test, "zstd", 2 * GS_CLUSTER_SLOTS);
	struct gs_store *p = gs_kunit_store(test, "zstd", 2 * GS_CLUSTER_SLOTS);
	void *run = gs_ku_run_buf(test);
	long meta_u, meta_p, meta0;
	unsigned int r, k;
	u64 first;
	int ret;

	meta0 = atomic_long_read(&u->stats.meta_bytes);
	meta_u = meta0;
	meta_p = atomic_long_read(&p->stats.meta_bytes);
	for (r = 0; r < 64; r++) {
		gs_ku_fill_run(run, r * GS_KU_PAGES, GS_KU_PAGES, 6);
		first = r * GS_KU_PAGES;
		ret = gs_store_write_unit_nowait(u, first, run, GS_KU_PAGES,
						 GFP_KERNEL);
		KUNIT_ASSERT_EQ(test, ret, 0);
		for (k = 0; k < GS_KU_PAGES; k++) {
			ret = gs_store_write(p, first + k, run + k * PAGE_SIZE,
					     GFP_KERNEL);
			KUNIT_ASSERT_EQ(test, ret, 0);
		}
	}
	meta_u = atomic_long_read(&u->stats.meta_bytes) - meta_u;
	meta_p = atomic_long_read(&p->stats.meta_bytes) - meta_p;
	kunit_info(test, "1024 text pages: %lu pool pages, %ld bytes compressed, %ld of metadata as units; %lu, %ld, %ld page by page\n",
		   gs_store_pool_pages(u),
		   gs_stat_read(&u->stats, GS_STAT_COMPR_BYTES), meta_u,
		   gs_store_pool_pages(p),
		   gs_stat_read(&p->stats, GS_STAT_COMPR_BYTES), meta_p);
	KUNIT_EXPECT_LT(test, gs_store_pool_pages(u), gs_store_pool_pages(p));
	/* The clusters, and a descriptor of 64 bytes at most per unit. */
	KUNIT_EXPECT_GE(test, meta_u, meta_p + 64L * 16);
	KUNIT_EXPECT_LE(test, meta_u, meta_p + 64L * 64);
	gs_store_free_range(u, 0, 2 * GS_CLUSTER_SLOTS);
	gs_ku_expect_empty(test, u);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&u->stats.meta_bytes), meta0);
}

/* ------------------------------------------------ on two CPUs at once */

#define GS_KU_RUNS	4	/* runs of 16 slots, the race's slots */
#define GS_KU_READS	2000
/*
 * The other thread's operations the race tests ask for: a tenth of
 * this thread's (it did 1407 to 3287 beside its 2000 under the
 * sanitizers; the unit's own race, whose steps are longer, 472 to 967).
 * They run GS_KU_READS operations, and on until both of their races
 * have overlapped enough and these are done, GS_OVERLAP_MORE times as
 * many at most (a kernel slowed down may give a window few chances: 4
 * backing I/O windows in 2000 operations once, under the sanitizers
 * beside other work).
 */
#define GS_KU_OPS	(GS_KU_READS / 10)
/*
 * Backing I/O windows gs_unit_wb_concurrent() asks of its thread, fewer
 * than GS_KU_OPS: only turns that write back, read a unit from the
 * device or compact open one (90 to 209 in 2000 turns under the
 * sanitizers, 4 once beside other work).
 */
#define GS_KU_IO_WINDOWS	(GS_KU_READS / 100)

struct gs_ku_race {
	struct gs_store *s;
	struct gs_overlap rd, op;
	unsigned int rd_win;
	bool rd_in;
	long windows;		/* reads of a unit that opened a window */
	long ops;
	struct task_struct *reader;	/* the test's thread */
	atomic_t bad;		/* pages read that were never written there */
	atomic_t errors;
	bool stop;
	struct completion done;
	/* gs_unit_same_race()'s quiet step: 1 asked, 2 the reader waits. */
	int quiet;
	long quiet_steps;	/* steps the reader waited out */
};

/*
 * Whether a race test goes on, @i operations done: until both races
 * overlapped enough, the other thread did GS_KU_OPS and this one opened
 * @windows windows.
 */
static bool gs_ku_race_more(struct gs_ku_race *c, int i, long windows)
{
	return gs_overlap_more(i, GS_KU_READS,
			       gs_overlap_enough(&c->rd, GS_OVERLAP_PCT) &&
			       gs_overlap_enough(&c->op, GS_OVERLAP_PCT) &&
			       READ_ONCE(c->ops) >= GS_KU_OPS &&
			       c->windows >= windows);
}

static struct gs_ku_race *gs_ku_race;

/*
 * A unit read's window: open until the other thread starts something.
 * A turn that reads, splits and recompresses opens one, and lingers in
 * it at each.
 */
static void gs_ku_race_window(struct gs_store *s, u64 slot)
{
	struct gs_ku_race *c = gs_ku_race;

	if (current != c->reader)
		return;
	if (c->rd_in) {
		gs_overlap_linger(&c->rd, c->rd_win);
		return;
	}
	c->rd_in = true;
	c->windows++;
	c->rd_win = gs_overlap_hold(&c->rd, &c->op);
}

/*
 * A run read whole at @first into @run returned @ret: an error unless it
 * was not one unit (-ENOENT), a bad page unless each is a version
 * written to its slot. Returns whether it was read.
 */
static bool gs_ku_race_run_read(struct gs_ku_race *c, u64 first, void *run,
				void *tmp, int ret)
{
	unsigned int k;

	if (ret && ret != -ENOENT)
		atomic_inc(&c->errors);
	for (k = 0; !ret && k < GS_KU_PAGES; k++)
		if (!gs_kunit_version_valid(first + k, run + k * PAGE_SIZE,
					    tmp))
			atomic_inc(&c->bad);
	return !ret;
}

/* The end of a turn of the test's thread: its window, if one opened. */
static void gs_ku_race_turn_end(struct gs_ku_race *c)
{
	if (c->rd_in) {
		c->rd_in = false;
		gs_overlap_exit(&c->rd, c->rd_win);
	}
	cond_resched();
}

/* Free or overwrite slots of the runs, or whole runs, as units or not. */
static int gs_ku_race_fn(void *arg)
{
	struct gs_ku_race *c = arg;
	void *run = kmalloc(GS_KU_PAGES * PAGE_SIZE, GFP_KERNEL);
	void *tmp = kmalloc(PAGE_SIZE, GFP_KERNEL);
	unsigned int win, k, v = 100;
	u64 first, slot;
	int ret;

	while (run && tmp && !READ_ONCE(c->stop)) {
		ret = 0;
		first = get_random_u32_below(GS_KU_RUNS) * GS_KU_PAGES;
		slot = first + get_random_u32_below(GS_KU_PAGES);
		v = v % 900 + 100;
		win = gs_overlap_enter_vs(&c->op, &c->rd);
		switch (get_random_u32_below(5)) {
		case 0:
			gs_store_free(c->s, slot);
			break;
		case 4:
			/* Most of a unit gone: one to split. */
			for (k = 0; k < GS_KU_PAGES / 2 + 1; k++)
				gs_store_free(c->s, first + k);
			break;
		case 1:
			gs_kunit_fill_version(tmp, slot * 1000 + v++, false);
			ret = gs_store_write(c->s, slot, tmp, GFP_KERNEL);
			break;
		case 2:
			gs_ku_fill_run(run, first, GS_KU_PAGES, v++);
			ret = gs_store_write_unit_nowait(c->s, first, run,
							 GS_KU_PAGES,
							 GFP_KERNEL);
			break;
		default:
			gs_store_free_range(c->s, first, GS_KU_PAGES);
			break;
		}
		gs_racer_turn_end(&c->op, win, ret, &c->errors, &c->ops);
	}
	return gs_racer_end(run, tmp, &c->errors, &c->done);
}

/*
 * This thread reads the runs, whole (where they are one unit) and a page
 * at a time, splits the units that are mostly gone (the worker's job,
 * done here) and recompresses them, each read, split or recompression of
 * a unit its window, while
 * another thread frees and overwrites their slots and stores them again
 * as units. Every page read is a version written to its slot, or zeroes;
 * nothing stays held, the counters balance, and once all is freed
 * nothing is left (KASAN sees a unit freed twice or read after its free,
 * or an object of a split lost).
 */
static void gs_unit_concurrent(struct kunit *test)
{
	void *run = gs_ku_run_buf(test), *tmp = gs_kunit_page(test);
	struct gs_ku_race *c;
	struct task_struct *t;
	struct gs_store *s;
	long whole = 0, recomp = 0;
	unsigned int k;
	u64 first, slot;
	int i, ret;

	c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c);
	s = gs_ku_store(test, "lz4", GS_CLUSTER_SLOTS);
	gs_ku_secondary(test, s);
	c->s = s;
	init_completion(&c->done);
	gs_ku_store_runs(test, s, run, GS_KU_RUNS, 0);

	c->reader = current;
	gs_ku_race = c;
	disable_work_sync(&s->unit_split_work);
	kunit_activate_static_stub(test, gs_read_window, gs_ku_race_window);
	t = kthread_run(gs_ku_race_fn, c, "gs-kunit-unit");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	for (i = 0; gs_ku_race_more(c, i, GS_KU_OPS); i++) {
		if (i % 64 == 1) {
			/* A unit most of which goes, whatever the other does. */
			first = get_random_u32_below(GS_KU_RUNS) * GS_KU_PAGES;
			gs_ku_fill_run(run, first, GS_KU_PAGES, 50);
			if (gs_store_write_unit_nowait(s, first, run,
						       GS_KU_PAGES, GFP_KERNEL))
				atomic_inc(&c->errors);
			for (k = 0; k < GS_KU_PAGES / 2 + 1; k++)
				gs_store_free(s, first + k);
		}
		if (i % 4 == 3)
			s->unit_split_work.func(&s->unit_split_work);
		if (i % 4 == 1) {
			slot = get_random_u32_below(GS_KU_RUNS * GS_KU_PAGES);
			ret = gs_slot_recompress(s, slot, 1, false, tmp);
			if (ret == -EIO)
				atomic_inc(&c->errors);
			recomp += ret > 0 ? ret : 0;
		}
		first = get_random_u32_below(GS_KU_RUNS) * GS_KU_PAGES;
		if (i & 1) {
			ret = gs_store_read_unit_nowait(s, first, run,
							GS_KU_PAGES);
			whole += gs_ku_race_run_read(c, first, run, tmp, ret);
		} else {
			first += get_random_u32_below(GS_KU_PAGES);
			if (gs_store_read(s, first, run))
				atomic_inc(&c->errors);
			else if (!gs_kunit_version_valid(first, run, tmp))
				atomic_inc(&c->bad);
		}
		gs_ku_race_turn_end(c);
	}
	gs_overlap_close(&c->rd, &c->op);
	WRITE_ONCE(c->stop, true);
	wait_for_completion(&c->done);
	kunit_deactivate_static_stub(test, gs_read_window);
	enable_work(&s->unit_split_work);
	flush_work(&s->unit_split_work);

	kunit_info(test, "%d reads (%ld whole units), %ld units split, %ld pages recompressed, %ld in a window; %ld operations\n",
		   i, whole, atomic_long_read(&s->stats.unit_splits),
		   recomp, c->windows, c->ops);
	gs_overlap_expect(test, &c->rd, "unit reads against the other thread",
			  GS_OVERLAP_PCT, c->ops, GS_KU_OPS);
	gs_overlap_expect(test, &c->op, "frees and overwrites against unit reads",
			  GS_OVERLAP_PCT, c->windows, GS_KU_OPS);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->errors), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->bad), 0);
	KUNIT_EXPECT_GT(test, whole, 0L);
	KUNIT_EXPECT_GT(test, atomic_long_read(&s->stats.unit_splits), 0L);
	KUNIT_EXPECT_GT(test, recomp, 0L);
	gs_ku_expect_counts(test, s);
	gs_store_free_range(s, 0, GS_CLUSTER_SLOTS);
	gs_ku_expect_empty(test, s);
}

/* Backing slots the chain of the unit at @first takes, 0 if none. */
static unsigned int gs_ku_unit_nobj(struct gs_store *s, u64 first)
{
	unsigned long e = gs_store_entry(s, first);

	return gs_entry_kind(e) == GS_KIND_UNIT ?
	       gs_unit_nobj(gs_entry_unit(e)) : 0;
}

/* Is the unit at @first on the backing device? */
static bool gs_ku_unit_backed(struct gs_store *s, u64 first)
{
	unsigned long e = gs_store_entry(s, first);

	return gs_entry_kind(e) == GS_KIND_UNIT && gs_entry_unit(e)->backed;
}

/* Runs 0..@n-1 (version @v) read back page by page, each page checked. */
static void gs_ku_verify_runs(struct kunit *test, struct gs_store *s,
			      void *run, unsigned int from, unsigned int n,
			      u32 v)
{
	void *got = gs_kunit_page(test);
	unsigned int r, k;
	u64 first;

	for (r = from; r < n; r++) {
		first = r * GS_KU_PAGES;
		gs_ku_fill_run(run, first, GS_KU_PAGES, v);
		for (k = 0; k < GS_KU_PAGES; k++) {
			KUNIT_EXPECT_EQ(test, gs_store_read(s, first + k, got),
					0);
			KUNIT_EXPECT_MEMEQ(test, got, run + k * PAGE_SIZE,
					   PAGE_SIZE);
		}
	}
	kunit_kfree(test, got);
}

/*
 * Units beside a backing device: either may be set first. Writeback
 * takes a unit whole (huge and incompressible modes never take one):
 * its chain goes to the device, a backing slot per object, and its pool
 * memory goes; the cold sweep takes a unit once passed over once. Pages
 * read back alone decompress the unit once per stream; the counters,
 * the reverse map and the debug check agree; a free of one slot keeps
 * the unit's slots, the last one gives them back.
 */
static void gs_unit_writeback(struct kunit *test)
{
	struct gs_store *s = gs_ku_store(test, "lz4", GS_CLUSTER_SLOTS);
	void *run = gs_ku_run_buf(test), *got;
	unsigned int n0, n1, n2, k;
	struct gs_stats *st;
	struct gs_kbk *kb;
	long reads, whole, buf0;
	u64 done;

	KUNIT_EXPECT_EQ(test, gs_store_set_backing(s, gs_kbk_create(test, 64,
								    &kb)), 0);
	s = gs_kunit_wb_store(test, "lz4", GS_CLUSTER_SLOTS, 64, &kb);
	KUNIT_ASSERT_EQ(test, gs_store_set_unit(s, GS_KU_PAGES), 0);
	st = &s->stats;
	buf0 = atomic_long_read(&st->wb_buffer_bytes);
	gs_ku_store_runs(test, s, run, 3, 4);
	n0 = gs_ku_unit_nobj(s, 0);
	n1 = gs_ku_unit_nobj(s, GS_KU_PAGES);
	n2 = gs_ku_unit_nobj(s, 2 * GS_KU_PAGES);
	KUNIT_ASSERT_GT(test, n0, 0U);
	KUNIT_ASSERT_LT(test, n0, (unsigned int)GS_KU_PAGES);
	KUNIT_EXPECT_EQ(test, gs_store_writeback(s, GS_WB_HUGE, U64_MAX,
						 &done), 0);
	KUNIT_EXPECT_EQ(test, gs_store_writeback(s, GS_WB_INCOMP, U64_MAX,
						 &done), 0);
	KUNIT_EXPECT_EQ(test, done, 0ULL);
	/* The read-back reserve, made by the first round that may take a unit. */
	KUNIT_EXPECT_EQ(test, atomic_long_read(&st->wb_buffer_bytes) - buf0,
			(long)(GS_UNIT_MAX_PAGES * PAGE_SIZE +
			       kmalloc_size_roundup(GS_UNIT_MAX_PAGES *
						    sizeof(void *))));
	/* Every page of the first two runs: their units, whole. */
	KUNIT_EXPECT_EQ(test, gs_store_writeback_range(s, GS_WB_ALL, 0,
						       2 * GS_KU_PAGES,
						       U64_MAX, &done), 0);
	KUNIT_EXPECT_EQ(test, done, (u64)(n0 + n1));
	KUNIT_EXPECT_EQ(test, gs_stat_read(st, GS_STAT_UNITS), 3);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&st->units_backed), 2);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&st->units_written), 2);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&st->unit_bk_slots),
			(long)(n0 + n1));
	KUNIT_EXPECT_EQ(test, atomic_long_read(&st->unit_splits), 0);
	KUNIT_EXPECT_EQ(test, gs_stat_read(st, GS_STAT_WB_PAGES), 0);
	KUNIT_EXPECT_EQ(test, gs_backing_used(s->bk), (u64)(n0 + n1));
	KUNIT_EXPECT_TRUE(test, gs_ku_unit_backed(s, 0));
	KUNIT_EXPECT_TRUE(test, gs_ku_unit_backed(s, GS_KU_PAGES));
	KUNIT_EXPECT_FALSE(test, gs_ku_unit_backed(s, 2 * GS_KU_PAGES));
	/* The pool holds the third unit's chain only. */
	KUNIT_EXPECT_LE(test, gs_stat_read(st, GS_STAT_COMPR_BYTES),
			(long)n2 * PAGE_SIZE);
	/* Taken once: a unit on the device is not taken again. */
	KUNIT_EXPECT_EQ(test, gs_store_writeback_range(s, GS_WB_ALL, 0,
						       2 * GS_KU_PAGES,
						       U64_MAX, &done), 0);
	KUNIT_EXPECT_EQ(test, done, 0ULL);
	gs_ku_expect_counts(test, s);
	/* The cold sweep: the third unit on its second pass. */
	KUNIT_EXPECT_EQ(test, gs_store_writeback(s, GS_WB_COLD, U64_MAX,
						 &done), 0);
	KUNIT_EXPECT_EQ(test, done, (u64)n2);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&st->units_backed), 3);
	KUNIT_EXPECT_EQ(test, gs_stat_read(st, GS_STAT_COMPR_BYTES), 0);
	/* A run read whole: its slots read back once, straight into it. */
	KUNIT_EXPECT_EQ(test, gs_store_read_unit_nowait(s, GS_KU_PAGES, run,
							GS_KU_PAGES), -EAGAIN);
	reads = atomic_long_read(&st->bd_reads);
	whole = atomic_long_read(&st->unit_reads);
	KUNIT_EXPECT_EQ(test, gs_store_read_unit(s, GS_KU_PAGES, run,
						 GS_KU_PAGES), 0);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&st->bd_reads) - reads,
			(long)n1);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&st->unit_reads), whole + 1);
	got = gs_ku_run_buf(test);
	gs_ku_fill_run(got, GS_KU_PAGES, GS_KU_PAGES, 4);
	KUNIT_EXPECT_MEMEQ(test, run, got, GS_KU_PAGES * PAGE_SIZE);
	/* Read back on one stream: each unit's slots read once. */
	reads = atomic_long_read(&st->bd_reads);
	migrate_disable();
	gs_ku_verify_runs(test, s, run, 0, 3, 4);
	migrate_enable();
	KUNIT_EXPECT_EQ(test, atomic_long_read(&st->bd_reads) - reads,
			(long)(n0 + n1 + n2));
	KUNIT_EXPECT_EQ(test, atomic_long_read(&st->units_backed), 3);
	gs_ku_expect_counts(test, s);
	/* One slot freed: the unit stays whole on the device. */
	gs_store_free(s, 3);
	KUNIT_EXPECT_EQ(test, gs_backing_used(s->bk), (u64)(n0 + n1 + n2));
	gs_ku_expect_counts(test, s);
	/* Its last one: its backing slots go. */
	for (k = 0; k < GS_KU_PAGES; k++)
		gs_store_free(s, k);
	KUNIT_EXPECT_EQ(test, gs_backing_used(s->bk), (u64)(n1 + n2));
	KUNIT_EXPECT_EQ(test, atomic_long_read(&st->units_backed), 2);
	gs_ku_expect_counts(test, s);
	gs_ku_verify_runs(test, s, run, 1, 3, 4);
	gs_store_free_range(s, 0, GS_CLUSTER_SLOTS);
	KUNIT_EXPECT_EQ(test, gs_backing_used(s->bk), 0ULL);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&st->unit_bk_slots), 0);
	gs_ku_expect_empty(test, s);
}

/*
 * A unit whose chain does not fit a writeback batch is split, its pages
 * written back one by one; encrypted and checksummed units on the
 * device read back, a changed slot of one fails its read (EIO) and
 * leaves the unit where it is; a failed write leaves the unit in the
 * pool; backing compaction moves a unit's slots and it still reads.
 */
static void gs_unit_writeback_edges(struct kunit *test)
{
	struct gs_store *s;
	void *run = gs_ku_run_buf(test), *got = gs_kunit_page(test);
	unsigned int n1, n2;
	struct gs_stats *st;
	struct gs_kbk *kb;
	u64 done, moved, b;

	s = gs_kunit_wb_store(test, "lz4", GS_CLUSTER_SLOTS, 64, &kb);
	KUNIT_ASSERT_EQ(test, gs_store_set_unit(s, GS_KU_PAGES), 0);
	KUNIT_ASSERT_EQ(test, gs_store_set_wb_encrypt(s, true), 0);
	st = &s->stats;
	gs_ku_store_runs(test, s, run, 3, 5);
	n1 = gs_ku_unit_nobj(s, GS_KU_PAGES);
	n2 = gs_ku_unit_nobj(s, 2 * GS_KU_PAGES);
	KUNIT_ASSERT_GT(test, gs_ku_unit_nobj(s, 0), 1U);
	/* A batch of one page: split. */
	KUNIT_ASSERT_EQ(test, gs_store_set_wb_batch_size(s, 1), 0);
	KUNIT_EXPECT_EQ(test, gs_store_writeback_range(s, GS_WB_ALL, 0,
						       GS_KU_PAGES, U64_MAX,
						       &done), 0);
	KUNIT_EXPECT_EQ(test, done, (u64)GS_KU_PAGES);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&st->unit_splits), 1);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&st->units_backed), 0);
	KUNIT_EXPECT_EQ(test, gs_stat_read(st, GS_STAT_WB_PAGES),
			GS_KU_PAGES);
	KUNIT_ASSERT_EQ(test, gs_store_set_wb_batch_size(s, 32), 0);
	/* A failed write: the unit stays in the pool, its slots given back. */
	atomic_set(&kb->fail_writes, 1);
	gs_store_writeback_range(s, GS_WB_ALL, GS_KU_PAGES, 2 * GS_KU_PAGES,
				 U64_MAX, &done);
	KUNIT_EXPECT_EQ(test, done, 0ULL);
	KUNIT_EXPECT_FALSE(test, gs_ku_unit_backed(s, GS_KU_PAGES));
	KUNIT_EXPECT_EQ(test, gs_backing_used(s->bk), (u64)GS_KU_PAGES);
	gs_ku_expect_counts(test, s);
	KUNIT_EXPECT_EQ(test, gs_store_writeback_range(s, GS_WB_ALL,
						       GS_KU_PAGES,
						       3 * GS_KU_PAGES,
						       U64_MAX, &done), 0);
	KUNIT_EXPECT_EQ(test, done, (u64)(n1 + n2));
	KUNIT_EXPECT_EQ(test, atomic_long_read(&st->units_backed), 2);
	/* Its slots are its run's, in the reverse map. */
	b = gs_entry_unit(gs_store_entry(s, GS_KU_PAGES))->obj[0];
	KUNIT_EXPECT_EQ(test, gs_backing_owner(s->bk, b), (u64)GS_KU_PAGES);
	gs_ku_verify_runs(test, s, run, 0, 3, 5);
	/* A slot of it changed on the device: refused, nothing lost. */
	kb->mem[b * PAGE_SIZE + 100] ^= 0x5a;
	migrate_disable();
	KUNIT_EXPECT_EQ(test, gs_store_read(s, 2 * GS_KU_PAGES, got), 0);
	KUNIT_EXPECT_EQ(test, gs_store_read(s, GS_KU_PAGES + 1, got), -EIO);
	migrate_enable();
	KUNIT_EXPECT_GT(test, atomic_long_read(&st->bd_sum_errors), 0);
	KUNIT_EXPECT_TRUE(test, gs_ku_unit_backed(s, GS_KU_PAGES));
	kb->mem[b * PAGE_SIZE + 100] ^= 0x5a;
	/* The first run's pages gone: compaction moves the units down. */
	gs_store_free_range(s, 0, GS_KU_PAGES);
	KUNIT_EXPECT_EQ(test, gs_store_backing_compact(s, &moved), 0);
	KUNIT_EXPECT_GT(test, moved, 0ULL);
	KUNIT_EXPECT_EQ(test, gs_backing_last_used(s->bk), (u64)(n1 + n2 - 1));
	gs_ku_expect_counts(test, s);
	gs_ku_verify_runs(test, s, run, 1, 3, 5);
	gs_store_free_range(s, 0, GS_CLUSTER_SLOTS);
	KUNIT_EXPECT_EQ(test, gs_backing_used(s->bk), 0ULL);
	gs_ku_expect_empty(test, s);
}

/* What a hook does in the middle of a unit's backing I/O. */
struct gs_ku_wb_race {
	struct gs_store *s;
	void *got;
	unsigned int what;	/* GS_KU_RACE_* */
	int ret;
};

#define GS_KU_RACE_READ		0	/* read a page of the unit */
#define GS_KU_RACE_FREE_ONE	1	/* free one of its slots */
#define GS_KU_RACE_FREE_ALL	2	/* free all of them */

static void gs_ku_wb_race_hook(struct gs_kbk *k, bool write, u64 b)
{
	struct gs_ku_wb_race *r = k->arg;
	unsigned int j;

	switch (r->what) {
	case GS_KU_RACE_READ:
		r->ret = gs_store_read(r->s, 5, r->got);
		break;
	case GS_KU_RACE_FREE_ONE:
		gs_store_free(r->s, 5);
		break;
	case GS_KU_RACE_FREE_ALL:
		for (j = 0; j < GS_KU_PAGES; j++)
			gs_store_free(r->s, j);
		break;
	}
}

/*
 * Frees and reads in the middle of a unit's write, read back and move
 * (a hook of the backing store runs them there, on the I/O's thread):
 * a read during the write ends before it, and the unit goes to the
 * device; a free of one slot keeps it going there, every slot freed
 * keeps it from the device (its slots given back); slots freed under a
 * read back or a move are given back once it ends. (A read during a
 * move waits for it: not from its own thread.) Nothing is lost, nothing
 * leaks.
 */
static void gs_unit_writeback_races(struct kunit *test)
{
	struct gs_ku_wb_race r = { .got = gs_kunit_page(test) };
	void *run = gs_ku_run_buf(test), *got = gs_kunit_page(test);
	struct gs_store *s;
	struct gs_kbk *kb;
	unsigned int io, k;
	u64 done, moved;

	for (io = 0; io < 3; io++) {
		for (r.what = 0; r.what <= GS_KU_RACE_FREE_ALL; r.what++) {
			if (io == 2 && r.what == GS_KU_RACE_READ)
				continue;
			s = gs_kunit_wb_store(test, "lz4", GS_CLUSTER_SLOTS,
					      64, &kb);
			KUNIT_ASSERT_EQ(test, gs_store_set_unit(s, GS_KU_PAGES),
					0);
			r.s = s;
			r.ret = 1;
			kb->arg = &r;
			kb->hook = gs_ku_wb_race_hook;
			gs_ku_store_runs(test, s, run, 2, 6);
			if (io) {
				/* The second run's unit first: the lower slots. */
				gs_store_writeback_range(s, GS_WB_ALL,
							 GS_KU_PAGES,
							 2 * GS_KU_PAGES,
							 U64_MAX, &done);
				gs_store_writeback_range(s, GS_WB_ALL, 0,
							 GS_KU_PAGES, U64_MAX,
							 &done);
				KUNIT_ASSERT_TRUE(test,
						  gs_ku_unit_backed(s, 0));
			}
			if (io == 2)	/* room below the first one's slots */
				gs_store_free_range(s, GS_KU_PAGES,
						    2 * GS_KU_PAGES);
			kb->hook_runs = 1;
			if (io == 0) {
				gs_store_writeback_range(s, GS_WB_ALL, 0,
							 GS_KU_PAGES, U64_MAX,
							 &done);
			} else if (io == 1) {
				KUNIT_EXPECT_EQ(test, gs_store_read(s, 2, got),
						0);
				gs_ku_fill_run(run, 0, GS_KU_PAGES, 6);
				KUNIT_EXPECT_MEMEQ(test, got,
						   run + 2 * PAGE_SIZE,
						   PAGE_SIZE);
			} else {
				KUNIT_EXPECT_EQ(test,
						gs_store_backing_compact(s,
									 &moved),
						0);
				KUNIT_EXPECT_GT(test, moved, 0ULL);
			}
			KUNIT_EXPECT_EQ(test, kb->hook_runs, 0);
			kb->hook = NULL;
			KUNIT_EXPECT_EQ(test, gs_ku_unit_backed(s, 0),
					r.what != GS_KU_RACE_FREE_ALL);
			gs_ku_fill_run(run, 0, GS_KU_PAGES, 6);
			if (r.what == GS_KU_RACE_READ) {
				KUNIT_EXPECT_EQ(test, r.ret, 0);
				KUNIT_EXPECT_MEMEQ(test, r.got,
						   run + 5 * PAGE_SIZE,
						   PAGE_SIZE);
			}
			for (k = 0; k < GS_KU_PAGES; k++) {
				KUNIT_EXPECT_EQ(test, gs_store_read(s, k, got),
						0);
				if (r.what == GS_KU_RACE_FREE_ALL ||
				    (r.what == GS_KU_RACE_FREE_ONE && k == 5))
					KUNIT_EXPECT_TRUE(test,
							  !memchr_inv(got, 0,
								      PAGE_SIZE));
				else
					KUNIT_EXPECT_MEMEQ(test, got,
							   run + k * PAGE_SIZE,
							   PAGE_SIZE);
			}
			gs_ku_expect_counts(test, s);
			gs_store_free_range(s, 0, GS_CLUSTER_SLOTS);
			KUNIT_EXPECT_EQ(test, gs_backing_used(s->bk), 0ULL);
			gs_ku_expect_empty(test, s);
		}
	}
}

/* A backing I/O of the test's thread: a window, one per operation. */
static void gs_ku_wb_window(struct gs_kbk *k, bool write, u64 b)
{
	struct gs_ku_race *c = k->arg;

	if (current != c->reader || c->rd_in)
		return;
	c->rd_in = true;
	c->windows++;
	c->rd_win = gs_overlap_hold(&c->rd, &c->op);
}

/*
 * Units and the backing device on two CPUs: this thread writes runs
 * back (their units whole), reads their runs whole and their pages
 * alone (from the pool or back from the device) and compacts the
 * backing device,
 * each backing I/O its window (a hook of the backing store), while
 * another thread frees and overwrites their slots and stores them again
 * as units. Every page read is a version written to its slot, or
 * zeroes; the counters, the reverse map and the debug check balance;
 * once all is freed no backing slot is left (KASAN sees a unit freed
 * twice or read after its free).
 */
static void gs_unit_wb_concurrent(struct kunit *test)
{
	void *run = gs_ku_run_buf(test), *tmp = gs_kunit_page(test);
	struct gs_ku_race *c;
	struct task_struct *t;
	struct gs_store *s;
	struct gs_kbk *kb;
	long moved = 0;
	u64 first, done, m;
	int i, ret;

	c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c);
	s = gs_kunit_wb_store(test, "lz4", GS_CLUSTER_SLOTS,
			      GS_KU_RUNS * GS_KU_PAGES * 2, &kb);
	KUNIT_ASSERT_EQ(test, gs_store_set_unit(s, GS_KU_PAGES), 0);
	c->s = s;
	c->reader = current;
	init_completion(&c->done);
	gs_ku_store_runs(test, s, run, GS_KU_RUNS, 0);
	kb->arg = c;
	kb->hook = gs_ku_wb_window;
	kb->hook_runs = INT_MAX;

	t = kthread_run(gs_ku_race_fn, c, "gs-kunit-unit-wb");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	for (i = 0; gs_ku_race_more(c, i, GS_KU_IO_WINDOWS); i++) {
		first = get_random_u32_below(GS_KU_RUNS) * GS_KU_PAGES;
		switch (i % 4) {
		case 0:
			ret = gs_store_writeback_range(s, GS_WB_ALL, first,
						       first + GS_KU_PAGES,
						       U64_MAX, &done);
			if (ret && ret != -ENOSPC)
				atomic_inc(&c->errors);
			break;
		case 1:
			/* From the pool or, whole, from the device. */
			ret = gs_store_read_unit(s, first, run, GS_KU_PAGES);
			gs_ku_race_run_read(c, first, run, tmp, ret);
			break;
		case 2:
			first += get_random_u32_below(GS_KU_PAGES);
			if (gs_store_read(s, first, run))
				atomic_inc(&c->errors);
			else if (!gs_kunit_version_valid(first, run, tmp))
				atomic_inc(&c->bad);
			break;
		default:
			if (i % 32 == 3) {
				ret = gs_store_backing_compact(s, &m);
				if (ret && ret != -EBUSY)
					atomic_inc(&c->errors);
				moved += m;
			}
			break;
		}
		gs_ku_race_turn_end(c);
	}
	gs_overlap_close(&c->rd, &c->op);
	WRITE_ONCE(c->stop, true);
	wait_for_completion(&c->done);
	kb->hook = NULL;
	/* A split the frees queued counts itself in: a quiet store first. */
	flush_work(&s->unit_split_work);

	kunit_info(test, "%d operations here: %ld units written back whole, %ld units read whole, %ld pages of units read alone, %ld slots moved, %ld windows; %ld operations there\n",
		   i, atomic_long_read(&s->stats.units_written),
		   atomic_long_read(&s->stats.unit_reads),
		   atomic_long_read(&s->stats.unit_part_reads), moved,
		   c->windows, c->ops);
	gs_overlap_expect(test, &c->rd, "backing I/O of units against the other thread",
			  GS_OVERLAP_PCT, c->ops, GS_KU_OPS);
	gs_overlap_expect(test, &c->op, "frees and overwrites against backing I/O of units",
			  GS_OVERLAP_PCT, c->windows, GS_KU_IO_WINDOWS);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->errors), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->bad), 0);
	KUNIT_EXPECT_GT(test, atomic_long_read(&s->stats.units_written), 0L);
	gs_ku_expect_counts(test, s);
	gs_store_free_range(s, 0, GS_CLUSTER_SLOTS);
	KUNIT_EXPECT_EQ(test, gs_backing_used(s->bk), 0ULL);
	gs_ku_expect_empty(test, s);
}

/*
 * A read of the unit by the test's thread, counted in as its reader: its
 * window, open from the read's start, stays open until the other thread
 * starts its next step. The split's own window (the other thread's)
 * stays shut.
 */
static void gs_ku_same_window(struct gs_store *s, u64 slot)
{
	struct gs_ku_race *c = gs_ku_race;

	if (current != c->reader)
		return;
	c->windows++;
	gs_overlap_linger(&c->rd, c->rd_win);
}

/*
 * A quiet step of gs_ku_same_fn(): the test's thread, asked, waits
 * between two reads until the step ends (or 2 s pass). Each racing
 * writeback begins under a reader (gs_ku_same_window()), and one that
 * ends with a reader counted in leaves the unit in the pool, as it
 * must: under KCSAN none of 90 got through. A quiet one always does,
 * so the readers meet units on the device too.
 */
static void gs_ku_quiet_wait(struct gs_ku_race *c)
{
	int t;

	if (cmpxchg(&c->quiet, 1, 2) != 1)
		return;
	for (t = 0; t < 10000 && READ_ONCE(c->quiet); t++)
		usleep_range(100, 200);
}

/* The other thread asks for quiet; whether the test's thread waits. */
static bool gs_ku_quiet_begin(struct gs_ku_race *c)
{
	int t;

	WRITE_ONCE(c->quiet, 1);
	/* A read in its window lingers 2 ms at most, then sees the ask. */
	for (t = 0; t < 1000 && READ_ONCE(c->quiet) != 2 &&
	     !READ_ONCE(c->stop); t++)
		usleep_range(100, 200);
	return READ_ONCE(c->quiet) == 2;
}

/*
 * One unit at slots 0..15, in turn, each step a window: stored (a new
 * version), written back whole (every fourth time a quiet step, no read
 * under way), stored again and mostly freed (slots 0..8; 9..15 are
 * never freed), split.
 */
static int gs_ku_same_fn(void *arg)
{
	struct gs_ku_race *c = arg;
	void *run = kmalloc(GS_KU_PAGES * PAGE_SIZE, GFP_KERNEL);
	unsigned int win, k, v = 100;
	bool quiet;
	u64 done;
	int n, ret;

	for (n = 0; run && !READ_ONCE(c->stop); n++) {
		ret = 0;
		if (!(n & 1)) {
			v = v % 900 + 100;
			gs_ku_fill_run(run, 0, GS_KU_PAGES, v++);
		}
		quiet = (n & 15) == 1 && gs_ku_quiet_begin(c);
		c->quiet_steps += quiet;
		win = gs_overlap_enter_vs(&c->op, &c->rd);
		switch (n & 3) {
		case 0:
		case 2:
			ret = gs_store_write_unit_nowait(c->s, 0, run,
							 GS_KU_PAGES,
							 GFP_KERNEL);
			for (k = 0; n & 2 && k <= GS_KU_PAGES / 2; k++)
				gs_store_free(c->s, k);
			break;
		case 1:
			ret = gs_store_writeback_range(c->s, GS_WB_ALL, 0,
						       GS_KU_PAGES, U64_MAX,
						       &done);
			break;
		default:
			c->s->unit_split_work.func(&c->s->unit_split_work);
			break;
		}
		gs_racer_turn_end(&c->op, win, ret, &c->errors, &c->ops);
		WRITE_ONCE(c->quiet, 0);
	}
	if (!run)
		atomic_inc(&c->errors);
	kfree(run);
	complete(&c->done);
	return 0;
}

/*
 * Readers of a unit against its split and its writeback, on two CPUs,
 * all on one unit: the other thread stores a run of 16 slots as a unit,
 * writes it back whole, stores it again, frees most of it and splits
 * it, over and over, while this thread reads the run whole and its
 * slots one by one (each read a window; one counted in as the unit's
 * reader in the pool stays open until the other thread's next step, so
 * each step begins under a reader). A run read whole is one unit, every
 * page of it a version written to its slot; a slot read alone is a
 * version written to it, or zeroes for the slots that are freed, never
 * for slots 9..15; units went to the device and were split; the
 * counters, the reverse map and the check agree; all freed, nothing is
 * left (KASAN sees a unit freed twice or read after its free).
 */
static void gs_unit_same_race(struct kunit *test)
{
	void *run = gs_ku_run_buf(test), *tmp = gs_kunit_page(test);
	long whole = 0, lost = 0;
	struct gs_ku_race *c;
	struct task_struct *t;
	struct gs_store *s;
	struct gs_kbk *kb;
	unsigned int k;
	u64 slot;
	int i, ret;

	c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c);
	s = gs_kunit_wb_store(test, "lz4", GS_CLUSTER_SLOTS, 64, &kb);
	KUNIT_ASSERT_EQ(test, gs_store_set_unit(s, GS_KU_PAGES), 0);
	c->s = s;
	c->reader = current;
	init_completion(&c->done);
	gs_ku_store_runs(test, s, run, 1, 0);

	gs_ku_race = c;
	disable_work_sync(&s->unit_split_work);
	kunit_activate_static_stub(test, gs_read_window, gs_ku_same_window);
	t = kthread_run(gs_ku_same_fn, c, "gs-kunit-unit-same");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	for (i = 0; gs_ku_race_more(c, i, GS_KU_OPS); i++) {
		if (READ_ONCE(c->quiet) == 1)
			gs_ku_quiet_wait(c);
		c->rd_win = gs_overlap_enter_vs(&c->rd, &c->op);
		if (i & 1) {
			ret = gs_store_read_unit(s, 0, run, GS_KU_PAGES);
			if (gs_ku_race_run_read(c, 0, run, tmp, ret)) {
				whole++;
				for (k = 0; k < GS_KU_PAGES; k++)
					lost += !memchr_inv(run + k * PAGE_SIZE,
							    0, PAGE_SIZE);
			}
		} else {
			slot = get_random_u32_below(GS_KU_PAGES);
			if (gs_store_read(s, slot, run))
				atomic_inc(&c->errors);
			else if (!gs_kunit_version_valid(slot, run, tmp))
				atomic_inc(&c->bad);
			else if (slot > GS_KU_PAGES / 2)
				lost += !memchr_inv(run, 0, PAGE_SIZE);
		}
		gs_overlap_exit(&c->rd, c->rd_win);
		cond_resched();
	}
	gs_overlap_close(&c->rd, &c->op);
	WRITE_ONCE(c->stop, true);
	wait_for_completion(&c->done);
	kunit_deactivate_static_stub(test, gs_read_window);
	enable_work(&s->unit_split_work);
	flush_work(&s->unit_split_work);

	kunit_info(test, "%d reads (%ld whole units), %ld counted in as a unit's reader; %ld steps (%ld quiet): %ld units written back, %ld split\n",
		   i, whole, c->windows, c->ops, c->quiet_steps,
		   atomic_long_read(&s->stats.units_written),
		   atomic_long_read(&s->stats.unit_splits));
	gs_overlap_expect(test, &c->rd, "reads of a unit against its split and writeback",
			  GS_OVERLAP_PCT, c->ops, GS_KU_OPS);
	gs_overlap_expect(test, &c->op, "split and writeback of a unit against its readers",
			  GS_OVERLAP_PCT, c->windows, GS_KU_OPS);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->errors), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->bad), 0);
	KUNIT_EXPECT_EQ(test, lost, 0L);
	KUNIT_EXPECT_GT(test, whole, 0L);
	/* Each quiet step wrote the unit back: nothing read it meanwhile. */
	KUNIT_EXPECT_GT(test, c->quiet_steps, 0L);
	KUNIT_EXPECT_GE(test, atomic_long_read(&s->stats.units_written),
			c->quiet_steps);
	KUNIT_EXPECT_GT(test, atomic_long_read(&s->stats.unit_splits), 0L);
	gs_ku_expect_counts(test, s);
	for (slot = GS_KU_PAGES / 2 + 1; slot < GS_KU_PAGES; slot++) {
		KUNIT_EXPECT_EQ(test, gs_store_read(s, slot, run), 0);
		KUNIT_EXPECT_TRUE(test, gs_kunit_version_valid(slot, run, tmp));
		KUNIT_EXPECT_TRUE(test, memchr_inv(run, 0, PAGE_SIZE));
	}
	gs_store_free_range(s, 0, GS_CLUSTER_SLOTS);
	KUNIT_EXPECT_EQ(test, gs_backing_used(s->bk), 0ULL);
	gs_ku_expect_empty(test, s);
}

/*
 * Units marked for splitting whose last slots go before the worker
 * comes: nothing is left to split, and they are no longer counted as
 * marked (the check agrees at each step). The worker then finds no unit
 * to split in the cluster, and the units it was not marked for stay.
 */
static void gs_unit_marked_freed(struct kunit *test)
{
	struct gs_store *s = gs_ku_store(test, "lz4", GS_CLUSTER_SLOTS);
	void *run = gs_ku_run_buf(test), *got = gs_kunit_page(test);
	unsigned int r, k;

	gs_ku_store_runs(test, s, run, 3, 6);
	disable_work_sync(&s->unit_split_work);
	for (r = 0; r < 2; r++) {
		for (k = 0; k < 9; k++)
			gs_store_free(s, r * GS_KU_PAGES + k);
		gs_ku_expect_counts(test, s);
	}
	/* The first one's last slots freed, the second's overwritten. */
	for (k = 9; k < GS_KU_PAGES; k++) {
		gs_store_free(s, k);
		gs_kunit_fill_version(got, k, false);
		KUNIT_ASSERT_EQ(test, gs_store_write(s, GS_KU_PAGES + k, got,
						     GFP_KERNEL), 0);
		gs_ku_expect_counts(test, s);
	}
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_UNITS), 1);
	s->unit_split_work.func(&s->unit_split_work);
	enable_work(&s->unit_split_work);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->stats.unit_splits), 0);
	gs_ku_fill_run(run, 2 * GS_KU_PAGES, GS_KU_PAGES, 6);
	for (k = 0; k < GS_KU_PAGES; k++) {
		KUNIT_EXPECT_EQ(test, gs_store_kind(s, 2 * GS_KU_PAGES + k,
						    NULL), GS_KIND_UNIT);
		KUNIT_EXPECT_EQ(test, gs_store_read(s, 2 * GS_KU_PAGES + k,
						    got), 0);
		KUNIT_EXPECT_MEMEQ(test, got, run + k * PAGE_SIZE, PAGE_SIZE);
	}
	gs_ku_expect_counts(test, s);
	gs_store_free_range(s, 0, GS_CLUSTER_SLOTS);
	gs_ku_expect_empty(test, s);
}

/*
 * A smaller unit inside the run of a larger one (four slots of the run
 * freed and written again as a unit of 4), both mostly gone and marked:
 * one pass of the worker splits both, the larger one first, and every
 * page left reads back.
 */
static void gs_unit_nested_split(struct kunit *test)
{
	static const unsigned int gone[] = { 1, 2, 3, 8, 9, 10, 11, 4, 5, 6 };
	static const unsigned int left[] = { 0, 7, 12, 13, 14, 15 };
	struct gs_store *s = gs_ku_store(test, "lz4", GS_CLUSTER_SLOTS);
	void *run = gs_ku_run_buf(test), *got = gs_kunit_page(test);
	void *want = gs_kunit_page(test);
	unsigned int k;

	disable_work_sync(&s->unit_split_work);
	gs_ku_store_runs(test, s, run, 1, 7);
	for (k = 4; k < 8; k++)
		gs_store_free(s, k);
	gs_ku_fill_run(run, 4, 4, 8);
	KUNIT_ASSERT_EQ(test, gs_store_write_unit_nowait(s, 4, run, 4,
							 GFP_KERNEL), 0);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_UNITS), 2);
	for (k = 0; k < ARRAY_SIZE(gone); k++)
		gs_store_free(s, gone[k]);
	/* Both marked: the larger at slot 0, the smaller at slot 7. */
	gs_ku_expect_counts(test, s);
	s->unit_split_work.func(&s->unit_split_work);
	enable_work(&s->unit_split_work);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->stats.unit_splits), 2);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_UNITS), 0);
	for (k = 0; k < ARRAY_SIZE(left); k++) {
		KUNIT_EXPECT_EQ(test, gs_store_kind(s, left[k], NULL),
				GS_KIND_COMPRESSED);
		gs_kunit_fill_version(want, left[k] * 1000 +
				      (left[k] == 7 ? 8 : 7), false);
		KUNIT_EXPECT_EQ(test, gs_store_read(s, left[k], got), 0);
		KUNIT_EXPECT_MEMEQ(test, got, want, PAGE_SIZE);
	}
	gs_ku_expect_counts(test, s);
	gs_store_free_range(s, 0, GS_CLUSTER_SLOTS);
	gs_ku_expect_empty(test, s);
}

static struct kunit_case gs_unit_cases[] = {
	KUNIT_CASE_PARAM(gs_unit_roundtrip, gs_ku_alg_gen_params),
	KUNIT_CASE(gs_unit_kinds),
	KUNIT_CASE(gs_unit_frees),
	KUNIT_CASE(gs_unit_part_cache),
	KUNIT_CASE(gs_unit_split_window),
	KUNIT_CASE(gs_unit_marked_freed),
	KUNIT_CASE(gs_unit_nested_split),
	KUNIT_CASE(gs_unit_no_memory),
	KUNIT_CASE(gs_unit_recompress),
	KUNIT_CASE(gs_unit_memory),
	KUNIT_CASE(gs_unit_writeback),
	KUNIT_CASE(gs_unit_writeback_edges),
	KUNIT_CASE(gs_unit_writeback_races),
	KUNIT_CASE_SLOW(gs_unit_concurrent),
	KUNIT_CASE_SLOW(gs_unit_wb_concurrent),
	KUNIT_CASE_SLOW(gs_unit_same_race),
	{}
};

static struct kunit_suite gs_unit_suite = {
	.name = "ghostswap_unit",
	.suite_init = gs_kunit_core_init,
	.suite_exit = gs_kunit_core_exit,
	.test_cases = gs_unit_cases,
};

kunit_test_suite(gs_unit_suite);

MODULE_LICENSE("GPL");
