// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "ghostswap_index": the cluster index (module/gs_index.c),
 * on an XArray. Inserts, lookups and erases at the edges of nodes and of
 * an unsigned long; the count of the XArray's nodes against a walk of
 * the whole tree after every step of random inserts and erases (index 0
 * alone in the head, the highest index, the height growing and
 * shrinking); scans over holes up to the highest index; the reserve of
 * nodes, which lets an insert into a new range far away succeed with no
 * memory of its own; and lookups and scans that run while another
 * thread inserts and erases, which must only ever see an index's own
 * entry or nothing.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/err.h>
#include <linux/kthread.h>
#include <linux/random.h>
#include <linux/sched.h>
#include "gs_index.h"
#include "gs_kunit.h"

/* An entry that says which index it was put at (never dereferenced). */
static void *gs_ix_entry(unsigned long i)
{
	return (void *)((i << 3) | 4);
}

struct gs_ix {
	struct gs_index ix;
	atomic_long_t bytes;
};

static void gs_ix_destroy(void *arg)
{
	struct gs_ix *t = arg;

	gs_index_destroy(&t->ix);
}

/* An index sized for @max, its reserve for @inserts new ranges, filled. */
static struct gs_index *gs_ix_new(struct kunit *test, unsigned long max,
				  unsigned int inserts)
{
	struct gs_ix *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, t);
	gs_index_create(&t->ix, max, inserts, &t->bytes);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, gs_ix_destroy,
							t), 0);
	KUNIT_ASSERT_EQ(test, gs_index_fill(&t->ix, GFP_KERNEL), 0);
	return &t->ix;
}

static long gs_ix_bytes(struct gs_index *ix)
{
	return atomic_long_read(ix->bytes);
}

/*
 * The nodes under @n, itself included, walked slot by slot; each node's
 * count must be its slots in use (*@bad otherwise).
 */
static unsigned long gs_ix_walk_node(struct xarray *xa, struct xa_node *n,
				     unsigned int *bad)
{
	unsigned long sum = 1;
	unsigned int k, used = 0;
	void *e;

	for (k = 0; k < XA_CHUNK_SIZE; k++) {
		e = xa_entry_locked(xa, n, k);
		if (!e)
			continue;
		used++;
		if (n->shift && xa_is_node(e))
			sum += gs_ix_walk_node(xa, xa_to_node(e), bad);
	}
	if (used != n->count)
		(*bad)++;
	return sum;
}

/* Every node of the array, from its head, and its height. */
static unsigned long gs_ix_walk(struct gs_index *ix, unsigned int *height,
				unsigned int *bad)
{
	unsigned long n = 0;
	void *head;

	xa_lock(&ix->xa);
	head = xa_head_locked(&ix->xa);
	*height = 0;
	if (xa_is_node(head)) {
		n = gs_ix_walk_node(&ix->xa, xa_to_node(head), bad);
		*height = xa_to_node(head)->shift / XA_CHUNK_SHIFT + 1;
	}
	xa_unlock(&ix->xa);
	return n;
}

/* The running count, the walk and the bytes agree. */
static void gs_ix_expect_nodes(struct kunit *test, struct gs_index *ix,
			       unsigned long want)
{
	unsigned int h, bad = 0;

	KUNIT_EXPECT_EQ(test, gs_ix_walk(ix, &h, &bad), want);
	KUNIT_EXPECT_EQ(test, ix->nodes, want);
	KUNIT_EXPECT_EQ(test, bad, 0U);
	KUNIT_EXPECT_EQ(test, gs_ix_bytes(ix),
			(long)(want * gs_index_node_bytes()));
}

/*
 * The count of the XArray's nodes, and their bytes, against a walk of
 * the whole tree (each node's count checked against its slots).
 */
static void gs_ix_expect_walked(struct kunit *test, struct gs_index *ix)
{
	unsigned int h, bad = 0;
	unsigned long walked = gs_ix_walk(ix, &h, &bad);

	KUNIT_EXPECT_EQ(test, bad, 0U);
	KUNIT_EXPECT_EQ(test, ix->nodes, walked);
	KUNIT_EXPECT_EQ(test, gs_ix_bytes(ix),
			(long)(walked * gs_index_node_bytes()));
}

/*
 * Entries at the edges of nodes and of an unsigned long, each found where
 * it was put and nowhere else; a taken index keeps its entry; all of it,
 * nodes included, gone with the last erase.
 */
