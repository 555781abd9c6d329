// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "ghostswap_direct": pages stored on the backing device as
 * they are, started without waiting (gs_store_write_start(), the submit
 * path's way for GS_WRITE_DIRECT pages): a run of slots on a run of
 * backing slots with one write, ended later from process context with
 * the entries installed; what it replaces given back; write errors, the
 * budget, a full device, a busy allocator, encryption; a free and an
 * overwrite while the write is in flight; a stop that waits for it. And
 * such pages read back a run at a time (gs_store_read_run_start()):
 * where a run ends, errors, a free and an overwrite during the read.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/irq_work.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include "gs_core.h"
#include "gs_store.h"
#include "gs_writeback.h"
#include "gs_kunit.h"

#define GS_DIRECT_NR	40

static void gs_direct_free_pages(void *arg)
{
	struct page **pages = arg;
	int i;

	for (i = 0; i < GS_DIRECT_NR; i++)
		if (pages[i])
			__free_page(pages[i]);
	kfree(pages);
}

/*
 * GS_DIRECT_NR pages, freed with the test: with @fill text page i
 * (gs_kunit_fill_text()) and odd ones random, else zeroes.
 */
static struct page **gs_direct_alloc(struct kunit *test, bool fill)
{
	struct page **pages = kcalloc(GS_DIRECT_NR, sizeof(*pages),
				      GFP_KERNEL);
	int i;

	KUNIT_ASSERT_NOT_NULL(test, pages);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							gs_direct_free_pages,
							pages), 0);
	for (i = 0; i < GS_DIRECT_NR; i++) {
		pages[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		KUNIT_ASSERT_NOT_NULL(test, pages[i]);
		if (fill && (i & 1))
			get_random_bytes(page_address(pages[i]), PAGE_SIZE);
		else if (fill)
			gs_kunit_fill_text(page_address(pages[i]), i);
	}
	return pages;
}

#define gs_direct_pages(test)	gs_direct_alloc(test, true)
#define gs_direct_dst(test)	gs_direct_alloc(test, false)

/* Slot @slot reads back as @page. */
static void gs_direct_expect(struct kunit *test, struct gs_store *s, u64 slot,
			     struct page *page)
{
	void *got = gs_kunit_page(test);

	KUNIT_ASSERT_EQ(test, gs_store_read(s, slot, got), 0);
	KUNIT_EXPECT_MEMEQ(test, got, page_address(page), PAGE_SIZE);
	kunit_kfree(test, got);
}

/*
 * Start writing (@write) or reading @nr pages at @slot, one call
 * (gs_store_write_start(), gs_store_read_run_start()): returns what it
 * returned, once what it started has ended.
 */
static int gs_direct_wait(struct kunit *test, struct gs_store *s, bool write,
			  u64 slot, struct page **pages, unsigned int nr,
			  struct gs_kunit_ended *r)
{
	int n;

	gs_kunit_ended_init(r);
	if (write)
		n = gs_store_write_start(s, slot, pages, nr,
					 gs_kunit_ended_fn, r);
	else
		n = gs_store_read_run_start(s, slot, pages, nr,
					    gs_kunit_ended_fn, r);
	if (n > 0)
		KUNIT_EXPECT_TRUE(test, wait_for_completion_timeout(&r->done,
								    5 * HZ));
	return n;
}

#define gs_direct_start_wait(test, s, ...) \
	gs_direct_wait(test, s, true, __VA_ARGS__)
#define gs_direct_read_wait(test, s, ...) \
	gs_direct_wait(test, s, false, __VA_ARGS__)

/*
 * A run of 40 pages: 32 with one write (the most one takes), 8 with the
 * next, on consecutive backing slots; ended in process context once;
 * every page reads back; the counters and both maps agree.
 */
static void gs_direct_run(struct kunit *test)
{
	struct page **pages = gs_direct_pages(test);
	struct gs_kunit_ended r;
	struct gs_kbk *k;
	struct gs_store *s;
	u64 first;
	int i;

	s = gs_kunit_wb_store(test, "lz4", 4096, 256, &k);
	KUNIT_ASSERT_EQ(test, gs_direct_start_wait(test, s, 100, pages,
						   GS_DIRECT_NR, &r), 32);
	KUNIT_EXPECT_EQ(test, r.err, 0);
	KUNIT_EXPECT_EQ(test, r.calls, 1);
	KUNIT_EXPECT_FALSE(test, r.atomic);
	KUNIT_ASSERT_EQ(test, gs_direct_start_wait(test, s, 132, pages + 32,
						   GS_DIRECT_NR - 32, &r), 8);
	KUNIT_EXPECT_EQ(test, r.err, 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&k->submit_writes), 2);
	/* On the backing slots of their own numbers, as in a swap file. */
	first = gs_entry_value(gs_store_entry(s, 100));
	KUNIT_EXPECT_EQ(test, first, 100ULL);
	for (i = 0; i < GS_DIRECT_NR; i++) {
		KUNIT_EXPECT_EQ(test, gs_store_kind(s, 100 + i, NULL),
				GS_KIND_WRITTEN_BACK);
		KUNIT_EXPECT_EQ(test, gs_entry_value(gs_store_entry(s, 100 + i)),
				first + i);
		gs_direct_expect(test, s, 100 + i, pages[i]);
	}
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->stats.bd_writes),
			GS_DIRECT_NR);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_WB_PAGES),
			GS_DIRECT_NR);
	KUNIT_EXPECT_EQ(test, gs_backing_used(s->bk), (u64)GS_DIRECT_NR);
	/* Stored as they are: nothing compressed, nothing in the pool. */
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_COMPRESSIONS), 0);
	KUNIT_EXPECT_EQ(test, gs_store_pool_pages(s), 0UL);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0);
	/* Freed, everything goes back. */
	KUNIT_EXPECT_EQ(test, gs_store_free_range(s, 100, GS_DIRECT_NR),
			(u64)GS_DIRECT_NR);
	KUNIT_EXPECT_EQ(test, gs_backing_used(s->bk), 0ULL);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_SLOTS_USED), 0);
}

/*
 * A page goes to the backing slot of its own number where that is free,
 * else to the first free one after the last allocation; so does a page
 * whose number the device does not have.
 */
