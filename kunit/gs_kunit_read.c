// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "ghostswap_read": a reader decompresses a pool object with
 * no lock held, the entry pinned (GS_FLAG_PINNED). Whatever happens to
 * the slot in that window (a free, an overwrite, a writeback, a second
 * reader), the reader gets the page it started to read, the object is
 * freed exactly once, by whoever let go of it last, and the counters end
 * exact. The window is entered deterministically: a static stub replaces
 * gs_read_window(), the seam between pinning and reading. And reads of
 * written-back pages started without waiting (gs_store_read_start()):
 * ended later, through races with frees and overwrites, errors, and a
 * stop of the writeback tier that waits for them.
 */
#include <kunit/static_stub.h>
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include "gs_comp.h"
#include "gs_core.h"
#include "gs_store.h"
#include "gs_writeback.h"
#include "gs_kunit.h"

/* What the stub does in the window, and what it saw. */
enum gs_race {
	GS_RACE_FREE,
	GS_RACE_OVERWRITE,
	GS_RACE_WRITEBACK,
	GS_RACE_READER,
	GS_RACE_FREE_REFILL,	/* the slot freed, another of its cluster written */
	GS_RACE_WB_FAILS,	/* the cold clock marks it, its writeback fails */
};

struct gs_read_race {
	enum gs_race race;
	const void *newer;	/* OVERWRITE, FREE_REFILL: what is written */
	void *second;		/* GS_RACE_READER: what it read */
	struct gs_kbk *k;	/* the backing store */
	int ret;		/* the racing call's result */
	unsigned long entry;	/* the entry as the window found it */
	long clusters;		/* live clusters after the race */
	int runs;
};

static struct gs_read_race *gs_race;

static void gs_read_window_stub(struct gs_store *s, u64 slot)
{
	struct gs_read_race *r = gs_race;
	u64 done;

	r->runs++;
	r->entry = gs_store_entry(s, slot);
	switch (r->race) {
	case GS_RACE_FREE:
		gs_store_free(s, slot);
		break;
	case GS_RACE_OVERWRITE:
		r->ret = gs_store_write(s, slot, r->newer, GFP_KERNEL);
		break;
	case GS_RACE_WRITEBACK:
		r->ret = gs_store_writeback(s, GS_WB_ALL, 1, &done);
		if (!r->ret && done != 1)
			r->ret = -EAGAIN;
		break;
	case GS_RACE_READER:
		/* The entry is pinned: this one copies under the lock. */
		r->ret = gs_store_read(s, slot, r->second);
		break;
	case GS_RACE_FREE_REFILL:
		gs_store_free(s, slot);
		r->ret = gs_store_write(s, slot + 1, r->newer, GFP_KERNEL);
		break;
	case GS_RACE_WB_FAILS:
		/*
		 * The hand marks it COLD, comes round, takes it (WB) and
		 * fails to write it: the entry keeps the mark, not WB.
		 */
		atomic_set(&r->k->fail_writes, INT_MAX);
		r->ret = gs_store_writeback(s, GS_WB_COLD, 1, &done);
		atomic_set(&r->k->fail_writes, 0);
		if (done)
			r->ret = -EEXIST;
		break;
	}
	r->clusters = atomic_long_read(&s->stats.clusters);
}

struct gs_read_param {
	const char *name;
	enum gs_race race;
	bool random;		/* a RAW page, else a COMPRESSED one */
};

static const struct gs_read_param gs_read_params[] = {
	{ "free compressed", GS_RACE_FREE, false },
	{ "free raw", GS_RACE_FREE, true },
	{ "overwrite compressed", GS_RACE_OVERWRITE, false },
	{ "overwrite raw", GS_RACE_OVERWRITE, true },
	{ "writeback compressed", GS_RACE_WRITEBACK, false },
	{ "writeback raw", GS_RACE_WRITEBACK, true },
	{ "second reader compressed", GS_RACE_READER, false },
	{ "second reader raw", GS_RACE_READER, true },
	{ "free and refill compressed", GS_RACE_FREE_REFILL, false },
	{ "free and refill raw", GS_RACE_FREE_REFILL, true },
	{ "failed writeback compressed", GS_RACE_WB_FAILS, false },
	{ "failed writeback raw", GS_RACE_WB_FAILS, true },
};

