// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswap writeback tier: backing compaction. Written-back pages are
 * moved down, page by page under wb.lock, to fill the holes of the
 * backing device (backing_compact), or of a backing store that shrinks
 * and asks for it (->sparse, on the tier's workqueue). A page moved is
 * unsealed and sealed again for its new slot. It calls sealing
 * (gs_wb_seal.c), the core (gs_core.h, units through it) and the backing
 * store (gs_backing.c).
 */
#define pr_fmt(fmt) "ghostswap: " fmt

#include <linux/atomic.h>
#include <linux/container_of.h>
#include <linux/err.h>
#include <linux/mutex.h>
#include <linux/printk.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/workqueue.h>
#include "gs_backing.h"
#include "gs_core.h"
#include "gs_store.h"
#include "gs_unit.h"
#include "gs_wb_internal.h"

/*
 * Copy backing slot @from (@len bytes of data, of ghost slot @owner) to
 * @to through @buf: checked, and sealed again for @to. Returns 0 or an
 * errno; the I/O counts in bd_compact_reads and bd_compact_writes.
 */
static int gs_relocate_copy(struct gs_store *s, u64 owner, u64 from, u64 to,
			    void *buf, unsigned int len)
{
	struct gs_backing *bk = s->bk;
	int ret;

	ret = bk->ops->read(bk, from, buf);
	if (!ret)
		ret = gs_wb_unseal(s, owner, from, buf, len,
				   gs_wb_sum_of(s, from));
	if (ret) {
		atomic_long_inc(&s->stats.bd_read_errors);
		return ret;
	}
	atomic_long_inc(&s->stats.bd_compact_reads);
	/* The same data: its checksum moves with it. */
	if (s->wb.checksum)
		gs_backing_set_sum(bk, to, gs_backing_sum_of(bk, from));
	/* Encrypted again: the tweak is the slot. */
	ret = gs_wb_encrypt(s, to, buf, buf) ?
	      bk->ops->write(bk, to, &buf, 1) : -EIO;
	atomic_long_inc(ret ? &s->stats.bd_write_errors :
			&s->stats.bd_compact_writes);
	return ret;
}

/*
 * gs_relocate() of a slot of a unit's chain, the unit's run at @first:
 * the same, the unit counted in as its mover (no reader meanwhile).
 */
static int gs_relocate_unit(struct gs_store *s, u64 first, u64 from,
			    u64 to, void *buf)
{
	struct gs_backing *bk = s->bk;
	struct gs_cluster *cl;
	struct gs_unit *u;
	unsigned int j;
	int ret;

	u = gs_unit_bk_move_begin(s, first, from, &j, &cl);
	if (IS_ERR_OR_NULL(u)) {
		gs_backing_free(bk, to);
		return -EAGAIN;
	}
	ret = gs_relocate_copy(s, first, from, to, buf,
			       gs_unit_obj_size(u, j));
	/* Moved (@from freed), or where it was (@to ours to free). */
	gs_unit_bk_move_end(s, cl, first, u, j, ret ? U64_MAX : to);
	if (ret) {
		gs_backing_free(bk, to);
		return -EIO;
	}
	return 1;
}

/*
 * Move the page at backing slot @from, owned by ghost slot @owner, to the
 * lowest free slot below it. Returns 1 if moved, 0 if nothing below is
 * free, -EAGAIN if the slot is busy (pinned by a reader, or it changed),
 * or an I/O error. The entry is pinned (GS_FLAG_IO) while its page is
 * copied, as by a reader: a free or an overwrite meanwhile leaves @from
 * allocated, for us to free, so it cannot be taken again under the copy.
 * Its I/O counts in bd_compact_reads and bd_compact_writes only.
 */
static int gs_relocate(struct gs_store *s, u64 owner, u64 from)
{
	unsigned int i = owner & (GS_CLUSTER_SLOTS - 1), len;
	void *buf = s->wb.batches->bufs[0];
	struct gs_backing *bk = s->bk;
	unsigned long was, moved;
	struct gs_cluster *cl;
	bool mine;
	int ret;
	u64 to;

	ret = gs_backing_alloc(bk, &owner, 1, &to, from, true);
	if (ret <= 0)
		return ret;
	/*
	 * Pin it, its length read with it. Its flags (the algorithm) stay;
	 * a pinned one is busy.
	 */
	cl = gs_cluster_get(s, owner >> GS_CLUSTER_SHIFT, 0);
	was = cl ? atomic_long_read(&cl->table[i]) : 0;
	/*
	 * Not a page of its own: one of a unit's chain whose run starts
	 * here, or nothing (gs_relocate_unit() finds no unit then).
	 */
	if (gs_entry_kind(was) != GS_KIND_WRITTEN_BACK ||
	    gs_entry_value(was) != from) {
		if (cl)
			gs_cluster_unlock(cl);
		return gs_relocate_unit(s, owner, from, to, buf);
	}
	if (was & GS_FLAG_IO) {
		gs_cluster_unlock(cl);
		gs_backing_free(bk, to);
		return -EAGAIN;
	}
	len = gs_slot_aux(cl, i, was) ?: PAGE_SIZE;
	atomic_long_set(&cl->table[i], was | GS_FLAG_IO);
	gs_cluster_unlock(cl);

	ret = gs_relocate_copy(s, owner, from, to, buf, len);

	/* Unpin: moved, or back where it was if the copy failed. */
	moved = gs_entry_move(was, to);
	mine = gs_slot_replace(s, owner, was | GS_FLAG_IO,
			       ret ? was : moved);
	/* What the entry no longer holds is ours to free. */
	if (!mine || !ret)
		gs_backing_free(bk, from);
	if (!mine || ret)
		gs_backing_free(bk, to);
	if (ret)
		return -EIO;
	return mine ? 1 : -EAGAIN;
}

int gs_store_backing_compact(struct gs_store *s, u64 *moved)
{
	struct gs_backing *bk = s->bk;
	unsigned int busy = 0;
	u64 last, owner, steps;
	int ret = 0;

	*moved = 0;
	if (!bk)
		return -ENODEV;
	/* Slots freed but not yet discarded are holes to fill, too. */
	gs_backing_drain(bk);
	/* Bounded: pages written back meanwhile may land above the holes. */
	for (steps = gs_backing_used(bk) + 1; steps &&
	     !fatal_signal_pending(current) && !READ_ONCE(s->wb.stopping);
	     steps--) {
		/* Per page, so that stores and writeback are not held up. */
		mutex_lock(&s->wb.lock);
		last = gs_backing_last_used(bk);
		owner = last == U64_MAX ? U64_MAX : gs_backing_owner(bk, last);
		ret = owner == U64_MAX ? 0 : gs_relocate(s, owner, last);
		mutex_unlock(&s->wb.lock);
		if (last == U64_MAX)
			break;
		if (owner == U64_MAX) {
			/* Freed meanwhile: once discarded, it is a hole. */
			gs_backing_drain(bk);
			continue;
		}
		if (ret == 1) {
			(*moved)++;
			atomic_long_inc(&s->stats.bd_relocated);
			busy = 0;
		} else if (ret == -EAGAIN && ++busy < 100) {
			/* A reader holds it, or it is being freed: wait. */
			schedule_timeout_uninterruptible(1);
		} else if (owner != U64_MAX) {
			break;	/* packed (0), or an I/O error */
		}
		cond_resched();
	}
	/* Allocate from the start again: the holes are at the end now. */
	mutex_lock(&bk->alloc_lock);
	bk->cursor = 0;
	mutex_unlock(&bk->alloc_lock);
	if (ret == -EAGAIN)
		return -EBUSY;
	return ret < 0 ? ret : 0;
}

/*
 * A backing store that shrinks (a directory's chunks) has its slots in use
 * spread out: move them down, so that its top can go.
 */
void gs_wb_compact_work(struct work_struct *work)
{
	struct gs_store *s = container_of(work, struct gs_store,
					  wb.compact_work);
	u64 moved;
	int ret;

	ret = gs_store_backing_compact(s, &moved);
	pr_debug("backing compaction of a sparse store moved %llu pages: %d\n",
		 moved, ret);
}

/* The backing store's ->sparse: any context. */
void gs_wb_sparse(struct gs_backing *bk)
{
	struct gs_store *s = bk->owner;

	queue_work(s->wb.wq, &s->wb.compact_work);
}
