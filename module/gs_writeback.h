/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ghostswap writeback tier: what the store (gs_store.c) calls of it to
 * put pages past the pool and get them back. Its public calls (attach,
 * writeback, idle marks, budget, backing compaction) are in gs_store.h.
 */
#ifndef _GS_WRITEBACK_H
#define _GS_WRITEBACK_H

#include <linux/gfp_types.h>
#include <linux/types.h>
#include "gs_store.h"

/* The tier's state in a new store: no backing device, default policies. */
void gs_wb_init(struct gs_store *s);
/* Stop what runs on its own: the shrinker and the background worker. */
void gs_wb_stop(struct gs_store *s);
/* Detach and release the backing store, whatever it holds. */
void gs_wb_detach(struct gs_store *s);
/* Release the rest of the tier's state (the cipher); after detaching. */
void gs_wb_destroy(struct gs_store *s);

/*
 * A page went into the pool, which is now near its limit
 * (gs_pool_near_limit()): start writing back in the background, unless
 * writeback cannot move anything (no backing device, or it is full, or
 * the budget is spent).
 */
void __gs_wb_kick(struct gs_store *s);

static inline void gs_wb_kick(struct gs_store *s)
{
	/* No backing device, nothing to start: no call. */
	if (s->bk)
		__gs_wb_kick(s);
}

/* Write back cold pages until the pool is at most @target pages. */
void gs_wb_reclaim(struct gs_store *s, unsigned long target);
/*
 * Store a page on the backing device itself, as it is, replacing what
 * the slot held. -ENOMEM without a backing device or memory, -EIO if
 * the write failed, -ENOSPC if the device is full or the budget spent.
 */
int gs_wb_write_page(struct gs_store *s, u64 slot, const void *src,
		     gfp_t gfp);
/*
 * Start storing up to @nr whole pages (@pages, for slots @slot..) on the
 * backing device as they are, replacing what the slots held, without
 * waiting for anything: one run of backing slots, one write. Returns how
 * many pages it took (at least one; @end(@arg, err) is called from
 * process context once their entries are installed), or -EAGAIN if none
 * could be started now (no backing device or budget, a lock or memory
 * not at hand): gs_wb_write_page() then.
 */
int gs_wb_write_start(struct gs_store *s, u64 slot, struct page *const *pages,
		      unsigned int nr, gs_io_end_t end, void *arg);
/*
 * Read the page of a WRITTEN_BACK slot from the backing device into
 * @dst. Returns 0 or a negative errno; -EAGAIN if the entry is no longer
 * WRITTEN_BACK, or another reader has it pinned (after waiting a little
 * for it): look again.
 */
int gs_wb_read(struct gs_store *s, u64 slot, void *dst);
/*
 * Read the unit on the backing device that holds every slot of the run
 * of @pages from @first back into @dst, decompressed once, straight
 * there. Returns 0, -ESTALE if the run is not that (any more), -EAGAIN
 * while its slots are moved, or -EIO.
 */
int gs_wb_read_unit_whole(struct gs_store *s, u64 first, void *dst,
			  unsigned int pages);
/*
 * Start reading the page of a WRITTEN_BACK slot into @page; @end(@arg,
 * err) is called from process context when it is there. Returns 0
 * (started), -ESTALE if the entry is no longer WRITTEN_BACK (look
 * again), -EAGAIN if it cannot be started without waiting (another
 * reader has it pinned, no memory, a backing store without asynchronous
 * reads): gs_wb_read() then.
 */
int gs_wb_read_start(struct gs_store *s, u64 slot, struct page *page,
		     gs_io_end_t end, void *arg);
/*
 * Start reading WRITTEN_BACK pages stored as they are from slot @slot on
 * into @pages, as many of the @nr as lie in one cluster on backing slots
 * that follow each other (at least two), with one read. Returns how many
 * (@end(@arg, err) is called from process context once they are there),
 * or -EAGAIN: gs_wb_read_start() the first one.
 */
int gs_wb_read_run_start(struct gs_store *s, u64 slot,
			 struct page *const *pages, unsigned int nr,
			 gs_io_end_t end, void *arg);

#endif /* _GS_WRITEBACK_H */