static void gs_direct_at(struct kunit *test)
{
	struct page **pages = gs_direct_pages(test);
	void *p = gs_kunit_page(test);
	struct gs_kunit_ended r;
	struct gs_kbk *k;
	struct gs_store *s;

	s = gs_kunit_wb_store(test, "lz4", 4096, 64, &k);
	KUNIT_ASSERT_EQ(test, gs_direct_start_wait(test, s, 10, pages, 2, &r),
			2);
	KUNIT_EXPECT_EQ(test, gs_entry_value(gs_store_entry(s, 11)), 11UL);
	/* 3000: past the device's end, after the last allocation. */
	KUNIT_ASSERT_EQ(test, gs_direct_start_wait(test, s, 3000, pages + 2, 1,
						   &r), 1);
	KUNIT_EXPECT_EQ(test, gs_entry_value(gs_store_entry(s, 3000)), 12UL);
	/* 12 is taken: the next free one. */
	KUNIT_ASSERT_EQ(test, gs_direct_start_wait(test, s, 12, pages + 3, 1,
						   &r), 1);
	KUNIT_EXPECT_EQ(test, gs_entry_value(gs_store_entry(s, 12)), 13UL);
	/* The synchronous way does the same. */
	memcpy(p, page_address(pages[4]), PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, gs_store_write_direct(s, 40, p, GFP_KERNEL), 0);
	KUNIT_EXPECT_EQ(test, gs_entry_value(gs_store_entry(s, 40)), 40UL);
	gs_direct_expect(test, s, 3000, pages[2]);
	gs_direct_expect(test, s, 12, pages[3]);
	gs_direct_expect(test, s, 40, pages[4]);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0);
}

/*
 * What the slots held is replaced when the entries are installed: a pool
 * object is freed, an older written-back page's backing slot too.
 */
static void gs_direct_replaces(struct kunit *test)
{
	struct page **pages = gs_direct_pages(test);
	void *text = gs_kunit_text(test, 3);
	struct gs_kunit_ended r;
	struct gs_kbk *k;
	struct gs_store *s;

	s = gs_kunit_wb_store(test, "lz4", 4096, 256, &k);
	KUNIT_ASSERT_EQ(test, gs_store_write(s, 10, text, GFP_KERNEL), 0);
	KUNIT_ASSERT_EQ(test, gs_store_kind(s, 10, NULL), GS_KIND_COMPRESSED);
	KUNIT_ASSERT_EQ(test, gs_direct_start_wait(test, s, 11, pages, 1, &r),
			1);
	/*
	 * 10 on backing slot 10; 11's own is held by its older page until
	 * the new one is installed: it takes the next free one, 12.
	 */
	KUNIT_ASSERT_EQ(test, gs_direct_start_wait(test, s, 10, pages + 2, 2,
						   &r), 1);
	KUNIT_EXPECT_EQ(test, r.err, 0);
	KUNIT_ASSERT_EQ(test, gs_direct_start_wait(test, s, 11, pages + 3, 1,
						   &r), 1);
	KUNIT_EXPECT_EQ(test, r.err, 0);
	KUNIT_EXPECT_EQ(test, gs_entry_value(gs_store_entry(s, 11)), 12UL);
	gs_direct_expect(test, s, 10, pages[2]);
	gs_direct_expect(test, s, 11, pages[3]);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_COMP_PAGES), 0);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_COMPR_BYTES), 0);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_SLOTS_USED), 2);
	KUNIT_EXPECT_EQ(test, gs_backing_used(s->bk), 2ULL);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0);
}

/*
 * A failed write ends with -EIO, counted per page; the slots it was
 * writing read as empty (what they held was replaced when it started),
 * and the backing slots and the budget go back.
 */
static void gs_direct_error(struct kunit *test)
{
	struct page **pages = gs_direct_pages(test);
	void *text = gs_kunit_text(test, 4);
	struct gs_kunit_ended r;
	struct gs_kbk *k;
	struct gs_store *s;

	s = gs_kunit_wb_store(test, "lz4", 4096, 256, &k);
	KUNIT_ASSERT_EQ(test, gs_store_write(s, 20, text, GFP_KERNEL), 0);
	KUNIT_ASSERT_EQ(test, gs_store_write(s, 30, text, GFP_KERNEL), 0);
	gs_store_set_wb_budget(s, 100);
	gs_store_set_wb_limit_enable(s, true);
	atomic_set(&k->fail_writes, 1);
	KUNIT_ASSERT_EQ(test, gs_direct_start_wait(test, s, 20, pages, 4, &r),
			4);
	KUNIT_EXPECT_EQ(test, r.err, -EIO);
	gs_kunit_wb_settle(s);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->stats.bd_write_errors), 4);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->stats.bd_writes), 0);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->wb.budget), 100);
	KUNIT_EXPECT_EQ(test, gs_backing_used(s->bk), 0ULL);
	KUNIT_EXPECT_EQ(test, gs_store_kind(s, 20, NULL), GS_KIND_EMPTY);
	KUNIT_EXPECT_EQ(test, gs_store_kind(s, 21, NULL), GS_KIND_EMPTY);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_SLOTS_USED), 1);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_WB_PAGES), 0);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_COMP_PAGES), 1);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0);
	/* Then it works, and takes from the budget. */
	KUNIT_ASSERT_EQ(test, gs_direct_start_wait(test, s, 20, pages, 4, &r),
			4);
	KUNIT_EXPECT_EQ(test, r.err, 0);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->wb.budget), 96);
	gs_direct_expect(test, s, 20, pages[0]);
}

/*
 * What cannot be had at once is -EAGAIN with nothing taken: a spent
 * budget (a part of it takes part of the run), a full device (takes what
 * fits), the allocator busy, no backing store that starts writes.
 */
