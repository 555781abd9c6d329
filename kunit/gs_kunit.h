/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the ghostswap KUnit suites. */
#ifndef _GS_KUNIT_H
#define _GS_KUNIT_H

#include <kunit/resource.h>
#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/irq_work.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>
#include <linux/wait_bit.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/vmalloc.h>
#include "gs_backend.h"
#include "gs_backing.h"
#include "gs_core.h"
#include "gs_store.h"
#include "gs_writeback.h"

/*
 * Proof that a race test raced. Each thread marks its critical windows
 * with gs_overlap_enter_vs() and gs_overlap_exit(); a window counts as an
 * overlap if, at an instant while it is open (when it opens, while it is
 * held, when it closes), a thread of the other side is running inside a
 * window of its own on another CPU. Running, not only inside: a thread
 * that entered its window and was then preempted, or went to sleep on a
 * mutex or an allocation, is inside but runs nothing there, and does not
 * count.
 *
 * A window's owner cannot keep preemption off across it (what it does
 * there sleeps), so it publishes which task is inside and a sequence
 * count, odd while the window is open. The one who looks, with
 * preemption off on its own CPU, reads the count, asks the scheduler
 * whether that task is the one running on its CPU at this instant
 * (task_curr()), and reads the count again: unchanged, the task was
 * inside throughout, and running at that instant, on a CPU that is not
 * the looker's (it runs the looker) and which task_cpu() names.
 */
#define GS_OVERLAP_THREADS	8	/* in windows of one side at once */

struct gs_overlap_win {
	struct task_struct *task;	/* inside this window; NULL: free */
	atomic_long_t seq;		/* odd while it is open */
	/* Its owner's only: the side it races, and whether it overlapped. */
	struct gs_overlap *other;
	bool hit;
};

struct gs_overlap {
	struct gs_overlap_win win[GS_OVERLAP_THREADS];
	atomic_long_t windows;			/* windows entered */
	atomic_long_t overlaps;			/* ... that overlapped */
	bool closed;		/* the test decided: no more windows count */
};

/*
 * Whether a thread of @other, not the caller, is running inside a window
 * at this instant, on another CPU than the caller's.
 */
static inline bool gs_overlap_running(struct gs_overlap *other)
{
	struct gs_overlap_win *w;
	struct task_struct *t;
	bool running = false;
	unsigned int k;
	long seq;
	int cpu;

	cpu = get_cpu();
	/* A task_struct read here outlives the grace period. */
	rcu_read_lock();
	for (k = 0; k < GS_OVERLAP_THREADS && !running; k++) {
		w = &other->win[k];
		seq = atomic_long_read_acquire(&w->seq);
		if (!(seq & 1))
			continue;
		t = READ_ONCE(w->task);
		if (!t || t == current || task_cpu(t) == cpu || !task_curr(t))
			continue;
		/* The count read again after the task's state, not before. */
		smp_rmb();
		running = atomic_long_read(&w->seq) == seq;
	}
	rcu_read_unlock();
	put_cpu();
	return running;
}

/* Window @k of @o: does the other side run inside one now? Counted once. */
static inline void gs_overlap_check(struct gs_overlap *o, unsigned int k)
{
	struct gs_overlap_win *w;

	if (k >= GS_OVERLAP_THREADS)
		return;
	w = &o->win[k];
	if (!w->hit && gs_overlap_running(w->other)) {
		w->hit = true;
		atomic_long_inc(&o->overlaps);
	}
}

/*
 * Enter a window of @o against @other (@o itself, or the windows of the
 * other side of a race). Returns what gs_overlap_exit() wants back.
 */
static inline unsigned int gs_overlap_enter_vs(struct gs_overlap *o,
					       struct gs_overlap *other)
{
	struct gs_overlap_win *w;
	unsigned int k;

