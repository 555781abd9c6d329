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
 *
 * A page read alone decompresses the whole unit into its stream's unit
 * buffer; the stream remembers which unit that was (by seq), so that
 * the next pages of the same unit read there are copied out of it, not
 * decompressed again (a folio swapped in a page at a time reads them in
 * a row). A unit whose slots are more than half gone is split: the
 * free that makes it so only marks it (frees may come from
 * swap_slot_free_notify(), under the swap core's spinlock), and a
 * worker stores its live pages one by one and lets the unit go. So a
 * unit never holds memory for long for fewer than half of its pages.
 *
 * Writeback takes a unit whole (gs_writeback.c): its chain, each object
 * padded to a page, goes to backing slots (consecutive where the backing
 * store has them), sealed like any page written back (checksum, cipher).
 * Then the unit is on the backing device (backed): its pool objects are
 * freed, obj[] holds the backing slots, its slots keep their UNIT
 * entries. Its data stays as it was compressed: one read of its slots
 * and one decompression serve all of its pages. While a writeback has it
 * (wb), it counts as one of its readers, and takes the unit to the
 * device only if it is the last one, and nothing split or freed it
 * meanwhile. A backed unit is not split (it holds no pool memory: at
 * most its chain's slots of the device for its live pages) nor
 * compressed again; backing compaction moves its slots one by one, with
 * wb set and no reader: reads wait for the move.
 */
#ifndef _GS_UNIT_H
#define _GS_UNIT_H

#include <linux/bitops.h>
#include <linux/math.h>
#include <linux/types.h>
#include "gs_backend.h"
#include "gs_store.h"
#include "gs_table.h"

static_assert(GS_UNIT_MAX_PAGES * PAGE_SIZE <= GS_BE_MAX_SRC,
	      "a unit must fit a backend's largest input");
static_assert(GS_CLUSTER_SLOTS % GS_UNIT_MAX_PAGES == 0,
	      "an aligned unit must lie inside one cluster");

struct gs_unit {
	u64 seq;	/* the store's count of units at its making: unique */
	u32 len;	/* compressed bytes */
	u16 held;	/* the run's pages it holds: bit k, slot first + k */
	u16 live;	/* of those, slots whose entries still refer to it */
	u16 readers;	/* reads under way, each one of its cluster's pins */
	u8 pages;	/* the run's length, a power of two */
	u8 prio;	/* the algorithm that compressed it */
	u8 split;	/* GS_UNIT_SPLIT_*: each unit is split at most once */
	bool nogain;	/* recompression with the top algorithm did not gain */
	bool backed;	/* on the backing device: obj[] are backing slots */
	bool wb;	/* a writeback or a move of its backing slots has it */
	/* zsmalloc handles (full pages, then the tail), or backing slots */
	unsigned long obj[];
};

#define GS_UNIT_SPLIT_MARKED	1	/* mostly gone, for the worker */
#define GS_UNIT_SPLIT_DONE	2	/* split, or its split under way */

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

/*
 * May it be compressed again with algorithm @prio? Not once split or
 * found not to gain, nor with fewer than two live pages (page by page
 * they are no worse), nor with the algorithm it has or a lower one. Its
 * cluster's lock held.
 */
static inline bool gs_unit_recompressible(const struct gs_unit *u,
					  unsigned int prio)
{
	return hweight16(u->live) >= 2 && !u->split && !u->nogain &&
	       !u->backed && !u->wb && u->prio < prio;
}

/* Objects in its chain: in the pool, or backing slots. */
static inline unsigned int gs_unit_nobj(const struct gs_unit *u)
{
	return DIV_ROUND_UP(u->len, PAGE_SIZE);
}

/* Bytes of its chain's object @j: a page, or the tail's rest. */
static inline unsigned int gs_unit_obj_size(const struct gs_unit *u,
					    unsigned int j)
{
	return min_t(unsigned int, u->len - j * PAGE_SIZE, PAGE_SIZE);
}

/* More than half of the pages it held are gone, and some are left. */
static inline bool gs_unit_mostly_gone(const struct gs_unit *u)
{
	unsigned int live = hweight16(u->live);

	return live && 2 * live < hweight16(u->held);
}

/* The pages the unit holds. */
static inline unsigned int gs_unit_held(const struct gs_unit *u)
{
	return hweight16(u->held);
}

#endif /* _GS_UNIT_H */