static void gs_direct_cannot_start(struct kunit *test)
{
	struct page **pages = gs_direct_pages(test);
	struct gs_kunit_ended r;
	struct gs_kbk *k;
	struct gs_store *s;

	s = gs_kunit_wb_store(test, "lz4", 4096, 6, &k);
	gs_store_set_wb_budget(s, 3);
	gs_store_set_wb_limit_enable(s, true);
	KUNIT_EXPECT_EQ(test, gs_direct_start_wait(test, s, 0, pages, 8, &r),
			3);
	KUNIT_EXPECT_EQ(test, gs_direct_start_wait(test, s, 3, pages + 3, 5,
						   &r), -EAGAIN);
	KUNIT_EXPECT_EQ(test, r.calls, 0);
	gs_store_set_wb_limit_enable(s, false);

	/* Three slots are left on the device. */
	KUNIT_EXPECT_EQ(test, gs_direct_start_wait(test, s, 3, pages + 3, 5,
						   &r), 3);
	KUNIT_EXPECT_EQ(test, gs_direct_start_wait(test, s, 6, pages + 6, 2,
						   &r), -EAGAIN);

	/* An allocation in progress elsewhere: not waited for. */
	gs_store_free_range(s, 0, 6);
	mutex_lock(&s->bk->alloc_lock);
	KUNIT_EXPECT_EQ(test, gs_store_write_start(s, 0, pages, 2,
						   gs_kunit_ended_fn, &r),
			-EAGAIN);
	mutex_unlock(&s->bk->alloc_lock);
	KUNIT_EXPECT_EQ(test, gs_backing_used(s->bk), 0ULL);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_SLOTS_USED), 0);

	/* Past the end of the device, or nothing. */
	KUNIT_EXPECT_EQ(test, gs_store_write_start(s, 4095, pages, 2,
						   gs_kunit_ended_fn, &r),
			-EAGAIN);
	KUNIT_EXPECT_EQ(test, gs_store_write_start(s, 0, pages, 0,
						   gs_kunit_ended_fn, &r),
			-EAGAIN);
	KUNIT_EXPECT_EQ(test, atomic_read(&k->submit_writes), 2);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0);
}

/* No backing device: nothing to start. */
static void gs_direct_no_backing(struct kunit *test)
{
	struct page **pages = gs_direct_pages(test);
	struct gs_kunit_ended r;
	struct gs_store *s = gs_kunit_store(test, "lz4", 4096);

	KUNIT_EXPECT_EQ(test, gs_store_write_start(s, 0, pages, 2,
						   gs_kunit_ended_fn, &r),
			-EAGAIN);
}

/*
 * Encrypted: the device holds no plaintext, the caller's pages are left
 * as they were, and every page reads back.
 */
static void gs_direct_encrypt(struct kunit *test)
{
	struct page **pages = gs_direct_pages(test);
	void *copy = gs_kunit_page(test);
	struct gs_kunit_ended r;
	struct gs_kbk *k;
	struct gs_store *s;
	int i;

	s = gs_kunit_wb_store(test, "lz4", 4096, 64, &k);
	KUNIT_ASSERT_EQ(test, gs_store_set_wb_encrypt(s, true), 0);
	memcpy(copy, page_address(pages[0]), PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, gs_direct_start_wait(test, s, 0, pages, 8, &r),
			8);
	KUNIT_EXPECT_EQ(test, r.err, 0);
	KUNIT_EXPECT_MEMEQ(test, page_address(pages[0]), copy, PAGE_SIZE);
	for (i = 0; i < 8; i++) {
		u64 b = gs_entry_value(gs_store_entry(s, i));

		KUNIT_EXPECT_MEMNEQ(test, k->mem + b * PAGE_SIZE,
				    page_address(pages[i]), PAGE_SIZE);
		gs_direct_expect(test, s, i, pages[i]);
	}
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0);
}

/*
 * A free, or an overwrite into the pool, of a slot while its write is in
 * flight: the entry was installed when the write started, so the later
 * of the two wins, and the write's end frees the backing slot the entry
 * let go of; nothing leaks, the maps agree, and a free after the end
 * gives everything back.
 */
static void gs_direct_races(struct kunit *test)
{
	struct page **pages = gs_direct_pages(test);
	void *text = gs_kunit_text(test, 9), *got = gs_kunit_page(test);
	struct gs_kunit_ended r;
	struct gs_kbk *k;
	struct gs_store *s;
	int round;

	for (round = 0; round < 2; round++) {
		s = gs_kunit_wb_store(test, "lz4", 4096, 64, &k);
		k->defer_writes = true;
		gs_kunit_ended_init(&r);
		KUNIT_ASSERT_EQ(test, gs_store_write_start(s, 7, pages, 2,
							   gs_kunit_ended_fn,
							   &r), 2);
		KUNIT_EXPECT_EQ(test, gs_backing_used(s->bk), 2ULL);
		if (round == 0)
			gs_store_free(s, 7);
		else
			KUNIT_EXPECT_EQ(test, gs_store_write(s, 7, text,
							     GFP_KERNEL), 0);
		/* Let go of by the entry, the backing slot stays the write's. */
		KUNIT_EXPECT_EQ(test, gs_backing_used(s->bk), 2ULL);
		KUNIT_EXPECT_EQ(test, r.calls, 0);
		gs_kbk_end_submit(s->bk);
		KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&r.done,
								    5 * HZ));
		KUNIT_EXPECT_EQ(test, r.err, 0);
		gs_kunit_wb_settle(s);
		KUNIT_EXPECT_EQ(test, gs_backing_used(s->bk), 1ULL);
		if (round == 0) {
			KUNIT_EXPECT_EQ(test, gs_store_kind(s, 7, NULL),
					GS_KIND_EMPTY);
		} else {
			KUNIT_ASSERT_EQ(test, gs_store_read(s, 7, got), 0);
			KUNIT_EXPECT_MEMEQ(test, got, text, PAGE_SIZE);
		}
		gs_direct_expect(test, s, 8, pages[1]);
		KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats,
						   GS_STAT_COMP_PAGES), round);
		gs_kunit_expect_unpinned(test, s);
		KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0);
		gs_store_free_range(s, 7, 2);
		KUNIT_EXPECT_EQ(test, gs_backing_used(s->bk), 0ULL);
		KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats,
						   GS_STAT_SLOTS_USED), 0);
	}
}

/*
 * A write that ends, and is finished, before gs_store_write_start()
 * returns, as when its bio ends on another CPU at once: the start still
 * returns how many pages it took, and touches nothing the finish freed
 * (KASAN would see it).
 */
