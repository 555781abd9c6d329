/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ghostswap per-slot virtual table.
 *
 * Every cluster of GS_CLUSTER_SLOTS slots holds one packed word per slot
 * (atomic_long_t, 64 bits) plus 6 more bits per slot, packed four per
 * three bytes (aux_hi). The word says what the slot holds; aux_hi carries
 * what does not fit into it. All writes happen under the cluster lock.
 *
 * Word layout:
 *
 *   | bits   | field   | meaning                                             |
 *   |--------|---------|-----------------------------------------------------|
 *   | 0..2   | kind    | GS_KIND_* below                                     |
 *   | 3..9   | flags   | GS_FLAG_* below                                     |
 *   | 10..63 | payload | 54 bits, meaning depends on the kind                |
 *
 * The payload of COMPRESSED, RAW and WRITTEN_BACK entries is a 48-bit
 * value (bits 0..47) and the low 6 bits of a 12-bit aux value (bits
 * 48..53), whose high 6 bits are the slot's aux_hi:
 *
 *   | kind         | val | value                   | aux                     |
 *   |--------------|-----|-------------------------|-------------------------|
 *   | EMPTY        | 0   | 0 (the whole word is 0) | 0                       |
 *   | SAME         | 1   | see below               |                         |
 *   | COMPRESSED   | 2   | zsmalloc handle         | compressed length       |
 *   | RAW          | 3   | zsmalloc handle, the    | 0                       |
 *   |              |     | object holds the page   |                         |
 *   | WRITTEN_BACK | 4   | backing device slot     | compressed length,      |
 *   |              |     |                         | 0: the page as is       |
 *   | UNIT         | 5   | the unit's descriptor   | 0                       |
 *   |              |     | (gs_unit.h), as handles |                         |
 *   | 6..7         |     | reserved                |                         |
 *
 * A UNIT slot's page is one of a run's, compressed with the others into
 * one object. A UNIT entry has no flags.
 *
 * A SAME entry has no flags: bits 3..63 of its word hold bits 0..60 of the
 * fill word, aux_hi its bits 61..63. A SAME slot costs no memory beyond
 * the table. An EMPTY slot reads as zeroes.
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
 *   | IO      | 4   | WRITTEN_BACK     | a read or write of the backing slot  |
 *   |         |     |                  | is in flight: whoever takes the      |
 *   |         |     |                  | entry out (free, overwrite) leaves   |
 *   |         |     |                  | the backing slot to the I/O's end to |
 *   |         |     |                  | free; a read waits for a write       |
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
 * A zsmalloc handle is the address of an 8-byte aligned slab object, in
 * the kernel's direct map: the value is its physical address divided by
 * 8, which 48 bits hold up to 2 PiB (x86-64 and arm64 address at most
 * 4 PiB, 52 bits, but no machine puts memory that high). The encoding is
 * checked on every store (gs_handle_encode() fails if the round trip is
 * not exact): an object above 2 PiB, or a pointer that carries a tag
 * (tag-based KASAN on arm64; the module refuses to load on such kernels,
 * see gs_core_init()), fails the write cleanly rather than losing data.
 *
 * Age byte: one per slot, beside aux_hi, for zram's `idle N` (pages not
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
 * Cost per slot: 8 bytes of word + 6 bits of aux_hi + 1 age byte; with
 * the cluster header (lock, age base and shift, counters, its number,
 * table pointer: 32 bytes on top of aux_hi and ages) that is (4096 + 384
 * + 512 + 32) / 512 = 9.81 bytes in a full cluster.
 */
#ifndef _GS_TABLE_H
#define _GS_TABLE_H

#include <linux/bitops.h>
#include <linux/bits.h>
#include <linux/build_bug.h>
#include <linux/types.h>
#include <linux/unaligned.h>
#include <asm/page.h>

/*
 * A slot is a 4 KiB page: the table's 12-bit lengths, a cluster's 512
 * slots in one table page, the swap header and the writeback tier's
 * backing slots all assume it. dkms.conf leaves such kernels out
 * (BUILD_EXCLUSIVE_CONFIG); a build by hand stops here.
 */
#if PAGE_SHIFT != 12
#error "ghostswap needs 4 KiB pages (CONFIG_PAGE_SIZE_4KB), not arm64's 16K or 64K"
#endif

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

/* COMPRESSED, RAW, WRITTEN_BACK: the payload's value and aux's low bits. */
#define GS_VALUE_BITS		48
#define GS_VALUE_MAX		((1UL << GS_VALUE_BITS) - 1)
#define GS_AUX_BITS		12
#define GS_AUX_MAX		((1U << GS_AUX_BITS) - 1)
#define GS_AUX_LO_BITS		(GS_PAYLOAD_BITS - GS_VALUE_BITS)	/* 6 */
#define GS_AUX_LO_MASK		((1U << GS_AUX_LO_BITS) - 1)
#define GS_AUX_HI_BITS		(GS_AUX_BITS - GS_AUX_LO_BITS)		/* 6 */
#define GS_AUX_HI_MAX		((1U << GS_AUX_HI_BITS) - 1)
#define GS_AUX_HI_BYTES		(GS_CLUSTER_SLOTS * GS_AUX_HI_BITS / 8)	/* 384 */