	/* After the test's decision, a window proves nothing either way. */
	if (READ_ONCE(o->closed))
		return GS_OVERLAP_THREADS;
	for (k = 0; k < GS_OVERLAP_THREADS; k++)
		if (!cmpxchg(&o->win[k].task, NULL, current))
			break;
	if (WARN_ON_ONCE(k == GS_OVERLAP_THREADS)) {
		atomic_long_inc(&o->windows);
		return k;
	}
	w = &o->win[k];
	w->other = other;
	w->hit = false;
	/*
	 * Open (fully ordered: after the task is in), then counted: one who
	 * sees the count change (gs_overlap_linger()) finds it open.
	 */
	atomic_long_inc_return(&w->seq);
	atomic_long_inc(&o->windows);
	gs_overlap_check(o, k);
	return k;
}

/*
 * The test decided to stop (its counts are enough, or it went on as long
 * as it may): windows of @a and @b (NULL, or @a itself, for a race of one
 * side) entered from now on are not counted. Without it, a side that goes
 * on until it sees the stop adds windows the other side no longer runs
 * against, and a count that met the minimum at the decision falls under
 * it by the end (87 of 906, 9.6%, where 10% had been met).
 */
static inline void gs_overlap_close(struct gs_overlap *a, struct gs_overlap *b)
{
	WRITE_ONCE(a->closed, true);
	if (b)
		WRITE_ONCE(b->closed, true);
}

/* Enter a window; returns what gs_overlap_exit() wants back. */
static inline unsigned int gs_overlap_enter(struct gs_overlap *o)
{
	return gs_overlap_enter_vs(o, o);
}

static inline void gs_overlap_exit(struct gs_overlap *o, unsigned int k)
{
	struct gs_overlap_win *w = &o->win[k];

	if (k >= GS_OVERLAP_THREADS)
		return;
	gs_overlap_check(o, k);
	atomic_long_inc_return(&w->seq);
	/* Closed (even) before the slot is free for another thread. */
	smp_store_release(&w->task, NULL);
}

/*
 * Keep window @k of @o open until the other side starts a new window of
 * its own, for at most 2 ms, looking for it running meanwhile: a window
 * too short to see the other side begin anything but now and then
 * proves little.
 */
static inline void gs_overlap_linger(struct gs_overlap *o, unsigned int k)
{
	struct gs_overlap *other;
	long started;
	int i;

	if (k >= GS_OVERLAP_THREADS)
		return;
	other = o->win[k].other;
	started = atomic_long_read(&other->windows);
	for (i = 0; i < 2000 &&
	     atomic_long_read_acquire(&other->windows) == started; i++) {
		udelay(1);
		if (!(i & 7))
			gs_overlap_check(o, k);
	}
	gs_overlap_check(o, k);
}

/*
 * Wait, for at most 2 ms, until a thread of @other runs inside a window
 * on another CPU, giving this CPU up meanwhile (the other may be waiting
 * for it): what follows at once lands in that window, unless it closes
 * first.
 */
static inline void gs_overlap_await(struct gs_overlap *other)
{
	u64 end = local_clock() + 2 * NSEC_PER_MSEC;

	while (!gs_overlap_running(other) && local_clock() < end) {
		cpu_relax();
		cond_resched();
	}
}

/*
 * In window @k of @o: wait until the other side runs in a window of its
 * own (gs_overlap_await()), and count it. What this thread does next in
 * its window begins in the other's.
 */
static inline void gs_overlap_await_in(struct gs_overlap *o, unsigned int k)
{
	if (k >= GS_OVERLAP_THREADS)
		return;
	gs_overlap_await(o->win[k].other);
	gs_overlap_check(o, k);
}

/* Enter a window and linger in it; returns what gs_overlap_exit() wants. */
static inline unsigned int gs_overlap_hold(struct gs_overlap *o,
					   struct gs_overlap *other)
{
	unsigned int k = gs_overlap_enter_vs(o, other);

	gs_overlap_linger(o, k);
	return k;
}

/*
 * What a race test asks of each side: GS_OVERLAP_PCT percent of its
 * windows overlapped (a case may ask less, and says why), and a number
 * of operations of the other side, so that neither ran nearly alone. A
 * case that falls short after its operations goes on, up to
 * GS_OVERLAP_MORE times as many, then fails with its figures.
 */
