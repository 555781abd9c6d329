// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "ghostswap_index": the cluster index (module/gs_index.c).
 * Its depth for each size; inserts, lookups and erases at every level and
 * at the edges of nodes; nodes that exist only over entries, freed with
 * the last one and counted to the byte; scans over holes up to the
 * highest index; and lookups and scans that run while another thread
 * inserts and erases, which must only ever see an index's own entry or
 * nothing.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/err.h>
#include <linux/kthread.h>
#include <linux/random.h>
#include <linux/sched.h>
#include "gs_index.h"

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

static struct gs_index *gs_ix_new(struct kunit *test, unsigned long max)
{
	struct gs_ix *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, t);
	gs_index_create(&t->ix, max, &t->bytes);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, gs_ix_destroy,
							t), 0);
	return &t->ix;
}

static void *gs_ix_load(struct gs_index *ix, unsigned long i)
{
	void *e;

	rcu_read_lock();
	e = gs_index_load(ix, i);
	rcu_read_unlock();
	return e;
}

static long gs_ix_bytes(struct gs_index *ix)
{
	return atomic_long_read(ix->bytes);
}

/* Depth: whole levels of 8 bits for the highest index. */
static void gs_index_levels(struct kunit *test)
{
	static const struct {
		unsigned long max, covered;
		unsigned int levels;
	} cases[] = {
		{ 0, 255, 1 },
		{ 255, 255, 1 },
		{ 256, 65535, 2 },
		{ 32767, 65535, 2 },		/* 64 GiB */
		{ 65536, BIT(24) - 1, 3 },
		{ BIT(31) - 1, BIT(32) - 1, 4 },	/* 2^40 slots */
		{ ULONG_MAX, ULONG_MAX, 8 },
	};
	struct gs_index *ix;
	unsigned int k;

	for (k = 0; k < ARRAY_SIZE(cases); k++) {
		ix = gs_ix_new(test, cases[k].max);
		KUNIT_EXPECT_EQ(test, ix->levels, cases[k].levels);
		KUNIT_EXPECT_EQ(test, ix->max, cases[k].covered);
		KUNIT_EXPECT_NULL(test, gs_ix_load(ix, 0));
		KUNIT_EXPECT_NULL(test, gs_ix_load(ix, cases[k].max));
		KUNIT_EXPECT_NULL(test, gs_ix_load(ix, ULONG_MAX));
	}
}

/*
 * At each depth: entries at the edges of nodes, each found where it was
 * put and nowhere else; the nodes on their paths, and no more; all of it
 * gone with the last erase.
 */
static void gs_index_insert_erase(struct kunit *test)
{
	static const unsigned long maxes[] = { 200, 60000, BIT(24) - 1,
					       BIT(31) - 1 };
	unsigned long at[6], i;
	struct gs_index *ix;
	unsigned int k, j, n;

	for (k = 0; k < ARRAY_SIZE(maxes); k++) {
		ix = gs_ix_new(test, maxes[k]);
		n = 0;
		at[n++] = 0;
		at[n++] = 1;
		if (maxes[k] > 256) {
			at[n++] = 255;
			at[n++] = 256;
		}
		at[n++] = maxes[k] / 2;
		at[n++] = maxes[k];
		for (j = 0; j < n; j++)
			KUNIT_EXPECT_NULL(test, gs_index_insert(ix, at[j],
								gs_ix_entry(at[j]),
								GFP_KERNEL));
		for (j = 0; j < n; j++) {
			i = at[j];
			KUNIT_EXPECT_PTR_EQ(test, gs_ix_load(ix, i),
					    gs_ix_entry(i));
			/* Taken: the one there is returned, nothing changes. */
			KUNIT_EXPECT_PTR_EQ(test, gs_index_insert(ix, i,
								  gs_ix_entry(i + 1),
								  GFP_KERNEL),
					    gs_ix_entry(i));
		}
		KUNIT_EXPECT_NULL(test, gs_ix_load(ix, 2));
		KUNIT_EXPECT_NULL(test, gs_ix_load(ix, maxes[k] - 1));
		KUNIT_EXPECT_PTR_EQ(test, gs_index_insert(ix, ix->max + 1,
							  gs_ix_entry(0),
							  GFP_KERNEL),
				    ERR_PTR(-ERANGE));
		KUNIT_EXPECT_NULL(test, gs_index_erase(ix, 2));
		KUNIT_EXPECT_GE(test, ix->nodes, (unsigned long)ix->levels);
		KUNIT_EXPECT_EQ(test, gs_ix_bytes(ix),
				(long)(ix->nodes * gs_index_node_bytes()));
		for (j = 0; j < n; j++) {
			KUNIT_EXPECT_PTR_EQ(test, gs_index_erase(ix, at[j]),
					    gs_ix_entry(at[j]));
			KUNIT_EXPECT_NULL(test, gs_ix_load(ix, at[j]));
			KUNIT_EXPECT_NULL(test, gs_index_erase(ix, at[j]));
		}
		KUNIT_EXPECT_EQ(test, ix->nodes, 0UL);
		KUNIT_EXPECT_EQ(test, gs_ix_bytes(ix), 0L);
		KUNIT_EXPECT_NULL(test, rcu_access_pointer(ix->root));
	}
}

