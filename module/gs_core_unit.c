// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswap store core: units, their slot side. A run of slots (a large
 * folio's pages) stored as one unit, each of its slots a UNIT entry (or
 * SAME), and read back whole; and the split of a unit mostly gone into
 * single pages, by a worker (the free that leaves it so only marks it:
 * gs_core.c). The unit itself, its chain in the pool, is gs_unit.c's.
 * It calls gs_core.c (clusters, slots, pack: gs_core_internal.h),
 * gs_unit.c, the index (the marks), the streams and the heuristic.
 */
#include <linux/bitops.h>
#include <linux/bug.h>
#include <linux/container_of.h>
#include <linux/errno.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/workqueue.h>
#include "gs_comp.h"
#include "gs_core.h"
#include "gs_core_internal.h"
#include "gs_heuristic.h"
#include "gs_store.h"
#include "gs_unit.h"

int gs_store_read_unit_nowait(struct gs_store *s, u64 first, void *dst,
			      unsigned int pages)
{
	unsigned long ci = first >> GS_CLUSTER_SHIFT, fill[GS_UNIT_MAX_PAGES];
	unsigned int i0 = first & (GS_CLUSTER_SLOTS - 1), k, n = 0, hi;
	struct gs_unit *u = NULL;
	struct gs_cluster *cl;
	struct gs_stream *st;
	unsigned long e;
	u16 same = 0;
	u32 now;
	int ret;

	if (pages < GS_UNIT_MIN_PAGES || pages > GS_UNIT_MAX_PAGES ||
	    !IS_ALIGNED(first, pages) || first + pages > s->nr_slots)
		return -ENOENT;
	cl = gs_cluster_find(s, ci);
	if (!cl)
		return -ENOENT;
	/* One unit and same-filled pages, nothing else, all of the run. */
	for (k = 0; k < pages; k++) {
		e = atomic_long_read(&cl->table[i0 + k]);
		if (gs_entry_kind(e) == GS_KIND_SAME) {
			hi = gs_aux_hi_get(cl->aux_hi, i0 + k);
			fill[k] = gs_same_word(e, hi);
			same |= BIT(k);
			continue;
		}
		if (gs_entry_kind(e) != GS_KIND_UNIT ||
		    (u && gs_entry_unit(e) != u))
			break;
		u = gs_entry_unit(e);
	}
	if (k < pages || !u || u->pages != pages ||
	    u->held != (GENMASK(pages - 1, 0) & ~same)) {
		gs_cluster_unlock(cl);
		return -ENOENT;
	}
	if (u->backed) {
		gs_cluster_unlock(cl);
		/* Whole from the device, where it is all one unit. */
		return same ? -ENOENT : -EAGAIN;
	}
	gs_unit_read_begin(cl, u);
	now = gs_age_now();
	for (k = 0; k < pages; k++) {
		gs_age_touch(cl, i0 + k, now);
		/* Read: the cold clock starts again (not a SAME entry's bits). */
		if (u->held & BIT(k) &&
		    atomic_long_read(&cl->table[i0 + k]) & GS_FLAG_COLD)
			atomic_long_andnot(GS_FLAG_COLD, &cl->table[i0 + k]);
	}
	gs_cluster_unlock(cl);

	gs_read_window(s, first);
	st = gs_stream_get(s->comp);
	if (!same) {
		ret = gs_unit_unpack(s, st, u, dst);
	} else {
		ret = gs_unit_unpack_cached(s, st, u);
		for (k = 0; k < pages && !ret; k++)
			if (u->held & BIT(k))
				copy_page(dst + k * PAGE_SIZE,
					  st->ubuf + n++ * PAGE_SIZE);
	}
	gs_stream_put(st);
	for (k = 0; k < pages; k++)
		if (same & BIT(k))
			memset64(dst + k * PAGE_SIZE, fill[k], PAGE_SIZE / 8);
	gs_unit_read_end(s, cl, ci, u, first, ret);
	atomic_long_inc(&s->stats.unit_reads);
	return ret ? -EIO : 0;
}