#define GS_OVERLAP_PCT		10
#define GS_OVERLAP_MORE		10

/* Whether @pct percent of the windows of @o overlapped, or more. */
static inline bool gs_overlap_enough(struct gs_overlap *o, unsigned int pct)
{
	long n = atomic_long_read(&o->windows);

	return n && atomic_long_read(&o->overlaps) * 100 >= n * pct;
}

/*
 * Whether a race test goes on after @i of its @n operations: up to @n,
 * and on while what it asks is not @met, up to GS_OVERLAP_MORE * @n.
 */
static inline bool gs_overlap_more(long i, long n, bool met)
{
	return i < n || (!met && i < GS_OVERLAP_MORE * n);
}

/*
 * The test's line of proof: how many windows of @o overlapped one of the
 * other side running on another CPU, and how many operations the other
 * side did (@ops). Fewer than @pct percent, or fewer than @min_ops, is a
 * failure: the race was not run, or hardly.
 */
static inline void gs_overlap_expect(struct kunit *test, struct gs_overlap *o,
				     const char *what, unsigned int pct,
				     long ops, long min_ops)
{
	long n = atomic_long_read(&o->windows);
	long hit = atomic_long_read(&o->overlaps);

	kunit_info(test, "%s: %ld of %ld windows overlapped another CPU's running one (%ld%%, %u%% wanted); %ld operations of the other side (%ld wanted); %u CPUs online\n",
		   what, hit, n, n ? hit * 100 / n : 0, pct, ops, min_ops,
		   num_online_cpus());
	KUNIT_EXPECT_TRUE_MSG(test, gs_overlap_enough(o, pct),
			      "%s: %ld of %ld windows overlapped, %u%% wanted; %ld operations of the other side",
			      what, hit, n, pct, ops);
	KUNIT_EXPECT_GE_MSG(test, ops, min_ops,
			    "%s: %ld operations of the other side, %ld wanted; %ld of %ld windows overlapped",
			    what, ops, min_ops, hit, n);
}

/*
 * The other thread of a race test does one operation a turn, in a window
 * of @o: the turn ends with the window, an error counted if @ret says so,
 * and a chance for the test's thread to run where there is one CPU.
 */
static inline void gs_racer_turn_end(struct gs_overlap *o, unsigned int win,
				     int ret, atomic_t *errors, long *ops)
{
	gs_overlap_exit(o, win);
	if (ret)
		atomic_inc(errors);
	/* Read by the test's thread while this one runs. */
	WRITE_ONCE(*ops, *ops + 1);
	cond_resched();
}

/*
 * ... and ends by freeing its two page buffers (one it could not allocate
 * is an error: the race did not run) and telling the test.
 */
static inline int gs_racer_end(void *buf, void *tmp, atomic_t *errors,
			       struct completion *done)
{
	if (!buf || !tmp)
		atomic_inc(errors);
	kfree(buf);
	kfree(tmp);
	complete(done);
	return 0;
}

/*
 * suite_init and suite_exit of every suite that makes stores: the slab
 * caches every store shares.
 */
static inline int gs_kunit_core_init(struct kunit_suite *suite)
{
	return gs_core_init();
}

static inline void gs_kunit_core_exit(struct kunit_suite *suite)
{
	gs_core_exit();
}

KUNIT_DEFINE_ACTION_WRAPPER(gs_kunit_store_destroy, gs_store_destroy,
			    struct gs_store *);

/* A store that is destroyed when the test ends, even if it fails. */
static inline struct gs_store *gs_kunit_store(struct kunit *test,
					      const char *alg, u64 nr_slots)
{
	struct gs_store *s = gs_store_create(alg, nr_slots);
	int ret;

	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(s), "gs_store_create(%s): %d",
			       alg, PTR_ERR_OR_ZERO(s));
	ret = kunit_add_action_or_reset(test, gs_kunit_store_destroy, s);
	KUNIT_ASSERT_EQ(test, ret, 0);
	return s;
}

