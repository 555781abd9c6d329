// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "ghostswap_cluster": clusters of the store core exist only
 * while they hold data, the index holds exactly the live clusters, and
 * concurrent stores and frees on one cluster keep everything balanced.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include "gs_store.h"
#include "gs_kunit.h"

static void gs_expect_stats_zero(struct kunit *test, struct gs_store *s)
{
	struct gs_stats *st = &s->stats;

	KUNIT_EXPECT_EQ(test, atomic_long_read(&st->clusters), 0);
	KUNIT_EXPECT_EQ(test, gs_stat_read(st, GS_STAT_SLOTS_USED), 0);
	KUNIT_EXPECT_EQ(test, gs_stat_read(st, GS_STAT_SAME_PAGES), 0);
	KUNIT_EXPECT_EQ(test, gs_stat_read(st, GS_STAT_COMP_PAGES), 0);
	KUNIT_EXPECT_EQ(test, gs_stat_read(st, GS_STAT_HUGE_PAGES), 0);
	KUNIT_EXPECT_EQ(test, gs_stat_read(st, GS_STAT_COMPR_BYTES), 0);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&st->meta_bytes), 0);
	KUNIT_EXPECT_EQ(test, gs_store_pool_pages(s), 0);
}

/* The first write creates exactly one cluster; freeing the slot drops it. */
static void gs_cluster_write_free(struct kunit *test)
{
	struct gs_store *s = gs_kunit_store(test, "lz4", 4 * GS_CLUSTER_SLOTS);
	void *text = gs_kunit_text(test, 1);

	KUNIT_EXPECT_TRUE(test, gs_kunit_index_empty(s));
	KUNIT_ASSERT_EQ(test, gs_store_write(s, 600, text, GFP_KERNEL), 0);
	KUNIT_EXPECT_NULL(test, gs_kunit_cluster_at(s, 0));
	KUNIT_EXPECT_NOT_NULL(test, gs_kunit_cluster_at(s, 1));
	KUNIT_EXPECT_EQ(test, gs_kunit_cluster_count(s), 1);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->stats.clusters), 1);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->stats.clusters_peak), 1);
	/* One cluster, and the one node (a leaf) over cluster 1. */
	KUNIT_EXPECT_EQ(test, s->clusters.nodes, 1UL);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->stats.meta_bytes),
			(long)(gs_cluster_bytes() + gs_index_node_bytes()));
	/* A second slot in the same cluster costs no new cluster. */
	KUNIT_ASSERT_EQ(test, gs_store_write(s, 1023, text, GFP_KERNEL), 0);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->stats.clusters), 1);

	gs_store_free(s, 600);
	KUNIT_EXPECT_NOT_NULL(test, gs_kunit_cluster_at(s, 1));
	gs_store_free(s, 1023);
	KUNIT_EXPECT_TRUE(test, gs_kunit_index_empty(s));
	KUNIT_EXPECT_EQ(test, gs_store_kind(s, 600, NULL), GS_KIND_EMPTY);
	gs_expect_stats_zero(test, s);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->stats.clusters_peak), 1);
	/* Freeing an empty slot or a missing cluster is harmless. */
	gs_store_free(s, 600);
	gs_store_free(s, 5);
	gs_expect_stats_zero(test, s);
}

/* The number of the cluster hint slot @i names, ULONG_MAX if none. */
static unsigned long gs_hint_ci(struct gs_store *s, unsigned int i)
{
	struct gs_cluster *cl = READ_ONCE(s->hint[i]);

	return cl ? cl->ci : ULONG_MAX;
}

/*
 * Two clusters that share a lookup hint (cluster 0 and cluster
 * GS_CLUSTER_HINTS): each read finds its own cluster, whichever the hint
 * named before, and a cluster that dies leaves the hint (its own slot
 * only).
 */