int gs_store_write_unit_nowait(struct gs_store *s, u64 first, const void *src,
			       unsigned int pages, gfp_t gfp)
{
	unsigned long ci = first >> GS_CLUSTER_SHIFT, word[GS_UNIT_MAX_PAGES];
	unsigned int k, n = 0, aux;
	unsigned long value, e;
	struct gs_cluster *cl;
	struct gs_stream *st;
	const void *data = src;
	struct gs_unit *u;
	u16 held = 0;
	u32 now;
	int ret;

	if (pages < GS_UNIT_MIN_PAGES || pages > s->comp->unit_bytes / PAGE_SIZE ||
	    !IS_ALIGNED(first, pages) || first + pages > s->nr_slots)
		return -EINVAL;
	/* Behind zswap, pages go past the pool as they are: no units. */
	if (READ_ONCE(s->wb.direct) >= GS_DIRECT_ALL)
		return -EINVAL;
	for (k = 0; k < pages; k++)
		if (!gs_page_same_filled(src + k * PAGE_SIZE, &word[k]))
			held |= BIT(k);
	/* Nothing to compress together. */
	if (hweight16(held) < 2)
		return -E2BIG;
	/*
	 * Every page the heuristic would store as it is: so would the unit
	 * be, so it is not compressed (the first page that may compress
	 * ends the look).
	 */
	if (READ_ONCE(s->incomp_check)) {
		for (k = 0; k < pages; k++)
			if (held & BIT(k) &&
			    !gs_page_looks_incompressible(src + k * PAGE_SIZE))
				break;
		if (k == pages) {
			atomic_long_inc(&s->stats.units_refused);
			return -E2BIG;
		}
	}
	st = gs_stream_get(s->comp);
	if (held != GENMASK(pages - 1, 0)) {
		st->ubuf_seq = 0;
		for (k = 0; k < pages; k++)
			if (held & BIT(k))
				memcpy(st->ubuf + n++ * PAGE_SIZE,
				       src + k * PAGE_SIZE, PAGE_SIZE);
		data = st->ubuf;
	}
	ret = gs_unit_pack(s, st, data, pages, held, gfp, &u);
	gs_stream_put(st);
	if (ret)
		return ret;
	if (WARN_ONCE(!gs_handle_encode((unsigned long)u, &value),
		      "ghostswap: unit %p does not fit the table\n", u)) {
		gs_unit_free(s, u);
		return -EIO;
	}
	cl = gs_cluster_get(s, ci, gfp);
	if (IS_ERR(cl)) {
		gs_unit_free(s, u);
		return PTR_ERR(cl);
	}
	now = gs_age_now();
	for (k = 0; k < pages; k++) {
		if (held & BIT(k)) {
			e = gs_entry(GS_KIND_UNIT, 0, value);
			aux = 0;
		} else {
			e = gs_same_entry(word[k], &aux);
		}
		gs_slot_set(s, cl, first + k, e, aux, now);
	}
	u->live = held;
	gs_cluster_unlock(cl);

	n = hweight16(held);
	gs_stat_add(&s->stats, GS_STAT_SLOTS_USED, pages);
	gs_stat_add(&s->stats, GS_STAT_SAME_PAGES, pages - n);
	gs_stat_add(&s->stats, GS_STAT_UNIT_PAGES, n);
	gs_stat_add(&s->stats, GS_STAT_PACKED, n);
	return 0;
}

/*
 * Store the live pages of unit @u (of @cl, locked, which this unlocks)
 * one by one, each in place of its UNIT entry where that is still there:
 * what gs_unit_let_go() marked it for, or writeback wants. @first: its
 * run's first slot. The pool's limit does not stop it: once the unit
 * goes, its pages take less than it did (fewer than half of them are
 * left), or writeback takes them. A page that cannot be stored (no
 * memory) stays in the unit. Returns the pages moved. May sleep.
 */
