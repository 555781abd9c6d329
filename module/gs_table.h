/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ghostswap per-slot virtual table.
 *
 * Every cluster of GS_CLUSTER_SLOTS slots holds one packed word per slot
 * (atomic_long_t, 64 bits) plus one 12-bit auxiliary value per slot, packed
 * two per three bytes. The word says what the slot holds; the auxiliary
 * value carries what does not fit into the word. All writes happen under
 * the cluster lock.
 *
 * Word layout:
 *
 *   | bits   | field   | meaning                                             |
 *   |--------|---------|-----------------------------------------------------|
 *   | 0..2   | kind    | GS_KIND_* below                                     |
 *   | 3..9   | flags   | GS_FLAG_* below                                     |
 *   | 10..63 | payload | 54 bits, meaning depends on the kind                |
 *
 * Kinds:
 *
 *   | kind         | val | payload                     | aux                  |
 *   |--------------|-----|-----------------------------|----------------------|
 *   | EMPTY        | 0   | 0 (the whole word is 0)     | 0                    |
 *   | SAME         | 1   | bits 0..53 of the fill word | bits 54..63 of word  |
 *   | COMPRESSED   | 2   | zsmalloc handle (encoded)   | compressed length    |
 *   | RAW          | 3   | zsmalloc handle (encoded),  | 0                    |
 *   |              |     | object holds the page as is |                      |
 *   | WRITTEN_BACK | 4   | backing device slot         | compressed length,   |
 *   |              |     |                             | 0: the page as is    |
 *   | 5..7         |     | reserved                    |                      |
 *
 * Flags (bits 3..9), their meaning depends on the kind:
 *
 *   | flag    | bit | kinds            | meaning                              |
 *   |---------|-----|------------------|--------------------------------------|
 *   | COLD    | 3   | COMPRESSED, RAW  | the cold clock's mark: not read      |
 *   |         |     |                  | since its hand last passed (the      |
 *   |         |     |                  | user's idle mark is in the age byte) |
 *   | WB      | 4   | COMPRESSED, RAW  | a writeback of this entry is in      |
 *   |         |     |                  | flight                               |
 *   | READING | 4   | WRITTEN_BACK     | a read of the backing slot is in     |
 *   |         |     |                  | flight: the slot stays allocated     |
 *   | INCOMP  | 5   | RAW              | the compressor did not shrink it     |
 *   |         |     |                  | at all (RAW without it: it shrank,   |
 *   |         |     |                  | but not below the huge class size)   |
 *   | PINNED  | 6   | COMPRESSED, RAW  | a reader has the pool object mapped  |
 *   |         |     |                  | outside the cluster lock: whoever    |
 *   |         |     |                  | takes the object out of the entry    |
 *   |         |     |                  | (free, overwrite, writeback) leaves  |
 *   |         |     |                  | it to the reader to free; the reader |
 *   |         |     |                  | clears it with no lock, so such an   |
 *   |         |     |                  | entry only changes atomically        |
 *   | PRIO    | 7-8 | COMPRESSED,      | which algorithm compressed the data: |
 *   |         |     | WRITTEN_BACK     | 0 the primary, 1..3 a secondary one  |
 *   |         |     |                  | (recompression)                      |
 *   | NOGAIN  | 9   | COMPRESSED, RAW  | recompression with the highest       |
 *   |         |     |                  | algorithm did not make it smaller:   |
 *   |         |     |                  | not tried again                      |
 *
 * An EMPTY slot reads as zeroes. A SAME slot costs no memory beyond the
 * table: the 64-bit fill word is split between the payload and aux.
 *
 * A zsmalloc handle is the address of an 8-byte aligned slab object; the
 * payload keeps its bits 3..56 and decoding sign-extends bit 56. That is
 * exact for kernel addresses on x86-64 (4- and 5-level paging: bits 56..63
 * are all set) and arm64 (at most 52-bit virtual addresses), and for
 * UML's low addresses, as long as the pointers carry no tag: with
 * tag-based KASAN (arm64 software tags or MTE hardware tags), bits 56..63
 * of a slab pointer hold a tag that bits 3..56 cannot keep, so the module
 * refuses to load on such kernels (gs_core_init()). The encoding is also
 * checked on every store (gs_handle_encode() fails if the round trip is
 * not exact), so another address layout fails writes cleanly rather than
 * losing data.
 *
 * Age byte: one per slot, beside aux, for zram's `idle N` (pages not
 * accessed for N seconds; a store and a read are accesses):
 *
 *   | bits | field | meaning                                             |
 *   |------|-------|-----------------------------------------------------|
 *   | 0..6 | unit  | the last access, in units of 2^shift seconds after  |
 *   |      |       | the cluster's age base (both in its header)         |
 *   | 7    | IDLE  | the user marked the page idle (sysfs `idle`) and it |
 *   |      |       | has not been accessed since                         |
 *
 * A unit stands for its last second, so an age is never overstated: a
 * page said to be idle for N seconds was not accessed for at least N. A
 * cluster starts with 1-second units. When an access falls past unit
 * 127, the base moves up to the oldest access the cluster still holds;
 * if that is not enough, the units double (rounding the old values
 * down, which keeps them on the safe side), up to 2^11 s. Units double
 * only when the accesses held span more than 128 of them: a unit is at
 * most 1/64 of the span that made it double, and at most 2048 s (34
 * min). At that size the window is 127 units (72 h): the base slides on
 * with the accesses, and an access older than the window counts as made
 * at the window's start.
 *
 * Cost per slot: 8 bytes of word + 1.5 bytes of aux + 1 age byte; with
 * the cluster header (lock, age base and shift, counters, table pointer:
 * 24 bytes on top of aux and ages) that is (4096 + 768 + 512 + 24) / 512
 * = 10.55 bytes in a full cluster.
 */
