// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "ghostswap_table": the slot entry encoding of gs_table.h.
 *
 * Only the entry helpers and GS_* constants are used, not the field
 * positions, so that the suite survives a change of the word layout.
 */
#include <kunit/test.h>
#include <linux/bitops.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/prandom.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include "gs_core.h"
#include "gs_table.h"

struct gs_kind_param {
	enum gs_kind kind;
	const char *name;
};

static const struct gs_kind_param gs_kind_params[] = {
	{ GS_KIND_EMPTY, "EMPTY" },
	{ GS_KIND_SAME, "SAME" },
	{ GS_KIND_COMPRESSED, "COMPRESSED" },
	{ GS_KIND_RAW, "RAW" },
	{ GS_KIND_WRITTEN_BACK, "WRITTEN_BACK" },
};

static void gs_kind_param_desc(const struct gs_kind_param *p, char *desc)
{
	strscpy(desc, p->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(gs_kind, gs_kind_params, gs_kind_param_desc);

static const unsigned long gs_payloads[] = {
	0, 1, 2, 0xa5a5a5a5UL, GS_PAYLOAD_MAX >> 1, GS_PAYLOAD_MAX - 1,
	GS_PAYLOAD_MAX,
};

/* All 2^GS_FLAG_BITS combinations of flag bits, in place in the word. */
#define GS_FLAG_COMBOS		BIT(GS_FLAG_BITS)

static unsigned long gs_flag_combo(unsigned long i)
{
	return i << GS_FLAG_SHIFT;
}

static void gs_table_layout(struct kunit *test)
{
	unsigned long payload_mask = GS_PAYLOAD_MAX << GS_PAYLOAD_SHIFT;

	/* kind, flags and payload tile the 64-bit word without overlap. */
	KUNIT_EXPECT_EQ(test, GS_KIND_MASK & GS_FLAG_MASK, 0UL);
	KUNIT_EXPECT_EQ(test, GS_KIND_MASK & payload_mask, 0UL);
	KUNIT_EXPECT_EQ(test, GS_FLAG_MASK & payload_mask, 0UL);
	KUNIT_EXPECT_EQ(test, GS_KIND_MASK | GS_FLAG_MASK | payload_mask, ~0UL);
	KUNIT_EXPECT_EQ(test, hweight_long(GS_FLAG_MASK), GS_FLAG_BITS);
	KUNIT_EXPECT_EQ(test, hweight_long(GS_PAYLOAD_MAX), GS_PAYLOAD_BITS);

	/* Every kind fits its field; named flags are flag bits. */
	KUNIT_EXPECT_LE(test, (unsigned long)GS_KIND_WRITTEN_BACK,
			GS_KIND_MASK);
	KUNIT_EXPECT_EQ(test, GS_FLAG_COLD & ~GS_FLAG_MASK, 0UL);
	KUNIT_EXPECT_EQ(test, GS_FLAG_WB & ~GS_FLAG_MASK, 0UL);
	KUNIT_EXPECT_EQ(test, GS_FLAG_IO & ~GS_FLAG_MASK, 0UL);
	KUNIT_EXPECT_EQ(test, GS_FLAG_INCOMP & ~GS_FLAG_MASK, 0UL);
	/* WB (pool kinds) and IO (WRITTEN_BACK) share a bit. */
	KUNIT_EXPECT_EQ(test, hweight_long(GS_FLAG_COLD | GS_FLAG_WB |
					   GS_FLAG_INCOMP), 3);

	/* An EMPTY entry without flags is the all-zero word. */
	KUNIT_EXPECT_EQ(test, gs_entry(GS_KIND_EMPTY, 0, 0), 0UL);
}

/* Every kind with every flag combination and payload decodes back. */
static void gs_table_encode_decode(struct kunit *test)
{
	const struct gs_kind_param *p = test->param_value;
	unsigned long i, j, e, flags, payload;

	for (i = 0; i < GS_FLAG_COMBOS; i++) {
		flags = gs_flag_combo(i);
		KUNIT_ASSERT_EQ(test, flags & ~GS_FLAG_MASK, 0UL);
		for (j = 0; j < ARRAY_SIZE(gs_payloads); j++) {
			payload = gs_payloads[j];
			e = gs_entry(p->kind, flags, payload);
			KUNIT_EXPECT_EQ_MSG(test, gs_entry_kind(e), p->kind,
					    "flags %#lx payload %#lx", flags,
					    payload);
			KUNIT_EXPECT_EQ_MSG(test, gs_entry_flags(e), flags,
					    "flags %#lx payload %#lx", flags,
					    payload);
			KUNIT_EXPECT_EQ_MSG(test, gs_entry_payload(e), payload,
					    "flags %#lx payload %#lx", flags,
					    payload);
		}
	}
}

/* Distinct (kind, flags, payload) triples give distinct words. */
static void gs_table_distinct(struct kunit *test)
{
	const struct gs_kind_param *p = test->param_value;
	unsigned long i, j, e, f;

	for (i = 0; i < GS_FLAG_COMBOS; i++) {
		e = gs_entry(p->kind, gs_flag_combo(i), GS_PAYLOAD_MAX);
		for (j = 0; j < i; j++) {
			f = gs_entry(p->kind, gs_flag_combo(j), GS_PAYLOAD_MAX);
			KUNIT_EXPECT_NE(test, e, f);
		}
		KUNIT_EXPECT_NE(test, e, gs_entry(p->kind, gs_flag_combo(i),
						  GS_PAYLOAD_MAX - 1));
		if (p->kind != GS_KIND_EMPTY)
			KUNIT_EXPECT_NE(test, e,
					gs_entry(GS_KIND_EMPTY, gs_flag_combo(i),
						 GS_PAYLOAD_MAX));
	}
}

/* Bits outside GS_FLAG_MASK passed as flags are dropped, not stored. */
static void gs_table_flags_masked(struct kunit *test)
{
	const struct gs_kind_param *p = test->param_value;
	unsigned long j, e, payload;

	for (j = 0; j < ARRAY_SIZE(gs_payloads); j++) {
		payload = gs_payloads[j];

		e = gs_entry(p->kind, ~0UL, payload);
		KUNIT_EXPECT_EQ(test, gs_entry_kind(e), p->kind);
		KUNIT_EXPECT_EQ(test, gs_entry_flags(e), GS_FLAG_MASK);
		KUNIT_EXPECT_EQ(test, gs_entry_payload(e), payload);

		e = gs_entry(p->kind, ~GS_FLAG_MASK, payload);
		KUNIT_EXPECT_EQ(test, e, gs_entry(p->kind, 0, payload));
		KUNIT_EXPECT_EQ(test, gs_entry_flags(e), 0UL);
	}
}

/* Each single flag bit lands in flags only and reads back alone. */
static void gs_table_single_flags(struct kunit *test)
{
	unsigned long b, e, flag;

	for (b = 0; b < GS_FLAG_BITS; b++) {
		flag = gs_flag_combo(BIT(b));
		e = gs_entry(GS_KIND_EMPTY, flag, 0);
		KUNIT_EXPECT_EQ(test, e, flag);
		KUNIT_EXPECT_EQ(test, gs_entry_kind(e), GS_KIND_EMPTY);
		KUNIT_EXPECT_EQ(test, gs_entry_payload(e), 0UL);
		KUNIT_EXPECT_EQ(test, gs_entry_flags(e), flag);
	}
	e = gs_entry(GS_KIND_COMPRESSED, GS_FLAG_COLD, 1);
	KUNIT_EXPECT_EQ(test, gs_entry_flags(e), GS_FLAG_COLD);
	e = gs_entry(GS_KIND_RAW, GS_FLAG_WB | GS_FLAG_INCOMP, 1);
	KUNIT_EXPECT_EQ(test, gs_entry_flags(e), GS_FLAG_WB | GS_FLAG_INCOMP);
	e = gs_entry(GS_KIND_WRITTEN_BACK, GS_FLAG_IO, 1);
	KUNIT_EXPECT_EQ(test, gs_entry_flags(e), GS_FLAG_IO);
	KUNIT_EXPECT_EQ(test, gs_entry_payload(e), 1UL);
}

static const unsigned long gs_same_words[] = {
	0, ~0UL, 0x0123456789abcdefUL, 1UL << 63, 0xff00000000000000UL,
	1, 0x00ffffffffffffffUL, 0x8000000000000001UL, 0xdeadbeefdeadbeefUL,
};

static void gs_same_word_desc(const unsigned long *w, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%#018lx", *w);
}

KUNIT_ARRAY_PARAM(gs_same, gs_same_words, gs_same_word_desc);

static void gs_table_check_same(struct kunit *test, unsigned long word)
{
	unsigned long e;
	unsigned int hi = ~0U;

	e = gs_same_entry(word, &hi);
	KUNIT_EXPECT_EQ_MSG(test, gs_entry_kind(e), GS_KIND_SAME,
			    "word %#lx", word);
	KUNIT_EXPECT_LE_MSG(test, hi, GS_AUX_HI_MAX, "word %#lx", word);
	KUNIT_EXPECT_EQ_MSG(test, gs_same_word(e, hi), word,
			    "word %#lx", word);
}

/* A same-filled word survives the split between entry and aux_hi. */
static void gs_table_same_round_trip(struct kunit *test)
{
	gs_table_check_same(test, *(const unsigned long *)test->param_value);
}

/* Every single-bit word and its complement survive the split. */
static void gs_table_same_all_bits(struct kunit *test)
{
	unsigned int b;

	for (b = 0; b < BITS_PER_LONG; b++) {
		gs_table_check_same(test, BIT(b));
		gs_table_check_same(test, ~BIT(b));
	}
}

/* An entry of @kind, @value and @aux gives them back, and moved too. */
static void gs_table_check_value_aux(struct kunit *test, enum gs_kind kind,
				     unsigned long value, unsigned int aux,
				     unsigned long to)
{
	const unsigned long flags = GS_FLAG_COLD | GS_FLAG_NOGAIN;
	unsigned int hi = gs_aux_hi(aux);
	unsigned long e = gs_entry_aux(kind, flags, value, aux);

	KUNIT_EXPECT_LE(test, hi, GS_AUX_HI_MAX);
	KUNIT_EXPECT_EQ(test, gs_entry_kind(e), kind);
	KUNIT_EXPECT_EQ(test, gs_entry_flags(e), flags);
	KUNIT_EXPECT_EQ(test, gs_entry_value(e), value);
	KUNIT_EXPECT_EQ(test, gs_entry_aux_get(e, hi), aux);
	/* Moved: only the value changes. */
	e = gs_entry_move(e, to);
	KUNIT_EXPECT_EQ(test, gs_entry_kind(e), kind);
	KUNIT_EXPECT_EQ(test, gs_entry_flags(e), flags);
	KUNIT_EXPECT_EQ(test, gs_entry_value(e), to);
	KUNIT_EXPECT_EQ(test, gs_entry_aux_get(e, hi), aux);
}

/* COMPRESSED, RAW and WRITTEN_BACK entries: value and aux come back. */
static void gs_table_value_aux(struct kunit *test)
{
	static const enum gs_kind kinds[] = {
		GS_KIND_COMPRESSED, GS_KIND_RAW, GS_KIND_WRITTEN_BACK,
	};
	static const unsigned long values[] = {
		0, 1, 0xa5a5a5a5a5UL, GS_VALUE_MAX - 1, GS_VALUE_MAX,
	};
	static const unsigned int auxes[] = {
		0, 1, GS_AUX_LO_MASK, GS_AUX_LO_MASK + 1, PAGE_SIZE / 2 + 3,
		PAGE_SIZE - 1, GS_AUX_MAX,
	};
	const int nv = ARRAY_SIZE(values);
	int k, v, a;

	for (k = 0; k < ARRAY_SIZE(kinds); k++)
		for (v = 0; v < nv; v++)
			for (a = 0; a < ARRAY_SIZE(auxes); a++)
				gs_table_check_value_aux(test, kinds[k],
							 values[v], auxes[a],
							 values[nv - 1 - v]);
}

/*
 * zsmalloc handles: slab objects and direct map addresses up to the
 * value's limit round trip; misaligned ones and those past it are
 * refused.
 */
static void gs_table_handles(struct kunit *test)
{
	static const phys_addr_t good[] = {
		0, 8, 0x12345678, (phys_addr_t)GS_VALUE_MAX << GS_HANDLE_SHIFT,
	};
	unsigned long value, e, h;
	void *obj[16];
	int i;

	for (i = 0; i < ARRAY_SIZE(obj); i++) {
		obj[i] = kunit_kmalloc(test, sizeof(unsigned long), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, obj[i]);
		h = (unsigned long)obj[i];
		KUNIT_EXPECT_TRUE(test, gs_handle_encode(h, &value));
		KUNIT_EXPECT_LE(test, value, GS_VALUE_MAX);
		e = gs_entry_aux(GS_KIND_COMPRESSED, GS_FLAG_COLD, value,
				 GS_AUX_MAX);
		KUNIT_EXPECT_EQ(test, gs_handle_decode(gs_entry_value(e)), h);
	}
	for (i = 0; i < ARRAY_SIZE(good); i++) {
		h = (unsigned long)__va(good[i]);
		KUNIT_EXPECT_TRUE(test, gs_handle_encode(h, &value));
		KUNIT_EXPECT_EQ(test, value, good[i] >> GS_HANDLE_SHIFT);
		KUNIT_EXPECT_EQ(test, gs_handle_decode(value), h);
	}
	/* Not 8-byte aligned; past the 48-bit value. */
	KUNIT_EXPECT_FALSE(test, gs_handle_encode((unsigned long)obj[0] + 4,
						  &value));
	h = (unsigned long)__va(((phys_addr_t)GS_VALUE_MAX + 1) <<
				GS_HANDLE_SHIFT);
	KUNIT_EXPECT_FALSE(test, gs_handle_encode(h, &value));
}

/*
 * A direct map address with its top byte (bits 56..63) replaced by each
 * of the 256 values: only the address as it is round trips; every other
 * top byte is refused, never stored wrongly. Tag-based KASAN on arm64
 * puts a tag there; UML has no such pointers, so this checks the
 * encoding's refusal, not a tagged kernel (the module refuses to load
 * on one: gs_core_init()).
 */
static void gs_table_handles_top_byte(struct kunit *test)
{
	const unsigned long addr = (unsigned long)__va(0x12345678);
	unsigned long tag, h, value;
	int fit = 0;

	for (tag = 0; tag < 256; tag++) {
		h = (addr & ~(0xffUL << 56)) | tag << 56;
		if (!gs_handle_encode(h, &value))
			continue;
		fit++;
		KUNIT_EXPECT_EQ(test, h, addr);
		KUNIT_EXPECT_EQ(test, gs_handle_decode(value), h);
	}
	KUNIT_EXPECT_EQ(test, fit, 1);
}

/*
 * 6-bit aux_hi values: every slot independent of its neighbours. One
 * more byte, as in a cluster (its first age byte): a read loads it.
 */
static void gs_table_aux_hi(struct kunit *test)
{
	u8 *hi = kunit_kzalloc(test, GS_AUX_HI_BYTES + 1, GFP_KERNEL);
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, hi);
	for (i = 0; i < GS_CLUSTER_SLOTS; i++)
		gs_aux_hi_set(hi, i, (i * 2654435761u) & GS_AUX_HI_MAX);
	for (i = 0; i < GS_CLUSTER_SLOTS; i++)
		KUNIT_EXPECT_EQ(test, gs_aux_hi_get(hi, i),
				(i * 2654435761u) & GS_AUX_HI_MAX);
	/* Extremes next to each other, then cleared one by one. */
	for (i = 8; i < 13; i++)
		gs_aux_hi_set(hi, i, i & 1 ? 0 : GS_AUX_HI_MAX);
	for (i = 8; i < 13; i++)
		KUNIT_EXPECT_EQ(test, gs_aux_hi_get(hi, i),
				i & 1 ? 0 : GS_AUX_HI_MAX);
	gs_aux_hi_set(hi, 11, 0x2a);
	KUNIT_EXPECT_EQ(test, gs_aux_hi_get(hi, 10), GS_AUX_HI_MAX);
	KUNIT_EXPECT_EQ(test, gs_aux_hi_get(hi, 11), 0x2a);
	KUNIT_EXPECT_EQ(test, gs_aux_hi_get(hi, 12), GS_AUX_HI_MAX);
	/* Bits above the 6 are not stored. */
	gs_aux_hi_set(hi, 9, 0xffc0);
	KUNIT_EXPECT_EQ(test, gs_aux_hi_get(hi, 9), 0);
	KUNIT_EXPECT_EQ(test, gs_aux_hi_get(hi, 8), GS_AUX_HI_MAX);
	KUNIT_EXPECT_EQ(test, gs_aux_hi_get(hi, 10), GS_AUX_HI_MAX);
	for (i = 0; i < GS_CLUSTER_SLOTS; i++)
		gs_aux_hi_set(hi, i, 0);
	KUNIT_EXPECT_NULL(test, memchr_inv(hi, 0, GS_AUX_HI_BYTES));
	/* The last slot ends exactly at the end of the array. */
	gs_aux_hi_set(hi, GS_CLUSTER_SLOTS - 1, GS_AUX_HI_MAX);
	KUNIT_EXPECT_EQ(test, hi[GS_AUX_HI_BYTES - 1], 0xfc);
	/* What follows the array neither shows nor changes. */
	hi[GS_AUX_HI_BYTES] = 0xff;
	KUNIT_EXPECT_EQ(test, gs_aux_hi_get(hi, GS_CLUSTER_SLOTS - 1),
			GS_AUX_HI_MAX);
	gs_aux_hi_set(hi, GS_CLUSTER_SLOTS - 1, 0);
	KUNIT_EXPECT_EQ(test, gs_aux_hi_get(hi, GS_CLUSTER_SLOTS - 1), 0);
	KUNIT_EXPECT_EQ(test, hi[GS_AUX_HI_BYTES], 0xff);
}

/* Does slot @i's age byte agree with its last access at @when? */
static bool gs_age_holds(const struct gs_cluster *cl, unsigned int i,
			 u32 when, u32 now)
{
	u32 unit = cl->age[i] & GS_AGE_UNIT, start, secs;

	start = cl->age_base + (unit << cl->age_shift);
	secs = gs_age_secs(cl, i, now);
	if (secs > now - when)
		return false;		/* overstated */
	if (when < cl->age_base)	/* slid out of the window */
		return !unit;
	return when >= start && when - start < (1U << cl->age_shift) &&
	       now - when - secs < (1U << cl->age_shift);
}

/*
 * Age bytes against the true time of each slot's last access, over a
 * random run of accesses, frees, idle marks and clock jumps of seconds to
 * days: each live slot's unit holds its access (or the access slid out of
 * the window), so an age is never overstated and falls short by less
 * than one unit; the user's idle mark stays until the slot's next access.
 */
static void gs_table_age(struct kunit *test)
{
	struct gs_cluster *cl = kunit_kzalloc(test, sizeof(*cl), GFP_KERNEL);
	u32 *when = kunit_kcalloc(test, GS_CLUSTER_SLOTS, sizeof(u32),
				  GFP_KERNEL);
	u8 *idle = kunit_kzalloc(test, GS_CLUSTER_SLOTS, GFP_KERNEL);
	unsigned int n, i, j, bad = 0, top_shift = 0, slid = 0;
	struct rnd_state rnd;
	u32 now = 1000, k;

	KUNIT_ASSERT_NOT_NULL(test, cl);
	KUNIT_ASSERT_NOT_NULL(test, when);
	KUNIT_ASSERT_NOT_NULL(test, idle);
	cl->table = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, cl->table);
	cl->age_base = now;
	prandom_seed_state(&rnd, 42);
	for (n = 0; n < 40000; n++) {
		k = prandom_u32_state(&rnd);
		switch (k % 32) {
		case 0:
			now += prandom_u32_state(&rnd) % (4 * 86400);
			break;
		case 1 ... 4:
			now += prandom_u32_state(&rnd) % 3600;
			break;
		default:
			now += k % 3;
			break;
		}
		i = (k >> 8) % GS_CLUSTER_SLOTS;
		switch ((k >> 20) % 8) {
		case 0:
			atomic_long_set(&cl->table[i], 0);
			break;
		case 1:
			if (atomic_long_read(&cl->table[i])) {
				cl->age[i] |= GS_AGE_IDLE;
				idle[i] = 1;
			}
			break;
		default:
			atomic_long_set(&cl->table[i], 1);
			gs_age_touch(cl, i, now);
			when[i] = now;
			idle[i] = 0;
			break;
		}
		top_shift = max_t(unsigned int, top_shift, cl->age_shift);
		for (j = 0; j < GS_CLUSTER_SLOTS; j++) {
			if (!atomic_long_read(&cl->table[j]))
				continue;
			slid += when[j] < cl->age_base;
			if (gs_age_holds(cl, j, when[j], now) &&
			    !(cl->age[j] & GS_AGE_IDLE) == !idle[j])
				continue;
			if (!bad++)
				kunit_info(test, "step %u slot %u: access %u, now %u, base %u, shift %u, byte %#x\n",
					   n, j, when[j], now, cl->age_base,
					   cl->age_shift, cl->age[j]);
		}
	}
	KUNIT_EXPECT_EQ(test, bad, 0U);
	/* The run went through every regime: doubling to the top, sliding. */
	KUNIT_EXPECT_EQ(test, top_shift, GS_AGE_SHIFT_MAX);
	KUNIT_EXPECT_GT(test, slid, 0U);
}