static void gs_index_insert_erase(struct kunit *test)
{
	static const unsigned long at[] = {
		0, 1, 63, 64, 4095, 4096, 262143, 262144, BIT(31) - 1,
		ULONG_MAX / 2, ULONG_MAX - 1, ULONG_MAX,
	};
	struct gs_index *ix = gs_ix_new(test, ULONG_MAX, 1);
	unsigned int h, bad = 0;
	unsigned long i;
	unsigned int j;

	for (j = 0; j < ARRAY_SIZE(at); j++)
		KUNIT_EXPECT_NULL(test, gs_index_insert(ix, at[j],
							gs_ix_entry(at[j]),
							GFP_KERNEL));
	for (j = 0; j < ARRAY_SIZE(at); j++) {
		i = at[j];
		KUNIT_EXPECT_PTR_EQ(test, gs_index_load(ix, i),
				    gs_ix_entry(i));
		/* Taken: the one there is returned, nothing changes. */
		KUNIT_EXPECT_PTR_EQ(test, gs_index_insert(ix, i,
							  gs_ix_entry(i + 1),
							  GFP_KERNEL),
				    gs_ix_entry(i));
	}
	KUNIT_EXPECT_NULL(test, gs_index_load(ix, 2));
	KUNIT_EXPECT_NULL(test, gs_index_load(ix, 65));
	KUNIT_EXPECT_NULL(test, gs_index_load(ix, ULONG_MAX - 2));
	KUNIT_EXPECT_NULL(test, gs_index_erase(ix, 2));
	KUNIT_EXPECT_EQ(test, gs_ix_walk(ix, &h, &bad), ix->nodes);
	KUNIT_EXPECT_EQ(test, h, (unsigned int)GS_INDEX_HEIGHT_MAX);
	for (j = 0; j < ARRAY_SIZE(at); j++) {
		KUNIT_EXPECT_PTR_EQ(test, gs_index_erase(ix, at[j]),
				    gs_ix_entry(at[j]));
		KUNIT_EXPECT_NULL(test, gs_index_load(ix, at[j]));
		KUNIT_EXPECT_NULL(test, gs_index_erase(ix, at[j]));
		gs_ix_expect_walked(test, ix);
	}
	gs_ix_expect_nodes(test, ix, 0);
	KUNIT_EXPECT_TRUE(test, xa_empty(&ix->xa));
}

/*
 * Nodes by hand: index 0 alone lives in the head; a second index grows
 * the tree over it; one node per 64 indices' range, freed when empty;
 * the tree shrinks back to the head.
 */
static void gs_index_nodes(struct kunit *test)
{
	struct gs_index *ix = gs_ix_new(test, 32767, 1);

	KUNIT_EXPECT_NULL(test, gs_index_insert(ix, 0, gs_ix_entry(0),
						GFP_KERNEL));
	gs_ix_expect_nodes(test, ix, 0);
	/* Two levels over index 0: a root, a leaf each for 0 and 100. */
	KUNIT_EXPECT_NULL(test, gs_index_insert(ix, 100, gs_ix_entry(100),
						GFP_KERNEL));
	gs_ix_expect_nodes(test, ix, 3);
	KUNIT_EXPECT_NULL(test, gs_index_insert(ix, 120, gs_ix_entry(120),
						GFP_KERNEL));
	gs_ix_expect_nodes(test, ix, 3);
	/* A third level, and the path of 5000 under the new root. */
	KUNIT_EXPECT_NULL(test, gs_index_insert(ix, 5000, gs_ix_entry(5000),
						GFP_KERNEL));
	gs_ix_expect_nodes(test, ix, 6);
	gs_index_erase(ix, 5000);
	/* The two nodes of its path, and the root it left with slot 0. */
	gs_ix_expect_nodes(test, ix, 3);
	gs_index_erase(ix, 100);
	gs_ix_expect_nodes(test, ix, 3);
	gs_index_erase(ix, 120);
	/* Index 0 back in the head. */
	gs_ix_expect_nodes(test, ix, 0);
	KUNIT_EXPECT_PTR_EQ(test, gs_index_load(ix, 0), gs_ix_entry(0));
	gs_index_erase(ix, 0);
	KUNIT_EXPECT_TRUE(test, xa_empty(&ix->xa));
	/* An index alone but for 0: one leaf, no height over it. */
	KUNIT_EXPECT_NULL(test, gs_index_insert(ix, 63, gs_ix_entry(63),
						GFP_KERNEL));
	gs_ix_expect_nodes(test, ix, 1);
	gs_index_erase(ix, 63);
	gs_ix_expect_nodes(test, ix, 0);
}