static void gs_direct_ends_first(struct kunit *test)
{
	struct page **pages = gs_direct_pages(test);
	struct gs_kunit_ended r;
	struct gs_kbk *k;
	struct gs_store *s;

	s = gs_kunit_wb_store(test, "lz4", 4096, 64, &k);
	gs_kunit_ended_init(&r);
	k->submit_wait = &r.done;
	KUNIT_EXPECT_EQ(test, gs_store_write_start(s, 7, pages, 3,
						   gs_kunit_ended_fn, &r), 3);
	k->submit_wait = NULL;
	KUNIT_EXPECT_EQ(test, r.calls, 1);
	KUNIT_EXPECT_EQ(test, r.err, 0);
	gs_direct_expect(test, s, 9, pages[2]);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0);
}

/* Stopping the tier (reset, destroy) waits for writes in flight. */
static void gs_direct_stop_waits(struct kunit *test)
{
	struct page **pages = gs_direct_pages(test);
	struct gs_stop_job j;
	struct gs_kunit_ended r;
	struct task_struct *t;
	struct gs_kbk *k;

	j.s = gs_kunit_wb_store(test, "lz4", 4096, 64, &k);
	k->defer_writes = true;
	gs_kunit_ended_init(&r);
	KUNIT_ASSERT_EQ(test, gs_store_write_start(j.s, 0, pages, 3,
						   gs_kunit_ended_fn, &r), 3);
	init_completion(&j.done);
	t = kthread_run(gs_stop_job_fn, &j, "gs-kunit-stop");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	/* The check can fail: without the wait it would be done at once. */
	KUNIT_EXPECT_FALSE(test, wait_for_completion_timeout(&j.done, HZ / 5));
	gs_kbk_end_submit(j.s->bk);
	KUNIT_EXPECT_TRUE(test, wait_for_completion_timeout(&j.done, 5 * HZ));
	KUNIT_EXPECT_TRUE(test, wait_for_completion_timeout(&r.done, 5 * HZ));
	gs_direct_expect(test, j.s, 2, pages[2]);
}

/* Store @nr of @pages at @slot with gs_store_write_start(), all of them. */
static void gs_direct_store(struct kunit *test, struct gs_store *s, u64 slot,
			    struct page **pages, unsigned int nr)
{
	struct gs_kunit_ended r;
	unsigned int done = 0;
	int n;

	while (done < nr) {
		n = gs_direct_start_wait(test, s, slot + done, pages + done,
					 nr - done, &r);
		KUNIT_ASSERT_GT(test, n, 0);
		KUNIT_ASSERT_EQ(test, r.err, 0);
		done += n;
	}
}

/*
 * Pages stored as they are on consecutive backing slots come back with
 * one read per run of up to 32, ended once where the device ends it
 * (here in process context), checked, unpinned and counted.
 */
static void gs_direct_read_run(struct kunit *test)
{
	struct page **pages = gs_direct_pages(test);
	struct page **dst = gs_direct_dst(test);
	struct gs_kunit_ended r;
	struct gs_kbk *k;
	struct gs_store *s;
	int i;

	s = gs_kunit_wb_store(test, "lz4", 4096, 256, &k);
	gs_direct_store(test, s, 100, pages, GS_DIRECT_NR);
	KUNIT_ASSERT_EQ(test, gs_direct_read_wait(test, s, 100, dst,
						  GS_DIRECT_NR, &r), 32);
	KUNIT_EXPECT_EQ(test, r.err, 0);
	KUNIT_EXPECT_EQ(test, r.calls, 1);
	KUNIT_EXPECT_FALSE(test, r.atomic);
	KUNIT_ASSERT_EQ(test, gs_direct_read_wait(test, s, 132, dst + 32,
						  GS_DIRECT_NR - 32, &r), 8);
	KUNIT_EXPECT_EQ(test, r.err, 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&k->submit_reads), 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&k->read_starts), 0);
	for (i = 0; i < GS_DIRECT_NR; i++) {
		KUNIT_EXPECT_MEMEQ(test, page_address(dst[i]),
				   page_address(pages[i]), PAGE_SIZE);
		KUNIT_EXPECT_EQ(test, gs_store_entry(s, 100 + i) &
				GS_FLAG_IO, 0UL);
	}
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->stats.bd_reads),
			GS_DIRECT_NR);
	KUNIT_EXPECT_EQ(test, gs_backing_used(s->bk), (u64)GS_DIRECT_NR);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0);
}

/*
 * A run ends where one read cannot take the next page: a page stored
 * compressed, a backing slot that does not follow, a cluster's end, a
 * page another reader has pinned; one page alone is no run.
 */
static void gs_direct_read_run_ends(struct kunit *test)
{
	struct page **pages = gs_direct_pages(test);
	struct page **dst = gs_direct_dst(test);
	void *text = gs_kunit_text(test, 11);
	struct gs_kunit_ended r, single;
	struct gs_kbk *k;
	struct gs_store *s;
	u64 done;

	s = gs_kunit_wb_store(test, "lz4", 4096, 256, &k);
	/* 198, 199 as they are; 200 compressed, then written back. */
	gs_direct_store(test, s, 198, pages, 2);
	KUNIT_ASSERT_EQ(test, gs_store_write(s, 200, text, GFP_KERNEL), 0);
	KUNIT_ASSERT_EQ(test, gs_store_writeback(s, GS_WB_ALL, 1, &done), 0);
	KUNIT_ASSERT_EQ(test, gs_store_kind(s, 200, NULL),
			GS_KIND_WRITTEN_BACK);
	KUNIT_EXPECT_EQ(test, gs_direct_read_wait(test, s, 198, dst, 3, &r),
			2);
	KUNIT_EXPECT_EQ(test, r.err, 0);
	KUNIT_EXPECT_MEMEQ(test, page_address(dst[1]), page_address(pages[1]),
			   PAGE_SIZE);

	/* 300 and 301 on backing slots apart. */
	gs_direct_store(test, s, 300, pages + 2, 1);
	gs_direct_store(test, s, 50, pages + 3, 1);
	gs_direct_store(test, s, 301, pages + 4, 1);
	KUNIT_EXPECT_EQ(test, gs_direct_read_wait(test, s, 300, dst, 2, &r),
			-EAGAIN);

	/* 510..513 on consecutive backing slots, over a cluster's end. */
	gs_direct_store(test, s, 510, pages + 5, 4);
	KUNIT_EXPECT_EQ(test, gs_direct_read_wait(test, s, 510, dst, 4, &r),
			2);
	KUNIT_EXPECT_EQ(test, gs_direct_read_wait(test, s, 512, dst + 2, 2,
						  &r), 2);
	KUNIT_EXPECT_MEMEQ(test, page_address(dst[3]), page_address(pages[8]),
			   PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, gs_direct_read_wait(test, s, 512, dst, 1, &r),
			-EAGAIN);

	/* 511 pinned by a single read in flight: 510..511 is no run. */
	k->defer_reads = true;
	gs_kunit_ended_init(&single);
	KUNIT_ASSERT_EQ(test, gs_store_read_start(s, 511, dst[10],
						  gs_kunit_ended_fn, &single),
			GS_READ_STARTED);
	KUNIT_EXPECT_EQ(test, gs_direct_read_wait(test, s, 510, dst, 2, &r),
			-EAGAIN);
	KUNIT_EXPECT_EQ(test, gs_direct_read_wait(test, s, 511, dst, 2, &r),
			-EAGAIN);
	KUNIT_EXPECT_FALSE(test, gs_store_entry(s, 510) & GS_FLAG_IO);
	gs_kbk_end_read(s->bk);
	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&single.done,
							    5 * HZ));
	KUNIT_EXPECT_MEMEQ(test, page_address(dst[10]), page_address(pages[6]),
			   PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0);
}