/*
 * Set the ages' clock to a reading of @secs in tick @tick and call
 * gs_age_now() in that same tick; false if a tick passed meanwhile (or
 * another reader replaced the reading) and it must be tried again.
 */
static bool gs_age_clock_try(u32 secs, u32 tick, u32 *now)
{
	u32 t = jiffies;

	atomic64_set(&gs_age_clock, (u64)secs << 32 | tick);
	*now = gs_age_now();
	return t == (u32)jiffies &&
	       atomic64_read(&gs_age_clock) >> 32 == *now;
}

/* The boot clock's seconds, as the ages' clock reads them. */
static u32 gs_boot_secs(void)
{
	return div_u64(ktime_get_boottime_ns(), NSEC_PER_SEC);
}

/*
 * The ages' clock (gs_age_now()): a reading of this tick is used as it is,
 * one of another tick is replaced by the boot clock's, and what it gives
 * then is the boot clock's seconds.
 */
static void gs_table_age_clock(struct kunit *test)
{
	u32 fake = gs_boot_secs() + 100000, t0, t1, now = 0;
	unsigned int tries;
	bool ok = false;

	/* This tick's reading: kept, even a false one. */
	for (tries = 0; !ok && tries < 100; tries++)
		ok = gs_age_clock_try(fake, jiffies, &now);
	KUNIT_ASSERT_TRUE_MSG(test, ok, "the tick never held");
	KUNIT_EXPECT_EQ(test, now, fake);

	/* A reading of the previous tick, or of 2^31 ticks ago: replaced. */
	for (tries = 0; tries < 2; tries++) {
		t0 = gs_boot_secs();
		atomic64_set(&gs_age_clock, (u64)fake << 32 |
			     (u32)(jiffies - (tries ? 1U << 31 : 1)));
		now = gs_age_now();
		t1 = gs_boot_secs();
		KUNIT_EXPECT_GE(test, now, t0);
		KUNIT_EXPECT_LE(test, now, t1);
		KUNIT_EXPECT_EQ(test, (u32)(atomic64_read(&gs_age_clock) >> 32),
				now);
	}
	/* And it keeps the time from then on: a second later, a second on. */
	msleep(1100);
	t0 = gs_boot_secs();
	now = gs_age_now();
	t1 = gs_boot_secs();
	KUNIT_EXPECT_GE(test, now, t0);
	KUNIT_EXPECT_LE(test, now, t1);
}