#define GS_IX_COUNT_OPS		3000
#define GS_IX_SPARSE		48

struct gs_ix_cover {
	unsigned long ops, grew, shrank, head_alone, empty;
	unsigned int max_height;
};

/*
 * Random inserts and erases over @n indices @at; after each, the count
 * against the walk. Returns false at the first difference.
 */
static bool gs_ix_count_run(struct kunit *test, struct gs_index *ix,
			    const unsigned long *at, bool *in,
			    unsigned int n, struct gs_ix_cover *c)
{
	unsigned int k, op, h, prev = 0, bad = 0;
	unsigned long walked;
	void *e;

	for (op = 0; op < GS_IX_COUNT_OPS; op++) {
		k = get_random_u32_below(n);
		if (in[k]) {
			e = gs_index_erase(ix, at[k]);
			KUNIT_EXPECT_PTR_EQ(test, e, gs_ix_entry(at[k]));
		} else {
			e = gs_index_insert(ix, at[k], gs_ix_entry(at[k]),
					    GFP_KERNEL);
			KUNIT_EXPECT_NULL(test, e);
		}
		in[k] = !in[k];
		walked = gs_ix_walk(ix, &h, &bad);
		if (walked != ix->nodes || bad ||
		    gs_ix_bytes(ix) != (long)(walked * gs_index_node_bytes())) {
			KUNIT_FAIL(test, "%s of %lu: counted %lu nodes, walked %lu (%u counts off)",
				   in[k] ? "insert" : "erase", at[k],
				   ix->nodes, walked, bad);
			return false;
		}
		c->ops++;
		c->grew += h > prev;
		c->shrank += h < prev;
		c->max_height = max(c->max_height, h);
		if (xa_empty(&ix->xa))
			c->empty++;
		else if (!h)
			c->head_alone++;
		prev = h;
	}
	/* Everything out: no node is left. */
	for (k = 0; k < n; k++) {
		if (in[k])
			gs_index_erase(ix, at[k]);
		in[k] = false;
	}
	gs_ix_expect_nodes(test, ix, 0);
	return true;
}

/* @i into the set @at of @n distinct indices; its new size. */
static unsigned int gs_ix_add(unsigned long *at, unsigned int n,
			      unsigned long i)
{
	unsigned int k;

	for (k = 0; k < n; k++)
		if (at[k] == i)
			return n;
	at[n] = i;
	return n + 1;
}

/*
 * The count of nodes, after every step, against a walk of the whole
 * tree: a sequence by hand (index 0 alone in the head, the tree grown to
 * its full height over it and shrunk back, leaves emptied under a root),
 * then random inserts and erases over a dense range (0..399, seven
 * leaves under a root), over six sparse indices (0 and the highest among
 * them: index 0 is often alone) and over 48 across the whole unsigned
 * long (the edges of levels, random ones), so that the height grows and
 * shrinks by any number of levels.
 */
