// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswap store core: the writeback tier's hold on slots. A unit
 * written back whole, read back and its backing slots moved
 * (gs_unit_wb_*(), gs_unit_bk_*(): the tier counted in as one of the
 * unit's readers meanwhile), and the lock-free end of a pin held across
 * backing I/O (gs_slot_replace()). The tier (gs_writeback.c, gs_wb_*.c)
 * calls these through gs_core.h. It calls gs_core.c
 * (gs_core_internal.h), gs_unit.c, the index and the backing store.
 */
#include <linux/atomic.h>
#include <linux/err.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include "gs_backing.h"
#include "gs_core.h"
#include "gs_core_internal.h"
#include "gs_store.h"
#include "gs_unit.h"

bool gs_unit_wb_begin(struct gs_cluster *cl, struct gs_unit *u)
{
	if (u->backed || u->wb || u->split)
		return false;
	u->wb = true;
	gs_unit_read_begin(cl, u);
	return true;
}

bool gs_unit_wb_end(struct gs_store *s, u64 first, struct gs_unit *u,
		    const u64 *slots)
{
	unsigned long ci = first >> GS_CLUSTER_SHIFT;
	struct gs_cluster *cl = gs_cluster_find(s, ci);	/* pinned: there */
	bool moved;

	u->wb = false;
	/* Read meanwhile (a reader may still map its objects), or going. */
	moved = slots && u->readers == 1 && u->live && !u->split;
	if (moved)
		gs_unit_to_backing(s, u, slots);
	gs_cluster_unlock(cl);
	gs_unit_read_end(s, cl, ci, u, first, 0);
	return moved;
}

/* The UNIT entry of @slot in @cl (locked), on the device; or NULL. */
static struct gs_unit *gs_unit_backed_at(struct gs_cluster *cl, u64 slot)
{
	unsigned long e = atomic_long_read(&cl->table[slot &
						      (GS_CLUSTER_SLOTS - 1)]);

	if (gs_entry_kind(e) != GS_KIND_UNIT || !gs_entry_unit(e)->backed)
		return NULL;
	return gs_entry_unit(e);
}

struct gs_unit *gs_unit_bk_read_begin(struct gs_store *s, u64 slot,
				      struct gs_cluster **clp)
{
	unsigned int i = slot & (GS_CLUSTER_SLOTS - 1);
	struct gs_cluster *cl = gs_cluster_find(s, slot >> GS_CLUSTER_SHIFT);
	struct gs_unit *u = cl ? gs_unit_backed_at(cl, slot) : NULL;

	if (u && u->wb) {
		u = ERR_PTR(-EAGAIN);
	} else if (u) {
		gs_unit_read_begin(cl, u);
		/* Read: the cold clock and the age start again. */
		if (atomic_long_read(&cl->table[i]) & GS_FLAG_COLD)
			atomic_long_andnot(GS_FLAG_COLD, &cl->table[i]);
		gs_age_touch(cl, i, gs_age_now());
	}
	if (cl)
		gs_cluster_unlock(cl);
	*clp = cl;
	return u;
}

void gs_unit_bk_read_end(struct gs_store *s, struct gs_cluster *cl,
			 u64 slot, struct gs_unit *u, int err)
{
	gs_unit_read_end(s, cl, slot >> GS_CLUSTER_SHIFT, u, slot, err);
}

/* A unit of the run at @first (in @cl, locked) on the device, holding @b. */
static struct gs_unit *gs_unit_holding(struct gs_cluster *cl, u64 first,
				       u64 b, unsigned int *j)
{
	struct gs_unit *u;
	unsigned int k;

	if (first & (GS_UNIT_MIN_PAGES - 1))
		return NULL;
	for (k = 0; k < GS_UNIT_MAX_PAGES &&
	     ((first + k) & (GS_CLUSTER_SLOTS - 1)) >= k; k++) {
		u = gs_unit_backed_at(cl, first + k);
		if (!u || ((first + k) & ~(u64)(u->pages - 1)) != first)
			continue;
		for (*j = 0; *j < gs_unit_nobj(u); (*j)++)
			if (u->obj[*j] == b)
				return u;
	}
	return NULL;
}

struct gs_unit *gs_unit_bk_move_begin(struct gs_store *s, u64 first, u64 b,
				      unsigned int *j,
				      struct gs_cluster **clp)
{
	struct gs_cluster *cl = gs_cluster_find(s, first >> GS_CLUSTER_SHIFT);
	struct gs_unit *u = cl ? gs_unit_holding(cl, first, b, j) : NULL;

	if (u && (u->wb || u->readers)) {
		u = ERR_PTR(-EAGAIN);
	} else if (u) {
		u->wb = true;
		gs_unit_read_begin(cl, u);
	}
	if (cl)
		gs_cluster_unlock(cl);
	*clp = cl;
	return u;
}

void gs_unit_bk_move_end(struct gs_store *s, struct gs_cluster *cl,
			 u64 first, struct gs_unit *u, unsigned int j, u64 to)
{
	u64 from = u->obj[j];

	spin_lock(&cl->lock);
	if (to != U64_MAX)
		u->obj[j] = to;
	u->wb = false;
	spin_unlock(&cl->lock);
	if (to != U64_MAX)
		gs_backing_free(s->bk, from);
	gs_unit_read_end(s, cl, first >> GS_CLUSTER_SHIFT, u, first, 0);
}

bool gs_unit_bk_holds(struct gs_store *s, u64 first, u64 b)
{
	struct gs_cluster *cl = gs_cluster_find(s, first >> GS_CLUSTER_SHIFT);
	unsigned int j;
	bool holds;

	if (!cl)
		return false;
	holds = gs_unit_holding(cl, first, b, &j);
	gs_cluster_unlock(cl);
	return holds;
}

/*
 * With no lock, in any context (the end of a backing read calls it from
 * a hard interrupt): the cluster found under RCU is not freed before
 * rcu_read_unlock() (gs_cluster_put() frees with call_rcu()), and every
 * change to an entry that may be pinned is atomic (gs_entry_take()).
 * A cluster that died meanwhile holds only empty entries, so the
 * exchange fails there as it should.
 */
bool gs_slot_replace(struct gs_store *s, u64 slot, unsigned long old,
		     unsigned long new)
{
	unsigned int i = slot & (GS_CLUSTER_SLOTS - 1);
	struct gs_cluster *cl;
	bool same;

	rcu_read_lock();
	cl = gs_index_load(&s->clusters, slot >> GS_CLUSTER_SHIFT);
	same = cl && atomic_long_try_cmpxchg(&cl->table[i], &old, new);
	rcu_read_unlock();
	return same;
}