static inline void *gs_kunit_page(struct kunit *test)
{
	void *p = kunit_kmalloc(test, PAGE_SIZE, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, p);
	return p;
}

/* Every 64-bit word equal to @word: stored inline as SAME. */
static inline void *gs_kunit_same(struct kunit *test, unsigned long word)
{
	void *p = gs_kunit_page(test);

	memset64(p, word, PAGE_SIZE / 8);
	return p;
}

/* Random bytes: incompressible, stored RAW. */
static inline void *gs_kunit_random(struct kunit *test)
{
	void *p = gs_kunit_page(test);

	get_random_bytes(p, PAGE_SIZE);
	return p;
}

/* Text-like content, a pure function of @seed: compresses well. */
static inline void *gs_kunit_text(struct kunit *test, u32 seed)
{
	static const char *const words[] = {
		"swap ", "page ", "slot ", "cluster ", "memory ", "the ",
		"table ", "entry\n",
	};
	char *p = gs_kunit_page(test);
	u32 x = seed * 2654435761u + 1;
	size_t n = 0, len;

	while (n < PAGE_SIZE) {
		x = x * 1103515245u + 12345;
		len = min(strlen(words[(x >> 16) & 7]), PAGE_SIZE - n);
		memcpy(p + n, words[(x >> 16) & 7], len);
		n += len;
	}
	return p;
}

/* A backend's context and its parameters, given back in that order. */
struct gs_kunit_comp {
	struct gs_comp_params p;
	void *ctx;
};

static inline void gs_kunit_comp_release(void *arg)
{
	struct gs_kunit_comp *c = arg;

	if (!IS_ERR_OR_NULL(c->ctx))
		c->p.be->ctx_destroy(&c->p, c->ctx);
	gs_comp_params_release(&c->p);
}

/*
 * The parameters of @alg with its defaults, and a context of them: both
 * given back when the test ends.
 */
static inline struct gs_kunit_comp *gs_kunit_comp(struct kunit *test,
						  const char *alg)
{
	struct gs_kunit_comp *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, c);
	KUNIT_ASSERT_EQ(test, gs_comp_params_init(&c->p, alg), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							gs_kunit_comp_release,
							c), 0);
	KUNIT_ASSERT_EQ(test, gs_comp_params_setup(&c->p), 0);
	c->ctx = c->p.be->ctx_create(&c->p, NUMA_NO_NODE);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(c->ctx), "ctx_create: %ld",
			       PTR_ERR(c->ctx));
	return c;
}

/*
 * A backing store in memory, with fault injection and a hook that runs in
 * the middle of each I/O (after the data is chosen, before it is moved):
 * what a test does there races with the I/O deterministically.
 */
struct gs_kbk {
	u8 *mem;
	u64 nr;
	atomic_t writes;	/* write requests */
	atomic_t reads;
	atomic_t fail_writes;	/* fail the next N write requests */
	atomic_t fail_reads;
	void (*hook)(struct gs_kbk *k, bool write, u64 slot);
	void *arg;		/* for the hook */
	int hook_runs;		/* how many more I/Os call the hook */
	atomic_t *released;	/* if set: counts the release */
	/*
	 * Asynchronous reads (read_start): done at once, or, with
	 * defer_reads, held until gs_kbk_end_read().
	 */
	atomic_t read_starts;
	bool defer_reads;
	struct gs_bk_io *held_io;
	struct page *held_page;
	u64 held_slot;
	/*
	 * Writes and reads of several pages started without waiting
	 * (submit): done at once, or, with defer_writes or
	 * defer_run_reads, held until gs_kbk_end_submit().
	 */
	atomic_t submit_writes;
	atomic_t submit_reads;	/* reads of several pages (submit) */
	bool defer_writes;
	bool defer_run_reads;
	bool held_write;
	/*
	 * If set, a submit that is not held returns only once this is
	 * completed: after the end it called ran, as a bio may end on
	 * another CPU before its submitter goes on.
	 */
	struct completion *submit_wait;
	struct gs_bk_io *held_wio;
	struct page *held_pages[32];
	unsigned int held_nr;
	u64 held_wslot;
	/*
	 * Discards: requests, slots; each waits for the gate if set, and
	 * fails with EIO (discarding nothing) if fail_discards is.
	 */
	atomic_t discards;
	atomic_t discarded;
	struct completion *discard_gate;
	bool fail_discards;
	/*
	 * The I/O started without waiting and not held ends from a hard
	 * interrupt (an irq_work, waited for), as a device's does.
	 */
	bool end_in_irq;
};