#ifndef _GS_TABLE_H
#define _GS_TABLE_H

#include <linux/bitops.h>
#include <linux/bits.h>
#include <linux/build_bug.h>
#include <linux/types.h>
#include <asm/page.h>

#define GS_CLUSTER_SHIFT	9
#define GS_CLUSTER_SLOTS	BIT(GS_CLUSTER_SHIFT)	/* 512 */

#define GS_KIND_BITS		3
#define GS_KIND_MASK		GENMASK(GS_KIND_BITS - 1, 0)
#define GS_FLAG_SHIFT		GS_KIND_BITS
#define GS_FLAG_BITS		7
#define GS_FLAG_MASK		GENMASK(GS_FLAG_SHIFT + GS_FLAG_BITS - 1, \
					GS_FLAG_SHIFT)
#define GS_PAYLOAD_SHIFT	(GS_FLAG_SHIFT + GS_FLAG_BITS)	/* 10 */
#define GS_PAYLOAD_BITS		(64 - GS_PAYLOAD_SHIFT)		/* 54 */
#define GS_PAYLOAD_MAX		((1UL << GS_PAYLOAD_BITS) - 1)

#define GS_AUX_BITS		12
#define GS_AUX_MAX		((1U << GS_AUX_BITS) - 1)
#define GS_AUX_BYTES		(GS_CLUSTER_SLOTS * GS_AUX_BITS / 8)	/* 768 */

#define GS_HANDLE_SHIFT		3	/* zsmalloc handles are 8-byte aligned */

#define GS_AGE_IDLE		BIT(7)
#define GS_AGE_UNIT		GENMASK(6, 0)
#define GS_AGE_UNIT_MAX		127U
#define GS_AGE_SHIFT_MAX	11

enum gs_kind {
	GS_KIND_EMPTY = 0,
	GS_KIND_SAME = 1,
	GS_KIND_COMPRESSED = 2,
	GS_KIND_RAW = 3,
	GS_KIND_WRITTEN_BACK = 4,
};