static void gs_cluster_hint(struct kunit *test)
{
	struct gs_store *s = gs_kunit_store(test, "lz4", 2 * GS_CLUSTER_HINTS *
					    GS_CLUSTER_SLOTS);
	u64 a = 5, b = a + GS_CLUSTER_HINTS * GS_CLUSTER_SLOTS;
	void *pa = gs_kunit_text(test, 1), *pb = gs_kunit_random(test);
	void *buf = kunit_kmalloc(test, PAGE_SIZE, GFP_KERNEL);
	struct gs_cluster *ca, *cb;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_EQ(test, gs_store_write(s, a, pa, GFP_KERNEL), 0);
	KUNIT_ASSERT_EQ(test, gs_store_write(s, b, pb, GFP_KERNEL), 0);
	ca = gs_kunit_cluster_at(s, 0);
	cb = gs_kunit_cluster_at(s, GS_CLUSTER_HINTS);
	KUNIT_ASSERT_NOT_NULL(test, ca);
	KUNIT_ASSERT_NOT_NULL(test, cb);
	KUNIT_EXPECT_EQ(test, ca->ci, 0UL);
	KUNIT_EXPECT_EQ(test, cb->ci, (unsigned long)GS_CLUSTER_HINTS);
	for (i = 0; i < 4; i++) {
		KUNIT_ASSERT_EQ(test, gs_store_read(s, i & 1 ? b : a, buf), 0);
		KUNIT_EXPECT_MEMEQ(test, buf, i & 1 ? pb : pa, PAGE_SIZE);
		KUNIT_EXPECT_PTR_EQ(test, READ_ONCE(s->hint[0]), i & 1 ? cb : ca);
	}
	/* Cluster 0 dies (its free looked it up last): the hint is cleared. */
	gs_store_free(s, a);
	KUNIT_EXPECT_NULL(test, gs_kunit_cluster_at(s, 0));
	KUNIT_EXPECT_NULL(test, READ_ONCE(s->hint[0]));
	KUNIT_EXPECT_EQ(test, gs_store_kind(s, a, NULL), GS_KIND_EMPTY);
	KUNIT_ASSERT_EQ(test, gs_store_read(s, b, buf), 0);
	KUNIT_EXPECT_MEMEQ(test, buf, pb, PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, gs_hint_ci(s, 0), (unsigned long)GS_CLUSTER_HINTS);
	/* Cluster 1 dies: its slot of the hint is cleared, not cluster 0's. */
	KUNIT_ASSERT_EQ(test, gs_store_write(s, GS_CLUSTER_SLOTS, pa,
					     GFP_KERNEL), 0);
	KUNIT_EXPECT_EQ(test, gs_hint_ci(s, 1), 1UL);
	gs_store_free(s, GS_CLUSTER_SLOTS);
	KUNIT_EXPECT_NULL(test, READ_ONCE(s->hint[1]));
	KUNIT_EXPECT_EQ(test, gs_hint_ci(s, 0), (unsigned long)GS_CLUSTER_HINTS);
	gs_store_free(s, b);
	KUNIT_EXPECT_NULL(test, READ_ONCE(s->hint[0]));
	KUNIT_EXPECT_TRUE(test, gs_kunit_index_empty(s));
	gs_expect_stats_zero(test, s);
}

/*
 * The cost of a cluster: header and table, at most 10 bytes per slot
 * (word, aux_hi and age byte: 9.81 without debugging options).
 */
static void gs_cluster_cost(struct kunit *test)
{
	kunit_info(test, "cluster: %zu bytes, %zu.%02zu bytes per slot\n",
		   gs_cluster_bytes(), gs_cluster_bytes() / GS_CLUSTER_SLOTS,
		   gs_cluster_bytes() * 100 / GS_CLUSTER_SLOTS % 100);
	KUNIT_EXPECT_LE(test, gs_cluster_bytes(), 10 * GS_CLUSTER_SLOTS);
	KUNIT_EXPECT_GE(test, gs_cluster_bytes(),
			PAGE_SIZE + (size_t)GS_AUX_HI_BYTES + GS_CLUSTER_SLOTS);
}

