// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswap writeback tier: writeback that frees pool memory. Cold pages
 * are written back while the pool is over a target: by a store over the
 * pool limit itself (gs_wb_reclaim()), by the background worker that a
 * store nearing it kicks (gs_wb_kick()), and under memory pressure by the
 * shrinker; none of them when writeback cannot move a page. It calls the
 * writeback rounds (gs_writeback.c), the core (gs_core.h) and the backing
 * store (gs_backing.c).
 */
#include <linux/atomic.h>
#include <linux/container_of.h>
#include <linux/gfp.h>
#include <linux/sched.h>
#include <linux/shrinker.h>
#include <linux/workqueue.h>
#include <linux/zsmalloc.h>
#include "gs_backing.h"
#include "gs_core.h"
#include "gs_store.h"
#include "gs_wb_internal.h"
#include "gs_writeback.h"

/* Pages the pool limit's reclaim writes back between looks at the pool. */
#define GS_WB_RECLAIM_STEP	64

/*
 * Can a writeback move anything: a backing device with a free slot, and
 * budget left if it is in use? If not, the shrinker reports nothing to
 * do and the background writeback is not started, until it can again.
 */
static bool gs_wb_can_progress(struct gs_store *s)
{
	struct gs_backing *bk = s->bk;

	if (!bk || gs_backing_full(bk))
		return false;
	return !READ_ONCE(s->wb.limit_enable) ||
	       atomic_long_read(&s->wb.budget) > 0;
}

void gs_wb_reclaim(struct gs_store *s, unsigned long target)
{
	bool compacted = false;
	u64 done;
	int i;

	for (i = 0; i < 64 && zs_get_total_pages(s->pool) > target &&
	     gs_wb_can_progress(s); i++) {
		gs_wb_rounds(s, GS_WB_COLD, 0, s->nr_slots,
			     GS_WB_RECLAIM_STEP, 0, &done);
		if (!done) {
			/* Freed objects may sit in sparse zspages. */
			if (compacted)
				break;
			zs_compact(s->pool);
			compacted = true;
		}
	}
}

void gs_wb_reclaim_work(struct work_struct *work)
{
	struct gs_store *s = container_of(work, struct gs_store, wb.work);
	unsigned long limit = READ_ONCE(s->limit_pages);

	if (limit)
		gs_wb_reclaim(s, limit - limit / 8);
}

void __gs_wb_kick(struct gs_store *s)
{
	if (gs_wb_can_progress(s))
		queue_work(s->wb.wq, &s->wb.work);
}

/*
 * Whether reclaim with @gfp may wait for our writeback: it needs I/O and,
 * since the backing device may be a loop device over a file (which
 * ghostswapctl sets up), the filesystem too. A GFP_NOFS reclaimer may
 * hold a lock of that filesystem that the loop device's I/O waits for.
 * Nor from inside a block driver's submission (current->bio_list set: a
 * stacked device's, or our own): a bio submitted there is only queued
 * until that submission returns, so waiting for its end never ends.
 */
static bool gs_shrink_may_write(gfp_t gfp)
{
	if (current->bio_list)
		return false;
	return (gfp & (__GFP_IO | __GFP_FS)) == (__GFP_IO | __GFP_FS);
}

unsigned long gs_shrink_count(struct shrinker *sh,
			      struct shrink_control *sc)
{
	struct gs_store *s = sh->private_data;
	unsigned long n;

	/*
	 * Nothing to gain from us while writeback cannot move a page, or
	 * from a reclaimer that cannot wait for it.
	 */
	if (!gs_shrink_may_write(sc->gfp_mask) ||
	    !READ_ONCE(s->wb.use_shrinker) || !gs_wb_can_progress(s))
		return 0;
	n = gs_stat_read(&s->stats, GS_STAT_COMP_PAGES) +
	    gs_stat_read(&s->stats, GS_STAT_HUGE_PAGES);
	return n ?: SHRINK_EMPTY;
}

unsigned long gs_shrink_scan(struct shrinker *sh,
			     struct shrink_control *sc)
{
	struct gs_store *s = sh->private_data;
	u64 done = 0;

	/*
	 * No I/O from a context that must not do any or must not enter a
	 * filesystem, nor from our own; never wait for a writeback that is
	 * running (it may be what allocates memory).
	 */
	if (!gs_shrink_may_write(sc->gfp_mask) ||
	    !READ_ONCE(s->wb.use_shrinker) || !gs_wb_can_progress(s))
		return SHRINK_STOP;
	gs_wb_rounds(s, GS_WB_COLD, 0, s->nr_slots, sc->nr_to_scan,
		     GS_WB_TRY, &done);
	return done ?: SHRINK_STOP;
}