static void gs_read_param_desc(const struct gs_read_param *p, char *desc)
{
	strscpy(desc, p->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(gs_read, gs_read_params, gs_read_param_desc);

/* The window of one read, with one race in it. */
static void gs_read_pinned_race(struct kunit *test)
{
	const struct gs_read_param *p = test->param_value;
	struct gs_read_race r = { .race = p->race };
	enum gs_kind kind = p->random ? GS_KIND_RAW : GS_KIND_COMPRESSED;
	void *page = p->random ? gs_kunit_random(test) : gs_kunit_text(test, 1);
	void *dst = gs_kunit_page(test);
	struct gs_kbk *k;
	struct gs_store *s;
	u64 done;

	s = gs_kunit_wb_store(test, "lz4", 1024, 16, &k);
	r.k = k;
	r.newer = gs_kunit_text(test, 2);
	r.second = gs_kunit_page(test);
	KUNIT_ASSERT_EQ(test, gs_store_write(s, 7, page, GFP_KERNEL), 0);
	KUNIT_ASSERT_EQ(test, gs_store_kind(s, 7, NULL), kind);

	gs_race = &r;
	kunit_activate_static_stub(test, gs_read_window, gs_read_window_stub);
	KUNIT_EXPECT_EQ(test, gs_store_read(s, 7, dst), 0);
	kunit_deactivate_static_stub(test, gs_read_window);

	/* The reader got what it started to read, pinned in the window. */
	KUNIT_EXPECT_EQ(test, r.runs, 1);
	KUNIT_EXPECT_TRUE(test, r.entry & GS_FLAG_PINNED);
	KUNIT_EXPECT_EQ(test, gs_entry_kind(r.entry), kind);
	KUNIT_EXPECT_EQ(test, r.ret, p->race == GS_RACE_WB_FAILS ? -EIO : 0);
	KUNIT_EXPECT_MEMEQ(test, dst, page, PAGE_SIZE);
	/* Nothing stays pinned, and no cluster is held for a reader. */
	KUNIT_EXPECT_FALSE(test, gs_store_entry(s, 7) & GS_FLAG_PINNED);
	gs_kunit_expect_unpinned(test, s);
	/* The pin kept the cluster alive, even with no slot in use. */
	KUNIT_EXPECT_EQ(test, r.clusters, 1);

	switch (p->race) {
	case GS_RACE_FREE:
		KUNIT_EXPECT_EQ(test, gs_store_entry(s, 7), 0UL);
		KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_SLOTS_USED), 0);
		KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_COMPR_BYTES), 0);
		/* The reader freed the object: the pool is empty. */
		KUNIT_EXPECT_EQ(test, gs_store_pool_pages(s), 0UL);
		/* And with the last pin went the empty cluster. */
		KUNIT_EXPECT_EQ(test, atomic_long_read(&s->stats.clusters), 0);
		break;
	case GS_RACE_FREE_REFILL:
		/* The writer used the pinned cluster: one, still alive. */
		KUNIT_EXPECT_EQ(test, gs_store_entry(s, 7), 0UL);
		KUNIT_EXPECT_EQ(test, atomic_long_read(&s->stats.clusters), 1);
		KUNIT_EXPECT_EQ(test, gs_store_read(s, 8, dst), 0);
		KUNIT_EXPECT_MEMEQ(test, dst, r.newer, PAGE_SIZE);
		KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_SLOTS_USED), 1);
		KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_HUGE_PAGES), 0);
		gs_store_free(s, 8);
		KUNIT_EXPECT_EQ(test, atomic_long_read(&s->stats.clusters), 0);
		break;
	case GS_RACE_OVERWRITE:
		KUNIT_EXPECT_EQ(test, gs_store_kind(s, 7, NULL),
				GS_KIND_COMPRESSED);
		KUNIT_EXPECT_EQ(test, gs_store_read(s, 7, dst), 0);
		KUNIT_EXPECT_MEMEQ(test, dst, r.newer, PAGE_SIZE);
		KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_SLOTS_USED), 1);
		KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_COMP_PAGES), 1);
		KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_HUGE_PAGES), 0);
		break;
	case GS_RACE_WRITEBACK:
		KUNIT_EXPECT_EQ(test, gs_store_kind(s, 7, NULL),
				GS_KIND_WRITTEN_BACK);
		KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_WB_PAGES), 1);
		KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_COMPR_BYTES), 0);
		/* The reader freed the object the writeback let go of. */
		KUNIT_EXPECT_EQ(test, gs_store_pool_pages(s), 0UL);
		KUNIT_EXPECT_EQ(test, gs_store_read(s, 7, dst), 0);
		KUNIT_EXPECT_MEMEQ(test, dst, page, PAGE_SIZE);
		KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0);
		break;
	case GS_RACE_WB_FAILS:
		/* The unpin (no lock) kept the mark made meanwhile. */
		KUNIT_EXPECT_EQ(test, gs_store_entry(s, 7),
				(r.entry & ~GS_FLAG_PINNED) | GS_FLAG_COLD);
		KUNIT_EXPECT_EQ(test, gs_store_writeback(s, GS_WB_COLD, 1, &done),
				0);
		KUNIT_EXPECT_EQ(test, done, 1ULL);
		KUNIT_EXPECT_EQ(test, gs_store_kind(s, 7, NULL),
				GS_KIND_WRITTEN_BACK);
		KUNIT_EXPECT_EQ(test, gs_store_read(s, 7, dst), 0);
		KUNIT_EXPECT_MEMEQ(test, dst, page, PAGE_SIZE);
		break;
	case GS_RACE_READER:
		KUNIT_EXPECT_MEMEQ(test, r.second, page, PAGE_SIZE);
		KUNIT_EXPECT_EQ(test, gs_store_kind(s, 7, NULL), kind);
		KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_SLOTS_USED), 1);
		break;
	}
	gs_store_free(s, 7);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_SLOTS_USED), 0);
	KUNIT_EXPECT_EQ(test, gs_store_pool_pages(s), 0UL);
}