/* The last slot of a 2^40-slot store works and costs one cluster. */
static void gs_cluster_highest_slot(struct kunit *test)
{
	const u64 nr = 1ULL << 40, last = nr - 1;
	struct gs_store *s = gs_kunit_store(test, "lz4", nr);
	void *src = gs_kunit_text(test, 2);
	void *dst = gs_kunit_page(test);

	KUNIT_ASSERT_EQ(test, gs_store_write(s, last, src, GFP_KERNEL), 0);
	KUNIT_EXPECT_EQ(test, gs_store_kind(s, last, NULL), GS_KIND_COMPRESSED);
	KUNIT_EXPECT_NOT_NULL(test, gs_kunit_cluster_at(s,
							last >> GS_CLUSTER_SHIFT));
	/* 2^31 clusters: six levels of the XArray, a node each on the way. */
	KUNIT_EXPECT_EQ(test, s->clusters.nodes, 6UL);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->stats.meta_bytes),
			(long)(gs_cluster_bytes() + 6 * gs_index_node_bytes()));
	KUNIT_EXPECT_EQ(test, gs_kunit_cluster_count(s), 1);
	KUNIT_ASSERT_EQ(test, gs_store_read(s, last, dst), 0);
	KUNIT_EXPECT_MEMEQ(test, dst, src, PAGE_SIZE);

	/* Beyond the end: refused, and nothing is created. */
	KUNIT_EXPECT_EQ(test, gs_store_write(s, nr, src, GFP_KERNEL), -EINVAL);
	KUNIT_EXPECT_EQ(test, gs_store_read(s, nr, dst), -EINVAL);
	KUNIT_EXPECT_EQ(test, gs_kunit_cluster_count(s), 1);
	gs_store_free(s, last);
	KUNIT_EXPECT_TRUE(test, gs_kunit_index_empty(s));
}

/*
 * A store resized while empty (disksize) takes writes to its new last
 * slot, and its index's reserve the nodes for the new height (six levels
 * for 2^40 slots: 6 + 4 * 5 spares); one holding a cluster keeps its
 * size.
 */
static void gs_cluster_resize(struct kunit *test)
{
	const u64 nr = 1ULL << 40;
	struct gs_store *s = gs_kunit_store(test, "lz4", 4 * GS_CLUSTER_SLOTS);
	void *src = gs_kunit_text(test, 3);
	void *dst = gs_kunit_page(test);

	KUNIT_EXPECT_EQ(test, gs_index_spares(&s->clusters), 1U);
	KUNIT_ASSERT_EQ(test, gs_store_set_size(s, nr), 0);
	KUNIT_EXPECT_EQ(test, s->nr_slots, nr);
	KUNIT_EXPECT_EQ(test, gs_index_spares(&s->clusters), 26U);
	KUNIT_ASSERT_EQ(test, gs_store_write(s, nr - 1, src, GFP_KERNEL), 0);
	KUNIT_ASSERT_EQ(test, gs_store_read(s, nr - 1, dst), 0);
	KUNIT_EXPECT_MEMEQ(test, dst, src, PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, gs_store_set_size(s, 4 * GS_CLUSTER_SLOTS),
			-EBUSY);
	KUNIT_EXPECT_EQ(test, s->nr_slots, nr);
	gs_store_free(s, nr - 1);
	KUNIT_EXPECT_EQ(test, gs_store_set_size(s, 4 * GS_CLUSTER_SLOTS), 0);
	KUNIT_EXPECT_EQ(test, gs_index_spares(&s->clusters), 1U);
	KUNIT_EXPECT_EQ(test, gs_store_write(s, nr - 1, src, GFP_KERNEL),
			-EINVAL);
	KUNIT_ASSERT_EQ(test, gs_store_write(s, 5, src, GFP_KERNEL), 0);
	gs_store_free(s, 5);
	gs_expect_stats_zero(test, s);
}

