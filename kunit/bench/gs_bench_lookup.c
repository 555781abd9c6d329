// SPDX-License-Identifier: GPL-2.0
/*
 * What a slot's cluster lookup costs, and what a per-CPU cache of the
 * last cluster looked up would save. A benchmark, not a test: it is built
 * only with GHOSTSWAP_KUNIT_BENCH (bench/lookup.sh) and prints its
 * figures; it fails only if the lookups disagree.
 *
 * The store is a 64 GiB device with one page in each of its 32768
 * clusters, the whole index such a device has (three levels of the
 * XArray). Two orders of lookup:
 *  - run:    512 lookups of one cluster, then the next (what a swap-out
 *            or a readahead of consecutive slots does);
 *  - random: each lookup in a random cluster of the 32768.
 * Each is timed through gs_cluster_get() (index walk, cluster lock) and
 * through the same with a per-CPU last-cluster cache in front of the
 * walk. The cache here skips what a real one needs (clearing every CPU's
 * entry when a cluster is freed), so it is its best case. For scale, the
 * cost of a whole read of a page (gs_store_read) is timed too: the same
 * page of text, lz4, and a same-filled page; and, to tell the store's
 * own part of the first, LZ4_decompress_safe() of that page alone.
 *
 * Under UML the code runs on the host CPU, caches and all: these are
 * hardware figures, not an emulator's. Each figure is the best of
 * GS_BENCH_ROUNDS rounds.
 */

#include <kunit/test.h>
#include <linux/ktime.h>
#include <linux/lz4.h>
#include <linux/percpu.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include "gs_core.h"
#include "../gs_kunit.h"

#define GS_BENCH_CLUSTERS	32768UL		/* 64 GiB of 4 KiB slots */
#define GS_BENCH_LOOKUPS	BIT(20)
#define GS_BENCH_ROUNDS		7
#define GS_BENCH_RANDOM		65536		/* random cluster numbers */
#define GS_BENCH_READS		BIT(16)

struct gs_bench_last {
	unsigned long ci;
	struct gs_cluster *cl;
};

static DEFINE_PER_CPU(struct gs_bench_last, gs_bench_last) = {
	.ci = ULONG_MAX,
};

/* gs_cluster_get(s, ci, 0) with the last cluster of this CPU remembered. */
static struct gs_cluster *gs_bench_get_cached(struct gs_store *s,
					      unsigned long ci)
{
	struct gs_bench_last *last;
	struct gs_cluster *cl;

	rcu_read_lock();
	last = get_cpu_ptr(&gs_bench_last);
	if (last->ci == ci) {
		cl = last->cl;
	} else {
		cl = gs_index_load(&s->clusters, ci);
		last->ci = ci;
		last->cl = cl;
	}
	put_cpu_ptr(&gs_bench_last);
	if (cl) {
		spin_lock(&cl->lock);
		if (likely(!cl->dead)) {
			rcu_read_unlock();
			return cl;
		}
		spin_unlock(&cl->lock);
	}
	rcu_read_unlock();
	return NULL;
}

static unsigned long gs_bench_ci(const u32 *rnd, unsigned long i, bool run)
{
	return run ? (i >> GS_CLUSTER_SHIFT) & (GS_BENCH_CLUSTERS - 1) :
		     rnd[i & (GS_BENCH_RANDOM - 1)];
}

/* Best nanoseconds per lookup, x100, over the rounds. */
static u64 gs_bench_lookups(struct kunit *test, struct gs_store *s,
			    const u32 *rnd, bool run, bool cached)
{
	u64 best = U64_MAX, t;
	unsigned long i, missing;
	struct gs_cluster *cl;
	int r;

	for (r = 0; r < GS_BENCH_ROUNDS; r++) {
		missing = 0;
		this_cpu_write(gs_bench_last.ci, ULONG_MAX);
		t = ktime_get_ns();
		for (i = 0; i < GS_BENCH_LOOKUPS; i++) {
			unsigned long ci = gs_bench_ci(rnd, i, run);

			cl = cached ? gs_bench_get_cached(s, ci) :
				      gs_cluster_get(s, ci, 0);
			if (cl)
				gs_cluster_unlock(cl);
			else
				missing++;
		}
		t = ktime_get_ns() - t;
		KUNIT_ASSERT_EQ(test, missing, 0);
		best = min(best, t * 100 / GS_BENCH_LOOKUPS);
		cond_resched();
	}
	return best;
}

/* Best nanoseconds per gs_store_read() of slots 0..511, x100. */
static u64 gs_bench_reads(struct kunit *test, struct gs_store *s,
			  const void *want)
{
	void *buf = gs_kunit_page(test);
	u64 best = U64_MAX, t;
	unsigned long i;
	int r;

	for (r = 0; r < GS_BENCH_ROUNDS; r++) {
		t = ktime_get_ns();
		for (i = 0; i < GS_BENCH_READS; i++)
			KUNIT_ASSERT_EQ(test, gs_store_read(s, i & 511, buf), 0);
		t = ktime_get_ns() - t;
		best = min(best, t * 100 / GS_BENCH_READS);
		cond_resched();
	}
	KUNIT_EXPECT_EQ(test, memcmp(buf, want, PAGE_SIZE), 0);
	return best;
}