struct gs_kbk_irq_end {
	struct irq_work work;
	struct gs_bk_io *io;
};

static inline void gs_kbk_irq_end_fn(struct irq_work *work)
{
	struct gs_kbk_irq_end *e = container_of(work, struct gs_kbk_irq_end,
						work);

	e->io->end(e->io);
}

/* End @io where the store's settings say. */
static inline void gs_kbk_io_end(struct gs_kbk *k, struct gs_bk_io *io)
{
	struct gs_kbk_irq_end e = {
		.work = IRQ_WORK_INIT_HARD(gs_kbk_irq_end_fn),
		.io = io,
	};

	if (!k->end_in_irq) {
		io->end(io);
		return;
	}
	irq_work_queue(&e.work);
	irq_work_sync(&e.work);
}

static inline int gs_kbk_write(struct gs_backing *bk, u64 slot,
			       void *const *bufs, unsigned int nr)
{
	struct gs_kbk *k = bk->priv;
	unsigned int i;

	if (WARN_ON(slot + nr > k->nr))
		return -EIO;
	atomic_inc(&k->writes);
	if (k->hook && k->hook_runs > 0) {
		k->hook_runs--;
		k->hook(k, true, slot);
	}
	if (atomic_add_unless(&k->fail_writes, -1, 0))
		return -EIO;
	for (i = 0; i < nr; i++)
		memcpy(k->mem + (slot + i) * PAGE_SIZE, bufs[i], PAGE_SIZE);
	return 0;
}

static inline int gs_kbk_read(struct gs_backing *bk, u64 slot, void *buf)
{
	struct gs_kbk *k = bk->priv;

	if (WARN_ON(slot >= k->nr))
		return -EIO;
	atomic_inc(&k->reads);
	if (k->hook && k->hook_runs > 0) {
		k->hook_runs--;
		k->hook(k, false, slot);
	}
	if (atomic_add_unless(&k->fail_reads, -1, 0))
		return -EIO;
	memcpy(buf, k->mem + slot * PAGE_SIZE, PAGE_SIZE);
	return 0;
}

static inline int gs_kbk_read_start(struct gs_backing *bk, u64 slot,
				    struct page *page, struct gs_bk_io *io)
{
	struct gs_kbk *k = bk->priv;

	atomic_inc(&k->read_starts);
	if (k->defer_reads) {
		if (WARN_ON(k->held_io))
			return -EAGAIN;
		k->held_io = io;
		k->held_page = page;
		k->held_slot = slot;
		return 0;
	}
	io->err = gs_kbk_read(bk, slot, page_address(page));
	gs_kbk_io_end(k, io);
	return 0;
}

/* Do the read held by defer_reads now, and end it. */
static inline void gs_kbk_end_read(struct gs_backing *bk)
{
	struct gs_kbk *k = bk->priv;
	struct gs_bk_io *io = k->held_io;

	if (WARN_ON(!io))
		return;
	k->held_io = NULL;
	io->err = gs_kbk_read(bk, k->held_slot, page_address(k->held_page));
	io->end(io);
}

/* Write @nr whole pages through gs_kbk_write(). */
static inline int gs_kbk_write_pages(struct gs_backing *bk, u64 slot,
				     struct page *const *pages,
				     unsigned int nr)
{
	void *bufs[32];
	unsigned int i;

	if (WARN_ON(nr > ARRAY_SIZE(bufs)))
		return -EIO;
	for (i = 0; i < nr; i++)
		bufs[i] = page_address(pages[i]);
	return gs_kbk_write(bk, slot, bufs, nr);
}