static void gs_index_count(struct kunit *test)
{
	static const struct {
		unsigned long i;
		bool erase;
	} script[] = {
		{ 0 }, { ULONG_MAX }, { ULONG_MAX, true }, { 1 }, { 0, true },
		{ 4096 }, { 1, true }, { 4096, true }, { 0 }, { 64 }, { 130 },
		{ 64, true }, { 130, true }, { 262144 }, { 0, true },
		{ 262144, true },
	};
	struct gs_index *ix = gs_ix_new(test, ULONG_MAX, 1);
	unsigned long *at = kunit_kcalloc(test, 400, sizeof(*at), GFP_KERNEL);
	bool *in = kunit_kcalloc(test, 400, sizeof(*in), GFP_KERNEL);
	struct gs_ix_cover dense = {}, few = {}, sparse = {};
	unsigned int k, n;

	KUNIT_ASSERT_NOT_NULL(test, at);
	KUNIT_ASSERT_NOT_NULL(test, in);

	for (k = 0; k < ARRAY_SIZE(script); k++) {
		unsigned long i = script[k].i;

		if (script[k].erase)
			KUNIT_EXPECT_PTR_EQ(test, gs_index_erase(ix, i),
					    gs_ix_entry(i));
		else
			KUNIT_EXPECT_NULL(test, gs_index_insert(ix, i,
								gs_ix_entry(i),
								GFP_KERNEL));
		gs_ix_expect_walked(test, ix);
	}
	gs_ix_expect_nodes(test, ix, 0);
	KUNIT_EXPECT_TRUE(test, xa_empty(&ix->xa));

	for (k = 0; k < 400; k++)
		at[k] = k;
	if (!gs_ix_count_run(test, ix, at, in, 400, &dense))
		return;

	n = 0;
	n = gs_ix_add(at, n, 0);
	n = gs_ix_add(at, n, ULONG_MAX);
	n = gs_ix_add(at, n, 1);
	n = gs_ix_add(at, n, 4095);
	n = gs_ix_add(at, n, BIT(30));
	n = gs_ix_add(at, n, ULONG_MAX / 3);
	if (!gs_ix_count_run(test, ix, at, in, n, &few))
		return;

	n = gs_ix_add(at, n, ULONG_MAX - 1);
	n = gs_ix_add(at, n, 63);
	n = gs_ix_add(at, n, 64);
	while (n < GS_IX_SPARSE / 2) {
		k = get_random_u32_below(BITS_PER_LONG);
		n = gs_ix_add(at, n, BIT(k) + get_random_u32_below(3) - 1);
	}
	while (n < GS_IX_SPARSE)
		n = gs_ix_add(at, n, get_random_long() >>
				      get_random_u32_below(BITS_PER_LONG));
	if (!gs_ix_count_run(test, ix, at, in, n, &sparse))
		return;

	kunit_info(test, "dense: %lu ops, height up to %u, grew %lu, shrank %lu, empty %lu\n",
		   dense.ops, dense.max_height, dense.grew, dense.shrank,
		   dense.empty);
	kunit_info(test, "6 sparse: %lu ops, height up to %u, grew %lu, shrank %lu, 0 alone %lu, empty %lu\n",
		   few.ops, few.max_height, few.grew, few.shrank,
		   few.head_alone, few.empty);
	kunit_info(test, "%u sparse: %lu ops, height up to %u, grew %lu, shrank %lu, 0 alone %lu, empty %lu\n",
		   n, sparse.ops, sparse.max_height, sparse.grew,
		   sparse.shrank, sparse.head_alone, sparse.empty);
	/* What the runs must have been through to prove anything. */
	KUNIT_EXPECT_EQ(test, dense.max_height, 2U);
	KUNIT_EXPECT_GT(test, dense.grew, 0UL);
	KUNIT_EXPECT_EQ(test, few.max_height,
			(unsigned int)GS_INDEX_HEIGHT_MAX);
	KUNIT_EXPECT_GT(test, few.grew, 0UL);
	KUNIT_EXPECT_GT(test, few.shrank, 0UL);
	KUNIT_EXPECT_GT(test, few.head_alone, 0UL);
	KUNIT_EXPECT_GT(test, few.empty, 0UL);
	KUNIT_EXPECT_EQ(test, sparse.max_height,
			(unsigned int)GS_INDEX_HEIGHT_MAX);
}

