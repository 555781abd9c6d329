// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswap store core: clusters and slots.
 *
 * The ghost address space is an index (gs_index.h, an XArray) of clusters
 * by slot >> GS_CLUSTER_SHIFT. A cluster is allocated by the first write
 * into its range and freed when its last slot is freed, so space that
 * holds nothing costs nothing.
 *
 * Data: a page whose 64-bit words are all equal is kept in its table entry
 * (SAME). Anything else is compressed with the store's algorithm and kept
 * in a zsmalloc pool (COMPRESSED), or kept there as is if it does not
 * shrink below zsmalloc's huge class size (RAW).
 *
 * Locking: each cluster has a spinlock that covers its table, aux_hi
 * array, used count and dead flag. Lookups run under RCU (with preemption
 * disabled, but under PREEMPT_RT: see gs_lookup_begin()), take the
 * cluster lock and retry if the cluster died in between. A cluster dies
 * with its lock held: it is marked dead and erased from the index (lock
 * order: cluster lock, then the index's xa_lock), then freed after an RCU
 * grace period. Nothing under a cluster lock sleeps, so freeing works from
 * swap_slot_free_notify(), which the swap core calls under its own
 * spinlock. A reader pins the entry of
 * a pool object (PINNED) and reads it after dropping the cluster lock,
 * holding only its stream's mutex, then unpins it with no lock at all (a
 * compare-and-exchange of the entry), so whatever else changes an entry
 * that may be pinned does so atomically too (gs_entry_take()). A free or
 * overwrite meanwhile leaves the object to the reader, and the cluster's
 * pin count keeps the cluster alive until the reader unpins it. Lock
 * order is stream mutex, then cluster lock, then the backing store's
 * reverse map lock, then zsmalloc's own locks.
 *
 * With a backing device, a slot can also be WRITTEN_BACK: the writeback
 * tier (gs_writeback.c, gs_wb_*.c) moves entries there and reads them
 * back; the core only frees them. A read of one pins it (IO flag) for
 * the duration of the I/O, and so does a write that installs its entry
 * before the I/O starts (a read then waits for it): a free or overwrite
 * meanwhile leaves the backing slot allocated, and the I/O's end frees
 * it when it finds its entry gone, so a backing slot is never reused
 * under I/O of it. The end unpins the entry with no lock
 * (gs_slot_replace()), from wherever the I/O ends.
 *
 * The core calls nothing above it: the layers built on it (gs_store.c,
 * gs_writeback.c, gs_wb_*.c) call it through gs_core.h.
 *
 * This file is the core's clusters and their slots: the index's use, the
 * slot words, pack, install, the pinned read of a page, free, and the
 * ages' clock. A page's write, read and free, and every helper they
 * inline, are here, in one file. Beside it, each of one concern, sharing
 * what they need of it through gs_core_internal.h: gs_core_unit.c (runs
 * stored and read as units, the split of units mostly gone), gs_slot_wb.c
 * (the writeback tier's hold on units and pinned entries),
 * gs_slot_recomp.c (one slot compressed again) and gs_core_life.c (a
 * store's table and pool made and unmade, its settings). They call this
 * file; it calls none of them.
 */
#define pr_fmt(fmt) "ghostswap: " fmt

#include <linux/gfp.h>
#include <linux/highmem.h>
#include <linux/log2.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/workqueue.h>
#include <kunit/static_stub.h>
#include "gs_backing.h"
#include "gs_comp.h"
#include "gs_compat.h"
#include "gs_core.h"
#include "gs_core_internal.h"
#include "gs_heuristic.h"
#include "gs_store.h"
#include "gs_unit.h"

static_assert(PAGE_SIZE == 4096, "ghostswap supports 4 KiB pages only");

static struct kmem_cache *gs_cluster_cache;

size_t gs_cluster_bytes(void)
{
	return kmem_cache_size(gs_cluster_cache) + PAGE_SIZE;
}

long gs_stat_read(struct gs_stats *st, enum gs_hot_stat i)
{
	unsigned int cpu;
	long sum = 0;

	for_each_possible_cpu(cpu)
		sum += per_cpu_ptr(st->hot, cpu)->v[i];
	return sum;
}

/* A cluster's header and its zeroed table page. */
static void *__gs_cluster_alloc(gfp_t gfp, void *data)
{
	struct gs_cluster *cl;

	cl = kmem_cache_alloc(gs_cluster_cache, gfp);
	if (!cl)
		return NULL;
	cl->table = (atomic_long_t *)get_zeroed_page(gfp);
	if (!cl->table) {
		kmem_cache_free(gs_cluster_cache, cl);
		return NULL;
	}
	return cl;
}

/* mempool_alloc_t: __gs_cluster_alloc(), the reserve's (gs_core_life.c). */
void *gs_cluster_alloc(gfp_t gfp, void *data)
{
	return __gs_cluster_alloc(gfp, data);
}

/* mempool_free_t */
void gs_cluster_release(void *element, void *data)
{
	struct gs_cluster *cl = element;

	free_page((unsigned long)cl->table);
	kmem_cache_free(gs_cluster_cache, cl);
}

/* Back to the reserve if it is short, else freed. Any context. */
static void gs_cluster_give(struct gs_store *s, struct gs_cluster *cl)
{
	mempool_free(cl, s->reserve);
}

static void gs_cluster_free_rcu(struct rcu_head *head)
{
	struct gs_cluster *cl = container_of(head, struct gs_cluster, rcu);

	gs_cluster_give(cl->store, cl);
}

/*
 * A new empty cluster. The allocation is opportunistic (no warning: the
 * caller fails the write and swap keeps the page); if it fails, a cluster
 * comes from the reserve, which clusters refill as they are freed. The
 * table of a cluster that comes back is all zero already: a cluster dies
 * only once every slot is EMPTY.
 */
static struct gs_cluster *gs_cluster_new(struct gs_store *s, gfp_t gfp)
{
	struct gs_cluster *cl = NULL;
	atomic_long_t *table;

	if (!gs_fail_alloc(s))
		cl = __gs_cluster_alloc(gfp | __GFP_NOWARN, NULL);
	if (!cl)
		cl = mempool_alloc_preallocated(s->reserve);
	if (!cl)
		return NULL;
	table = cl->table;
	memset(cl, 0, sizeof(*cl));
	cl->table = table;
	cl->age_base = gs_age_now();
	spin_lock_init(&cl->lock);
	return cl;
}

atomic64_t gs_age_clock = ATOMIC64_INIT(0);

/*
 * The ages' clock's word for a reading of the boot clock, @ns, made in
 * tick @tick or after it: the seconds, and the tick they hold for. The
 * reading holds for the rest of its tick only if the second cannot turn
 * before that tick is over: not within two ticks of the turn, where the
 * word gets a tick it is never used in (the one before). So whatever
 * gs_age_now() gives is the boot time's own second at that instant, and
 * an age, the difference of two such values, is never overstated. This
 * assumes that jiffies moves on at least once in two ticks of boot time
 * while the CPU runs, as it does with the tick running.
 */
u64 gs_age_reading(u64 ns, u32 tick)
{
	u32 rem, secs = div_u64_rem(ns, NSEC_PER_SEC, &rem);

	if (rem >= NSEC_PER_SEC - 2 * TICK_NSEC)
		tick--;
	return (u64)secs << 32 | tick;
}

/* gs_age_now() in a new tick: read the boot clock and keep the reading. */
u32 gs_age_clock_read(void)
{
	/*
	 * The tick first, then the clock: the reading is then made in that
	 * tick or after it, never before it. (The boot clock itself, not
	 * its coarse seconds: those move at the tick's timekeeping update,
	 * which comes after jiffies does, so a reading between the two
	 * would give the second before for the whole tick.)
	 */
	u32 tick = jiffies;
	u64 word = gs_age_reading(ktime_get_boottime_ns(), tick);

	atomic64_set(&gs_age_clock, word);
	return word >> 32;
}

/*
 * An access at @now falls past the last age unit of @cl (locked): move the
 * base up to the oldest access held, then double the units, then slide
 * the base, until it fits; every value moves with it, rounded down (see
 * gs_table.h). At most one pass over the cluster's 512 bytes. Returns
 * the unit of @now.
 */
u32 gs_age_rescale(struct gs_cluster *cl, u32 now)
{
	u32 oldest = GS_AGE_UNIT_MAX, unit, halve = 0, slide = 0;
	unsigned int i, u;

	for (i = 0; i < GS_CLUSTER_SLOTS; i++)
		if (atomic_long_read(&cl->table[i]))
			oldest = min_t(u32, oldest, cl->age[i] & GS_AGE_UNIT);
	cl->age_base += oldest << cl->age_shift;
	unit = gs_age_unit(cl, now);
	while (unit > GS_AGE_UNIT_MAX && cl->age_shift < GS_AGE_SHIFT_MAX) {
		cl->age_shift++;
		halve++;
		unit = gs_age_unit(cl, now);
	}
	if (unit > GS_AGE_UNIT_MAX) {
		slide = unit - GS_AGE_UNIT_MAX;
		cl->age_base += slide << cl->age_shift;
		unit = GS_AGE_UNIT_MAX;
	}
	for (i = 0; i < GS_CLUSTER_SLOTS; i++) {
		u = cl->age[i] & GS_AGE_UNIT;
		u = u > oldest ? (u - oldest) >> halve : 0;
		u = u > slide ? u - slide : 0;
		cl->age[i] = (cl->age[i] & GS_AGE_IDLE) | u;
	}
	return unit;
}

size_t gs_store_reserve_bytes(struct gs_store *s)
{
	/* A statistic: the mempool changes it under its own lock. */
	return (size_t)data_race(READ_ONCE(s->reserve->curr_nr)) *
	       gs_cluster_bytes();
}

size_t gs_store_index_reserve_bytes(struct gs_store *s)
{
	return gs_index_spares(&s->clusters) * gs_index_node_bytes();
}

/* Publish a cluster that was allocated and inserted: update the counters. */
static void gs_cluster_account(struct gs_store *s)
{
	long n = atomic_long_inc_return(&s->stats.clusters);

	gs_stat_max(&s->stats.clusters_peak, n);
	atomic_long_add(gs_cluster_bytes(), &s->stats.meta_bytes);
}

/*
 * Find the cluster of @ci and return it locked, or NULL if it does not
 * exist and @gfp is 0. With @gfp, a missing cluster is created; returns an
 * ERR_PTR on allocation failure.
 */
struct gs_cluster *gs_cluster_get(struct gs_store *s, unsigned long ci,
				  gfp_t gfp)
{
	struct gs_cluster *cl, *new = NULL;
	void *old;

	for (;;) {
		cl = gs_cluster_find(s, ci);
		if (cl)
			break;
		if (!gfp)
			return NULL;
		if (!new) {
			new = gs_cluster_new(s, gfp);
			if (!new)
				return ERR_PTR(-ENOMEM);
			new->ci = ci;
		}
		/* Fault injection: nodes from the index's reserve only. */
		old = gs_index_insert(&s->clusters, ci, new,
				      gs_fail_alloc(s) ? 0 : gfp | __GFP_NOWARN);
		if (IS_ERR(old)) {
			gs_cluster_give(s, new);
			return old;
		}
		if (!old) {
			/*
			 * Published. Look it up again like anybody else: it
			 * may already have been used and emptied by others.
			 */
			gs_cluster_account(s);
			new = NULL;
		}
		/* Else we lost a race with another creator: use theirs. */
	}
	if (new)
		gs_cluster_give(s, new);
	return cl;
}

/*
 * The first live cluster at index *@ci..@last, locked, with *@ci set to
 * its index; NULL if there is none. Holes cost little: xa_find() skips
 * a missing node's whole range.
 */
struct gs_cluster *gs_cluster_next(struct gs_store *s, unsigned long *ci,
				   unsigned long last)
{
	struct gs_cluster *cl;

	for (;;) {
		cl = gs_index_find(&s->clusters, ci, last);
		if (!cl)
			return NULL;
		cl = gs_cluster_get(s, *ci, 0);
		/* It died in between: on to the next one. */
		if (cl || *ci == last)
			return cl;
		(*ci)++;
	}
}

/*
 * One step of a scan over the slots from *@pos on: the first live cluster
 * holding slots at or after it, locked, *@pos moved up to its first slot
 * if it lay in a hole, *@i the index of *@pos in the cluster and *@end at
 * most @span entries further (within the cluster). NULL past the last
 * cluster, *@pos then nr_slots. The caller sets *@pos past what it
 * looked at and unlocks the cluster.
 */
struct gs_cluster *gs_scan_next(struct gs_store *s, u64 *pos,
				unsigned int span, unsigned int *i,
				unsigned int *end)
{
	unsigned long ci = *pos >> GS_CLUSTER_SHIFT;
	struct gs_cluster *cl;
	u64 base;

	cl = gs_cluster_next(s, &ci, ULONG_MAX);
	if (!cl) {
		*pos = s->nr_slots;
		return NULL;
	}
	base = (u64)ci << GS_CLUSTER_SHIFT;
	if (base > *pos)
		*pos = base;
	*i = *pos - base;
	*end = min_t(unsigned int, GS_CLUSTER_SLOTS, *i + span);
	return cl;
}

/*
 * Called with the cluster locked; unlocks it. Kills it if it went empty.
 */
void gs_cluster_put(struct gs_store *s, unsigned long ci,
		    struct gs_cluster *cl)
{
	if (cl->used || cl->pins) {
		gs_cluster_unlock(cl);
		return;
	}
	/* Unmarked as their last slots let go of them. */
	WARN_ON_ONCE(cl->units_marked);
	cl->dead = true;
	cl->store = s;
	/* Out of the hint (if another cluster took its place, that stays). */
	cmpxchg(&s->hint[ci % GS_CLUSTER_HINTS], cl, NULL);
	gs_index_erase(&s->clusters, ci);
	gs_cluster_unlock(cl);
	atomic_long_dec(&s->stats.clusters);
	atomic_long_sub(gs_cluster_bytes(), &s->stats.meta_bytes);
	call_rcu(&cl->rcu, gs_cluster_free_rcu);
}

/*
 * The end of a read of unit @u, begun in cluster @ci (@cl, unlocked):
 * the unit goes if its slots let go of it meanwhile, the cluster if it
 * went empty. @err: how the read of @slot went.
 */
static void __gs_unit_read_end(struct gs_store *s, struct gs_cluster *cl,
			       unsigned long ci, struct gs_unit *u, u64 slot,
			       int err)
{
	if (unlikely(err))
		pr_err_ratelimited("slot %llu: %s cannot decompress a unit of %u bytes: %d\n",
				   slot, gs_comp_name(s->comp, u->prio) ?: "?",
				   u->len, err);
	spin_lock(&cl->lock);
	cl->pins--;
	if (!--u->readers && !u->live) {
		gs_unit_unmark(cl, u);
		gs_unit_free(s, u);
	}
	/* Handed over to gs_cluster_put(), which unlocks it. */
	__release(&cl->lock);
	gs_cluster_put(s, ci, cl);
}

/* __gs_unit_read_end() out of line, for the files beside the core. */
void gs_unit_read_end(struct gs_store *s, struct gs_cluster *cl,
		      unsigned long ci, struct gs_unit *u, u64 slot, int err)
{
	__gs_unit_read_end(s, cl, ci, u, slot, err);
}

/*
 * The entry of @slot (in @cl, the unit's cluster, locked) no longer
 * refers to unit @u: the unit goes if nothing else refers to it or reads
 * it. If it is mostly gone, it is marked for gs_unit_split_work(), which
 * never runs here: this may be swap_slot_free_notify(), under the swap
 * core's lock.
 */
static void gs_unit_let_go(struct gs_store *s, struct gs_cluster *cl,
			   struct gs_unit *u, u64 slot)
{
	u->live &= ~BIT(slot & (u->pages - 1));
	if (!u->live) {
		gs_unit_unmark(cl, u);
		/* Else its last reader frees it. */
		if (!u->readers)
			gs_unit_free(s, u);
	} else if (!u->split && !u->backed && gs_unit_mostly_gone(u) &&
		   !READ_ONCE(s->unit_split_off)) {
		u->split = GS_UNIT_SPLIT_MARKED;
		cl->units_marked++;
		gs_index_mark(&s->clusters, slot >> GS_CLUSTER_SHIFT);
		queue_work(system_dfl_wq, &s->unit_split_work);
	}
}

/*
 * Count out and free what entry @e, just taken from slot @slot of @cl
 * (locked), held; its length is read from the slot's aux_hi, which the
 * caller changes after this. Never sleeps: zs_free() is atomic-safe.
 */
static void gs_entry_release(struct gs_store *s, struct gs_cluster *cl,
			     u64 slot, unsigned long e)
{
	unsigned int i = slot & (GS_CLUSTER_SLOTS - 1);

	switch (gs_entry_kind(e)) {
	case GS_KIND_SAME:
		gs_stat_dec(&s->stats, GS_STAT_SAME_PAGES);
		break;
	case GS_KIND_COMPRESSED:
	case GS_KIND_RAW:
		gs_stat_add(&s->stats, GS_STAT_COMPR_BYTES,
			    -(long)gs_obj_len(cl, i, e));
		gs_stat_dec(&s->stats, gs_entry_kind(e) == GS_KIND_RAW ?
			    GS_STAT_HUGE_PAGES : GS_STAT_COMP_PAGES);
		/* A reader has it mapped: the reader frees it. */
		if (!(e & GS_FLAG_PINNED))
			zs_free(s->pool, gs_handle_decode(gs_entry_value(e)));
		break;
	case GS_KIND_WRITTEN_BACK:
		gs_stat_dec(&s->stats, GS_STAT_WB_PAGES);
		/* A reader has it pinned: the reader frees it. */
		if (!(e & GS_FLAG_IO))
			gs_backing_free(s->bk, gs_entry_value(e));
		break;
	case GS_KIND_UNIT:
		gs_stat_dec(&s->stats, GS_STAT_UNIT_PAGES);
		gs_unit_let_go(s, cl, gs_entry_unit(e), slot);
		break;
	default:
		WARN_ONCE(1, "ghostswap: bad entry %lx\n", e);
		break;
	}
	gs_stat_dec(&s->stats, GS_STAT_SLOTS_USED);
}

/*
 * Clear one slot's entry under the cluster lock and free what it held.
 * Returns false if it was empty.
 */
static bool gs_slot_clear(struct gs_store *s, struct gs_cluster *cl,
			  u64 slot)
{
	unsigned int i = slot & (GS_CLUSTER_SLOTS - 1);

	if (gs_entry_kind(atomic_long_read(&cl->table[i])) == GS_KIND_EMPTY)
		return false;
	gs_entry_release(s, cl, slot, gs_entry_take(cl, i, 0));
	gs_aux_hi_set(cl->aux_hi, i, 0);
	cl->used--;
	return true;
}

/* Does the @direct policy send a page of this kind past the pool? */
static bool gs_direct_wanted(struct gs_store *s, enum gs_direct direct,
			     enum gs_kind kind, unsigned long flags)
{
	if (!s->bk || kind != GS_KIND_RAW)
		return false;
	switch (direct) {
	case GS_DIRECT_HUGE:
		return true;
	case GS_DIRECT_INCOMP:
		return flags & GS_FLAG_INCOMP;
	default:
		return false;
	}
}

/*
 * Compress @src (unless the heuristic says it is no use) and put it into
 * the pool: gs_page_store()'s packing but SAME. Each page is compressed
 * at most once here: a pool over its limit is found before, not after
 * (unless @limit is false: for a unit's pages, split out of it). With stream
 * @held, which the caller holds, or one of its own (@held NULL). Inline
 * in gs_page_store(), a page's write, which it is most of.
 */
static __always_inline int
__gs_pool_pack(struct gs_store *s, struct gs_stream *held, const void *src,
	       gfp_t gfp, enum gs_direct direct, bool limit,
	       struct gs_packed *p)
{
	enum gs_kind kind = GS_KIND_COMPRESSED;
	unsigned long handle, value, pages, flags = 0;
	struct gs_stream *st = held;
	unsigned int len = 0;
	const void *data;

	if (limit && gs_pool_full(s))
		return s->bk ? -EAGAIN : -ENOMEM;
	if (direct >= GS_DIRECT_ALL) {
		/* Not compressed at all: past the pool, or into it as is. */
		if (direct == GS_DIRECT_ALL && s->bk && !gs_backing_full(s->bk))
			return GS_PACK_DIRECT;
	} else if (READ_ONCE(s->incomp_check) &&
		   gs_page_looks_incompressible(src)) {
		gs_stat_inc(&s->stats, GS_STAT_HEUR_RAW);
	} else {
		if (!st)
			st = gs_stream_get(s->comp);
		len = gs_compress(s->comp, st, GS_PRIMARY_COMP, src, PAGE_SIZE);
		gs_stat_inc(&s->stats, GS_STAT_COMPRESSIONS);
	}
	data = len ? st->buf : NULL;
	if (!len && direct < GS_DIRECT_ALL)
		flags = GS_FLAG_INCOMP;
	if (!len || len >= s->huge_size) {
		/* Stored as it is: a RAW entry's length is PAGE_SIZE. */
		kind = GS_KIND_RAW;
		len = PAGE_SIZE;
		data = src;
	}
	if (gs_direct_wanted(s, direct, kind, flags)) {
		if (st != held)
			gs_stream_put(st);
		return GS_PACK_DIRECT;
	}
	/* The entry's kind and flags, one word kept across the calls. */
	flags = gs_entry(kind, flags | gs_prio_flags(GS_PRIMARY_COMP), 0);
	handle = gs_fail_alloc(s) ? (unsigned long)ERR_PTR(-ENOMEM) :
		 zs_malloc(s->pool, len, gfp | __GFP_NOWARN | __GFP_HIGHMEM |
			   __GFP_MOVABLE, page_to_nid(virt_to_page(src)));
	if (IS_ERR_VALUE(handle))
		goto out_full;
	if (gs_pool_grew(s, &pages) && limit) {
		zs_free(s->pool, handle);
		goto out_full;
	}
	zs_obj_write(s->pool, handle, (void *)data, len);
	if (st != held)
		gs_stream_put(st);
	if (WARN_ONCE(!gs_handle_encode(handle, &value),
		      "ghostswap: zsmalloc handle %lx does not fit the table\n",
		      handle)) {
		zs_free(s->pool, handle);
		return -EIO;
	}
	/* No length in a RAW entry (huge_size <= PAGE_SIZE: gs_core_create()). */
	if (len == PAGE_SIZE)
		len = 0;
	p->aux_hi = gs_aux_hi(len);
	p->entry = flags | gs_entry_aux(GS_KIND_EMPTY, 0, value, len);
	p->near_limit = gs_pool_near_limit(pages, READ_ONCE(s->limit_pages));
	return 0;

out_full:
	if (st != held)
		gs_stream_put(st);
	/* No room: the page goes to the backing device as it is. */
	return s->bk ? GS_PACK_DIRECT : -ENOMEM;
}

/* __gs_pool_pack() out of line, for the units' split (gs_core_unit.c). */
int gs_pool_pack(struct gs_store *s, struct gs_stream *held, const void *src,
		 gfp_t gfp, enum gs_direct direct, bool limit,
		 struct gs_packed *p)
{
	return __gs_pool_pack(s, held, src, gfp, direct, limit, p);
}

/*
 * @slot, in @cl (locked), holds @e (with @aux_hi) in place of what it
 * held, its age left as it was; the caller counts it in the store's stats.
 * A page's write has its own (__gs_slot_install()).
 */
static inline void __gs_slot_put(struct gs_store *s, struct gs_cluster *cl,
				 u64 slot, unsigned long e, unsigned int aux_hi)
{
	unsigned int i = slot & (GS_CLUSTER_SLOTS - 1);
	unsigned long old = gs_entry_take(cl, i, e);

	/* The old entry's length is in aux_hi until it is set below. */
	if (gs_entry_kind(old) == GS_KIND_EMPTY)
		cl->used++;
	else
		gs_entry_release(s, cl, slot, old);
	gs_aux_hi_set(cl->aux_hi, i, aux_hi);
}

/* __gs_slot_put() out of line, for the units' split (gs_core_unit.c). */
void gs_slot_put(struct gs_store *s, struct gs_cluster *cl, u64 slot,
		 unsigned long e, unsigned int aux_hi)
{
	__gs_slot_put(s, cl, slot, e, aux_hi);
}

/* gs_slot_put(), stored at @now: for units stored (gs_core_unit.c). */
void gs_slot_set(struct gs_store *s, struct gs_cluster *cl, u64 slot,
		 unsigned long e, unsigned int aux_hi, u32 now)
{
	__gs_slot_put(s, cl, slot, e, aux_hi);
	gs_age_touch(cl, slot & (GS_CLUSTER_SLOTS - 1), now);
}

/*
 * Drop what a new entry that was never installed holds. Out of line
 * (noinline): gs_slot_install()'s failure path, off its way, which the
 * wrapper below would otherwise take in.
 */
static noinline void __gs_entry_discard(struct gs_store *s, unsigned long e)
{
	switch (gs_entry_kind(e)) {
	case GS_KIND_COMPRESSED:
	case GS_KIND_RAW:
		zs_free(s->pool, gs_handle_decode(gs_entry_value(e)));
		break;
	case GS_KIND_WRITTEN_BACK:
		gs_backing_free(s->bk, gs_entry_value(e));
		break;
	default:
		break;
	}
}

/* __gs_entry_discard(), for the units' split (gs_core_unit.c). */
void gs_entry_discard(struct gs_store *s, unsigned long e)
{
	__gs_entry_discard(s, e);
}

/* Count what new entry @e (with @aux_hi), now in a slot, holds. */
static __always_inline void
__gs_stat_entry_in(struct gs_store *s, unsigned long e, unsigned int aux_hi)
{
	switch (gs_entry_kind(e)) {
	case GS_KIND_SAME:
		gs_stat_inc(&s->stats, GS_STAT_SAME_PAGES);
		break;
	case GS_KIND_RAW:
		gs_stat_inc(&s->stats, GS_STAT_HUGE_PAGES);
		gs_stat_inc(&s->stats, GS_STAT_HUGE_PAGES_SINCE);
		gs_stat_add(&s->stats, GS_STAT_COMPR_BYTES, PAGE_SIZE);
		break;
	case GS_KIND_COMPRESSED:
		gs_stat_inc(&s->stats, GS_STAT_COMP_PAGES);
		gs_stat_add(&s->stats, GS_STAT_COMPR_BYTES,
			    gs_entry_aux_get(e, aux_hi));
		break;
	default:
		gs_stat_inc(&s->stats, GS_STAT_WB_PAGES);
		break;
	}
}

/* __gs_stat_entry_in() out of line, for the units' split (gs_core_unit.c). */
void gs_stat_entry_in(struct gs_store *s, unsigned long e, unsigned int aux_hi)
{
	__gs_stat_entry_in(s, e, aux_hi);
}

/*
 * Install a new entry, replacing what the slot held. On failure (no
 * memory for a new cluster) what @e holds is given back. Inline in
 * gs_page_store(), out of line for the rest (gs_slot_install()).
 *
 * Most writes over a used slot (an overwrite) find a compressed page
 * there that no reader has pinned: once the slot no longer names its
 * pool object, the object is this write's alone, freed after the
 * cluster's lock, and the old page's stats net against the new one's
 * (the slot stays used; a compressed page for a compressed page changes
 * only the bytes). Anything else goes through gs_entry_release().
 */
static __always_inline int __gs_slot_install(struct gs_store *s, u64 slot,
					     unsigned long e,
					     unsigned int aux_hi, gfp_t gfp)
{
	unsigned int i = slot & (GS_CLUSTER_SLOTS - 1);
	unsigned long ci = slot >> GS_CLUSTER_SHIFT;
	unsigned long old, old_handle = 0;
	struct gs_cluster *cl;
	long old_len = 0;

	/* The cluster there, found inline; made (out of line) if none. */
	cl = gs_cluster_find(s, ci);
	if (unlikely(!cl))
		cl = gs_cluster_get(s, ci, gfp);
	if (IS_ERR(cl)) {
		__gs_entry_discard(s, e);
		return PTR_ERR(cl);
	}
	old = gs_entry_take(cl, i, e);
	if (gs_entry_kind(old) == GS_KIND_COMPRESSED &&
	    !(old & GS_FLAG_PINNED)) {
		/* Its length is in aux_hi until it is set below. */
		old_len = gs_slot_aux(cl, i, old);
		old_handle = gs_handle_decode(gs_entry_value(old));
	} else if (gs_entry_kind(old) == GS_KIND_EMPTY) {
		cl->used++;
	} else {
		gs_entry_release(s, cl, slot, old);
	}
	gs_aux_hi_set(cl->aux_hi, i, aux_hi);
	/* The ages' clock: within a tick, a load and no call. */
	gs_age_touch(cl, i, gs_age_now());
	gs_cluster_unlock(cl);

	if (gs_entry_kind(e) != GS_KIND_SAME)
		gs_stat_inc(&s->stats, GS_STAT_PACKED);
	if (!old_handle) {
		gs_stat_inc(&s->stats, GS_STAT_SLOTS_USED);
		__gs_stat_entry_in(s, e, aux_hi);
		return 0;
	}
	zs_free(s->pool, old_handle);
	if (gs_entry_kind(e) == GS_KIND_COMPRESSED) {
		gs_stat_add(&s->stats, GS_STAT_COMPR_BYTES,
			    (long)gs_entry_aux_get(e, aux_hi) - old_len);
		return 0;
	}
	gs_stat_add(&s->stats, GS_STAT_COMPR_BYTES, -old_len);
	gs_stat_dec(&s->stats, GS_STAT_COMP_PAGES);
	__gs_stat_entry_in(s, e, aux_hi);
	return 0;
}

int gs_slot_install(struct gs_store *s, u64 slot, unsigned long e,
		    unsigned int aux_hi, gfp_t gfp)
{
	return __gs_slot_install(s, slot, e, aux_hi, gfp);
}

/*
 * A page's write: packed (same-filled, or into the pool) and installed,
 * in one function and no calls between the steps.
 */
int gs_page_store(struct gs_store *s, u64 slot, const void *src, gfp_t gfp,
		  enum gs_direct direct)
{
	struct gs_packed p;
	unsigned long word;
	int ret;

	if (gs_page_same_filled(src, &word)) {
		p.entry = gs_same_entry(word, &p.aux_hi);
		p.near_limit = false;
	} else {
		ret = __gs_pool_pack(s, NULL, src, gfp, direct, true, &p);
		if (ret)
			return ret;
	}
	ret = __gs_slot_install(s, slot, p.entry, p.aux_hi, gfp);
	return !ret && p.near_limit ? GS_PACK_NEAR_LIMIT : ret;
}

/*
 * Copy a pool object to @dst under the cluster lock, so that a concurrent
 * free of the slot cannot pull it away while it is being copied.
 */
void gs_obj_copy(struct gs_store *s, unsigned long e, void *dst,
		 unsigned int len)
{
	unsigned long handle = gs_handle_decode(gs_entry_value(e));
	void *src;

	src = zs_obj_read_begin(s->pool, handle, len, dst);
	if (src != dst)
		memcpy(dst, src, len);
	zs_obj_read_end(s->pool, handle, len, src);
}

/*
 * The entry let go of the object of @e, which we pinned in slot @slot of
 * @cl: it is ours to free, and we end the cluster's hold for us (its pin
 * count), killing it if it went empty meanwhile.
 */
static noinline void gs_obj_unpin_orphan(struct gs_store *s,
					 struct gs_cluster *cl, u64 slot,
					 unsigned long e)
{
	spin_lock(&cl->lock);
	cl->pins--;
	/* Handed over to gs_cluster_put(), which unlocks it. */
	__release(&cl->lock);
	gs_cluster_put(s, slot >> GS_CLUSTER_SHIFT, cl);
	zs_free(s->pool, gs_handle_decode(gs_entry_value(e)));
}

/*
 * Drop our pin of @e in slot @slot of @cl, with no lock: while the entry
 * holds the object, the cluster lives (the slot is used) and only we
 * clear PINNED, and whatever else changes the entry does so atomically
 * (see gs_entry_take()). If the entry let go of the object meanwhile
 * (freed, overwritten, written back), it left the object to us.
 */
static __always_inline void __gs_obj_unpin(struct gs_store *s,
					   struct gs_cluster *cl,
					   u64 slot, unsigned long e)
{
	atomic_long_t *entry = &cl->table[slot & (GS_CLUSTER_SLOTS - 1)];
	unsigned long now = atomic_long_read(entry);

	while (gs_entry_holds_obj(now, e))
		if (atomic_long_try_cmpxchg(entry, &now,
					    now & ~GS_FLAG_PINNED))
			return;
	gs_obj_unpin_orphan(s, cl, slot, e);
}

/* __gs_obj_unpin() out of line, for recompression (gs_slot_recomp.c). */
void gs_obj_unpin(struct gs_store *s, struct gs_cluster *cl, u64 slot,
		  unsigned long e)
{
	__gs_obj_unpin(s, cl, slot, e);
}

/*
 * gs_obj_unpin(), and the entry gains @flags if nothing else about it
 * changed meanwhile (a writeback in flight compares the whole entry).
 */
void gs_obj_unpin_mark(struct gs_store *s, struct gs_cluster *cl, u64 slot,
		       unsigned long e, unsigned long flags)
{
	atomic_long_t *entry = &cl->table[slot & (GS_CLUSTER_SLOTS - 1)];
	unsigned long now;

	spin_lock(&cl->lock);
	now = atomic_long_read(entry);
	if (gs_entry_holds_obj(now, e)) {
		if (now == e)
			now |= flags;
		/* Nobody else changes it: we hold the lock and the pin. */
		atomic_long_set(entry, now & ~GS_FLAG_PINNED);
		spin_unlock(&cl->lock);
		return;
	}
	spin_unlock(&cl->lock);
	gs_obj_unpin_orphan(s, cl, slot, e);
}

/*
 * Between pinning a pool object (or counting in as a unit's reader) and
 * reading it: nothing. A seam for the KUnit suites, which free, overwrite
 * or write back the slot right there (a static stub; an empty function
 * in a kernel without KUnit).
 */
void gs_read_window(struct gs_store *s, u64 slot)
{
	KUNIT_STATIC_STUB_REDIRECT(gs_read_window, s, slot);
}

/*
 * The store's read that needs no backing device I/O (see gs_store.h):
 * here, beside the table, as it reads nothing else, and it is the device's
 * every read. gs_store_read() and gs_store_read_start() (gs_store.c) go to
 * the writeback tier where it returns -EAGAIN.
 *
 * The lookup takes the cluster lock only to read the entry. A pool
 * object is read with the lock dropped, pinned (GS_FLAG_PINNED): only
 * one reader at a time pins an entry, and one that finds it pinned copies
 * the object out under the lock, as writeback does. Filling a page (EMPTY,
 * SAME) happens with no lock held either.
 */
int gs_store_read_nowait(struct gs_store *s, u64 slot, void *dst)
{
	unsigned long ci = slot >> GS_CLUSTER_SHIFT;
	unsigned int i = slot & (GS_CLUSTER_SLOTS - 1);
	struct gs_stream *st = NULL;
	struct gs_unit *u = NULL;
	struct gs_cluster *cl;
	unsigned int len = 0;
	unsigned long e, fill = 0;
	bool pinned = false;
	int ret = 0;

	if (unlikely(slot >= s->nr_slots))
		return -EINVAL;
again:
	cl = gs_cluster_find(s, ci);
	e = cl ? atomic_long_read(&cl->table[i]) : 0;
	switch (gs_entry_kind(e)) {
	case GS_KIND_EMPTY:
		break;
	case GS_KIND_SAME:
		fill = gs_same_word(e, gs_aux_hi_get(cl->aux_hi, i));
		break;
	case GS_KIND_COMPRESSED:
	case GS_KIND_RAW:
		len = gs_obj_len(cl, i, e);
		if (!(e & GS_FLAG_PINNED)) {
			/* Read: the cold clock starts again. */
			e = gs_obj_pin(cl, i, e & ~GS_FLAG_COLD);
			pinned = true;
			break;
		}
		/* Its reader unpins it with no lock: change it atomically. */
		if (e & GS_FLAG_COLD)
			atomic_long_andnot(GS_FLAG_COLD, &cl->table[i]);
		if (gs_entry_kind(e) == GS_KIND_RAW) {
			gs_obj_copy(s, e, dst, PAGE_SIZE);
		} else if (st) {
			gs_obj_copy(s, e, st->buf, len);
		} else {
			/*
			 * Copied out to be decompressed: that needs a
			 * stream, whose mutex may sleep, and the cluster
			 * lock must not. Take one, then look again.
			 */
			gs_cluster_unlock(cl);
			st = gs_stream_get(s->comp);
			goto again;
		}
		break;
	case GS_KIND_WRITTEN_BACK:
		/* For the writeback tier: no stream held across its I/O. */
		ret = -EAGAIN;
		break;
	case GS_KIND_UNIT:
		/* On the backing device: for the writeback tier, as above. */
		if (gs_entry_unit(e)->backed) {
			ret = -EAGAIN;
			break;
		}
		/* Read: the cold clock starts again. */
		if (e & GS_FLAG_COLD)
			atomic_long_andnot(GS_FLAG_COLD, &cl->table[i]);
		u = gs_unit_read_begin(cl, gs_entry_unit(e));
		break;
	default:
		ret = -EIO;
		break;
	}
	if (cl) {
		/* A read is an access, as in zram: the age starts again. */
		if (e && ret >= 0)
			gs_age_touch(cl, i, gs_age_now());
		gs_cluster_unlock(cl);
	}

	switch (gs_entry_kind(e)) {
	case GS_KIND_EMPTY:
		clear_page(dst);
		break;
	case GS_KIND_SAME:
		memset64(dst, fill, PAGE_SIZE / 8);
		break;
	case GS_KIND_COMPRESSED:
	case GS_KIND_RAW:
		if (pinned) {
			gs_read_window(s, slot);
			/*
			 * A compressed object needs a stream: its decompressor,
			 * and its buffer for an object that spans two pages.
			 * Waiting for one holds up no free: the pin defers it.
			 */
			if (gs_entry_kind(e) == GS_KIND_COMPRESSED && !st)
				st = gs_stream_get(s->comp);
			ret = gs_obj_read(s, st, e, len, dst);
			__gs_obj_unpin(s, cl, slot, e);
		} else if (gs_entry_kind(e) == GS_KIND_COMPRESSED) {
			ret = gs_decompress(s->comp, st, gs_entry_prio(e),
					    st->buf, len, dst);
		}
		if (unlikely(ret)) {
			pr_err_ratelimited("slot %llu: %s cannot decompress %u bytes: %d\n",
					   slot, gs_comp_name(s->comp,
							      gs_entry_prio(e)) ?: "?",
					   len, ret);
			/* Whatever the backend said: not -EAGAIN. */
			ret = -EIO;
		}
		break;
	case GS_KIND_UNIT:
		if (!u)
			break;
		gs_read_window(s, slot);
		if (!st)
			st = gs_stream_get(s->comp);
		/* All of it, for one page: see gs_unit.h. */
		ret = gs_unit_unpack_cached(s, st, u);
		if (!ret)
			copy_page(dst, st->ubuf + PAGE_SIZE *
				  gs_unit_index(u, i & (u->pages - 1)));
		__gs_unit_read_end(s, cl, ci, u, slot, ret);
		atomic_long_inc(&s->stats.unit_part_reads);
		if (ret)
			ret = -EIO;
		break;
	default:
		break;
	}
	if (st)
		gs_stream_put(st);
	return ret;
}

bool gs_slot_drop(struct gs_store *s, u64 slot, unsigned long e)
{
	unsigned long ci = slot >> GS_CLUSTER_SHIFT;
	unsigned int i = slot & (GS_CLUSTER_SLOTS - 1);
	struct gs_cluster *cl;
	bool same;

	cl = gs_cluster_get(s, ci, 0);
	if (!cl)
		return false;
	same = atomic_long_read(&cl->table[i]) == e;
	if (same)
		gs_slot_clear(s, cl, slot);
	gs_cluster_put(s, ci, cl);
	return same;
}

void gs_store_free(struct gs_store *s, u64 slot)
{
	unsigned long ci = slot >> GS_CLUSTER_SHIFT;
	struct gs_cluster *cl;

	if (slot >= s->nr_slots)
		return;
	cl = gs_cluster_get(s, ci, 0);
	if (!cl)
		return;
	gs_slot_clear(s, cl, slot);
	gs_cluster_put(s, ci, cl);
}

/*
 * Free [first, end), any slot (not only those below nr_slots). A cluster
 * lock is held for GS_FREE_BATCH slots at a time, then dropped: a free of
 * a slot of that cluster from swap_slot_free_notify() spins on it at most
 * that long.
 */
static u64 __gs_store_free_range(struct gs_store *s, u64 first, u64 end)
{
	unsigned long ci, last;
	struct gs_cluster *cl;
	u64 freed = 0, i, hi;

	if (first >= end)
		return 0;
	last = (end - 1) >> GS_CLUSTER_SHIFT;
	while (first < end) {
		ci = first >> GS_CLUSTER_SHIFT;
		cl = gs_cluster_next(s, &ci, last);
		if (!cl)
			break;
		first = max_t(u64, first, (u64)ci << GS_CLUSTER_SHIFT);
		hi = min3(end, ((u64)ci + 1) << GS_CLUSTER_SHIFT,
			  first + GS_FREE_BATCH);
		for (i = first; i < hi; i++)
			freed += gs_slot_clear(s, cl, i);
		gs_cluster_put(s, ci, cl);
		first = hi;
		cond_resched();
	}
	return freed;
}

u64 gs_store_free_range(struct gs_store *s, u64 first, u64 nr)
{
	return __gs_store_free_range(s, first, min(first + nr, s->nr_slots));
}

enum gs_kind gs_store_kind(struct gs_store *s, u64 slot, unsigned int *len)
{
	unsigned int i = slot & (GS_CLUSTER_SLOTS - 1);
	struct gs_cluster *cl;
	unsigned long e;

	cl = gs_cluster_get(s, slot >> GS_CLUSTER_SHIFT, 0);
	e = cl ? atomic_long_read(&cl->table[i]) : 0;
	if (len) {
		*len = 0;
		if (gs_entry_kind(e) == GS_KIND_COMPRESSED ||
		    gs_entry_kind(e) == GS_KIND_RAW)
			*len = gs_obj_len(cl, i, e);
		else if (gs_entry_kind(e) == GS_KIND_WRITTEN_BACK)
			*len = gs_slot_aux(cl, i, e) ?: PAGE_SIZE;
	}
	if (cl)
		gs_cluster_unlock(cl);
	return gs_entry_kind(e);
}

unsigned long gs_store_entry(struct gs_store *s, u64 slot)
{
	struct gs_cluster *cl;
	unsigned long e;

	cl = gs_cluster_get(s, slot >> GS_CLUSTER_SHIFT, 0);
	if (!cl)
		return 0;
	e = atomic_long_read(&cl->table[slot & (GS_CLUSTER_SLOTS - 1)]);
	gs_cluster_unlock(cl);
	return e;
}

bool gs_store_idle(struct gs_store *s, u64 slot, u32 *secs)
{
	unsigned int i = slot & (GS_CLUSTER_SLOTS - 1);
	struct gs_cluster *cl;
	bool idle;

	cl = gs_cluster_get(s, slot >> GS_CLUSTER_SHIFT, 0);
	if (!cl) {
		*secs = 0;
		return false;
	}
	idle = cl->age[i] & GS_AGE_IDLE;
	*secs = gs_age_secs(cl, i, gs_age_now());
	gs_cluster_unlock(cl);
	return idle;
}

unsigned long gs_store_pool_pages(struct gs_store *s)
{
	return zs_get_total_pages(s->pool);
}

unsigned long gs_store_pages_compacted(struct gs_store *s)
{
	struct zs_pool_stats ps = {};

	zs_pool_stats(s->pool, &ps);
	return atomic_long_read(&ps.pages_compacted);
}

unsigned long gs_store_compact(struct gs_store *s)
{
	return zs_compact(s->pool);
}

const char *gs_store_algorithm(struct gs_store *s)
{
	return gs_comp_name(s->comp, GS_PRIMARY_COMP);
}

const char *gs_store_comp_name(struct gs_store *s, unsigned int prio)
{
	return gs_comp_name(s->comp, prio);
}

/* All clusters there are, wherever they are. */
void gs_core_free_all(struct gs_store *s)
{
	__gs_store_free_range(s, 0, U64_MAX);
	WARN_ON(gs_stat_read(&s->stats, GS_STAT_SLOTS_USED));
}

int gs_core_init(void)
{
	int ret;

	/*
	 * Tag-based KASAN (software tags, or MTE's hardware tags on arm64)
	 * keeps a tag in bits 56..63 of slab pointers, zsmalloc's handles
	 * included; the table keeps a handle's physical address and cannot
	 * give the tag back (see gs_table.h). Refuse to load rather than
	 * fail every store.
	 */
	if (IS_ENABLED(CONFIG_KASAN_SW_TAGS) || IS_ENABLED(CONFIG_KASAN_HW_TAGS)) {
		pr_err("kernels with tag-based KASAN are not supported: tagged zsmalloc handles do not fit the slot table\n");
		return -EOPNOTSUPP;
	}
	/* Unmerged, so that its slab counters show exactly our clusters. */
	gs_cluster_cache = KMEM_CACHE(gs_cluster, SLAB_NO_MERGE);
	if (!gs_cluster_cache)
		return -ENOMEM;
	ret = gs_backing_init();
	if (ret)
		goto out_cache;
	ret = gs_comp_init();
	if (ret)
		goto out_backing;
	return 0;

out_backing:
	gs_backing_exit();
out_cache:
	kmem_cache_destroy(gs_cluster_cache);
	return ret;
}

void gs_core_exit(void)
{
	gs_comp_exit();
	gs_backing_exit();
	rcu_barrier();
	kmem_cache_destroy(gs_cluster_cache);
}