static unsigned int gs_unit_split(struct gs_store *s, struct gs_cluster *cl,
				  unsigned long ci, struct gs_unit *u,
				  u64 first)
{
	struct gs_packed p[GS_UNIT_MAX_PAGES];
	unsigned int i0 = first & (GS_CLUSTER_SLOTS - 1), k, moved = 0;
	u16 live = u->live, packed = 0;
	struct gs_stream *st;
	unsigned long e;
	int ret;

	gs_unit_read_begin(cl, u);
	gs_cluster_unlock(cl);

	st = gs_stream_get(s->comp);
	ret = gs_unit_unpack_cached(s, st, u);
	for (k = 0; k < u->pages && !ret; k++) {
		if (!(live & BIT(k)))
			continue;
		if (gs_pool_pack(s, st, st->ubuf + PAGE_SIZE * gs_unit_index(u, k),
				 GFP_NOIO, GS_DIRECT_NONE, false, &p[k]))
			break;
		packed |= BIT(k);
	}
	gs_stream_put(st);
	gs_read_window(s, first);

	spin_lock(&cl->lock);
	for (k = 0; k < u->pages; k++) {
		if (!(packed & BIT(k)))
			continue;
		e = atomic_long_read(&cl->table[i0 + k]);
		if (gs_entry_kind(e) != GS_KIND_UNIT || gs_entry_unit(e) != u) {
			/* Freed or written meanwhile. */
			gs_entry_discard(s, p[k].entry);
			continue;
		}
		gs_slot_put(s, cl, first + k, p[k].entry | (e & GS_FLAG_COLD),
			    p[k].aux_hi);
		gs_stat_inc(&s->stats, GS_STAT_SLOTS_USED);
		gs_stat_entry_in(s, p[k].entry, p[k].aux_hi);
		moved++;
	}
	spin_unlock(&cl->lock);
	gs_unit_read_end(s, cl, ci, u, first, ret);
	if (moved)
		atomic_long_inc(&s->stats.unit_splits);
	return moved;
}

/* Split the units of cluster @ci that are marked for it. */
static void gs_cluster_units_split(struct gs_store *s, unsigned long ci)
{
	u64 base = (u64)ci << GS_CLUSTER_SHIFT;
	unsigned int i = 0, first;
	struct gs_cluster *cl;
	struct gs_unit *u;
	unsigned long e;

	while (i < GS_CLUSTER_SLOTS) {
		cl = gs_cluster_find(s, ci);
		if (!cl)
			return;
		/*
		 * Slot by slot: a run's slots freed and written again may
		 * hold a smaller unit inside the run of a larger one.
		 */
		for (u = NULL; cl->units_marked && i < GS_CLUSTER_SLOTS && !u;
		     i++) {
			e = atomic_long_read(&cl->table[i]);
			if (gs_entry_kind(e) == GS_KIND_UNIT &&
			    gs_entry_unit(e)->split == GS_UNIT_SPLIT_MARKED)
				u = gs_entry_unit(e);
		}
		if (!u) {
			gs_cluster_unlock(cl);
			return;
		}
		gs_unit_unmark(cl, u);
		first = (i - 1) & ~(u->pages - 1U);
		/* Unlocks the cluster; the scan goes on after the slot found. */
		gs_unit_split(s, cl, ci, u, base + first);
		cond_resched();
	}
}

int gs_unit_split_at(struct gs_store *s, u64 slot)
{
	unsigned long ci = slot >> GS_CLUSTER_SHIFT, e;
	struct gs_cluster *cl;
	struct gs_unit *u;

	cl = gs_cluster_find(s, ci);
	if (!cl)
		return -EAGAIN;
	e = atomic_long_read(&cl->table[slot & (GS_CLUSTER_SLOTS - 1)]);
	u = gs_entry_kind(e) == GS_KIND_UNIT ? gs_entry_unit(e) : NULL;
	if (!u || u->split == GS_UNIT_SPLIT_DONE) {
		gs_cluster_unlock(cl);
		return -EAGAIN;
	}
	gs_unit_unmark(cl, u);
	/* Unlocks the cluster. */
	return gs_unit_split(s, cl, ci, u, slot & ~(u64)(u->pages - 1));
}

void gs_unit_split_work(struct work_struct *work)
{
	struct gs_store *s = container_of(work, struct gs_store,
					  unit_split_work);
	unsigned long ci = 0;

	while (!READ_ONCE(s->unit_split_off) &&
	       gs_index_take_marked(&s->clusters, &ci, ULONG_MAX)) {
		gs_cluster_units_split(s, ci);
		if (ci == ULONG_MAX)
			break;
		ci++;
	}
}

void gs_unit_split_stop(struct gs_store *s)
{
	WRITE_ONCE(s->unit_split_off, true);
	cancel_work_sync(&s->unit_split_work);
}