/*
 * Read @slot in a thread of its own, bound to the CPU whose stream this
 * thread holds: true if the read finished without waiting for the stream.
 */
static bool gs_read_without_stream(struct kunit *test, struct gs_store *s,
				   u64 slot, void *dst)
{
	struct gs_read_job j = { .s = s, .slot = slot, .dst = dst };
	struct task_struct *t;
	struct gs_stream *st;
	unsigned int cpu;
	bool done;

	init_completion(&j.done);
	st = gs_stream_get(s->comp);
	for_each_possible_cpu(cpu)
		if (per_cpu_ptr(s->comp->streams, cpu) == st)
			break;
	t = kthread_create(gs_read_job_fn, &j, "gs-kunit-read");
	if (IS_ERR(t)) {
		gs_stream_put(st);
		KUNIT_FAIL(test, "kthread_create: %ld", PTR_ERR(t));
		return false;
	}
	kthread_bind(t, cpu);
	wake_up_process(t);
	done = wait_for_completion_timeout(&j.done, 2 * HZ);
	gs_stream_put(st);
	if (!done)
		wait_for_completion(&j.done);
	KUNIT_EXPECT_EQ(test, j.ret, 0);
	return done;
}

/*
 * Only a COMPRESSED entry needs a stream: reads of EMPTY, SAME and RAW
 * slots finish while their CPU's stream is held elsewhere; a COMPRESSED
 * one waits for it.
 */
static void gs_read_no_stream(struct kunit *test)
{
	struct gs_store *s = gs_kunit_store(test, "lz4", 1024);
	void *same = gs_kunit_same(test, 0x5a5a5a5a00000001UL);
	void *random = gs_kunit_random(test);
	void *text = gs_kunit_text(test, 3);
	void *dst = gs_kunit_page(test);

	KUNIT_ASSERT_EQ(test, gs_store_write(s, 1, same, GFP_KERNEL), 0);
	KUNIT_ASSERT_EQ(test, gs_store_write(s, 2, random, GFP_KERNEL), 0);
	KUNIT_ASSERT_EQ(test, gs_store_write(s, 4, text, GFP_KERNEL), 0);
	KUNIT_ASSERT_EQ(test, gs_store_kind(s, 2, NULL), GS_KIND_RAW);
	KUNIT_ASSERT_EQ(test, gs_store_kind(s, 4, NULL), GS_KIND_COMPRESSED);

	KUNIT_EXPECT_TRUE(test, gs_read_without_stream(test, s, 1, dst));
	KUNIT_EXPECT_MEMEQ(test, dst, same, PAGE_SIZE);
	KUNIT_EXPECT_TRUE(test, gs_read_without_stream(test, s, 2, dst));
	KUNIT_EXPECT_MEMEQ(test, dst, random, PAGE_SIZE);
	KUNIT_EXPECT_TRUE(test, gs_read_without_stream(test, s, 3, dst));
	KUNIT_EXPECT_TRUE(test, !memchr_inv(dst, 0, PAGE_SIZE));
	/* The check can fail: a compressed read does wait. */
	KUNIT_EXPECT_FALSE(test, gs_read_without_stream(test, s, 4, dst));
	KUNIT_EXPECT_MEMEQ(test, dst, text, PAGE_SIZE);
}

/* ------------------------------------------- reads started, not waited for */

/* A store with @page written back at slot 5. */
static struct gs_store *gs_read_wb_page(struct kunit *test, const void *page,
					struct gs_kbk **kp)
{
	struct gs_store *s = gs_kunit_wb_store(test, "lz4", 1024, 16, kp);
	u64 done;

	KUNIT_ASSERT_EQ(test, gs_store_write(s, 5, page, GFP_KERNEL), 0);
	KUNIT_ASSERT_EQ(test, gs_store_writeback(s, GS_WB_ALL, 8, &done), 0);
	KUNIT_ASSERT_EQ(test, done, 1ULL);
	KUNIT_ASSERT_EQ(test, gs_store_kind(s, 5, NULL), GS_KIND_WRITTEN_BACK);
	return s;
}

static const struct gs_read_param gs_start_params[] = {
	{ "compressed", 0, false },
	{ "raw", 0, true },
};

KUNIT_ARRAY_PARAM(gs_start, gs_start_params, gs_read_param_desc);

/*
 * A written-back page is read without waiting: started, ended later
 * from process context, unpinned, counted; a pool page is read at once.
 */