/* free_range over a sparse huge space visits and frees only what exists. */
static void gs_cluster_free_range(struct kunit *test)
{
	const u64 nr = 1ULL << 32;
	struct gs_store *s = gs_kunit_store(test, "lz4", nr);
	void *text = gs_kunit_text(test, 3);
	void *same = gs_kunit_same(test, 0x5a5a5a5a5a5a5a5aUL);
	void *rnd = gs_kunit_random(test);

	KUNIT_ASSERT_EQ(test, gs_store_write(s, 0, text, GFP_KERNEL), 0);
	KUNIT_ASSERT_EQ(test, gs_store_write(s, 1, same, GFP_KERNEL), 0);
	KUNIT_ASSERT_EQ(test, gs_store_write(s, GS_CLUSTER_SLOTS, rnd,
					     GFP_KERNEL), 0);
	KUNIT_ASSERT_EQ(test, gs_store_write(s, nr - 1, same, GFP_KERNEL), 0);
	KUNIT_EXPECT_EQ(test, gs_kunit_cluster_count(s), 3);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_SLOTS_USED), 4);

	/* A range that covers part of cluster 0 only. */
	KUNIT_EXPECT_EQ(test, gs_store_free_range(s, 1, 10), 1ULL);
	KUNIT_EXPECT_EQ(test, gs_kunit_cluster_count(s), 3);
	KUNIT_EXPECT_EQ(test, gs_store_free_range(s, 0, nr), 3ULL);
	KUNIT_EXPECT_TRUE(test, gs_kunit_index_empty(s));
	gs_expect_stats_zero(test, s);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->stats.clusters_peak), 3);
}

#define GS_RACE_THREADS	4
#define GS_RACE_OPS	1000

struct gs_race {
	struct gs_store *s;
	void *pages[3];		/* what may be in a slot, besides zeroes */
	atomic_t bad;		/* reads that returned something else */
	atomic_t errors;	/* failed stores or reads */
	atomic_t running;
	atomic_t at_ops;	/* threads that did GS_RACE_OPS */
	atomic_t started;	/* threads, numbered as they start */
	long ops[GS_RACE_THREADS];	/* each thread's, once it ended */
	bool stop;
	struct completion done;
	struct gs_overlap ov;	/* each store, read and free a window */
};

static bool gs_race_valid(struct gs_race *r, const void *buf)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(r->pages); i++)
		if (!memcmp(buf, r->pages[i], PAGE_SIZE))
			return true;
	return !memchr_inv(buf, 0, PAGE_SIZE);
}

/*
 * After @done operations of a thread: all stop once every thread did
 * GS_RACE_OPS and enough windows overlapped, or once one did
 * GS_OVERLAP_MORE times as many.
 */
static void gs_race_next(struct gs_race *r, int done)
{
	if (done == GS_RACE_OPS)
		atomic_inc(&r->at_ops);
	if ((atomic_read(&r->at_ops) == GS_RACE_THREADS &&
	     gs_overlap_enough(&r->ov, GS_OVERLAP_PCT)) ||
	    done >= GS_OVERLAP_MORE * GS_RACE_OPS) {
		gs_overlap_close(&r->ov, NULL);
		WRITE_ONCE(r->stop, true);
	}
}

/*
 * Store, read and free random slots of one cluster (plus its neighbour's
 * first slot, and the first of the cluster that shares its lookup hint),
 * so that the clusters are created and killed under the others.
 */
static int gs_race_thread(void *arg)
{
	struct gs_race *r = arg;
	int me = atomic_inc_return(&r->started) - 1;
	void *buf = kmalloc(PAGE_SIZE, GFP_KERNEL);
	unsigned int win;
	u64 slot;
	int i;

	for (i = 0; buf && !READ_ONCE(r->stop); i++) {
		slot = get_random_u32_below(10);
		if (slot == 9)	/* the cluster that shares cluster 0's hint */
			slot = GS_CLUSTER_HINTS * GS_CLUSTER_SLOTS;
		else
			slot = slot == 8 ? GS_CLUSTER_SLOTS : slot * 67;
		win = gs_overlap_enter(&r->ov);
		switch (get_random_u32_below(4)) {
		case 0:
		case 1:
			if (gs_store_write(r->s, slot, r->pages[i % 3],
					   GFP_KERNEL))
				atomic_inc(&r->errors);
			break;
		case 2:
			if (gs_store_read(r->s, slot, buf))
				atomic_inc(&r->errors);
			else if (!gs_race_valid(r, buf))
				atomic_inc(&r->bad);
			break;
		default:
			gs_store_free(r->s, slot);
			break;
		}
		gs_overlap_exit(&r->ov, win);
		gs_race_next(r, i + 1);
		cond_resched();
	}
	if (!buf)
		atomic_inc(&r->errors);
	/* The others stop too, rather than race no one. */
	WRITE_ONCE(r->stop, true);
	r->ops[me] = i;
	kfree(buf);
	if (atomic_dec_and_test(&r->running))
		complete(&r->done);
	return 0;
}

