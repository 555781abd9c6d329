/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ghostswap units: an aligned run of pages (a large folio's, 4 to 16 of
 * them) compressed as one, into one object of the pool.
 *
 * A unit covers the run's slots that are not same-filled (those stay
 * SAME entries of their own, with no pool memory): its held pages, in
 * slot order, compressed together with the primary algorithm. zsmalloc
 * keeps at most a page per object, so the compressed form is a chain:
 * full-page objects, then a tail of what is left, in the size class that
 * fits it. A slot of the unit has an entry of kind UNIT whose value is
 * the unit's descriptor (gs_table.h).
 *
 * A run lies inside one cluster (it is aligned and at most 16 slots), so
 * the cluster lock covers the descriptor: which of its slots still
 * refer to it (live) and how many reads of it are under way (readers).
 * It is freed when both are zero, by whoever makes them so: the free of
 * its last slot, or the end of its last read. A reader counts itself in
 * readers and in its cluster's pins (which keep the cluster alive),
 * decompresses with no lock held, then takes the lock again to leave.
 */
#ifndef _GS_UNIT_H
#define _GS_UNIT_H

#include <linux/bitops.h>
#include <linux/types.h>
#include "gs_backend.h"
#include "gs_store.h"
#include "gs_table.h"

static_assert(GS_UNIT_MAX_PAGES * PAGE_SIZE <= GS_BE_MAX_SRC,
	      "a unit must fit a backend's largest input");
static_assert(GS_CLUSTER_SLOTS % GS_UNIT_MAX_PAGES == 0,
	      "an aligned unit must lie inside one cluster");

struct gs_unit {
	u16 held;	/* the run's pages it holds: bit k, slot first + k */
	u16 live;	/* of those, slots whose entries still refer to it */
	u16 readers;	/* reads under way, each one of its cluster's pins */
	u8 pages;	/* the run's length, a power of two */
	u8 prio;	/* the algorithm that compressed it */
	u32 len;	/* compressed bytes */
	u32 nobj;	/* objects in the chain */
	unsigned long obj[];	/* zsmalloc handles: full pages, then the tail */
};

/* The unit of a UNIT entry. */
static __always_inline struct gs_unit *gs_entry_unit(unsigned long e)
{
	return (struct gs_unit *)gs_handle_decode(gs_entry_value(e));
}

/* Where in the unit's data the page of run slot @k lies. */
static inline unsigned int gs_unit_index(const struct gs_unit *u,
					 unsigned int k)
{
	return hweight16(u->held & (BIT(k) - 1));
}

/* The pages the unit holds. */
static inline unsigned int gs_unit_held(const struct gs_unit *u)
{
	return hweight16(u->held);
}

#endif /* _GS_UNIT_H */