static inline int gs_kbk_submit(struct gs_backing *bk, bool write, u64 slot,
				struct page *const *pages, unsigned int nr,
				struct gs_bk_io *io)
{
	struct gs_kbk *k = bk->priv;
	unsigned int i;

	atomic_inc(write ? &k->submit_writes : &k->submit_reads);
	if (write ? k->defer_writes : k->defer_run_reads) {
		if (WARN_ON(k->held_wio || nr > ARRAY_SIZE(k->held_pages)))
			return -EAGAIN;
		k->held_wio = io;
		memcpy(k->held_pages, pages, nr * sizeof(*pages));
		k->held_nr = nr;
		k->held_wslot = slot;
		k->held_write = write;
		return 0;
	}
	io->err = 0;
	if (write)
		io->err = gs_kbk_write_pages(bk, slot, pages, nr);
	for (i = 0; !write && i < nr && !io->err; i++)
		io->err = gs_kbk_read(bk, slot + i, page_address(pages[i]));
	gs_kbk_io_end(k, io);
	if (k->submit_wait)
		wait_for_completion(k->submit_wait);
	return 0;
}

/* Do the I/O held by defer_writes or defer_run_reads now, and end it. */
static inline void gs_kbk_end_submit(struct gs_backing *bk)
{
	struct gs_kbk *k = bk->priv;
	struct gs_bk_io *io = k->held_wio;
	unsigned int i;

	if (WARN_ON(!io))
		return;
	k->held_wio = NULL;
	io->err = 0;
	if (k->held_write)
		io->err = gs_kbk_write_pages(bk, k->held_wslot, k->held_pages,
					     k->held_nr);
	for (i = 0; !k->held_write && i < k->held_nr && !io->err; i++)
		io->err = gs_kbk_read(bk, k->held_wslot + i,
				      page_address(k->held_pages[i]));
	io->end(io);
}

/*
 * The end of an I/O started without waiting (gs_io_end_t): how it ended,
 * how often, and whether it ended outside process context.
 */
struct gs_kunit_ended {
	struct completion done;
	int err;
	int calls;
	bool atomic;		/* called outside process context */
};

static inline void gs_kunit_ended_fn(void *arg, int err)
{
	struct gs_kunit_ended *r = arg;

	r->err = err;
	r->calls++;
	r->atomic = !in_task() || irqs_disabled();
	complete(&r->done);
}

static inline void gs_kunit_ended_init(struct gs_kunit_ended *r)
{
	init_completion(&r->done);
	r->err = 1;
	r->calls = 0;
	r->atomic = false;
}

/*
 * Wait until no backing I/O started without waiting is left, the
 * worker's part included: a read's end hands the page back first and
 * leaves a backing slot its entry let go of to the worker to free.
 */
static inline void gs_kunit_wb_settle(struct gs_store *s)
{
	wait_var_event(&s->wb.inflight, !atomic_read(&s->wb.inflight));
}

/* gs_wb_stop() of a store in a thread of its own (kthread_run()). */
struct gs_stop_job {
	struct gs_store *s;
	struct completion done;
};

static inline int gs_stop_job_fn(void *arg)
{
	struct gs_stop_job *j = arg;

	gs_wb_stop(j->s);
	complete(&j->done);
	return 0;
}

/* A read at once (gs_store_read()), in a thread of its own. */
struct gs_read_job {
	struct gs_store *s;
	u64 slot;
	void *dst;
	int ret;
	struct completion done;
};

static inline int gs_read_job_fn(void *arg)
{
	struct gs_read_job *j = arg;

	j->ret = gs_store_read(j->s, j->slot, j->dst);
	complete(&j->done);
	return 0;
}