/*
 * A reading is kept for its tick only where the second cannot turn
 * before the tick is over: within two ticks of the turn it gets a tick it
 * is never used in, so the next gs_age_now() reads the clock again.
 */
static void gs_table_age_reading(struct kunit *test)
{
	u64 sec = 5 * NSEC_PER_SEC, w;
	u32 tick = 1000;

	w = gs_age_reading(sec, tick);
	KUNIT_EXPECT_EQ(test, w, 5ULL << 32 | tick);
	w = gs_age_reading(sec + NSEC_PER_SEC - 2 * TICK_NSEC - 1, tick);
	KUNIT_EXPECT_EQ(test, w, 5ULL << 32 | tick);
	/* Near the turn: still second 5, not for this tick. */
	w = gs_age_reading(sec + NSEC_PER_SEC - 2 * TICK_NSEC, tick);
	KUNIT_EXPECT_EQ(test, (u32)(w >> 32), 5U);
	KUNIT_EXPECT_NE(test, (u32)w, tick);
	w = gs_age_reading(sec + NSEC_PER_SEC - 1, 0);
	KUNIT_EXPECT_EQ(test, (u32)(w >> 32), 5U);
	KUNIT_EXPECT_NE(test, (u32)w, 0U);
	w = gs_age_reading(sec + NSEC_PER_SEC, tick);
	KUNIT_EXPECT_EQ(test, w, 6ULL << 32 | tick);
}

static struct kunit_case gs_table_cases[] = {
	KUNIT_CASE(gs_table_layout),
	KUNIT_CASE_PARAM(gs_table_encode_decode, gs_kind_gen_params),
	KUNIT_CASE_PARAM(gs_table_distinct, gs_kind_gen_params),
	KUNIT_CASE_PARAM(gs_table_flags_masked, gs_kind_gen_params),
	KUNIT_CASE(gs_table_single_flags),
	KUNIT_CASE_PARAM(gs_table_same_round_trip, gs_same_gen_params),
	KUNIT_CASE(gs_table_same_all_bits),
	KUNIT_CASE(gs_table_handles),
	KUNIT_CASE(gs_table_handles_top_byte),
	KUNIT_CASE(gs_table_value_aux),
	KUNIT_CASE(gs_table_aux_hi),
	KUNIT_CASE(gs_table_age),
	KUNIT_CASE(gs_table_age_clock),
	KUNIT_CASE(gs_table_age_reading),
	{}
};

static struct kunit_suite gs_table_suite = {
	.name = "ghostswap_table",
	.test_cases = gs_table_cases,
};

kunit_test_suite(gs_table_suite);