static void gs_read_start_backing(struct kunit *test)
{
	const struct gs_read_param *p = test->param_value;
	void *page = p->random ? gs_kunit_random(test) : gs_kunit_text(test, 4);
	struct page *dst = alloc_page(GFP_KERNEL);
	struct gs_kunit_ended r;
	struct gs_kbk *k;
	struct gs_store *s;

	KUNIT_ASSERT_NOT_NULL(test, dst);
	s = gs_read_wb_page(test, page, &k);
	gs_kunit_ended_init(&r);
	KUNIT_EXPECT_EQ(test, gs_store_read_start(s, 5, dst, gs_kunit_ended_fn,
						  &r), GS_READ_STARTED);
	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&r.done, 5 * HZ));
	KUNIT_EXPECT_EQ(test, r.err, 0);
	KUNIT_EXPECT_EQ(test, r.calls, 1);
	KUNIT_EXPECT_FALSE(test, r.atomic);
	KUNIT_EXPECT_MEMEQ(test, page_address(dst), page, PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, atomic_read(&k->read_starts), 1);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->stats.bd_reads), 1);
	KUNIT_EXPECT_EQ(test, gs_store_entry(s, 5) & GS_FLAG_IO, 0UL);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0);

	/* A page in the pool: read at once, nothing to wait for. */
	KUNIT_ASSERT_EQ(test, gs_store_write(s, 6, page, GFP_KERNEL), 0);
	gs_kunit_ended_init(&r);
	memset(page_address(dst), 0, PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, gs_store_read_start(s, 6, dst, gs_kunit_ended_fn,
						  &r), 0);
	KUNIT_EXPECT_EQ(test, r.calls, 0);
	KUNIT_EXPECT_MEMEQ(test, page_address(dst), page, PAGE_SIZE);
	__free_page(dst);
}

/*
 * A free or an overwrite while the read is in flight: the reader gets the
 * page it started to read, the backing slot stays allocated under the
 * read and is freed once by its end; a second read meanwhile is told to
 * take the slow path.
 */
static void gs_read_start_races(struct kunit *test)
{
	void *page = gs_kunit_text(test, 5), *newer = gs_kunit_text(test, 6);
	struct page *dst = alloc_page(GFP_KERNEL);
	struct gs_backing *bk;
	struct gs_kunit_ended r;
	struct gs_kbk *k;
	struct gs_store *s;
	int round;

	KUNIT_ASSERT_NOT_NULL(test, dst);
	for (round = 0; round < 2; round++) {
		s = gs_read_wb_page(test, page, &k);
		bk = s->bk;
		k->defer_reads = true;
		gs_kunit_ended_init(&r);
		KUNIT_ASSERT_EQ(test, gs_store_read_start(s, 5, dst,
							  gs_kunit_ended_fn, &r),
				GS_READ_STARTED);
		KUNIT_EXPECT_TRUE(test, gs_store_entry(s, 5) & GS_FLAG_IO);
		KUNIT_EXPECT_EQ(test, gs_store_read_start(s, 5, dst,
							  gs_kunit_ended_fn, &r),
				-EAGAIN);
		if (round == 0) {
			gs_store_free(s, 5);
		} else {
			KUNIT_EXPECT_EQ(test, gs_store_write(s, 5, newer,
							     GFP_KERNEL), 0);
		}
		/* Pinned: the backing slot is not given back yet. */
		KUNIT_EXPECT_EQ(test, gs_backing_used(bk), 1ULL);
		gs_kbk_end_read(bk);
		KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&r.done,
								    5 * HZ));
		gs_kunit_wb_settle(s);
		KUNIT_EXPECT_EQ(test, r.err, 0);
		KUNIT_EXPECT_MEMEQ(test, page_address(dst), page, PAGE_SIZE);
		KUNIT_EXPECT_EQ(test, gs_backing_used(bk), 0ULL);
		KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0);
		KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_WB_PAGES), 0);
		KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_SLOTS_USED),
				round);
	}
	__free_page(dst);
}

/* A failed read ends with -EIO and leaves the entry as it was. */
static void gs_read_start_error(struct kunit *test)
{
	void *page = gs_kunit_text(test, 7);
	struct page *dst = alloc_page(GFP_KERNEL);
	struct gs_kunit_ended r;
	struct gs_kbk *k;
	struct gs_store *s;

	KUNIT_ASSERT_NOT_NULL(test, dst);
	s = gs_read_wb_page(test, page, &k);
	atomic_set(&k->fail_reads, 1);
	gs_kunit_ended_init(&r);
	KUNIT_ASSERT_EQ(test, gs_store_read_start(s, 5, dst, gs_kunit_ended_fn,
						  &r), GS_READ_STARTED);
	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&r.done, 5 * HZ));
	KUNIT_EXPECT_EQ(test, r.err, -EIO);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->stats.bd_read_errors), 1);
	KUNIT_EXPECT_EQ(test, gs_store_entry(s, 5) & GS_FLAG_IO, 0UL);
	KUNIT_EXPECT_EQ(test, gs_store_kind(s, 5, NULL), GS_KIND_WRITTEN_BACK);
	/* The page is still there. */
	gs_kunit_ended_init(&r);
	KUNIT_ASSERT_EQ(test, gs_store_read_start(s, 5, dst, gs_kunit_ended_fn,
						  &r), GS_READ_STARTED);
	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&r.done, 5 * HZ));
	KUNIT_EXPECT_EQ(test, r.err, 0);
	KUNIT_EXPECT_MEMEQ(test, page_address(dst), page, PAGE_SIZE);
	__free_page(dst);
}