/* A discarded slot reads as 0x5a bytes. */
static inline int gs_kbk_discard(struct gs_backing *bk, u64 slot, u64 nr)
{
	struct gs_kbk *k = bk->priv;

	if (WARN_ON(slot + nr > k->nr))
		return -EIO;
	if (k->discard_gate)
		wait_for_completion(k->discard_gate);
	if (k->fail_discards)
		return -EIO;
	memset(k->mem + slot * PAGE_SIZE, 0x5a, nr * PAGE_SIZE);
	atomic_inc(&k->discards);
	atomic_add(nr, &k->discarded);
	return 0;
}

static inline void gs_kbk_release(struct gs_backing *bk)
{
	struct gs_kbk *k = bk->priv;

	if (k->released)
		atomic_inc(k->released);
	vfree(k->mem);
	kfree(k);
}

static const struct gs_backing_ops gs_kbk_ops = {
	.write = gs_kbk_write,
	.read = gs_kbk_read,
	.read_start = gs_kbk_read_start,
	.submit = gs_kbk_submit,
	.discard = gs_kbk_discard,
	.release = gs_kbk_release,
};

/* A memory backing store of @nr slots, not attached to anything. */
static inline struct gs_backing *gs_kbk_create(struct kunit *test, u64 nr,
					       struct gs_kbk **kp)
{
	struct gs_kbk *k = kzalloc(sizeof(*k), GFP_KERNEL);
	struct gs_backing *bk;

	KUNIT_ASSERT_NOT_NULL(test, k);
	k->nr = nr;
	k->mem = vzalloc(nr * PAGE_SIZE);
	KUNIT_ASSERT_NOT_NULL(test, k->mem);
	bk = gs_backing_create(&gs_kbk_ops, k, nr);
	KUNIT_ASSERT_FALSE(test, IS_ERR(bk));
	*kp = k;
	return bk;
}

/* A store with a memory backing store of @nr_bk slots attached. */
static inline struct gs_store *gs_kunit_wb_store(struct kunit *test,
						 const char *alg, u64 nr_slots,
						 u64 nr_bk, struct gs_kbk **kp)
{
	struct gs_store *s = gs_kunit_store(test, alg, nr_slots);

	KUNIT_ASSERT_EQ(test, gs_store_set_backing(s, gs_kbk_create(test,
								    nr_bk,
								    kp)), 0);
	/* Exact expectations: no writeback behind the test's back. */
	WRITE_ONCE(s->wb.use_shrinker, false);
	return s;
}

/* Text-like page @n of a series: each n gives different contents. */
/* The cluster of @ci in the store's index, NULL if none. */
static inline struct gs_cluster *gs_kunit_cluster_at(struct gs_store *s,
						     unsigned long ci)
{
	return gs_index_load(&s->clusters, ci);
}

/* Clusters in the store's index. */
static inline unsigned long gs_kunit_cluster_count(struct gs_store *s)
{
	unsigned long ci = 0, n = 0;

	while (gs_index_find(&s->clusters, &ci, ULONG_MAX)) {
		n++;
		if (ci++ == ULONG_MAX)
			break;
	}
	return n;
}

/* No cluster, and no node of the index either. */
static inline bool gs_kunit_index_empty(struct gs_store *s)
{
	/* A quiet store: nothing changes the count meanwhile. */
	return xa_empty(&s->clusters.xa) && !data_race(s->clusters.nodes);
}

/* What the index's nodes take, counted in meta_bytes with the clusters. */
static inline long gs_kunit_index_bytes(struct gs_store *s)
{
	/* A statistic of a quiet store: nothing changes it meanwhile. */
	return (long)data_race(s->clusters.nodes) * gs_index_node_bytes();
}

/*
 * With no read in flight, nothing is left pinned: no entry PINNED (its
 * object would never be freed) and no cluster held for a reader.
 */
static inline void gs_kunit_expect_unpinned(struct kunit *test,
					    struct gs_store *s)
{
	unsigned int i, pinned = 0, pins = 0;
	struct gs_cluster *cl;
	unsigned long ci = 0;