/*
 * A failed read fails the run, a page the device returns changed fails
 * it too; every entry is unpinned and kept, and reads again once the
 * device returns what was written.
 */
static void gs_direct_read_run_errors(struct kunit *test)
{
	struct page **pages = gs_direct_pages(test);
	struct page **dst = gs_direct_dst(test);
	struct gs_kunit_ended r;
	struct gs_kbk *k;
	struct gs_store *s;
	u8 *byte;
	int i;

	s = gs_kunit_wb_store(test, "lz4", 4096, 256, &k);
	gs_direct_store(test, s, 0, pages, 4);
	atomic_set(&k->fail_reads, 1);
	KUNIT_ASSERT_EQ(test, gs_direct_read_wait(test, s, 0, dst, 4, &r), 4);
	KUNIT_EXPECT_EQ(test, r.err, -EIO);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->stats.bd_read_errors), 4);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->stats.bd_reads), 0);

	byte = k->mem + gs_entry_value(gs_store_entry(s, 2)) * PAGE_SIZE + 9;
	*byte ^= 1;
	KUNIT_ASSERT_EQ(test, gs_direct_read_wait(test, s, 0, dst, 4, &r), 4);
	KUNIT_EXPECT_EQ(test, r.err, -EIO);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->stats.bd_sum_errors), 1);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->stats.bd_read_errors), 5);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->stats.bd_reads), 3);
	*byte ^= 1;
	KUNIT_ASSERT_EQ(test, gs_direct_read_wait(test, s, 0, dst, 4, &r), 4);
	KUNIT_EXPECT_EQ(test, r.err, 0);
	for (i = 0; i < 4; i++) {
		KUNIT_EXPECT_MEMEQ(test, page_address(dst[i]),
				   page_address(pages[i]), PAGE_SIZE);
		KUNIT_EXPECT_EQ(test, gs_store_kind(s, i, NULL),
				GS_KIND_WRITTEN_BACK);
	}
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0);
}

/*
 * A free and an overwrite of pages of a run in flight: the reader gets
 * the pages it started to read; the backing slots stay allocated under
 * the read and are freed once by its end.
 */
static void gs_direct_read_run_races(struct kunit *test)
{
	struct page **pages = gs_direct_pages(test);
	struct page **dst = gs_direct_dst(test);
	void *text = gs_kunit_text(test, 12);
	struct gs_kunit_ended r;
	struct gs_kbk *k;
	struct gs_store *s;

	s = gs_kunit_wb_store(test, "lz4", 4096, 256, &k);
	gs_direct_store(test, s, 0, pages, 3);
	k->defer_run_reads = true;
	gs_kunit_ended_init(&r);
	KUNIT_ASSERT_EQ(test, gs_store_read_run_start(s, 0, dst, 3,
						      gs_kunit_ended_fn, &r),
			3);
	KUNIT_EXPECT_TRUE(test, gs_store_entry(s, 1) & GS_FLAG_IO);
	gs_store_free(s, 0);
	KUNIT_EXPECT_EQ(test, gs_store_write(s, 1, text, GFP_KERNEL), 0);
	/* Pinned: no backing slot is given back yet. */
	KUNIT_EXPECT_EQ(test, gs_backing_used(s->bk), 3ULL);
	gs_kbk_end_submit(s->bk);
	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&r.done, 5 * HZ));
	gs_kunit_wb_settle(s);
	KUNIT_EXPECT_EQ(test, r.err, 0);
	KUNIT_EXPECT_MEMEQ(test, page_address(dst[0]), page_address(pages[0]),
			   PAGE_SIZE);
	KUNIT_EXPECT_MEMEQ(test, page_address(dst[1]), page_address(pages[1]),
			   PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, gs_backing_used(s->bk), 1ULL);
	KUNIT_EXPECT_EQ(test, gs_store_kind(s, 1, NULL), GS_KIND_COMPRESSED);
	KUNIT_EXPECT_FALSE(test, gs_store_entry(s, 2) & GS_FLAG_IO);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_SLOTS_USED), 2);
}

/* A held read ended from a hard interrupt, as a device's would be. */
struct gs_irq_end {
	struct irq_work work;
	struct gs_backing *bk;
	bool run;		/* gs_kbk_end_submit(), else gs_kbk_end_read() */
	bool hardirq;		/* it ran in a hard interrupt */
};

static void gs_irq_end_fn(struct irq_work *work)
{
	struct gs_irq_end *e = container_of(work, struct gs_irq_end, work);

	e->hardirq = in_hardirq();
	if (e->run)
		gs_kbk_end_submit(e->bk);
	else
		gs_kbk_end_read(e->bk);
}

static void gs_irq_end(struct kunit *test, struct gs_backing *bk, bool run,
		       struct gs_kunit_ended *r)
{
	struct gs_irq_end e = {
		.work = IRQ_WORK_INIT_HARD(gs_irq_end_fn),
		.bk = bk,
		.run = run,
	};

