// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswap writeback tier: direct stores. A page that does not fit the
 * pool (or that the direct policy sends past it) is stored on the backing
 * device itself, as it is: waited for (gs_wb_write_page()), or a run of
 * pages started from a submit path with one write (gs_wb_write_start()),
 * whose entries are installed pinned before it starts. It calls the
 * budget (gs_wb_budget.c), sealing (gs_wb_seal.c), the end of submitted
 * I/O (gs_wb_io.c), the core (gs_core.h) and the backing store
 * (gs_backing.c).
 */
#define pr_fmt(fmt) "ghostswap: " fmt

#include <linux/atomic.h>
#include <linux/bitops.h>
#include <linux/gfp.h>
#include <linux/mempool.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/string.h>
#include "gs_backing.h"
#include "gs_core.h"
#include "gs_store.h"
#include "gs_wb_internal.h"
#include "gs_writeback.h"

/*
 * Store a page on the backing device itself, replacing what the slot
 * held. The page goes out as it is: a backing slot takes a page whatever
 * it holds, so there is nothing to gain from compressing it, and no
 * stream is needed. No lock is held across the write: a free or another
 * store of the slot meanwhile is settled when the entry is installed, and
 * backing compaction pins the entries it copies (gs_relocate()), so a
 * backing slot freed and taken again meanwhile cannot be mistaken.
 */
int gs_wb_write_page(struct gs_store *s, u64 slot, const void *src,
		     gfp_t gfp)
{
	struct gs_backing *bk = s->bk;
	struct page *bounce = NULL;
	bool charged;
	void *data;
	int ret;
	u64 b;

	if (!bk)
		return -ENOMEM;
	/* Encrypted, the page goes through one of our own. */
	if (s->wb.cipher) {
		bounce = alloc_page(gfp | __GFP_NOWARN);
		if (!bounce)
			return -ENOMEM;
	}
	if (!gs_budget_take(s, 1, &charged)) {
		ret = -ENOSPC;
		goto out_bounce;
	}
	ret = gs_backing_alloc_at(bk, &slot, 1, &b, false);
	if (ret <= 0) {
		ret = ret ?: -ENOSPC;
		goto out;
	}
	data = gs_wb_seal(s, b, (void *)src,
			  bounce ? page_address(bounce) : NULL, PAGE_SIZE);
	ret = data ? bk->ops->write(bk, b, &data, 1) : -EIO;
	if (ret) {
		atomic_long_inc(&s->stats.bd_write_errors);
		gs_backing_free(bk, b);
		pr_err_ratelimited("slot %llu: cannot write backing slot %llu: %d\n",
				   slot, b, ret);
		ret = -EIO;
		goto out;
	}
	atomic_long_inc(&s->stats.bd_writes);
	ret = gs_slot_install(s, slot, gs_entry(GS_KIND_WRITTEN_BACK, 0, b), 0,
			      gfp);
out:
	if (ret)
		gs_budget_give(s, 1, charged);
out_bounce:
	if (bounce)
		__free_page(bounce);
	return ret;
}

/* The entry of the write's page @i, unpinned. */
static unsigned long gs_wb_wr_entry(const struct gs_wb_wr *wr,
				    unsigned int i)
{
	return gs_entry(GS_KIND_WRITTEN_BACK, 0, wr->b + i);
}

/* Encrypted copies from @from on go back. */
static void gs_wb_wr_unbounce(struct gs_wb_wr *wr, unsigned int from)
{
	unsigned int i;

	if (!wr->bounced)
		return;
	for (i = from; i < wr->nr; i++) {
		if (wr->pages[i])
			__free_page(wr->pages[i]);
		wr->pages[i] = NULL;
	}
}

/* The write is handed back: free what it held. Any context. */
static void gs_wb_wr_release(struct gs_store *s, struct gs_wb_wr *wr)
{
	unsigned int i;

	for_each_set_bit(i, &wr->orphans, wr->nr)
		gs_backing_free(s->bk, wr->b + i);
	gs_wb_wr_unbounce(wr, 0);
	mempool_free(wr, s->wb.wr_pool);
	gs_wb_io_done(s);
}

/*
 * The end of the write, in its own context: the entries are unpinned and
 * the write handed back there. A failed write, and backing slots let go
 * of meanwhile (freeing one takes the reverse map's lock), are left to
 * the worker.
 */
static bool gs_wb_wr_fast(struct gs_wb_io *io)
{
	struct gs_wb_wr *wr = container_of(io, struct gs_wb_wr, st);
	struct gs_store *s = io->s;
	unsigned long e;
	unsigned int i;

	if (io->io.err)
		return false;
	for (i = 0; i < wr->nr; i++) {
		e = gs_wb_wr_entry(wr, i);
		if (!gs_slot_replace(s, wr->slot + i, e | GS_FLAG_IO, e))
			__set_bit(i, &wr->orphans);
	}
	atomic_long_add(wr->nr, &s->stats.bd_writes);
	wr->end(wr->arg, 0);
	wr->ended = true;
	if (wr->orphans)
		return false;
	gs_wb_wr_release(s, wr);
	return true;
}