#define GS_FLAG_COLD		BIT(GS_FLAG_SHIFT + 0)
#define GS_FLAG_WB		BIT(GS_FLAG_SHIFT + 1)
#define GS_FLAG_READING		BIT(GS_FLAG_SHIFT + 1)
#define GS_FLAG_INCOMP		BIT(GS_FLAG_SHIFT + 2)
#define GS_FLAG_PINNED		BIT(GS_FLAG_SHIFT + 3)
#define GS_FLAG_PRIO_SHIFT	(GS_FLAG_SHIFT + 4)
#define GS_FLAG_PRIO		GENMASK(GS_FLAG_PRIO_SHIFT + 1, \
					GS_FLAG_PRIO_SHIFT)
#define GS_FLAG_NOGAIN		BIT(GS_FLAG_SHIFT + 6)

static_assert(sizeof(unsigned long) == 8, "ghostswap needs a 64-bit kernel");
static_assert(64 - GS_PAYLOAD_BITS <= GS_AUX_BITS,
	      "aux must hold the bits of a SAME fill word the payload cannot");
static_assert(PAGE_SIZE - 1 <= GS_AUX_MAX,
	      "ghostswap needs 4 KiB pages: aux holds a compressed length");

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

/*
 * A reader has the pool object of @e mapped: PINNED, which only
 * COMPRESSED and RAW entries carry (bit 6 means nothing in the others).
 */
static inline bool gs_entry_pinned(unsigned long e)
{
	return (gs_entry_kind(e) == GS_KIND_COMPRESSED ||
		gs_entry_kind(e) == GS_KIND_RAW) && e & GS_FLAG_PINNED;
}

/* The algorithm priority an entry's data is compressed with. */
static inline unsigned int gs_entry_prio(unsigned long e)
{
	return (e & GS_FLAG_PRIO) >> GS_FLAG_PRIO_SHIFT;
}

static inline unsigned long gs_prio_flags(unsigned int prio)
{
	return ((unsigned long)prio << GS_FLAG_PRIO_SHIFT) & GS_FLAG_PRIO;
}

/* A SAME entry keeps the low 54 bits of the fill word, aux the top 10. */
static inline unsigned long gs_same_entry(unsigned long word,
					  unsigned int *aux)
{
	*aux = word >> GS_PAYLOAD_BITS;
	return gs_entry(GS_KIND_SAME, 0, word & GS_PAYLOAD_MAX);
}

static inline unsigned long gs_same_word(unsigned long e, unsigned int aux)
{
	return ((unsigned long)aux << GS_PAYLOAD_BITS) | gs_entry_payload(e);
}

static inline unsigned long gs_handle_decode(unsigned long payload)
{
	return (unsigned long)sign_extend64(payload, GS_PAYLOAD_BITS - 1)
		<< GS_HANDLE_SHIFT;
}

/* Encode a zsmalloc handle as a payload; false if it cannot be exact. */
static inline bool gs_handle_encode(unsigned long handle,
				    unsigned long *payload)
{
	*payload = (handle >> GS_HANDLE_SHIFT) & GS_PAYLOAD_MAX;
	return gs_handle_decode(*payload) == handle;
}

/* The 12-bit aux values of a cluster: slots 2n and 2n+1 share 3 bytes. */
static inline unsigned int gs_aux_get(const u8 *aux, unsigned int i)
{
	const u8 *p = aux + (i >> 1) * 3;

	if (i & 1)
		return (p[1] >> 4) | ((unsigned int)p[2] << 4);
	return p[0] | ((unsigned int)(p[1] & 0x0f) << 8);
}

static inline void gs_aux_set(u8 *aux, unsigned int i, unsigned int val)
{
	u8 *p = aux + (i >> 1) * 3;

	if (i & 1) {
		p[1] = (p[1] & 0x0f) | ((val & 0x0f) << 4);
		p[2] = (val >> 4) & 0xff;
	} else {
		p[0] = val & 0xff;
		p[1] = (p[1] & 0xf0) | ((val >> 8) & 0x0f);
	}
}

#endif /* _GS_TABLE_H */