/*
 * A page the backing device returns changed fails its check: the read
 * ends with -EIO, counted, the entry as it was; it reads again once the
 * device returns what was written.
 */
static void gs_read_start_corrupt(struct kunit *test)
{
	const struct gs_read_param *param = test->param_value;
	void *page = param->random ? gs_kunit_random(test) :
				  gs_kunit_text(test, 7);
	struct page *dst = alloc_page(GFP_KERNEL);
	struct gs_kunit_ended r;
	struct gs_kbk *k;
	struct gs_store *s;
	u8 *byte;

	KUNIT_ASSERT_NOT_NULL(test, dst);
	s = gs_read_wb_page(test, page, &k);
	byte = k->mem + gs_entry_value(gs_store_entry(s, 5)) * PAGE_SIZE + 1;
	*byte ^= 1;
	gs_kunit_ended_init(&r);
	KUNIT_ASSERT_EQ(test, gs_store_read_start(s, 5, dst, gs_kunit_ended_fn,
						  &r), GS_READ_STARTED);
	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&r.done, 5 * HZ));
	KUNIT_EXPECT_EQ(test, r.err, -EIO);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->stats.bd_sum_errors), 1);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->stats.bd_read_errors), 1);
	KUNIT_EXPECT_EQ(test, gs_store_entry(s, 5) & GS_FLAG_IO, 0UL);
	KUNIT_EXPECT_EQ(test, gs_store_kind(s, 5, NULL), GS_KIND_WRITTEN_BACK);
	*byte ^= 1;
	gs_kunit_ended_init(&r);
	KUNIT_ASSERT_EQ(test, gs_store_read_start(s, 5, dst, gs_kunit_ended_fn,
						  &r), GS_READ_STARTED);
	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&r.done, 5 * HZ));
	KUNIT_EXPECT_EQ(test, r.err, 0);
	KUNIT_EXPECT_MEMEQ(test, page_address(dst), page, PAGE_SIZE);
	__free_page(dst);
}

/* Stopping the tier (reset, destroy) waits for reads in flight. */
static void gs_read_start_stop_waits(struct kunit *test)
{
	void *page = gs_kunit_text(test, 8);
	struct page *dst = alloc_page(GFP_KERNEL);
	struct gs_stop_job j;
	struct gs_kunit_ended r;
	struct task_struct *t;
	struct gs_kbk *k;

	KUNIT_ASSERT_NOT_NULL(test, dst);
	j.s = gs_read_wb_page(test, page, &k);
	k->defer_reads = true;
	gs_kunit_ended_init(&r);
	KUNIT_ASSERT_EQ(test, gs_store_read_start(j.s, 5, dst,
						  gs_kunit_ended_fn, &r),
			GS_READ_STARTED);
	init_completion(&j.done);
	t = kthread_run(gs_stop_job_fn, &j, "gs-kunit-stop");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	/* The check can fail: without the wait it would be done at once. */
	KUNIT_EXPECT_FALSE(test, wait_for_completion_timeout(&j.done, HZ / 5));
	gs_kbk_end_read(j.s->bk);
	KUNIT_EXPECT_TRUE(test, wait_for_completion_timeout(&j.done, 5 * HZ));
	KUNIT_EXPECT_TRUE(test, wait_for_completion_timeout(&r.done, 5 * HZ));
	KUNIT_EXPECT_MEMEQ(test, page_address(dst), page, PAGE_SIZE);
	__free_page(dst);
}

/* ------------------------------------------- the same, on two CPUs */

#define GS_RC_BASE	(GS_CLUSTER_SLOTS - 12)	/* 12 slots in each of two */
#define GS_RC_SLOTS	24
#define GS_RC_READS	3000
/*
 * Operations the other thread must do meanwhile: a tenth of the reads
 * (it did 1044 to 3322 beside 3000 under the sanitizers).
 */
#define GS_RC_OPS	(GS_RC_READS / 10)
/*
 * Reads that must have pinned an object, each the other thread's chance
 * to free it under the reader: fewer than GS_RC_OPS, as most reads find
 * their slot written back or empty (the other thread writes back four
 * pages in one of six operations and frees in two): 129 and 157 of 3000
 * under the sanitizers.
 */
#define GS_RC_PINNED	(GS_RC_READS / 50)

struct gs_read_conc {
	struct gs_store *s;
	/* The reader's pinned windows; each operation of the other thread. */
	struct gs_overlap rd, op;
	unsigned int rd_win;
	struct task_struct *reader;	/* the test's thread */
	bool rd_in;		/* the stub entered a window: read returns */
	long pinned;		/* reads that pinned a pool object */
	long changed;		/* ... whose slot changed under the pin */
	long ops;
	atomic_t bad;		/* reads that returned something never written */
	atomic_t errors;	/* failed stores, reads, writebacks */
	bool stop;
	struct completion done;
};

static struct gs_read_conc *gs_conc;