/* A two-level index: one node per 256 entries' range, freed when empty. */
static void gs_index_nodes(struct kunit *test)
{
	struct gs_index *ix = gs_ix_new(test, 32767);

	KUNIT_EXPECT_NULL(test, gs_index_insert(ix, 5, gs_ix_entry(5),
						GFP_KERNEL));
	KUNIT_EXPECT_EQ(test, ix->nodes, 2UL);
	KUNIT_EXPECT_NULL(test, gs_index_insert(ix, 250, gs_ix_entry(250),
						GFP_KERNEL));
	KUNIT_EXPECT_EQ(test, ix->nodes, 2UL);
	KUNIT_EXPECT_NULL(test, gs_index_insert(ix, 300, gs_ix_entry(300),
						GFP_KERNEL));
	KUNIT_EXPECT_EQ(test, ix->nodes, 3UL);
	KUNIT_EXPECT_EQ(test, gs_ix_bytes(ix), 3L * gs_index_node_bytes());
	/* The leaf of 0..255 stays while 250 is in it. */
	gs_index_erase(ix, 5);
	KUNIT_EXPECT_EQ(test, ix->nodes, 3UL);
	gs_index_erase(ix, 250);
	KUNIT_EXPECT_EQ(test, ix->nodes, 2UL);
	KUNIT_EXPECT_PTR_EQ(test, gs_ix_load(ix, 300), gs_ix_entry(300));
	gs_index_erase(ix, 300);
	KUNIT_EXPECT_EQ(test, ix->nodes, 0UL);
	KUNIT_EXPECT_EQ(test, gs_ix_bytes(ix), 0L);
}

/* Scans: every entry once, in order, across holes of every size. */
static void gs_index_find_holes(struct kunit *test)
{
	static const unsigned long at[] = { 0, 255, 256, 70000, 65536 * 200,
					    BIT(31) - 2, BIT(31) - 1 };
	struct gs_index *ix = gs_ix_new(test, BIT(31) - 1);
	unsigned long i;
	unsigned int k, n;
	void *e;

	for (k = 0; k < ARRAY_SIZE(at); k++)
		KUNIT_ASSERT_NULL(test, gs_index_insert(ix, at[k],
							gs_ix_entry(at[k]),
							GFP_KERNEL));
	rcu_read_lock();
	for (i = 0, n = 0; (e = gs_index_find(ix, &i, ULONG_MAX)); i++, n++) {
		if (n >= ARRAY_SIZE(at))
			break;
		KUNIT_EXPECT_EQ(test, i, at[n]);
		KUNIT_EXPECT_PTR_EQ(test, e, gs_ix_entry(at[n]));
	}
	KUNIT_EXPECT_EQ(test, n, (unsigned int)ARRAY_SIZE(at));
	/* Bounded: nothing in 257..69999. */
	i = 257;
	KUNIT_EXPECT_NULL(test, gs_index_find(ix, &i, 69999));
	i = 257;
	KUNIT_EXPECT_PTR_EQ(test, gs_index_find(ix, &i, 70000),
			    gs_ix_entry(70000));
	KUNIT_EXPECT_EQ(test, i, 70000UL);
	/* From the highest index, and past it. */
	i = BIT(31) - 1;
	KUNIT_EXPECT_NOT_NULL(test, gs_index_find(ix, &i, ULONG_MAX));
	i = BIT(31);
	KUNIT_EXPECT_NULL(test, gs_index_find(ix, &i, ULONG_MAX));
	rcu_read_unlock();
	for (k = 0; k < ARRAY_SIZE(at); k++)
		gs_index_erase(ix, at[k]);
	i = 0;
	rcu_read_lock();
	KUNIT_EXPECT_NULL(test, gs_index_find(ix, &i, ULONG_MAX));
	rcu_read_unlock();
}