/*
 * A new cluster whose allocation fails comes from the reserve, until it
 * is empty; clusters that are freed refill it; its bytes are counted,
 * and the index's spare node's (a 64-cluster store's index is one leaf).
 */
static void gs_cluster_reserve(struct kunit *test)
{
	struct gs_store *s = gs_kunit_store(test, "lz4", 64 * GS_CLUSTER_SLOTS);
	const size_t full = GS_CLUSTER_RESERVE * gs_cluster_bytes();
	const size_t node = gs_index_node_bytes();
	void *same = gs_kunit_same(test, 0x5a5a5a5a5a5a5a5aUL);
	int i;

	KUNIT_EXPECT_EQ(test, gs_store_reserve_bytes(s), full);
	KUNIT_EXPECT_EQ(test, gs_store_index_reserve_bytes(s), node);
	atomic_set(&s->fail_alloc, 1000);
	/* Cluster 0 in the XArray's head, then the leaf from the reserve. */
	for (i = 0; i < GS_CLUSTER_RESERVE; i++)
		KUNIT_EXPECT_EQ(test, gs_store_write(s, i * GS_CLUSTER_SLOTS,
						     same, GFP_KERNEL), 0);
	KUNIT_EXPECT_EQ(test, gs_store_reserve_bytes(s), 0);
	KUNIT_EXPECT_EQ(test, gs_store_index_reserve_bytes(s), 0);
	KUNIT_EXPECT_EQ(test, gs_store_write(s, 10 * GS_CLUSTER_SLOTS, same,
					     GFP_KERNEL), -ENOMEM);
	KUNIT_EXPECT_EQ(test, gs_store_kind(s, 10 * GS_CLUSTER_SLOTS, NULL),
			GS_KIND_EMPTY);
	/* A slot of a cluster that exists needs no allocation. */
	KUNIT_EXPECT_EQ(test, gs_store_write(s, 1, same, GFP_KERNEL), 0);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->stats.clusters),
			GS_CLUSTER_RESERVE);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->stats.meta_bytes),
			(long)full + gs_kunit_index_bytes(s));
	KUNIT_EXPECT_EQ(test, gs_kunit_index_bytes(s), (long)node);
	/* A cluster that goes (after an RCU grace period) refills it. */
	gs_store_free(s, 0);
	gs_store_free(s, 1);
	rcu_barrier();
	KUNIT_EXPECT_EQ(test, gs_store_reserve_bytes(s), gs_cluster_bytes());
	KUNIT_EXPECT_EQ(test, gs_store_write(s, 10 * GS_CLUSTER_SLOTS, same,
					     GFP_KERNEL), 0);
	KUNIT_EXPECT_EQ(test, gs_store_reserve_bytes(s), 0);
	/*
	 * With memory, new clusters leave the cluster reserve alone; the
	 * index's spare node is back.
	 */
	atomic_set(&s->fail_alloc, 0);
	KUNIT_EXPECT_EQ(test, gs_store_write(s, 11 * GS_CLUSTER_SLOTS, same,
					     GFP_KERNEL), 0);
	KUNIT_EXPECT_EQ(test, gs_store_reserve_bytes(s), 0);
	KUNIT_EXPECT_EQ(test, gs_store_index_reserve_bytes(s), node);
	gs_store_free_range(s, 0, 64 * GS_CLUSTER_SLOTS);
	rcu_barrier();
	KUNIT_EXPECT_EQ(test, gs_store_reserve_bytes(s), full);
	gs_expect_stats_zero(test, s);
}

/*
 * With every allocation of the store failing, the first stores into new
 * ranges far apart in a 2^40-slot store (six levels of the XArray) take
 * their clusters from the reserve and the nodes over them from the
 * index's reserve, up to the highest slot; past the cluster reserve a
 * new range fails; a store that may allocate fills the node reserve
 * again, and freed clusters the cluster reserve.
 */