/* Scans: every entry once, in order, across holes of every size. */
static void gs_index_find_holes(struct kunit *test)
{
	static const unsigned long at[] = { 0, 63, 64, 4096, 70000,
					    65536 * 200, BIT(31) - 2,
					    BIT(31) - 1, ULONG_MAX - 64,
					    ULONG_MAX };
	struct gs_index *ix = gs_ix_new(test, ULONG_MAX, 1);
	unsigned long i;
	unsigned int k, n;
	void *e;

	for (k = 0; k < ARRAY_SIZE(at); k++)
		KUNIT_ASSERT_NULL(test, gs_index_insert(ix, at[k],
							gs_ix_entry(at[k]),
							GFP_KERNEL));
	for (i = 0, n = 0; (e = gs_index_find(ix, &i, ULONG_MAX)); i++, n++) {
		if (n >= ARRAY_SIZE(at))
			break;
		KUNIT_EXPECT_EQ(test, i, at[n]);
		KUNIT_EXPECT_PTR_EQ(test, e, gs_ix_entry(at[n]));
		if (i == ULONG_MAX) {
			n++;
			break;
		}
	}
	KUNIT_EXPECT_EQ(test, n, (unsigned int)ARRAY_SIZE(at));
	/* Bounded: nothing in 4097..69999. */
	i = 4097;
	KUNIT_EXPECT_NULL(test, gs_index_find(ix, &i, 69999));
	i = 4097;
	KUNIT_EXPECT_PTR_EQ(test, gs_index_find(ix, &i, 70000),
			    gs_ix_entry(70000));
	KUNIT_EXPECT_EQ(test, i, 70000UL);
	/* From an index of a store's highest cluster, and past it. */
	i = BIT(31) - 1;
	KUNIT_EXPECT_PTR_EQ(test, gs_index_find(ix, &i, BIT(31) - 1),
			    gs_ix_entry(BIT(31) - 1));
	i = BIT(31);
	KUNIT_EXPECT_NULL(test, gs_index_find(ix, &i, ULONG_MAX - 65));
	for (k = 0; k < ARRAY_SIZE(at); k++)
		gs_index_erase(ix, at[k]);
	i = 0;
	KUNIT_EXPECT_NULL(test, gs_index_find(ix, &i, ULONG_MAX));
	gs_ix_expect_nodes(test, ix, 0);
}

/* The whole unsigned long: the last index, and a scan that would wrap. */
static void gs_index_full_width(struct kunit *test)
{
	struct gs_index *ix = gs_ix_new(test, ULONG_MAX, 1);
	unsigned long i = ULONG_MAX - 300;

	KUNIT_ASSERT_NULL(test, gs_index_insert(ix, ULONG_MAX,
						gs_ix_entry(7), GFP_KERNEL));
	gs_ix_expect_nodes(test, ix, GS_INDEX_HEIGHT_MAX);
	KUNIT_EXPECT_PTR_EQ(test, gs_index_load(ix, ULONG_MAX),
			    gs_ix_entry(7));
	KUNIT_EXPECT_PTR_EQ(test, gs_index_find(ix, &i, ULONG_MAX),
			    gs_ix_entry(7));
	KUNIT_EXPECT_EQ(test, i, ULONG_MAX);
	gs_index_erase(ix, ULONG_MAX);
	i = ULONG_MAX - 300;
	KUNIT_EXPECT_NULL(test, gs_index_find(ix, &i, ULONG_MAX));
	gs_ix_expect_nodes(test, ix, 0);
}

/*
 * The reserve: with nothing of their own to allocate with (gfp 0), the
 * first inserts into new ranges far apart take their nodes from it and
 * succeed, as many as it was made for, from index 0 alone in the head
 * to the highest index (the tree grows all its height at once); one it
 * cannot cover fails and leaves the array as it was; an insert that may
 * allocate fills it again.
 */