/* The whole unsigned long: the last index, and a scan that would wrap. */
static void gs_index_full_width(struct kunit *test)
{
	struct gs_index *ix = gs_ix_new(test, ULONG_MAX);
	unsigned long i = ULONG_MAX - 300;

	KUNIT_ASSERT_NULL(test, gs_index_insert(ix, ULONG_MAX,
						gs_ix_entry(7), GFP_KERNEL));
	KUNIT_EXPECT_EQ(test, ix->nodes, 8UL);
	KUNIT_EXPECT_PTR_EQ(test, gs_ix_load(ix, ULONG_MAX), gs_ix_entry(7));
	rcu_read_lock();
	KUNIT_EXPECT_PTR_EQ(test, gs_index_find(ix, &i, ULONG_MAX),
			    gs_ix_entry(7));
	KUNIT_EXPECT_EQ(test, i, ULONG_MAX);
	rcu_read_unlock();
	gs_index_erase(ix, ULONG_MAX);
	i = ULONG_MAX - 300;
	rcu_read_lock();
	KUNIT_EXPECT_NULL(test, gs_index_find(ix, &i, ULONG_MAX));
	rcu_read_unlock();
	KUNIT_EXPECT_EQ(test, ix->nodes, 0UL);
}

#define GS_IX_RACE_SPAN		2048	/* indices the threads work on */
#define GS_IX_RACE_OPS		200000

struct gs_ix_race {
	struct gs_index *ix;
	atomic_t bad;
	atomic_t running;
	bool stop;
	struct completion done;
};

/* Inserts and erases at random, so nodes come and go. */
static int gs_ix_race_writer(void *arg)
{
	struct gs_ix_race *r = arg;
	unsigned long i;
	void *e;
	int k;

	for (k = 0; k < GS_IX_RACE_OPS; k++) {
		i = get_random_u32_below(GS_IX_RACE_SPAN);
		if (get_random_u32_below(2)) {
			e = gs_index_insert(r->ix, i, gs_ix_entry(i),
					    GFP_KERNEL);
			if (e && e != gs_ix_entry(i))
				atomic_inc(&r->bad);
		} else {
			e = gs_index_erase(r->ix, i);
			if (e && e != gs_ix_entry(i))
				atomic_inc(&r->bad);
		}
		if (!(k % 64))
			cond_resched();
	}
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
	void *e;
	int k = 0;

	while (!READ_ONCE(r->stop)) {
		rcu_read_lock();
		i = get_random_u32_below(GS_IX_RACE_SPAN);
		e = gs_index_load(r->ix, i);
		if (e && e != gs_ix_entry(i))
			atomic_inc(&r->bad);
		for (i = 0, prev = 0; i <= GS_IX_RACE_SPAN; i++) {
			e = gs_index_find(r->ix, &i, GS_IX_RACE_SPAN);
			if (!e)
				break;
			if (e != gs_ix_entry(i) || i < prev)
				atomic_inc(&r->bad);
			prev = i;
		}
		rcu_read_unlock();
		if (!(++k % 4))
			cond_resched();
	}
	if (atomic_dec_and_test(&r->running))
		complete(&r->done);
	return 0;
}

static void gs_index_race(struct kunit *test)
{
	struct gs_ix_race *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	struct task_struct *t;
	unsigned long i;

	KUNIT_ASSERT_NOT_NULL(test, r);
	r->ix = gs_ix_new(test, 32767);
	init_completion(&r->done);
	atomic_set(&r->running, 2);
	t = kthread_run(gs_ix_race_reader, r, "gs_ix_reader");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	t = kthread_run(gs_ix_race_writer, r, "gs_ix_writer");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	wait_for_completion(&r->done);
	KUNIT_EXPECT_EQ(test, atomic_read(&r->bad), 0);
	for (i = 0; i < GS_IX_RACE_SPAN; i++)
		gs_index_erase(r->ix, i);
	KUNIT_EXPECT_EQ(test, r->ix->nodes, 0UL);
	KUNIT_EXPECT_EQ(test, gs_ix_bytes(r->ix), 0L);
}

static int gs_index_suite_init(struct kunit_suite *suite)
{
	return gs_index_init();
}

static void gs_index_suite_exit(struct kunit_suite *suite)
{
	gs_index_exit();
}

static struct kunit_case gs_index_cases[] = {
	KUNIT_CASE(gs_index_levels),
	KUNIT_CASE(gs_index_insert_erase),
	KUNIT_CASE(gs_index_nodes),
	KUNIT_CASE(gs_index_find_holes),
	KUNIT_CASE(gs_index_full_width),
	KUNIT_CASE_SLOW(gs_index_race),
	{}
};

static struct kunit_suite gs_index_suite = {
	.name = "ghostswap_index",
	.suite_init = gs_index_suite_init,
	.suite_exit = gs_index_suite_exit,
	.test_cases = gs_index_cases,
};

kunit_test_suite(gs_index_suite);