	irq_work_queue(&e.work);
	irq_work_sync(&e.work);
	KUNIT_EXPECT_TRUE(test, e.hardirq);
	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&r->done, 5 * HZ));
}

/*
 * With a run at slot 0 in flight: slot 0 freed, slot 1 overwritten into
 * the pool, then the run ended from a hard interrupt, once, with no
 * error, and handed back right there.
 */
static void gs_irq_end_racing(struct kunit *test, struct gs_store *s,
			      const void *text, struct gs_kunit_ended *r)
{
	gs_store_free(s, 0);
	KUNIT_EXPECT_EQ(test, gs_store_write(s, 1, text, GFP_KERNEL), 0);
	gs_irq_end(test, s->bk, true, r);
	KUNIT_EXPECT_EQ(test, r->err, 0);
	KUNIT_EXPECT_EQ(test, r->calls, 1);
	KUNIT_EXPECT_TRUE(test, r->atomic);
}

/*
 * Reads whose device ends them in a hard interrupt. A run of pages
 * stored as they are, and such a page alone, are checked, unpinned and
 * handed back right there, with no lock (lockdep, in the sanitized
 * build, reports a lock a hard interrupt takes that is also taken with
 * interrupts on), even with pages freed and overwritten in flight: the
 * backing slots those let go of are freed after, by the worker. A
 * compressed page is still handed back by the worker.
 */
static void gs_direct_read_ends_in_irq(struct kunit *test)
{
	struct page **pages = gs_direct_pages(test);
	struct page **dst = gs_direct_dst(test);
	void *text = gs_kunit_text(test, 13);
	struct gs_kunit_ended r;
	struct gs_kbk *k;
	struct gs_store *s;
	u64 done;
	int i;

	s = gs_kunit_wb_store(test, "lz4", 4096, 256, &k);
	gs_direct_store(test, s, 0, pages, 4);
	k->defer_run_reads = true;
	gs_kunit_ended_init(&r);
	KUNIT_ASSERT_EQ(test, gs_store_read_run_start(s, 0, dst, 4,
						      gs_kunit_ended_fn, &r),
			4);
	gs_irq_end_racing(test, s, text, &r);
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_MEMEQ(test, page_address(dst[i]),
				   page_address(pages[i]), PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->stats.bd_reads), 4);
	gs_kunit_wb_settle(s);
	/* Slots 2 and 3 still hold theirs; 0's and 1's were freed. */
	KUNIT_EXPECT_EQ(test, gs_backing_used(s->bk), 2ULL);
	gs_kunit_expect_unpinned(test, s);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0);

	k->defer_run_reads = false;
	k->defer_reads = true;
	gs_kunit_ended_init(&r);
	KUNIT_ASSERT_EQ(test, gs_store_read_start(s, 2, dst[10],
						  gs_kunit_ended_fn, &r),
			GS_READ_STARTED);
	gs_store_free(s, 2);
	gs_irq_end(test, s->bk, false, &r);
	KUNIT_EXPECT_EQ(test, r.err, 0);
	KUNIT_EXPECT_TRUE(test, r.atomic);
	KUNIT_EXPECT_MEMEQ(test, page_address(dst[10]), page_address(pages[2]),
			   PAGE_SIZE);
	gs_kunit_wb_settle(s);
	KUNIT_EXPECT_EQ(test, gs_backing_used(s->bk), 1ULL);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0);

	/* Compressed on the backing device: decompressed by the worker. */
	KUNIT_ASSERT_EQ(test, gs_store_writeback(s, GS_WB_ALL, 8, &done), 0);
	KUNIT_ASSERT_EQ(test, gs_store_kind(s, 1, NULL), GS_KIND_WRITTEN_BACK);
	gs_kunit_ended_init(&r);
	KUNIT_ASSERT_EQ(test, gs_store_read_start(s, 1, dst[11],
						  gs_kunit_ended_fn, &r),
			GS_READ_STARTED);
	gs_irq_end(test, s->bk, false, &r);
	KUNIT_EXPECT_EQ(test, r.err, 0);
	KUNIT_EXPECT_FALSE(test, r.atomic);
	KUNIT_EXPECT_MEMEQ(test, page_address(dst[11]), text, PAGE_SIZE);
	gs_kunit_wb_settle(s);
	gs_kunit_expect_unpinned(test, s);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0);
}

/*
 * Writes whose device ends them in a hard interrupt. The entries are
 * installed, pinned, when the write starts: a read of one waits for the
 * write (a read that did not would get what the device held before), a
 * read started without waiting is refused. The end unpins them and hands
 * the write back right there, with no lock (lockdep sees the hard
 * interrupt), even with a slot freed and one overwritten in flight,
 * whose backing slots the worker frees after. A failed write is handed
 * back by the worker, once it has dropped the entries it installed.
 */