/*
 * The unlocked window of a read of the test's thread opens, and stays
 * open until the other thread starts an operation, for at most 2 ms: a
 * free, overwrite or writeback of a slot while a read has it pinned is
 * the race this test is for, and the window of a read alone is too short
 * to see one begin more than now and then.
 */
static void gs_read_conc_window(struct gs_store *s, u64 slot)
{
	struct gs_read_conc *c = gs_conc;

	/* The other thread reads too: its reads are its own windows. */
	if (current != c->reader)
		return;
	c->rd_in = true;
	c->pinned++;
	c->rd_win = gs_overlap_hold(&c->rd, &c->op);
}

/*
 * Whether the reads went on long enough: both sides overlapped, the
 * other thread did @min_ops operations, this one @min_pinned pinned reads.
 */
static bool gs_read_conc_met(struct gs_read_conc *c, long min_ops,
			     long min_pinned)
{
	return gs_overlap_enough(&c->rd, GS_OVERLAP_PCT) &&
	       gs_overlap_enough(&c->op, GS_OVERLAP_PCT) &&
	       READ_ONCE(c->ops) >= min_ops && c->pinned >= min_pinned;
}

/* The end of a read of the test's thread: its window, if one opened. */
static void gs_read_conc_turn_end(struct gs_read_conc *c)
{
	if (c->rd_in) {
		c->rd_in = false;
		gs_overlap_exit(&c->rd, c->rd_win);
	}
	cond_resched();
}

/*
 * Free, overwrite (text or incompressible, version v of the slot), write
 * back, read as a second reader, or empty the first cluster's half and
 * write one slot of it again: slots the reader reads meanwhile.
 */
static int gs_read_conc_fn(void *arg)
{
	struct gs_read_conc *c = arg;
	void *buf = kmalloc(PAGE_SIZE, GFP_KERNEL);
	void *tmp = kmalloc(PAGE_SIZE, GFP_KERNEL);
	unsigned int win, v = 0;
	u64 slot, done;
	int ret;

	while (buf && tmp && !READ_ONCE(c->stop)) {
		ret = 0;
		slot = GS_RC_BASE + get_random_u32_below(GS_RC_SLOTS);
		win = gs_overlap_enter_vs(&c->op, &c->rd);
		switch (get_random_u32_below(6)) {
		case 0:
		case 1:
			v++;
			gs_kunit_fill_version(buf, slot * 1000 + v % 1000,
					      v & 1);
			ret = gs_store_write(c->s, slot, buf, GFP_KERNEL);
			break;
		case 2:
			gs_store_free(c->s, slot);
			break;
		case 3:
			ret = gs_store_writeback(c->s, GS_WB_ALL, 4, &done);
			if (ret == -ENOSPC)
				ret = 0;
			break;
		case 4:
			ret = gs_store_read(c->s, slot, buf);
			if (!ret && !gs_kunit_version_valid(slot, buf, tmp))
				atomic_inc(&c->bad);
			break;
		default:
			gs_store_free_range(c->s, GS_RC_BASE, 12);
			gs_kunit_fill_version(buf, slot * 1000 + 999, false);
			ret = gs_store_write(c->s, slot, buf, GFP_KERNEL);
			break;
		}
		gs_racer_turn_end(&c->op, win, ret, &c->errors, &c->ops);
	}
	return gs_racer_end(buf, tmp, &c->errors, &c->done);
}

/*
 * The races of gs_read_pinned_race() at random, on two CPUs: this thread
 * reads 24 slots (over two clusters) holding text and incompressible
 * pages, each read of a pool object its window (opened by the stub of
 * gs_read_window(), closed when the read returns), while another thread
 * frees, overwrites, writes back, reads and empties a cluster. Every read
 * returns a version that was written to its slot, or zeroes; nothing
 * stays pinned, the maps agree, the counters balance, and once all is
 * freed the pool, the backing store and the index are empty (KASAN sees
 * an object freed twice or used after its free).
 */