	for (; (cl = gs_cluster_next(s, &ci, ULONG_MAX)); ci++) {
		for (i = 0; i < GS_CLUSTER_SLOTS; i++)
			pinned += gs_entry_pinned(atomic_long_read(&cl->table[i]));
		pins += cl->pins;
		gs_cluster_unlock(cl);
	}
	KUNIT_EXPECT_EQ(test, pinned, 0U);
	KUNIT_EXPECT_EQ(test, pins, 0U);
}

static inline void gs_kunit_fill_text(void *p, u32 n)
{
	static const char *const words[] = {
		"alpha ", "beta ", "gamma ", "delta ", "swap ", "page ",
		"ghost ", "slot\n",
	};
	u32 x = n * 2654435761u + 7;
	size_t off = 0, len;
	char *c = p;

	off = scnprintf(c, 32, "page %u ", n);
	while (off < PAGE_SIZE) {
		x = x * 1103515245u + 12345;
		len = min(strlen(words[(x >> 16) & 7]), PAGE_SIZE - off);
		memcpy(c + off, words[(x >> 16) & 7], len);
		off += len;
	}
}

/*
 * Version @n of a page for a race test: text ("page N ...",
 * gs_kunit_fill_text(), compresses) or, with @raw, "rand N " and bytes
 * that are a pure function of N (incompressible: stored RAW). A race
 * test gives slot S versions S * 1000 + v: a read can tell whether what
 * it got was ever written to its slot.
 */
static inline void gs_kunit_fill_version(void *p, u32 n, bool raw)
{
	u64 x = n * 0x9e3779b97f4a7c15ULL + 1, *w = p;
	size_t i;

	if (!raw) {
		gs_kunit_fill_text(p, n);
		return;
	}
	for (i = 0; i < PAGE_SIZE / 8; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		w[i] = x;
	}
	scnprintf(p, 32, "rand %u ", n);
}

/*
 * @buf, read from slot @slot, is zeroes (free) or a version that
 * gs_kunit_fill_version() made for it. @tmp: a page to work in.
 */
static inline bool gs_kunit_version_valid(u64 slot, const void *buf,
					  void *tmp)
{
	char head[32], kind[8];
	unsigned int n;

	if (!memchr_inv(buf, 0, PAGE_SIZE))
		return true;
	/* Whatever the page holds, the parse stays within its head. */
	strscpy(head, buf, sizeof(head));
	if (sscanf(head, "%4s %u", kind, &n) != 2 || n / 1000 != slot)
		return false;
	if (!strcmp(kind, "page"))
		gs_kunit_fill_version(tmp, n, false);
	else if (!strcmp(kind, "rand"))
		gs_kunit_fill_version(tmp, n, true);
	else
		return false;
	return !memcmp(buf, tmp, PAGE_SIZE);
}

/* Text page i at slots base + i * step, i < n (gs_kunit_fill_text(p, i)). */
static inline void gs_kunit_fill_slots(struct kunit *test, struct gs_store *s,
				       u64 base, u64 step, int n)
{
	void *p = gs_kunit_page(test);
	int i;

	for (i = 0; i < n; i++) {
		gs_kunit_fill_text(p, i);
		KUNIT_ASSERT_EQ(test, gs_store_write(s, base + i * step, p,
						     GFP_KERNEL), 0);
	}
	kunit_kfree(test, p);
}

/* What gs_kunit_fill_slots() stored reads back. */
static inline void gs_kunit_verify_slots(struct kunit *test,
					 struct gs_store *s, u64 base, u64 step,
					 int n)
{
	void *want = gs_kunit_page(test), *got = gs_kunit_page(test);
	int i;

	for (i = 0; i < n; i++) {
		gs_kunit_fill_text(want, i);
		KUNIT_ASSERT_EQ(test, gs_store_read(s, base + i * step, got), 0);
		KUNIT_EXPECT_MEMEQ(test, got, want, PAGE_SIZE);
	}
	kunit_kfree(test, want);
	kunit_kfree(test, got);
}

#endif /* _GS_KUNIT_H */