static void gs_direct_write_ends_in_irq(struct kunit *test)
{
	struct page **pages = gs_direct_pages(test);
	struct page **dst = gs_direct_dst(test);
	void *text = gs_kunit_text(test, 17), *got = gs_kunit_page(test);
	struct gs_kunit_ended r, rr;
	struct gs_read_job j;
	struct task_struct *t;
	struct gs_kbk *k;
	struct gs_store *s;
	int i;

	s = gs_kunit_wb_store(test, "lz4", 4096, 256, &k);
	k->defer_writes = true;
	gs_kunit_ended_init(&r);
	KUNIT_ASSERT_EQ(test, gs_store_write_start(s, 0, pages, 4,
						   gs_kunit_ended_fn, &r), 4);
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_TRUE(test, gs_store_entry(s, i) & GS_FLAG_IO);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_WB_PAGES), 4);
	gs_kunit_ended_init(&rr);
	KUNIT_EXPECT_EQ(test, gs_store_read_start(s, 3, dst[0],
						  gs_kunit_ended_fn, &rr),
			-EAGAIN);
	j.s = s;
	j.slot = 2;
	j.dst = got;
	init_completion(&j.done);
	t = kthread_run(gs_read_job_fn, &j, "gs-kunit-read");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	/* The check can fail: without the pin the read would be done. */
	KUNIT_EXPECT_FALSE(test, wait_for_completion_timeout(&j.done, HZ / 5));
	gs_irq_end_racing(test, s, text, &r);
	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&j.done, 5 * HZ));
	KUNIT_EXPECT_EQ(test, j.ret, 0);
	KUNIT_EXPECT_MEMEQ(test, got, page_address(pages[2]), PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->stats.bd_writes), 4);
	gs_kunit_wb_settle(s);
	/* Slots 2 and 3 hold theirs; 0's and 1's went back. */
	KUNIT_EXPECT_EQ(test, gs_backing_used(s->bk), 2ULL);
	KUNIT_EXPECT_EQ(test, gs_store_kind(s, 0, NULL), GS_KIND_EMPTY);
	KUNIT_EXPECT_EQ(test, gs_store_kind(s, 1, NULL), GS_KIND_COMPRESSED);
	gs_direct_expect(test, s, 3, pages[3]);
	gs_kunit_expect_unpinned(test, s);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0);

	/* Failed, with slot 3 overwritten in flight. */
	atomic_set(&k->fail_writes, 1);
	gs_kunit_ended_init(&r);
	KUNIT_ASSERT_EQ(test, gs_store_write_start(s, 2, pages + 10, 2,
						   gs_kunit_ended_fn, &r), 2);
	KUNIT_EXPECT_EQ(test, gs_store_write(s, 3, text, GFP_KERNEL), 0);
	gs_irq_end(test, s->bk, true, &r);
	KUNIT_EXPECT_EQ(test, r.err, -EIO);
	KUNIT_EXPECT_FALSE(test, r.atomic);
	KUNIT_EXPECT_EQ(test, gs_store_kind(s, 2, NULL), GS_KIND_EMPTY);
	gs_kunit_wb_settle(s);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->stats.bd_write_errors), 2);
	KUNIT_EXPECT_EQ(test, gs_backing_used(s->bk), 0ULL);
	KUNIT_ASSERT_EQ(test, gs_store_read(s, 3, got), 0);
	KUNIT_EXPECT_MEMEQ(test, got, text, PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_SLOTS_USED), 2);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_WB_PAGES), 0);
	gs_kunit_expect_unpinned(test, s);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0);
}

/* ------------------------------------------- the races on two CPUs */

#define GS_DC_SLOTS	16
#define GS_DC_RUNS	600
#define GS_DC_RUN	4	/* pages a write or read takes at most */
/*
 * Frees, overwrites and reads the other thread must do meanwhile: a
 * quarter of the runs (it did 1641 to 4933 beside 600 under the
 * sanitizers).
 */
#define GS_DC_OPS	(GS_DC_RUNS / 4)

struct gs_direct_conc {
	struct gs_store *s;
	/* Each write or read in flight; each operation of the other thread. */
	struct gs_overlap io, op;
	long writes, reads, ops;	/* started; operations done */
	atomic_t bad;		/* reads that returned something never written */
	atomic_t errors;	/* failed stores, reads; ends never called */
	bool stop;
	struct completion done;
};

/*
 * Free, overwrite into the pool, or read slots the other thread uses:
 * each in a window that waits first for the other thread to run in the
 * window of an I/O (2 ms at most), so that it lands while that I/O is
 * under way, not hundreds of times between two.
 */
static int gs_direct_conc_fn(void *arg)
{
	struct gs_direct_conc *c = arg;
	void *buf = kmalloc(PAGE_SIZE, GFP_KERNEL);
	void *tmp = kmalloc(PAGE_SIZE, GFP_KERNEL);
	unsigned int win, v = 0;
	u64 slot;
	int ret;

	while (buf && tmp && !READ_ONCE(c->stop)) {
		ret = 0;
		slot = get_random_u32_below(GS_DC_SLOTS);
		win = gs_overlap_enter_vs(&c->op, &c->io);
		gs_overlap_await_in(&c->op, win);
		switch (get_random_u32_below(3)) {
		case 0:
			gs_store_free(c->s, slot);
			break;
		case 1:
			v++;
			gs_kunit_fill_version(buf, slot * 1000 + 500 + v % 500,
					      false);
			ret = gs_store_write(c->s, slot, buf, GFP_KERNEL);
			break;
		default:
			ret = gs_store_read(c->s, slot, buf);
			if (!ret && !gs_kunit_version_valid(slot, buf, tmp))
				atomic_inc(&c->bad);
			break;
		}
		gs_racer_turn_end(&c->op, win, ret, &c->errors, &c->ops);
	}
	return gs_racer_end(buf, tmp, &c->errors, &c->done);
}

/*
 * Pages @slot.. read the way the submit path reads written-back pages:
 * a run started without waiting, else the first page alone started
 * without waiting, else read at once; each must be a version written to
 * its slot (or zeroes). Returns how many pages were read.
 */
static int gs_direct_conc_read(struct gs_direct_conc *c, u64 slot,
			       struct page **dst, unsigned int nr, void *tmp)
{
	struct gs_kunit_ended r;
	int n, i;

	gs_kunit_ended_init(&r);
	n = gs_store_read_run_start(c->s, slot, dst, nr, gs_kunit_ended_fn,
				    &r);
	if (n == -EAGAIN) {
		n = gs_store_read_start(c->s, slot, dst[0], gs_kunit_ended_fn,
					&r);
		if (n == -EAGAIN)
			n = gs_store_read(c->s, slot, page_address(dst[0]));
		if (!n) {
			r.err = 0;
			r.calls = 1;
			complete(&r.done);
		}
		n = n >= 0 ? 1 : n;
	}
	if (n < 0) {
		atomic_inc(&c->errors);
		return 0;
	}
	wait_for_completion(&r.done);
	if (r.err || r.calls != 1)
		atomic_inc(&c->errors);
	for (i = 0; i < n; i++)
		if (!gs_kunit_version_valid(slot + i, page_address(dst[i]),
					    tmp))
			atomic_inc(&c->bad);
	return n;
}