/*
 * On the worker: after a failed write its pages are not on the device,
 * so the entries installed for them go (a slot freed or overwritten
 * meanwhile has let go of its backing slot already), then the write is
 * handed back with -EIO. The slots read as empty, as after a discard:
 * what they held before was replaced when the write started.
 */
static void gs_wb_wr_finish(struct work_struct *work)
{
	struct gs_wb_wr *wr = container_of(work, struct gs_wb_wr, st.work);
	struct gs_store *s = wr->st.s;
	unsigned int i;

	if (!wr->ended) {
		atomic_long_add(wr->nr, &s->stats.bd_write_errors);
		pr_err_ratelimited("slot %llu: cannot write backing slots %llu-%llu: %d\n",
				   wr->slot, wr->b, wr->b + wr->nr - 1,
				   wr->st.io.err);
		for (i = 0; i < wr->nr; i++) {
			gs_slot_drop(s, wr->slot + i,
				     gs_wb_wr_entry(wr, i) | GS_FLAG_IO);
			__set_bit(i, &wr->orphans);
		}
		gs_budget_give(s, wr->nr, wr->charged);
		wr->end(wr->arg, -EIO);
	}
	gs_wb_wr_release(s, wr);
}

int gs_wb_write_start(struct gs_store *s, u64 slot, struct page *const *pages,
		      unsigned int nr, gs_io_end_t end, void *arg)
{
	/* From a submit path: nothing here may wait, not even for memory. */
	const gfp_t gfp = GFP_NOWAIT | __GFP_NOWARN;
	u64 owners[GS_WB_WR_PAGES];
	struct gs_backing *bk = s->bk;
	struct gs_wb_wr *wr;
	unsigned int i;
	void *data;
	int got;

	if (!bk || !bk->ops->submit)
		return -EAGAIN;
	wr = mempool_alloc(s->wb.wr_pool, gfp);
	if (!wr)
		return -EAGAIN;
	memset(wr, 0, sizeof(*wr));
	nr = gs_budget_take(s, min_t(unsigned int, nr, GS_WB_WR_PAGES),
			    &wr->charged);
	if (!nr)
		goto out_free;
	for (i = 0; i < nr; i++)
		owners[i] = slot + i;
	got = gs_backing_alloc_at(bk, owners, nr, &wr->b, true);
	gs_budget_give(s, nr - max(got, 0), wr->charged);
	if (got <= 0)
		goto out_free;
	wr->nr = got;
	/* Encrypted, the pages go through copies of our own. */
	wr->bounced = s->wb.cipher;
	for (i = 0; i < wr->nr; i++) {
		if (wr->bounced) {
			wr->pages[i] = alloc_page(gfp);
			if (!wr->pages[i])
				goto out_slots;
		}
		data = gs_wb_seal(s, wr->b + i, page_address(pages[i]),
				  wr->bounced ? page_address(wr->pages[i]) :
						NULL, PAGE_SIZE);
		if (!data)
			goto out_slots;
		if (!wr->bounced)
			wr->pages[i] = pages[i];
	}
	/* Installed pinned; without memory for a cluster, the run ends. */
	for (i = 0; i < wr->nr; i++)
		if (gs_slot_install(s, slot + i,
				    gs_wb_wr_entry(wr, i) | GS_FLAG_IO, 0, gfp))
			break;
	if (i < wr->nr) {
		/* gs_slot_install() gave back the backing slot of page i. */
		gs_budget_give(s, wr->nr - i, wr->charged);
		gs_wb_wr_unbounce(wr, i);
		for (got = i + 1; got < wr->nr; got++)
			gs_backing_free(bk, wr->b + got);
		wr->nr = i;
		if (!i)
			goto out_free;
	}
	got = wr->nr;
	wr->slot = slot;
	wr->end = end;
	wr->arg = arg;
	gs_wb_io_init(&wr->st, s, gs_wb_wr_finish, gs_wb_wr_fast);
	atomic_inc(&s->wb.inflight);
	/*
	 * Submitted, the write may end and be finished (@wr freed) on
	 * another CPU before the submit returns: @wr is not ours any more.
	 */
	if (!gs_backing_submit(bk, true, wr->b, wr->pages, got, &wr->st.io))
		return got;
	gs_wb_io_done(s);
	/* Pinned, the entries left their backing slots to us. */
	for (i = 0; i < wr->nr; i++)
		gs_slot_drop(s, slot + i, gs_wb_wr_entry(wr, i) | GS_FLAG_IO);

out_slots:
	for (i = 0; i < wr->nr; i++)
		gs_backing_free(bk, wr->b + i);
	gs_budget_give(s, wr->nr, wr->charged);
out_free:
	gs_wb_wr_unbounce(wr, 0);
	mempool_free(wr, s->wb.wr_pool);
	return -EAGAIN;
}