static void gs_cluster_reserve_far(struct kunit *test)
{
	const u64 nr = 1ULL << 40;
	static const u64 ci[GS_CLUSTER_RESERVE] = {
		0, (1ULL << 31) - 1, (1ULL << 30) + 5, (1ULL << 24) + 7,
	};
	struct gs_store *s = gs_kunit_store(test, "lz4", nr);
	const size_t full = GS_CLUSTER_RESERVE * gs_cluster_bytes();
	/* Same-filled: no pool object, whose allocation would fail too. */
	void *src = gs_kunit_same(test, 0x0123456789abcdefUL);
	void *dst = gs_kunit_page(test);
	unsigned int spares;
	int i;

	KUNIT_EXPECT_EQ(test, gs_index_spares(&s->clusters), 26U);
	KUNIT_EXPECT_EQ(test, gs_store_index_reserve_bytes(s),
			26 * gs_index_node_bytes());
	KUNIT_EXPECT_EQ(test, gs_store_reserve_bytes(s), full);
	atomic_set(&s->fail_alloc, 1000);
	for (i = 0; i < GS_CLUSTER_RESERVE; i++) {
		u64 slot = (ci[i] << GS_CLUSTER_SHIFT) + GS_CLUSTER_SLOTS - 1;

		spares = gs_index_spares(&s->clusters);
		KUNIT_EXPECT_EQ(test, gs_store_write(s, slot, src, GFP_KERNEL),
				0);
		KUNIT_EXPECT_EQ(test, gs_store_read(s, slot, dst), 0);
		KUNIT_EXPECT_MEMEQ(test, dst, src, PAGE_SIZE);
		/* Cluster 0 is kept in the head; the others need nodes. */
		if (i)
			KUNIT_EXPECT_LT(test, gs_index_spares(&s->clusters),
					spares);
	}
	/* 11 nodes over cluster 0 up to the highest, then 4 and 4. */
	KUNIT_EXPECT_EQ(test, s->clusters.nodes, 19UL);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->stats.meta_bytes),
			(long)(GS_CLUSTER_RESERVE * gs_cluster_bytes() +
			       19 * gs_index_node_bytes()));
	KUNIT_EXPECT_EQ(test, gs_store_reserve_bytes(s), 0);
	KUNIT_EXPECT_EQ(test, gs_store_write(s, 12345ULL << GS_CLUSTER_SHIFT,
					     src, GFP_KERNEL), -ENOMEM);
	/* Memory again: the next new range refills the node reserve. */
	atomic_set(&s->fail_alloc, 0);
	KUNIT_EXPECT_EQ(test, gs_store_write(s, 12345ULL << GS_CLUSTER_SHIFT,
					     src, GFP_KERNEL), 0);
	KUNIT_EXPECT_EQ(test, gs_index_spares(&s->clusters), 26U);
	gs_store_free_range(s, 0, nr);
	rcu_barrier();
	KUNIT_EXPECT_EQ(test, gs_store_reserve_bytes(s), full);
	KUNIT_EXPECT_TRUE(test, gs_kunit_index_empty(s));
	gs_expect_stats_zero(test, s);
}

/* free_range drops the cluster lock between batches: exact all the same. */
static void gs_cluster_free_batches(struct kunit *test)
{
	struct gs_store *s = gs_kunit_store(test, "lz4", 4 * GS_CLUSTER_SLOTS);
	void *same = gs_kunit_same(test, 0x1234UL);
	u64 i;

	for (i = 0; i < 2 * GS_CLUSTER_SLOTS; i++)
		KUNIT_ASSERT_EQ(test, gs_store_write(s, i, same, GFP_KERNEL), 0);
	/* Starts and ends mid-batch, crosses a cluster. */
	KUNIT_EXPECT_EQ(test, gs_store_free_range(s, GS_FREE_BATCH / 2 + 3,
						  GS_CLUSTER_SLOTS + 101),
			(u64)GS_CLUSTER_SLOTS + 101);
	KUNIT_EXPECT_EQ(test, gs_store_kind(s, GS_FREE_BATCH / 2 + 2, NULL),
			GS_KIND_SAME);
	KUNIT_EXPECT_EQ(test, gs_store_kind(s, GS_FREE_BATCH / 2 + 3, NULL),
			GS_KIND_EMPTY);
	KUNIT_EXPECT_EQ(test, gs_store_kind(s, GS_FREE_BATCH / 2 + 3 +
					    GS_CLUSTER_SLOTS + 100, NULL),
			GS_KIND_EMPTY);
	KUNIT_EXPECT_EQ(test, gs_store_kind(s, GS_FREE_BATCH / 2 + 3 +
					    GS_CLUSTER_SLOTS + 101, NULL),
			GS_KIND_SAME);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_SLOTS_USED),
			(long)GS_CLUSTER_SLOTS - 101);
	/* A whole cluster, batch by batch: it goes with its last slot. */
	KUNIT_EXPECT_EQ(test, gs_store_free_range(s, 0, 4 * GS_CLUSTER_SLOTS),
			(u64)GS_CLUSTER_SLOTS - 101);
	gs_expect_stats_zero(test, s);
	KUNIT_EXPECT_TRUE(test, gs_kunit_index_empty(s));
}