/*
 * gs_direct_races() and gs_direct_read_run_races() at random, on two
 * CPUs: this thread writes runs of up to 4 pages with
 * gs_store_write_start() and reads runs back with
 * gs_store_read_run_start() (each I/O, from its start to its end, a
 * window), while another thread frees, overwrites into the pool and
 * reads the same 16 slots, each in an I/O's window. Each I/O ends from a
 * hard interrupt, as a device's does: a read of pages stored as they are
 * is unpinned there, with no lock, while the other CPU frees and
 * overwrites its slots. Every read returns a version written to its
 * slot, or zeroes; every end comes once; nothing stays pinned, the maps
 * agree, the counters balance, and all freed, the backing store and the
 * pool are empty.
 */
static void gs_direct_concurrent(struct kunit *test)
{
	struct page **pages = gs_direct_dst(test);
	struct page **dst = gs_direct_dst(test);
	void *tmp = gs_kunit_page(test);
	struct gs_direct_conc *c;
	struct gs_kunit_ended r;
	struct task_struct *t;
	unsigned int win, nr, j;
	struct gs_kbk *k;
	struct gs_store *s;
	u64 slot;
	int i, n;

	c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c);
	s = gs_kunit_wb_store(test, "lz4", 4096, 64, &k);
	k->end_in_irq = true;
	c->s = s;
	init_completion(&c->done);
	t = kthread_run(gs_direct_conc_fn, c, "gs-kunit-race");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));

	for (i = 0; gs_overlap_more(i, GS_DC_RUNS,
				    gs_overlap_enough(&c->io, GS_OVERLAP_PCT) &&
				    gs_overlap_enough(&c->op, GS_OVERLAP_PCT) &&
				    READ_ONCE(c->ops) >= GS_DC_OPS); i++) {
		slot = get_random_u32_below(GS_DC_SLOTS);
		nr = min_t(u64, 1 + get_random_u32_below(GS_DC_RUN),
			   GS_DC_SLOTS - slot);
		win = gs_overlap_enter_vs(&c->io, &c->op);
		if (i & 1) {
			n = gs_direct_conc_read(c, slot, dst, nr, tmp);
			c->reads += n;
		} else {
			for (j = 0; j < nr; j++)
				gs_kunit_fill_version(page_address(pages[j]),
						      (slot + j) * 1000 + i % 500,
						      j & 1);
			gs_kunit_ended_init(&r);
			n = gs_store_write_start(s, slot, pages, nr,
						 gs_kunit_ended_fn, &r);
			if (n > 0) {
				wait_for_completion(&r.done);
				if (r.err || r.calls != 1)
					atomic_inc(&c->errors);
				c->writes += n;
			} else if (n != -EAGAIN) {
				atomic_inc(&c->errors);
			}
		}
		gs_overlap_exit(&c->io, win);
		cond_resched();
	}
	gs_overlap_close(&c->io, &c->op);
	WRITE_ONCE(c->stop, true);
	wait_for_completion(&c->done);

	kunit_info(test, "%d runs: %ld pages written and %ld read without waiting; %ld operations\n",
		   i, c->writes, c->reads, c->ops);
	gs_overlap_expect(test, &c->io,
			  "direct writes and reads in flight against the other thread",
			  GS_OVERLAP_PCT, c->ops, GS_DC_OPS);
	gs_overlap_expect(test, &c->op, "frees, overwrites, reads against I/O in flight",
			  GS_OVERLAP_PCT, i, GS_DC_RUNS);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->errors), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->bad), 0);
	KUNIT_EXPECT_GT(test, c->writes, 0L);
	KUNIT_EXPECT_GT(test, c->reads, 0L);
	KUNIT_EXPECT_GT(test, atomic_read(&k->submit_reads), 0);
	gs_kunit_wb_settle(s);
	gs_kunit_expect_unpinned(test, s);
	KUNIT_EXPECT_EQ(test, gs_store_check(s, NULL), 0L);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_SLOTS_USED),
			gs_stat_read(&s->stats, GS_STAT_SAME_PAGES) +
			gs_stat_read(&s->stats, GS_STAT_COMP_PAGES) +
			gs_stat_read(&s->stats, GS_STAT_HUGE_PAGES) +
			gs_stat_read(&s->stats, GS_STAT_WB_PAGES));
	KUNIT_EXPECT_EQ(test, gs_backing_used(s->bk),
			(u64)gs_stat_read(&s->stats, GS_STAT_WB_PAGES));
	for (i = 0; i < GS_DC_SLOTS; i++) {
		KUNIT_EXPECT_EQ(test, gs_store_read(s, i, tmp), 0);
		KUNIT_EXPECT_TRUE(test, gs_kunit_version_valid(i, tmp,
							       page_address(dst[0])));
	}
	gs_store_free_range(s, 0, GS_DC_SLOTS);
	KUNIT_EXPECT_EQ(test, gs_backing_used(s->bk), 0ULL);
	KUNIT_EXPECT_EQ(test, gs_stat_read(&s->stats, GS_STAT_SLOTS_USED), 0);
	KUNIT_EXPECT_EQ(test, gs_store_pool_pages(s), 0UL);
}

static struct kunit_case gs_direct_cases[] = {
	KUNIT_CASE(gs_direct_run),
	KUNIT_CASE(gs_direct_at),
	KUNIT_CASE(gs_direct_replaces),
	KUNIT_CASE(gs_direct_error),
	KUNIT_CASE(gs_direct_cannot_start),
	KUNIT_CASE(gs_direct_no_backing),
	KUNIT_CASE(gs_direct_encrypt),
	KUNIT_CASE(gs_direct_races),
	KUNIT_CASE(gs_direct_ends_first),
	KUNIT_CASE(gs_direct_stop_waits),
	KUNIT_CASE(gs_direct_read_run),
	KUNIT_CASE(gs_direct_read_run_ends),
	KUNIT_CASE(gs_direct_read_run_errors),
	KUNIT_CASE(gs_direct_read_run_races),
	KUNIT_CASE(gs_direct_read_ends_in_irq),
	KUNIT_CASE(gs_direct_write_ends_in_irq),
	KUNIT_CASE_SLOW(gs_direct_concurrent),
	{}
};

static struct kunit_suite gs_direct_suite = {
	.name = "ghostswap_direct",
	.suite_init = gs_kunit_core_init,
	.suite_exit = gs_kunit_core_exit,
	.test_cases = gs_direct_cases,
};

kunit_test_suite(gs_direct_suite);

MODULE_LICENSE("GPL");