static void gs_index_reserve(struct kunit *test)
{
	/* A 2^40-slot store's clusters: six levels. */
	const unsigned long max = BIT(31) - 1;
	const unsigned int h = 6, target = h + 4 * (h - 1);
	static const unsigned long far[] = { BIT(31) - 1, BIT(30) + 5,
					     BIT(24) + 7, BIT(12) + 9 };
	struct gs_index *ix = gs_ix_new(test, max, 4);
	unsigned long nodes = 0, before;
	unsigned int k, spares, h_now, bad = 0;

	KUNIT_EXPECT_EQ(test, gs_index_spares(ix), target);
	KUNIT_EXPECT_NULL(test, gs_index_insert(ix, 0, gs_ix_entry(0), 0));
	KUNIT_EXPECT_EQ(test, gs_index_spares(ix), target);
	for (k = 0; k < ARRAY_SIZE(far); k++) {
		spares = gs_index_spares(ix);
		before = ix->nodes;
		KUNIT_EXPECT_NULL(test, gs_index_insert(ix, far[k],
							gs_ix_entry(far[k]),
							0));
		KUNIT_EXPECT_PTR_EQ(test, gs_index_load(ix, far[k]),
				    gs_ix_entry(far[k]));
		/* At least its first node came from the reserve. */
		KUNIT_EXPECT_LT(test, gs_index_spares(ix), spares);
		KUNIT_EXPECT_GE(test, (unsigned long)(spares -
						      gs_index_spares(ix)), 1UL);
		KUNIT_EXPECT_LE(test, (unsigned long)(spares -
						      gs_index_spares(ix)),
				ix->nodes - before);
		nodes = ix->nodes;
	}
	/*
	 * Six levels over index 0 (11 nodes), then paths of 4, 4 and 2
	 * below the nodes they share with those.
	 */
	KUNIT_EXPECT_EQ(test, nodes, 21UL);
	gs_ix_expect_nodes(test, ix, nodes);
	/* Refilled by an insert that may allocate (its range exists). */
	KUNIT_EXPECT_NULL(test, gs_index_insert(ix, 1, gs_ix_entry(1),
						GFP_KERNEL));
	KUNIT_EXPECT_EQ(test, gs_index_spares(ix), target);
	for (k = 0; k < ARRAY_SIZE(far); k++)
		gs_index_erase(ix, far[k]);
	gs_index_erase(ix, 1);
	gs_index_erase(ix, 0);
	gs_ix_expect_nodes(test, ix, 0);

	/*
	 * Without it: a reserve made for no insert in a row holds h nodes;
	 * growing six levels over index 0 needs 2h - 1. Refused, and the
	 * array is as it was: index 0 in the head, no node.
	 */
	ix = gs_ix_new(test, max, 0);
	KUNIT_EXPECT_EQ(test, gs_index_spares(ix), h);
	KUNIT_EXPECT_NULL(test, gs_index_insert(ix, 0, gs_ix_entry(0), 0));
	KUNIT_EXPECT_PTR_EQ(test, gs_index_insert(ix, max, gs_ix_entry(max), 0),
			    ERR_PTR(-ENOMEM));
	KUNIT_EXPECT_NULL(test, gs_index_load(ix, max));
	KUNIT_EXPECT_EQ(test, gs_ix_walk(ix, &h_now, &bad), 0UL);
	KUNIT_EXPECT_EQ(test, h_now, 0U);
	gs_ix_expect_nodes(test, ix, 0);
	KUNIT_EXPECT_EQ(test, gs_index_spares(ix), h);
	/* With memory it goes in, spares or not. */
	KUNIT_EXPECT_NULL(test, gs_index_insert(ix, max, gs_ix_entry(max),
						GFP_KERNEL));
	gs_ix_expect_nodes(test, ix, 2 * h - 1);
	KUNIT_EXPECT_GE(test, gs_index_spares(ix), h);
	gs_index_erase(ix, max);
	gs_index_erase(ix, 0);
	gs_ix_expect_nodes(test, ix, 0);
}

#define GS_IX_RACE_MAX		32767	/* the highest index: three levels */
#define GS_IX_RACE_SPAN		2048	/* indices the threads work on */
#define GS_IX_RACE_OPS		200000
/*
 * Lookups and scans the reader must do meanwhile: a scan of the span
 * takes as long as 100 to 200 of the writer's inserts and erases (1238
 * and 1653 scans to 200000 under the sanitizers); a fifth of that.
 */
#define GS_IX_RACE_READS	(GS_IX_RACE_OPS / 1000)

struct gs_ix_race {
	struct gs_index *ix;
	/* Each insert or erase; each lookup and scan. */
	struct gs_overlap wr, rd;
	long reads;		/* the reader's lookups and scans */
	long min_reads;		/* ... that the test asks for */
	atomic_t bad;
	atomic_t lost;		/* an entry never erased not found */
	atomic_t running;
	bool stop;
	struct completion done;
};

/* Whether the writer's race has done what gs_index_race() asks. */
static bool gs_ix_race_met(struct gs_ix_race *r)
{
	return gs_overlap_enough(&r->wr, GS_OVERLAP_PCT) &&
	       gs_overlap_enough(&r->rd, GS_OVERLAP_PCT) &&
	       READ_ONCE(r->reads) >= r->min_reads;
}

/* Inserts and erases at random, so nodes come and go. */
static int gs_ix_race_writer(void *arg)
{
	struct gs_ix_race *r = arg;
	unsigned int win;
	unsigned long i;
	void *e;
	long k;

	for (k = 0; gs_overlap_more(k, GS_IX_RACE_OPS, gs_ix_race_met(r));
	     k++) {
		i = get_random_u32_below(GS_IX_RACE_SPAN);
		win = gs_overlap_enter_vs(&r->wr, &r->rd);
		if (get_random_u32_below(2))
			e = gs_index_insert(r->ix, i, gs_ix_entry(i),
					    GFP_KERNEL);
		else
			e = gs_index_erase(r->ix, i);
		gs_overlap_exit(&r->wr, win);
		if (e && e != gs_ix_entry(i))
			atomic_inc(&r->bad);
		if (!(k % 64))
			cond_resched();
	}
	gs_overlap_close(&r->wr, &r->rd);
	WRITE_ONCE(r->stop, true);
	if (atomic_dec_and_test(&r->running))
		complete(&r->done);
	return 0;
}