static void gs_cluster_race(struct kunit *test)
{
	struct gs_store *s = gs_kunit_store(test, "lz4", 1ULL << 20);
	struct task_struct *t;
	struct gs_race *r;
	long fewest, ops = 0;
	u64 freed;
	int i;

	r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r);
	r->s = s;
	r->pages[0] = gs_kunit_text(test, 4);
	r->pages[1] = gs_kunit_random(test);
	r->pages[2] = gs_kunit_same(test, 0xabcdef0123456789UL);
	init_completion(&r->done);
	atomic_set(&r->running, GS_RACE_THREADS);
	for (i = 0; i < GS_RACE_THREADS; i++) {
		t = kthread_run(gs_race_thread, r, "gs_race/%d", i);
		KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	}
	wait_for_completion(&r->done);
	for (i = 0, fewest = LONG_MAX; i < GS_RACE_THREADS; i++) {
		ops += r->ops[i];
		fewest = min(fewest, r->ops[i]);
	}

	/*
	 * Four threads alike, each one's other side the three others: the
	 * operations of the thread that did the fewest, GS_RACE_OPS at
	 * least (unless one did ten times as many first).
	 */
	gs_overlap_expect(test, &r->ov, "cluster ops", GS_OVERLAP_PCT, fewest,
			  GS_RACE_OPS);
	KUNIT_EXPECT_EQ(test, atomic_read(&r->errors), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&r->bad), 0);
	KUNIT_EXPECT_LE(test, gs_kunit_cluster_count(s), 3);
	KUNIT_EXPECT_EQ(test, gs_kunit_cluster_count(s),
			atomic_long_read(&s->stats.clusters));
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_SLOTS_USED),
			gs_stat_read(&s->stats, GS_STAT_SAME_PAGES) +
			gs_stat_read(&s->stats, GS_STAT_COMP_PAGES) +
			gs_stat_read(&s->stats, GS_STAT_HUGE_PAGES));
	gs_kunit_expect_unpinned(test, s);
	freed = gs_store_free_range(s, 0, 1ULL << 20);
	kunit_info(test, "%ld ops, %llu slots left at the end\n", ops, freed);
	KUNIT_EXPECT_TRUE(test, gs_kunit_index_empty(s));
	gs_expect_stats_zero(test, s);
}

static struct kunit_case gs_cluster_cases[] = {
	KUNIT_CASE(gs_cluster_write_free),
	KUNIT_CASE(gs_cluster_hint),
	KUNIT_CASE(gs_cluster_cost),
	KUNIT_CASE(gs_cluster_highest_slot),
	KUNIT_CASE(gs_cluster_resize),
	KUNIT_CASE(gs_cluster_free_range),
	KUNIT_CASE(gs_cluster_reserve),
	KUNIT_CASE(gs_cluster_reserve_far),
	KUNIT_CASE(gs_cluster_free_batches),
	KUNIT_CASE_SLOW(gs_cluster_race),
	{}
};

static struct kunit_suite gs_cluster_suite = {
	.name = "ghostswap_cluster",
	.suite_init = gs_kunit_core_init,
	.suite_exit = gs_kunit_core_exit,
	.test_cases = gs_cluster_cases,
};

kunit_test_suite(gs_cluster_suite);