static void gs_read_pinned_concurrent(struct kunit *test)
{
	void *buf = gs_kunit_page(test), *tmp = gs_kunit_page(test);
	struct gs_read_conc *c;
	struct task_struct *t;
	struct gs_kbk *k;
	struct gs_store *s;
	u64 slot;
	int i;

	c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c);
	s = gs_kunit_wb_store(test, "lz4", 2 * GS_CLUSTER_SLOTS, 64, &k);
	c->s = s;
	init_completion(&c->done);
	for (i = 0; i < GS_RC_SLOTS; i++) {
		slot = GS_RC_BASE + i;
		gs_kunit_fill_version(buf, slot * 1000, i & 1);
		KUNIT_ASSERT_EQ(test, gs_store_write(s, slot, buf, GFP_KERNEL),
				0);
	}

	c->reader = current;
	gs_conc = c;
	kunit_activate_static_stub(test, gs_read_window, gs_read_conc_window);
	t = kthread_run(gs_read_conc_fn, c, "gs-kunit-race");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	for (i = 0; gs_overlap_more(i, GS_RC_READS,
				    gs_read_conc_met(c, GS_RC_OPS, GS_RC_PINNED));
	     i++) {
		slot = GS_RC_BASE + get_random_u32_below(GS_RC_SLOTS);
		if (gs_store_read(s, slot, buf))
			atomic_inc(&c->errors);
		else if (!gs_kunit_version_valid(slot, buf, tmp))
			atomic_inc(&c->bad);
		gs_read_conc_turn_end(c);
	}
	gs_overlap_close(&c->rd, &c->op);
	WRITE_ONCE(c->stop, true);
	wait_for_completion(&c->done);
	kunit_deactivate_static_stub(test, gs_read_window);

	kunit_info(test, "%d reads, %ld of them pinned; %ld operations; %d backing writes\n",
		   i, c->pinned, c->ops, atomic_read(&k->writes));
	gs_overlap_expect(test, &c->rd, "pinned reads against the other thread",
			  GS_OVERLAP_PCT, c->ops, GS_RC_OPS);
	gs_overlap_expect(test, &c->op, "frees, overwrites, writebacks against pinned reads",
			  GS_OVERLAP_PCT, c->pinned, GS_RC_PINNED);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->errors), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->bad), 0);
	KUNIT_EXPECT_GT(test, c->pinned, 0L);
	gs_kunit_expect_unpinned(test, s);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0L);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_SLOTS_USED),
			gs_stat_read(&s->stats, GS_STAT_SAME_PAGES) +
			gs_stat_read(&s->stats, GS_STAT_COMP_PAGES) +
			gs_stat_read(&s->stats, GS_STAT_HUGE_PAGES) +
			gs_stat_read(&s->stats, GS_STAT_WB_PAGES));
	for (i = 0; i < GS_RC_SLOTS; i++) {
		slot = GS_RC_BASE + i;
		KUNIT_EXPECT_EQ(test, gs_store_read(s, slot, buf), 0);
		KUNIT_EXPECT_TRUE(test, gs_kunit_version_valid(slot, buf, tmp));
	}
	gs_store_free_range(s, 0, 2 * GS_CLUSTER_SLOTS);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_SLOTS_USED), 0);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_COMPR_BYTES), 0);
	KUNIT_EXPECT_EQ(test, gs_store_pool_pages(s), 0UL);
	KUNIT_EXPECT_EQ(test, gs_backing_used(s->bk), 0ULL);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->stats.clusters), 0);
	KUNIT_EXPECT_TRUE(test, gs_kunit_index_empty(s));
}

/* ----------------------------- one slot, its pin against its free */

#define GS_RS_SLOT	(GS_CLUSTER_SLOTS + 7)
/*
 * Pinned reads: the other thread frees or writes the slot in each. Reads
 * that find it empty (between a free and its write) do not count, up to
 * GS_RS_READS_MAX reads in all.
 */
#define GS_RS_PINS	500
#define GS_RS_READS_MAX	(100 * GS_RS_PINS)

/*
 * A pinned read of the slot, its window: open until the other thread's
 * free or write has changed the entry under the pin, 2 ms at most.
 */
static void gs_read_same_window(struct gs_store *s, u64 slot)
{
	struct gs_read_conc *c = gs_conc;
	unsigned long e;
	int i;

	if (current != c->reader)
		return;
	e = gs_store_entry(s, slot);
	c->rd_in = true;
	c->pinned++;
	c->rd_win = gs_overlap_enter_vs(&c->rd, &c->op);
	for (i = 0; i < 400 && gs_store_entry(s, slot) == e; i++) {
		udelay(5);
		if (!(i & 3))
			gs_overlap_check(&c->rd, c->rd_win);
		/* The other thread may be waiting for this CPU. */
		cond_resched();
	}
	if (gs_store_entry(s, slot) != e)
		c->changed++;
}

/*
 * In turn, each in a window once the reader has the slot pinned (waited
 * for, 2 ms at most): free the slot and write it again, or write over it
 * (a text or an incompressible version, v of the slot).
 */
static int gs_read_same_fn(void *arg)
{
	struct gs_read_conc *c = arg;
	void *buf = kmalloc(PAGE_SIZE, GFP_KERNEL);
	void *tmp = kmalloc(PAGE_SIZE, GFP_KERNEL);
	unsigned int win, v = 0;
	int i, ret;

	while (buf && tmp && !READ_ONCE(c->stop)) {
		v++;
		gs_kunit_fill_version(buf, GS_RS_SLOT * 1000 + v % 1000,
				      v & 2);
		for (i = 0; i < 400 && !READ_ONCE(c->stop) &&
		     !(gs_store_entry(c->s, GS_RS_SLOT) & GS_FLAG_PINNED); i++) {
			udelay(5);
			cond_resched();
		}
		win = gs_overlap_enter_vs(&c->op, &c->rd);
		if (v & 1)
			gs_store_free(c->s, GS_RS_SLOT);
		ret = gs_store_write(c->s, GS_RS_SLOT, buf, GFP_KERNEL);
		gs_racer_turn_end(&c->op, win, ret, &c->errors, &c->ops);
	}
	return gs_racer_end(buf, tmp, &c->errors, &c->done);
}