/* Lookups and scans: an index's own entry or nothing, in order. */
static int gs_ix_race_reader(void *arg)
{
	struct gs_ix_race *r = arg;
	unsigned long i, prev;
	unsigned int win, n;
	void *e;
	int k = 0;

	while (!READ_ONCE(r->stop)) {
		win = gs_overlap_enter_vs(&r->rd, &r->wr);
		i = get_random_u32_below(GS_IX_RACE_SPAN);
		e = gs_index_load(r->ix, i);
		if (e && e != gs_ix_entry(i))
			atomic_inc(&r->bad);
		for (i = 0, prev = 0, n = 0; i <= GS_IX_RACE_SPAN; i++) {
			e = gs_index_find(r->ix, &i, GS_IX_RACE_SPAN);
			if (!e)
				break;
			if (e != gs_ix_entry(i) || i < prev)
				atomic_inc(&r->bad);
			prev = i;
			/* A scan is long: is the writer at work meanwhile? */
			if (!(++n & 31))
				gs_overlap_check(&r->rd, win);
		}
		gs_overlap_exit(&r->rd, win);
		WRITE_ONCE(r->reads, r->reads + 1);
		if (!(++k % 4))
			cond_resched();
	}
	if (atomic_dec_and_test(&r->running))
		complete(&r->done);
	return 0;
}

static struct gs_ix_race *gs_ix_race_new(struct kunit *test, long min_reads)
{
	struct gs_ix_race *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, r);
	r->ix = gs_ix_new(test, GS_IX_RACE_MAX, 1);
	r->min_reads = min_reads;
	init_completion(&r->done);
	atomic_set(&r->running, 2);
	return r;
}

static void gs_index_race(struct kunit *test)
{
	struct gs_ix_race *r = gs_ix_race_new(test, GS_IX_RACE_READS);
	struct task_struct *t;
	unsigned long i;

	t = kthread_run(gs_ix_race_reader, r, "gs_ix_reader");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	t = kthread_run(gs_ix_race_writer, r, "gs_ix_writer");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	wait_for_completion(&r->done);
	KUNIT_EXPECT_EQ(test, atomic_read(&r->bad), 0);
	gs_ix_expect_walked(test, r->ix);
	for (i = 0; i < GS_IX_RACE_SPAN; i++)
		gs_index_erase(r->ix, i);
	gs_ix_expect_nodes(test, r->ix, 0);
	gs_overlap_expect(test, &r->wr,
			  "inserts and erases against lookups and scans",
			  GS_OVERLAP_PCT, r->reads, GS_IX_RACE_READS);
	gs_overlap_expect(test, &r->rd,
			  "lookups and scans against inserts and erases",
			  GS_OVERLAP_PCT, atomic_long_read(&r->wr.windows),
			  GS_IX_RACE_OPS);
}

#define GS_IX_SAME_OPS		20000

/*
 * Index 1 inserted and erased, and the highest index: the array grows
 * from its head alone (index 0) to a leaf and to its full height over
 * it, and back, every four operations.
 */
static int gs_ix_same_writer(void *arg)
{
	static const unsigned long at[] = { 1, GS_IX_RACE_MAX };
	struct gs_ix_race *r = arg;
	unsigned int win;
	unsigned long i;
	void *e;
	long k;

	for (k = 0; gs_overlap_more(k, GS_IX_SAME_OPS, gs_ix_race_met(r));
	     k++) {
		i = at[k & 1];
		win = gs_overlap_enter_vs(&r->wr, &r->rd);
		if (k & 2)
			e = gs_index_erase(r->ix, i);
		else
			e = gs_index_insert(r->ix, i, gs_ix_entry(i),
					    GFP_KERNEL);
		gs_overlap_exit(&r->wr, win);
		/* Inserted where nothing was, erased what was inserted. */
		if (e != (k & 2 ? gs_ix_entry(i) : NULL))
			atomic_inc(&r->bad);
		if (!(k % 64))
			cond_resched();
	}
	gs_overlap_close(&r->wr, &r->rd);
	WRITE_ONCE(r->stop, true);
	if (atomic_dec_and_test(&r->running))
		complete(&r->done);
	return 0;
}

