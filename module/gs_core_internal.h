/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ghostswap store core, its inside: what the core's files share, for them
 * only. The layers above the core call it through gs_core.h; nothing but
 * the core's files includes this.
 *
 * The core's files, one concern each:
 *  gs_core.c         clusters and slots: the index's use, slot words,
 *                    pack, install, the pinned read of a page, free, the
 *                    ages' clock; a page's write, read and free, with all
 *                    they inline
 *  gs_core_unit.c    units, their slot side: runs stored and read as
 *                    units, units mostly gone split into single pages
 *  gs_slot_wb.c      the writeback tier's hold on slots: units written
 *                    back whole, read and moved on the backing device;
 *                    pinned entries let go of at the end of backing I/O
 *  gs_slot_recomp.c  one slot (or its unit) compressed again
 *  gs_core_life.c    a store's table and pool made and unmade, and the
 *                    settings that want them empty
 * Each of the others calls gs_core.c, which calls none of them; of each
 * other, only gs_core_life.c calls gs_core_unit.c (the split worker a new
 * store sets up).
 *
 * First, gs_core.c's inline helpers that the others use too. Then its
 * functions for them: some the out-of-line form of a static helper that
 * its page paths inline or call within the file (__gs_*() there), so that
 * what those paths compile to does not depend on the files beside it.
 */
#ifndef _GS_CORE_INTERNAL_H
#define _GS_CORE_INTERNAL_H

#include <linux/compiler.h>
#include <linux/mm.h>
#include <linux/preempt.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/types.h>
#include <linux/zsmalloc.h>
#include "gs_comp.h"
#include "gs_compat.h"
#include "gs_core.h"
#include "gs_index.h"
#include "gs_store.h"
#include "gs_table.h"
#include "gs_unit.h"

struct work_struct;

/* ----------------------------------------------------------- clusters */

/*
 * The read side of a lookup that ends in a cluster lock. The clusters
 * are freed with call_rcu(), whose grace periods wait for code that runs
 * with preemption disabled as they wait for rcu_read_lock(): disabling
 * preemption is inline, rcu_read_lock() is a call under preemptible RCU,
 * and every read and write looks up a cluster. Under PREEMPT_RT the
 * cluster lock may sleep, which only rcu_read_lock() allows, so it is
 * taken there. Elsewhere it is plain preempt_disable(), not
 * rcu_read_lock_sched(): lockdep takes the latter for a section that is
 * atomic on PREEMPT_RT too, and its lock nesting check
 * (CONFIG_PROVE_RAW_LOCK_NESTING) then reports the cluster lock.
 */
static __always_inline void gs_lookup_begin(void)
{
	if (IS_ENABLED(CONFIG_PREEMPT_RT))
		rcu_read_lock();
	else
		preempt_disable();
}

static __always_inline void gs_lookup_end(void)
{
	if (IS_ENABLED(CONFIG_PREEMPT_RT))
		rcu_read_unlock();
	else
		preempt_enable();
}

/*
 * The live cluster of @ci, locked, or NULL: a lookup under RCU, then the
 * cluster lock, and a cluster that died in between counts as none.
 * Inlined into the read path.
 */
static __always_inline struct gs_cluster *gs_cluster_find(struct gs_store *s,
							  unsigned long ci)
{
	struct gs_cluster **hint = &s->hint[ci % GS_CLUSTER_HINTS];
	struct gs_cluster *cl;

	gs_lookup_begin();
	/*
	 * The hint first. It names only clusters that were live when it was
	 * set, with their lock held, and gs_cluster_put() clears it under
	 * that lock before the cluster is freed with call_rcu(): so what it
	 * names here is not freed before gs_lookup_end(), and ->ci, set
	 * before the cluster went into the index, may be read unlocked.
	 */
	cl = READ_ONCE(*hint);
	if (likely(cl && cl->ci == ci)) {
		spin_lock(&cl->lock);
		if (likely(!cl->dead))
			goto found;
		spin_unlock(&cl->lock);
	}
	/*
	 * xa_load() walks the XArray under an rcu_read_lock() of its own,
	 * nested in ours (legal with preemption disabled, and under
	 * PREEMPT_RT): the walk is RCU-checked whatever the caller holds,
	 * which a bare xas_load() with only preemption disabled is not
	 * (lockdep's RCU checks want rcu_read_lock()). Its nodes are freed
	 * after a grace period; the cluster it returns stays valid until its
	 * lock is taken because of gs_lookup_begin().
	 */
	cl = gs_index_load(&s->clusters, ci);
	if (cl) {
		spin_lock(&cl->lock);
		if (likely(!cl->dead)) {
			if (READ_ONCE(*hint) != cl)
				WRITE_ONCE(*hint, cl);
			goto found;
		}
		spin_unlock(&cl->lock);
	}
	gs_lookup_end();
	return NULL;
found:
	gs_lookup_end();
	/* The caller ends the hold (gs_cluster_unlock(), ...). */
	__release(&cl->lock);
	return cl;
}

/* mempool_alloc_t and mempool_free_t of a store's cluster reserve. */
void *gs_cluster_alloc(gfp_t gfp, void *data);
void gs_cluster_release(void *element, void *data);

/* -------------------------------------------------------------- units */

/*
 * Unit @u (of @cl, locked) no longer waits for gs_unit_split_work():
 * its split is under way, or none of its slots is left to split.
 */
static inline void gs_unit_unmark(struct gs_cluster *cl, struct gs_unit *u)
{
	if (u->split == GS_UNIT_SPLIT_MARKED)
		cl->units_marked--;
	u->split = GS_UNIT_SPLIT_DONE;
}

/*
 * A read of unit @u, of cluster @cl (locked): until
 * gs_unit_read_end(), the unit stays, and so does the cluster.
 */