/*
 * The race of gs_read_pinned_race() on two CPUs, on one slot: this
 * thread reads it over and over, each read of its pool object (text or
 * incompressible) pinned, its window held until the other thread, which
 * waits for the pin, then frees the slot and writes it again or writes
 * over it, has changed the entry. Every read returns zeroes or a
 * version written to the slot, byte for byte; the frees and writes land
 * on pinned reads (at least half of them, by construction); nothing
 * stays pinned, the counters balance, and once the slot is freed the
 * pool and the index are empty (KASAN sees an object freed twice, or
 * read after its free).
 */
static void gs_read_pin_free_same(struct kunit *test)
{
	void *buf = gs_kunit_page(test), *tmp = gs_kunit_page(test);
	struct gs_read_conc *c;
	struct task_struct *t;
	struct gs_store *s;
	long zeroes = 0;
	int i;

	c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c);
	s = gs_kunit_store(test, "lz4", 2 * GS_CLUSTER_SLOTS);
	c->s = s;
	init_completion(&c->done);
	gs_kunit_fill_version(buf, GS_RS_SLOT * 1000, false);
	KUNIT_ASSERT_EQ(test, gs_store_write(s, GS_RS_SLOT, buf, GFP_KERNEL),
			0);

	c->reader = current;
	gs_conc = c;
	kunit_activate_static_stub(test, gs_read_window, gs_read_same_window);
	t = kthread_run(gs_read_same_fn, c, "gs-kunit-race");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	for (i = 0; i < GS_RS_READS_MAX &&
	     gs_overlap_more(c->pinned, GS_RS_PINS,
			     gs_read_conc_met(c, GS_RS_PINS, GS_RS_PINS)); i++) {
		if (gs_store_read(s, GS_RS_SLOT, buf)) {
			atomic_inc(&c->errors);
		} else if (!gs_kunit_version_valid(GS_RS_SLOT, buf, tmp)) {
			atomic_inc(&c->bad);
		} else if (!memchr_inv(buf, 0, PAGE_SIZE)) {
			/* Freed, its write under way. */
			zeroes++;
			usleep_range(10, 20);
		}
		gs_read_conc_turn_end(c);
	}
	gs_overlap_close(&c->rd, &c->op);
	WRITE_ONCE(c->stop, true);
	wait_for_completion(&c->done);
	kunit_deactivate_static_stub(test, gs_read_window);

	kunit_info(test, "%d reads of one slot, %ld pinned, %ld of them with the slot freed or written meanwhile, %ld zeroes; %ld frees and writes\n",
		   i, c->pinned, c->changed, zeroes, c->ops);
	gs_overlap_expect(test, &c->rd, "pinned reads against frees of their slot",
			  GS_OVERLAP_PCT, c->ops, GS_RS_PINS);
	gs_overlap_expect(test, &c->op, "frees and writes against pinned reads of the slot",
			  GS_OVERLAP_PCT, c->pinned, GS_RS_PINS);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->errors), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->bad), 0);
	/* By construction, but where 2 ms were not enough. */
	KUNIT_EXPECT_GE(test, c->changed * 2, c->pinned);
	gs_kunit_expect_unpinned(test, s);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0L);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_SLOTS_USED),
			gs_stat_read(&s->stats, GS_STAT_COMP_PAGES) +
			gs_stat_read(&s->stats, GS_STAT_HUGE_PAGES));
	KUNIT_EXPECT_LE(test, gs_stat_read(&s->stats, GS_STAT_SLOTS_USED), 1);
	KUNIT_EXPECT_EQ(test, gs_store_read(s, GS_RS_SLOT, buf), 0);
	KUNIT_EXPECT_TRUE(test, gs_kunit_version_valid(GS_RS_SLOT, buf, tmp));
	gs_store_free(s, GS_RS_SLOT);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_SLOTS_USED), 0);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_COMPR_BYTES), 0);
	KUNIT_EXPECT_EQ(test, gs_store_pool_pages(s), 0UL);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->stats.clusters), 0);
	KUNIT_EXPECT_TRUE(test, gs_kunit_index_empty(s));
}

static struct kunit_case gs_read_cases[] = {
	KUNIT_CASE_PARAM(gs_read_pinned_race, gs_read_gen_params),
	KUNIT_CASE_SLOW(gs_read_pinned_concurrent),
	KUNIT_CASE_SLOW(gs_read_pin_free_same),
	KUNIT_CASE(gs_read_no_stream),
	KUNIT_CASE_PARAM(gs_read_start_backing, gs_start_gen_params),
	KUNIT_CASE(gs_read_start_races),
	KUNIT_CASE(gs_read_start_error),
	KUNIT_CASE_PARAM(gs_read_start_corrupt, gs_start_gen_params),
	KUNIT_CASE(gs_read_start_stop_waits),
	{}
};

static struct kunit_suite gs_read_suite = {
	.name = "ghostswap_read",
	.suite_init = gs_kunit_core_init,
	.suite_exit = gs_kunit_core_exit,
	.test_cases = gs_read_cases,
};

kunit_test_suite(gs_read_suite);