/*
 * The writer's indices, looked up and scanned: index 0, never erased,
 * always found with its own entry, first; the others their own entry
 * or nothing, in order.
 */
static int gs_ix_same_reader(void *arg)
{
	static const unsigned long at[] = { 0, 1, GS_IX_RACE_MAX };
	struct gs_ix_race *r = arg;
	unsigned long i, prev;
	unsigned int win, k;
	void *e;
	long n = 0;

	while (!READ_ONCE(r->stop)) {
		win = gs_overlap_enter_vs(&r->rd, &r->wr);
		for (k = 0; k < ARRAY_SIZE(at); k++) {
			e = gs_index_load(r->ix, at[k]);
			if (!k && !e)
				atomic_inc(&r->lost);
			else if (e && e != gs_ix_entry(at[k]))
				atomic_inc(&r->bad);
		}
		for (i = 0, k = 0, prev = 0; i <= GS_IX_RACE_MAX; i++, k++) {
			e = gs_index_find(r->ix, &i, GS_IX_RACE_MAX);
			if (!e)
				break;
			/* Index 0 first. */
			if (!k && i)
				atomic_inc(&r->lost);
			if (e != gs_ix_entry(i) || i < prev || k > 2)
				atomic_inc(&r->bad);
			prev = i;
		}
		if (!k)
			atomic_inc(&r->lost);
		gs_overlap_exit(&r->rd, win);
		WRITE_ONCE(r->reads, r->reads + 1);
		if (!(++n % 16))
			cond_resched();
	}
	if (atomic_dec_and_test(&r->running))
		complete(&r->done);
	return 0;
}

/*
 * Inserts and erases against lookups of the same indices: one thread
 * inserts and erases index 1 and the highest index, so that the leaf
 * over index 0 and the levels over it come and go, while another looks
 * them up and scans them. Index 0 is found, with its own entry, by every
 * lookup and scan; the others are their own entry or nothing; the node
 * count agrees with a walk after; the two overlap.
 */
static void gs_index_race_same(struct kunit *test)
{
	struct gs_ix_race *r = gs_ix_race_new(test, GS_IX_SAME_OPS / 10);
	struct task_struct *t;

	KUNIT_ASSERT_NULL(test, gs_index_insert(r->ix, 0, gs_ix_entry(0),
						GFP_KERNEL));
	gs_ix_expect_nodes(test, r->ix, 0);
	t = kthread_run(gs_ix_same_reader, r, "gs_ix_reader");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	t = kthread_run(gs_ix_same_writer, r, "gs_ix_writer");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	wait_for_completion(&r->done);
	KUNIT_EXPECT_EQ(test, atomic_read(&r->bad), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&r->lost), 0);
	gs_ix_expect_walked(test, r->ix);
	KUNIT_EXPECT_PTR_EQ(test, gs_index_load(r->ix, 0), gs_ix_entry(0));
	gs_index_erase(r->ix, 1);
	gs_index_erase(r->ix, GS_IX_RACE_MAX);
	gs_index_erase(r->ix, 0);
	gs_ix_expect_nodes(test, r->ix, 0);
	gs_overlap_expect(test, &r->wr,
			  "inserts and erases against lookups of the same indices",
			  GS_OVERLAP_PCT, r->reads, r->min_reads);
	gs_overlap_expect(test, &r->rd,
			  "lookups of the same indices against inserts and erases",
			  GS_OVERLAP_PCT, atomic_long_read(&r->wr.windows),
			  GS_IX_SAME_OPS);
}

static struct kunit_case gs_index_cases[] = {
	KUNIT_CASE(gs_index_insert_erase),
	KUNIT_CASE(gs_index_nodes),
	KUNIT_CASE(gs_index_count),
	KUNIT_CASE(gs_index_find_holes),
	KUNIT_CASE(gs_index_full_width),
	KUNIT_CASE(gs_index_reserve),
	KUNIT_CASE_SLOW(gs_index_race),
	KUNIT_CASE_SLOW(gs_index_race_same),
	{}
};

static struct kunit_suite gs_index_suite = {
	.name = "ghostswap_index",
	.test_cases = gs_index_cases,
};

kunit_test_suite(gs_index_suite);