/* Best nanoseconds per LZ4_decompress_safe() of @text, x100. */
static u64 gs_bench_lz4(struct kunit *test, const void *text)
{
	void *wrk = kunit_kmalloc(test, LZ4_MEM_COMPRESS, GFP_KERNEL);
	void *obj = kunit_kmalloc(test, LZ4_COMPRESSBOUND(PAGE_SIZE),
				  GFP_KERNEL);
	void *buf = gs_kunit_page(test);
	u64 best = U64_MAX, t;
	unsigned long i;
	int len, r;

	KUNIT_ASSERT_NOT_NULL(test, wrk);
	KUNIT_ASSERT_NOT_NULL(test, obj);
	len = LZ4_compress_default(text, obj, PAGE_SIZE,
				   LZ4_COMPRESSBOUND(PAGE_SIZE), wrk);
	KUNIT_ASSERT_GT(test, len, 0);
	for (r = 0; r < GS_BENCH_ROUNDS; r++) {
		t = ktime_get_ns();
		for (i = 0; i < GS_BENCH_READS; i++)
			KUNIT_ASSERT_EQ(test, LZ4_decompress_safe(obj, buf, len,
								  PAGE_SIZE),
					PAGE_SIZE);
		t = ktime_get_ns() - t;
		best = min(best, t * 100 / GS_BENCH_READS);
		cond_resched();
	}
	KUNIT_EXPECT_EQ(test, memcmp(buf, text, PAGE_SIZE), 0);
	return best;
}

static void gs_bench_lookup(struct kunit *test)
{
	struct gs_store *s = gs_kunit_store(test, "lz4",
					    GS_BENCH_CLUSTERS * GS_CLUSTER_SLOTS);
	void *same = gs_kunit_same(test, 0x0123456789abcdefUL);
	void *text = gs_kunit_text(test, 7);
	u64 walk_run, cache_run, walk_rnd, cache_rnd, rd_text, rd_same, lz4;
	unsigned long ci, i;
	u32 *rnd;

	rnd = kunit_kmalloc_array(test, GS_BENCH_RANDOM, sizeof(*rnd),
				  GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rnd);
	for (i = 0; i < GS_BENCH_RANDOM; i++)
		rnd[i] = get_random_u32_below(GS_BENCH_CLUSTERS);
	for (ci = 0; ci < GS_BENCH_CLUSTERS; ci++) {
		KUNIT_ASSERT_EQ(test, gs_store_write(s, ci * GS_CLUSTER_SLOTS +
						     511, same, GFP_KERNEL), 0);
		if (!(ci & 1023))
			cond_resched();
	}

	/* The cache must find what the walk finds. */
	for (i = 0; i < 4 * GS_BENCH_RANDOM; i++) {
		struct gs_cluster *a, *b;

		ci = gs_bench_ci(rnd, i, i & 1);
		a = gs_cluster_get(s, ci, 0);
		KUNIT_ASSERT_NOT_NULL(test, a);
		gs_cluster_unlock(a);
		b = gs_bench_get_cached(s, ci);
		KUNIT_ASSERT_PTR_EQ(test, a, b);
		gs_cluster_unlock(b);
	}

	walk_run = gs_bench_lookups(test, s, rnd, true, false);
	cache_run = gs_bench_lookups(test, s, rnd, true, true);
	walk_rnd = gs_bench_lookups(test, s, rnd, false, false);
	cache_rnd = gs_bench_lookups(test, s, rnd, false, true);

	for (i = 0; i < 511; i++)
		KUNIT_ASSERT_EQ(test, gs_store_write(s, i, text, GFP_KERNEL), 0);
	KUNIT_ASSERT_EQ(test, gs_store_write(s, 511, text, GFP_KERNEL), 0);
	rd_text = gs_bench_reads(test, s, text);
	lz4 = gs_bench_lz4(test, text);
	for (i = 0; i < 512; i++)
		KUNIT_ASSERT_EQ(test, gs_store_write(s, i, same, GFP_KERNEL), 0);
	rd_same = gs_bench_reads(test, s, same);

	kunit_info(test, "lookup ns, run of a cluster: walk %llu.%02llu, cached %llu.%02llu\n",
		   walk_run / 100, walk_run % 100, cache_run / 100,
		   cache_run % 100);
	kunit_info(test, "lookup ns, random cluster: walk %llu.%02llu, cached %llu.%02llu\n",
		   walk_rnd / 100, walk_rnd % 100, cache_rnd / 100,
		   cache_rnd % 100);
	kunit_info(test, "read ns, lz4 text page: %llu.%02llu (of it LZ4_decompress_safe: %llu.%02llu); same-filled page: %llu.%02llu\n",
		   rd_text / 100, rd_text % 100, lz4 / 100, lz4 % 100,
		   rd_same / 100, rd_same % 100);
}

static struct kunit_case gs_bench_lookup_cases[] = {
	KUNIT_CASE(gs_bench_lookup),
	{}
};

static struct kunit_suite gs_bench_lookup_suite = {
	.name = "ghostswap_bench_lookup",
	.suite_init = gs_kunit_core_init,
	.suite_exit = gs_kunit_core_exit,
	/* Left out of the test runs (kunit/run.sh): see tree/Kconfig. */
	.attr.speed = KUNIT_SPEED_VERY_SLOW,
	.test_cases = gs_bench_lookup_cases,
};

kunit_test_suite(gs_bench_lookup_suite);

MODULE_LICENSE("GPL");
