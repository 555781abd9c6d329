/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ghostswap per-slot virtual table.
 *
 * Every cluster of GS_CLUSTER_SLOTS slots holds one packed word per slot
 * (atomic_long_t, 64 bits) plus one 16-bit auxiliary value per slot. The word
 * says what the slot holds; the auxiliary value carries what does not fit
 * into the word. All writes happen under the cluster lock.
 *
 * Word layout:
 *
 *   | bits   | field   | meaning                                             |
 *   |--------|---------|-----------------------------------------------------|
 *   | 0..2   | kind    | GS_KIND_* below                                     |
 *   | 3..7   | flags   | GS_FLAG_* below                                     |
 *   | 8..63  | payload | 56 bits, meaning depends on the kind                |
 *
 * Kinds:
 *
 *   | kind         | val | payload                     | aux                  |
 *   |--------------|-----|-----------------------------|----------------------|
 *   | EMPTY        | 0   | 0 (the whole word is 0)     | 0                    |
 *   | SAME         | 1   | bits 0..55 of the fill word | bits 56..63 of word  |
 *   | PAGE         | 2   | PFN of a private page that  | 0                    |
 *   |              |     | holds the slot uncompressed |                      |
 *   | COMPRESSED   | 3   | reserved: zsmalloc handle   | compressed length    |
 *   | WRITTEN_BACK | 4   | reserved: backing slot      | reserved             |
 *   | 5..7         |     | reserved                    |                      |
 *
 * Flags (bit 3..7): IDLE (bit 3) and HUGE (bit 4) are reserved for idle
 * tracking and incompressible pages; bits 5..7 are free.
 *
 * An EMPTY slot reads as zeroes. A SAME slot costs no memory beyond the
 * table: the 64-bit fill word is split between the payload and aux.
 */
#ifndef _GS_TABLE_H
#define _GS_TABLE_H

#include <linux/bits.h>
#include <linux/build_bug.h>
#include <linux/types.h>

#define GS_CLUSTER_SHIFT	9
#define GS_CLUSTER_SLOTS	BIT(GS_CLUSTER_SHIFT)	/* 512 */

#define GS_KIND_BITS		3
#define GS_KIND_MASK		GENMASK(GS_KIND_BITS - 1, 0)
#define GS_FLAG_SHIFT		GS_KIND_BITS
#define GS_FLAG_BITS		5
#define GS_FLAG_MASK		GENMASK(GS_FLAG_SHIFT + GS_FLAG_BITS - 1, \
					GS_FLAG_SHIFT)
#define GS_PAYLOAD_SHIFT	(GS_FLAG_SHIFT + GS_FLAG_BITS)	/* 8 */
#define GS_PAYLOAD_BITS		(64 - GS_PAYLOAD_SHIFT)		/* 56 */
#define GS_PAYLOAD_MAX		((1UL << GS_PAYLOAD_BITS) - 1)

enum gs_kind {
	GS_KIND_EMPTY = 0,
	GS_KIND_SAME = 1,
	GS_KIND_PAGE = 2,
	GS_KIND_COMPRESSED = 3,
	GS_KIND_WRITTEN_BACK = 4,
};

#define GS_FLAG_IDLE		BIT(GS_FLAG_SHIFT + 0)
#define GS_FLAG_HUGE		BIT(GS_FLAG_SHIFT + 1)

static_assert(sizeof(unsigned long) == 8, "ghostswap needs a 64-bit kernel");

static inline unsigned long gs_entry(enum gs_kind kind, unsigned long flags,
				     unsigned long payload)
{
	return (payload << GS_PAYLOAD_SHIFT) | (flags & GS_FLAG_MASK) | kind;
}

static inline enum gs_kind gs_entry_kind(unsigned long e)
{
	return e & GS_KIND_MASK;
}

static inline unsigned long gs_entry_flags(unsigned long e)
{
	return e & GS_FLAG_MASK;
}

static inline unsigned long gs_entry_payload(unsigned long e)
{
	return e >> GS_PAYLOAD_SHIFT;
}

/* A SAME entry keeps the low 56 bits of the fill word, aux the top 8. */
static inline unsigned long gs_same_entry(unsigned long word, u16 *aux)
{
	*aux = word >> GS_PAYLOAD_BITS;
	return gs_entry(GS_KIND_SAME, 0, word & GS_PAYLOAD_MAX);
}

static inline unsigned long gs_same_word(unsigned long e, u16 aux)
{
	return ((unsigned long)aux << GS_PAYLOAD_BITS) | gs_entry_payload(e);
}

#endif /* _GS_TABLE_H */