static inline struct gs_unit *gs_unit_read_begin(struct gs_cluster *cl,
						 struct gs_unit *u)
{
	u->readers++;
	cl->pins++;
	return u;
}

/*
 * The end of a read of unit @u, begun in cluster @ci (@cl, unlocked):
 * the unit goes if its slots let go of it meanwhile, the cluster if it
 * went empty. @err: how the read of @slot went.
 */
void gs_unit_read_end(struct gs_store *s, struct gs_cluster *cl,
		      unsigned long ci, struct gs_unit *u, u64 slot, int err);
/* The work that splits the units marked for it (gs_core_unit.c). */
void gs_unit_split_work(struct work_struct *work);

/* -------------------------------------------------------------- slots */

static inline bool gs_page_same_filled(const void *src, unsigned long *word)
{
	const unsigned long *p = src;
	unsigned long val = p[0];
	unsigned int i, n = PAGE_SIZE / sizeof(*p);

	if (p[n - 1] != val)
		return false;
	for (i = 1; i < n - 1; i++)
		if (p[i] != val)
			return false;
	*word = val;
	return true;
}

/*
 * Compress @src (unless the heuristic says it is no use) and put it into
 * the pool: gs_page_store()'s packing but SAME, its entry in *@p and not
 * installed, with stream @held (the caller's) or one of its own (@held
 * NULL); the pool's limit counts only if @limit.
 */
int gs_pool_pack(struct gs_store *s, struct gs_stream *held, const void *src,
		 gfp_t gfp, enum gs_direct direct, bool limit,
		 struct gs_packed *p);
/*
 * @slot, in @cl (locked), holds @e (with @aux_hi) in place of what it
 * held, its age left as it was (gs_slot_put()), or stored at @now
 * (gs_slot_set()); the caller counts it in the store's stats.
 */
void gs_slot_put(struct gs_store *s, struct gs_cluster *cl, u64 slot,
		 unsigned long e, unsigned int aux_hi);
void gs_slot_set(struct gs_store *s, struct gs_cluster *cl, u64 slot,
		 unsigned long e, unsigned int aux_hi, u32 now);
/* Drop what a new entry that was never installed holds. */
void gs_entry_discard(struct gs_store *s, unsigned long e);
/* Count what new entry @e (with @aux_hi), now in a slot, holds. */
void gs_stat_entry_in(struct gs_store *s, unsigned long e, unsigned int aux_hi);

/* ------------------------------------------------------- pool objects */

/* Bytes the pool object of @e, in slot @i of @cl, takes (compr_data_size). */
static __always_inline unsigned int gs_obj_len(const struct gs_cluster *cl,
					       unsigned int i, unsigned long e)
{
	return gs_entry_kind(e) == GS_KIND_RAW ? PAGE_SIZE :
	       gs_slot_aux(cl, i, e);
}

/*
 * Read the pool object of @e (pinned by us, no lock held) into the page
 * at @dst: decompressed straight from zsmalloc's mapping where it lies in
 * one page, else from the copy zsmalloc makes in the stream's buffer.
 * Where that mapping disables preemption (GS_ZS_READ_ATOMIC, 6.12), the
 * object is copied to the stream's buffer and decompressed after the
 * mapping ends: a decompressor may sleep.
 */
static __always_inline int gs_obj_read(struct gs_store *s,
				       struct gs_stream *st,
				       unsigned long e, unsigned int len,
				       void *dst)
{
	unsigned long handle = gs_handle_decode(gs_entry_value(e));
	void *src;
	int ret = 0;

	src = zs_obj_read_begin(s->pool, handle, len, st ? st->buf : NULL);
	if (gs_entry_kind(e) == GS_KIND_RAW) {
		copy_page(dst, src);
	} else if (GS_ZS_READ_ATOMIC) {
		if (src != st->buf)
			memcpy(st->buf, src, len);
		zs_obj_read_end(s->pool, handle, len, src);
		return gs_decompress(s->comp, st, gs_entry_prio(e), st->buf,
				     len, dst);
	} else {
		ret = gs_decompress(s->comp, st, gs_entry_prio(e), src, len,
				    dst);
	}
	zs_obj_read_end(s->pool, handle, len, src);
	return ret;
}

/*
 * Whether the entry @now still holds the pool object of @e: its flags
 * may have changed meanwhile (COLD, WB, PINNED), the object is what counts.
 */
static inline bool gs_entry_holds_obj(unsigned long now, unsigned long e)
{
	return gs_entry_kind(now) == gs_entry_kind(e) &&
	       gs_entry_payload(now) == gs_entry_payload(e);
}

/*
 * Pin @e, the COMPRESSED or RAW entry in slot @i of @cl (locked), not
 * pinned, for a read with the lock dropped: until gs_obj_unpin(), the
 * object stays, and so does the cluster.
 */
static inline unsigned long gs_obj_pin(struct gs_cluster *cl, unsigned int i,
				       unsigned long e)
{
	e |= GS_FLAG_PINNED;
	atomic_long_set(&cl->table[i], e);
	return e;
}

/*
 * Drop our pin of @e in slot @slot of @cl, with no lock; if the entry let
 * go of the object meanwhile, it is ours to free (gs_obj_unpin()). And
 * the same, but the entry gains @flags if nothing else about it changed
 * meanwhile (gs_obj_unpin_mark()).
 */
void gs_obj_unpin(struct gs_store *s, struct gs_cluster *cl, u64 slot,
		  unsigned long e);
void gs_obj_unpin_mark(struct gs_store *s, struct gs_cluster *cl, u64 slot,
		       unsigned long e, unsigned long flags);

#endif /* _GS_CORE_INTERNAL_H */