/* SAME: the fill word's bits in the word (3..63), the rest in aux_hi. */
#define GS_SAME_WORD_BITS	(64 - GS_KIND_BITS)			/* 61 */

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
	GS_KIND_UNIT = 5,
};

#define GS_FLAG_COLD		BIT(GS_FLAG_SHIFT + 0)
#define GS_FLAG_WB		BIT(GS_FLAG_SHIFT + 1)
#define GS_FLAG_IO		BIT(GS_FLAG_SHIFT + 1)
#define GS_FLAG_INCOMP		BIT(GS_FLAG_SHIFT + 2)
#define GS_FLAG_PINNED		BIT(GS_FLAG_SHIFT + 3)
#define GS_FLAG_PRIO_SHIFT	(GS_FLAG_SHIFT + 4)
#define GS_FLAG_PRIO		GENMASK(GS_FLAG_PRIO_SHIFT + 1, \
					GS_FLAG_PRIO_SHIFT)
#define GS_FLAG_NOGAIN		BIT(GS_FLAG_SHIFT + 6)

static_assert(sizeof(unsigned long) == 8, "ghostswap needs a 64-bit kernel");
static_assert(64 - GS_SAME_WORD_BITS <= GS_AUX_HI_BITS,
	      "aux_hi must hold the bits of a SAME fill word the word cannot");
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

/* The value of a COMPRESSED, RAW or WRITTEN_BACK entry. */
static inline unsigned long gs_entry_value(unsigned long e)
{
	return gs_entry_payload(e) & GS_VALUE_MAX;
}

/*
 * A COMPRESSED, RAW or WRITTEN_BACK entry of @value (at most GS_VALUE_MAX)
 * and @aux: the entry holds aux's low bits, gs_aux_hi(@aux) goes to the
 * slot's aux_hi.
 */
static inline unsigned long gs_entry_aux(enum gs_kind kind,
					 unsigned long flags,
					 unsigned long value, unsigned int aux)
{
	return gs_entry(kind, flags, value | (unsigned long)
			(aux & GS_AUX_LO_MASK) << GS_VALUE_BITS);
}

/* @e with another @value: its kind, flags and aux stay. */
static inline unsigned long gs_entry_move(unsigned long e, unsigned long value)
{
	return (e & ~(GS_VALUE_MAX << GS_PAYLOAD_SHIFT)) |
	       value << GS_PAYLOAD_SHIFT;
}

static inline unsigned int gs_aux_hi(unsigned int aux)
{
	return aux >> GS_AUX_LO_BITS;
}

/* The aux of a COMPRESSED, RAW or WRITTEN_BACK entry @e with its @hi. */
static inline unsigned int gs_entry_aux_get(unsigned long e, unsigned int hi)
{
	return (gs_entry_payload(e) >> GS_VALUE_BITS) | hi << GS_AUX_LO_BITS;
}

/* A SAME entry of the fill @word; *@hi is the slot's aux_hi. */
static inline unsigned long gs_same_entry(unsigned long word,
					  unsigned int *hi)
{
	*hi = word >> GS_SAME_WORD_BITS;
	return word << GS_KIND_BITS | GS_KIND_SAME;
}

static inline unsigned long gs_same_word(unsigned long e, unsigned int hi)
{
	return (unsigned long)hi << GS_SAME_WORD_BITS | e >> GS_KIND_BITS;
}

static inline unsigned long gs_handle_decode(unsigned long value)
{
	return (unsigned long)__va((phys_addr_t)value << GS_HANDLE_SHIFT);
}

/* Encode a zsmalloc handle as a value; false if it cannot be exact. */
static inline bool gs_handle_encode(unsigned long handle, unsigned long *value)
{
	phys_addr_t pa = __pa(handle);

	*value = pa >> GS_HANDLE_SHIFT;
	return *value <= GS_VALUE_MAX && gs_handle_decode(*value) == handle;
}

/*
 * The 6-bit aux_hi values of a cluster: slots 4n..4n+3 share 3 bytes.
 * A read loads those 3 bytes and the one after them at once, so the
 * array needs one more readable byte after its end: in a cluster, the
 * first age byte (see struct gs_cluster).
 */
static inline unsigned int gs_aux_hi_get(const u8 *hi, unsigned int i)
{
	unsigned int shift = (i & 3) * GS_AUX_HI_BITS;

	return (get_unaligned_le32(hi + (i >> 2) * 3) >> shift) &
	       GS_AUX_HI_MAX;
}

static inline void gs_aux_hi_set(u8 *hi, unsigned int i, unsigned int val)
{
	u8 *p = hi + (i >> 2) * 3;
	unsigned int shift = (i & 3) * GS_AUX_HI_BITS;
	u32 v = p[0] | p[1] << 8 | p[2] << 16;

	v = (v & ~(GS_AUX_HI_MAX << shift)) | (val & GS_AUX_HI_MAX) << shift;
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
}

#endif /* _GS_TABLE_H */
