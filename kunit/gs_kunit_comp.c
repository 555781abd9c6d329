// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "ghostswap_comp": the compression backends (gs_backend.h),
 * their parameters in zram's syntax (gs_params.h) and the
 * incompressible-page heuristic (gs_heuristic.h).
 *
 * Every backend at a few levels, with and without a dictionary: round
 * trips of every kind of page, corrupt and truncated input refused,
 * output that does not fit refused without a byte written past the
 * room given, and every byte counted and given back.
 */
#include <crypto/acompress.h>
#include <kunit/test.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/fs_struct.h>
#include <linux/hex.h>
#include <linux/kernel.h>
#include <linux/lz4.h>
#include <linux/lzo.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/zstd.h>
#include "gs_backend.h"
#include "gs_heuristic.h"
#include "gs_params.h"
#include "gs_kunit.h"

/* Level markers resolved per algorithm: its lowest and highest level. */
#define GS_KC_MIN	(INT_MIN + 1)
#define GS_KC_MAX	INT_MAX

struct gs_kc_cfg {
	const char *alg;
	s32 level;
	s32 winbits;
	bool dict;
};

#define U	GS_PARAM_UNSET

#ifndef CONFIG_KCSAN
static const struct gs_kc_cfg gs_kc_cfgs[] = {
	{ "lzo", U, U },
	{ "lzo-rle", U, U },
	{ "lz4", U, U },
	{ "lz4", 8, U },
	{ "lz4", GS_KC_MAX, U },
	{ "lz4", U, U, true },
	{ "lz4", 8, U, true },
	{ "lz4", GS_KC_MAX, U, true },
	{ "lz4hc", GS_KC_MIN, U },
	{ "lz4hc", U, U },
	{ "lz4hc", GS_KC_MAX, U },
	{ "lz4hc", GS_KC_MIN, U, true },
	{ "lz4hc", U, U, true },
	{ "lz4hc", GS_KC_MAX, U, true },
	{ "zstd", GS_KC_MIN, U },
	{ "zstd", -5, U },
	{ "zstd", 0, U },
	{ "zstd", U, U },
	{ "zstd", 9, U },
	{ "zstd", 19, U },
	{ "zstd", GS_KC_MAX, U },
	{ "zstd", GS_KC_MIN, U, true },
	{ "zstd", U, U, true },
	{ "zstd", 19, U, true },
	{ "zstd", GS_KC_MAX, U, true },
	{ "deflate", 0, U },
	{ "deflate", 1, U },
	{ "deflate", U, U },
	{ "deflate", 9, U },
	{ "deflate", U, -9 },
	{ "deflate", U, -15 },
	{ "deflate", U, 9 },
	{ "deflate", 9, 15 },
	{ "842", U, U },
};
#else
/*
 * Under KCSAN (kunit/run.sh --kcsan) each algorithm once, lz4 and zstd
 * also with a dictionary: these cases run one thread through a
 * compressor, where KCSAN has no race to find, and its instrumented
 * zstd takes minutes at the high levels. Every level and window is run
 * by the UML suite, under KASAN.
 */
static const struct gs_kc_cfg gs_kc_cfgs[] = {
	{ "lzo", U, U },
	{ "lzo-rle", U, U },
	{ "lz4", U, U },
	{ "lz4", U, U, true },
	{ "lz4hc", U, U },
	{ "zstd", U, U },
	{ "zstd", U, U, true },
	{ "deflate", U, U },
	{ "842", U, U },
};
#endif

#undef U

static void gs_kc_cfg_desc(const struct gs_kc_cfg *c, char *desc)
{
	int n = scnprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s", c->alg);

	if (c->level == GS_KC_MIN)
		n += scnprintf(desc + n, KUNIT_PARAM_DESC_SIZE - n, " level=min");
	else if (c->level == GS_KC_MAX)
		n += scnprintf(desc + n, KUNIT_PARAM_DESC_SIZE - n, " level=max");
	else if (c->level != GS_PARAM_UNSET)
		n += scnprintf(desc + n, KUNIT_PARAM_DESC_SIZE - n, " level=%d",
			       c->level);
	if (c->winbits != GS_PARAM_UNSET)
		n += scnprintf(desc + n, KUNIT_PARAM_DESC_SIZE - n,
			       " deflate.winbits=%d", c->winbits);
	if (c->dict)
		scnprintf(desc + n, KUNIT_PARAM_DESC_SIZE - n, " dict");
}

KUNIT_ARRAY_PARAM(gs_kc_cfg, gs_kc_cfgs, gs_kc_cfg_desc);

static s32 gs_kc_level(const char *alg, s32 level)
{
	bool min = level == GS_KC_MIN;

	if (level != GS_KC_MIN && level != GS_KC_MAX)
		return level;
	if (!strcmp(alg, "lz4"))
		return min ? 1 : 65537;
	if (!strcmp(alg, "lz4hc"))
		return min ? 1 : LZ4HC_MAX_CLEVEL;
	if (!strcmp(alg, "zstd"))
		return min ? zstd_min_clevel() : zstd_max_clevel();
	return min ? -1 : 9;
}

/* " level N" after setup (the level in use), "" for algorithms without. */
static const char *gs_kc_level_str(const struct gs_comp_params *p)
{
	static char buf[32];

	if (p->level == GS_PARAM_UNSET)
		return "";
	if (p->deflate_winbits != GS_PARAM_UNSET)
		snprintf(buf, sizeof(buf), " level %d winbits %d", p->level,
			 p->deflate_winbits);
	else
		snprintf(buf, sizeof(buf), " level %d", p->level);
	return buf;
}

/* Pseudo-random bytes, the same for the same seed. */
static void gs_kc_prandom(void *buf, size_t len, u64 seed)
{
	u64 x = seed * 0x9e3779b97f4a7c15ULL + 1;
	u8 *p = buf;
	size_t i;

	for (i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = x >> 32;
	}
}

/* A dictionary: text made of the words the text pages are made of. */
#define GS_KC_DICT_LEN	(3 * PAGE_SIZE)

static void *gs_kc_dict(struct kunit *test)
{
	u8 *dict = kunit_kmalloc(test, GS_KC_DICT_LEN, GFP_KERNEL);
	int i;

	KUNIT_ASSERT_NOT_NULL(test, dict);
	for (i = 0; i < GS_KC_DICT_LEN / PAGE_SIZE; i++) {
		void *t = gs_kunit_text(test, 1000 + i);

		memcpy(dict + i * PAGE_SIZE, t, PAGE_SIZE);
		kunit_kfree(test, t);
	}
	return dict;
}

KUNIT_DEFINE_ACTION_WRAPPER(gs_kc_release, gs_comp_params_release,
			    struct gs_comp_params *);

/*
 * Parameters set up as @c says, for inputs of up to @max_src bytes,
 * released when the test ends.
 */
static struct gs_comp_params *gs_kc_params_src(struct kunit *test,
					       const struct gs_kc_cfg *c,
					       unsigned int max_src)
{
	struct gs_comp_params *p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	int ret;

	KUNIT_ASSERT_NOT_NULL(test, p);
	ret = gs_comp_params_init(p, c->alg);
	if (ret == -ENOENT)
		kunit_skip(test, "%s not in this kernel", c->alg);
	KUNIT_ASSERT_EQ(test, ret, 0);
	p->level = gs_kc_level(c->alg, c->level);
	p->deflate_winbits = c->winbits;
	KUNIT_ASSERT_EQ(test, gs_comp_params_set_max_src(p, max_src), 0);
	if (c->dict)
		KUNIT_ASSERT_EQ(test, gs_comp_params_set_dict(p, gs_kc_dict(test),
							      GS_KC_DICT_LEN), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, gs_kc_release, p),
			0);
	KUNIT_ASSERT_EQ(test, gs_comp_params_setup(p), 0);
	return p;
}

/* Parameters set up as @c says, for a page at a time. */
static struct gs_comp_params *gs_kc_params(struct kunit *test,
					   const struct gs_kc_cfg *c)
{
	return gs_kc_params_src(test, c, PAGE_SIZE);
}

struct gs_kc_ctx {
	struct gs_comp_params *p;
	void *ctx;
};

static void gs_kc_ctx_destroy(void *arg)
{
	struct gs_kc_ctx *c = arg;

	c->p->be->ctx_destroy(c->p, c->ctx);
}

/* A context of @p, destroyed when the test ends (before @p is released). */
static void *gs_kc_ctx(struct kunit *test, struct gs_comp_params *p)
{
	struct gs_kc_ctx *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, c);
	c->p = p;
	c->ctx = p->be->ctx_create(p, NUMA_NO_NODE);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(c->ctx), "ctx_create: %ld",
			       PTR_ERR(c->ctx));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							gs_kc_ctx_destroy, c),
			0);
	return c->ctx;
}

enum gs_kc_kind { GS_KC_ZERO, GS_KC_SAME, GS_KC_TEXT, GS_KC_RANDOM,
		  GS_KC_MIXED, GS_KC_KINDS };

static const char *const gs_kc_kind_names[] = {
	"zero", "same", "text", "random", "mixed",
};

static void *gs_kc_page(struct kunit *test, enum gs_kc_kind kind, u32 seed)
{
	void *p;

	switch (kind) {
	case GS_KC_ZERO:
		return gs_kunit_same(test, 0);
	case GS_KC_SAME:
		return gs_kunit_same(test, 0x5a5a5a5a00ff00ffUL + seed);
	case GS_KC_TEXT:
		return gs_kunit_text(test, seed);
	case GS_KC_RANDOM:
		p = gs_kunit_page(test);
		gs_kc_prandom(p, PAGE_SIZE, seed);
		return p;
	default:
		/* Text, then random bytes, then zeroes. */
		p = gs_kunit_text(test, seed);
		gs_kc_prandom(p + PAGE_SIZE / 3, PAGE_SIZE / 3, seed);
		memset(p + 2 * PAGE_SIZE / 3, 0, PAGE_SIZE - 2 * PAGE_SIZE / 3);
		return p;
	}
}

/* @len bytes of @src in an allocation of exactly that size (KASAN). */
static void *gs_kc_exact(struct kunit *test, const void *src, size_t len)
{
	void *p = kunit_kmalloc(test, max_t(size_t, len, 1), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, p);
	memcpy(p, src, len);
	return p;
}

/* Compress @src with room for two pages: the length, or a negative errno. */
static int gs_kc_compress(struct kunit *test, struct gs_comp_params *p,
			  void *ctx, const void *src, void **out)
{
	void *dst = kunit_kmalloc(test, 2 * PAGE_SIZE, GFP_KERNEL);
	int ret;

	KUNIT_ASSERT_NOT_NULL(test, dst);
	ret = p->be->compress(p, ctx, src, PAGE_SIZE, dst, 2 * PAGE_SIZE);
	if (ret < 0) {
		kunit_kfree(test, dst);
		return ret;
	}
	KUNIT_EXPECT_GT(test, ret, 0);
	KUNIT_EXPECT_LE(test, ret, 2 * PAGE_SIZE);
	*out = dst;
	return ret;
}

/* Every kind of page comes back as it went in. */
static void gs_comp_roundtrip(struct kunit *test)
{
	const struct gs_kc_cfg *c = test->param_value;
	struct gs_comp_params *p = gs_kc_params(test, c);
	void *ctx = gs_kc_ctx(test, p);
	int kind, seed, len, lens[GS_KC_KINDS];
	void *src, *comp, *in, *out;

	for (kind = 0; kind < GS_KC_KINDS; kind++) {
		for (seed = 1; seed <= 3; seed++) {
			src = gs_kc_page(test, kind, seed);
			len = gs_kc_compress(test, p, ctx, src, &comp);
			KUNIT_ASSERT_GT_MSG(test, len, 0, "%s page %d",
					    gs_kc_kind_names[kind], seed);
			lens[kind] = len;
			in = gs_kc_exact(test, comp, len);
			out = kunit_kmalloc(test, PAGE_SIZE, GFP_KERNEL);
			KUNIT_ASSERT_NOT_NULL(test, out);
			memset(out, 0xcc, PAGE_SIZE);
			KUNIT_EXPECT_EQ_MSG(test, p->be->decompress(p, ctx, in,
								    len, out,
								    PAGE_SIZE),
					    0, "%s page %d",
					    gs_kc_kind_names[kind], seed);
			KUNIT_EXPECT_MEMEQ(test, out, src, PAGE_SIZE);
			kunit_kfree(test, src);
			kunit_kfree(test, comp);
			kunit_kfree(test, in);
			kunit_kfree(test, out);
		}
	}
	/* The effective level: what setup() made of the request. */
	kunit_info(test, "%s%s: zero %d, same %d, text %d, random %d, mixed %d bytes\n",
		   p->name, gs_kc_level_str(p), lens[GS_KC_ZERO], lens[GS_KC_SAME],
		   lens[GS_KC_TEXT], lens[GS_KC_RANDOM], lens[GS_KC_MIXED]);
	/*
	 * Text shrinks, but at the extremes that trade all compression
	 * for speed: deflate's level 0 (stored), lz4's top acceleration,
	 * zstd's lowest negative levels.
	 */
	if (!(!strcmp(p->name, "deflate") && !p->level) &&
	    !(!strcmp(p->name, "lz4") && p->level > 100) &&
	    !(!strcmp(p->name, "zstd") && p->level < -100))
		KUNIT_EXPECT_LT(test, lens[GS_KC_TEXT], PAGE_SIZE * 3 / 4);
}

/* Decompress @len bytes at @src: no crash, 0 or an errno. */
static int gs_kc_try(struct kunit *test, struct gs_comp_params *p, void *ctx,
		     const void *src, size_t len, void *out)
{
	void *in = gs_kc_exact(test, src, len);
	int ret = p->be->decompress(p, ctx, in, len, out, PAGE_SIZE);

	kunit_kfree(test, in);
	KUNIT_EXPECT_LE_MSG(test, ret, 0, "%zu bytes", len);
	if (p->be != &gs_be_acomp)
		KUNIT_EXPECT_TRUE_MSG(test, ret == 0 || ret == -EIO,
				      "decompress returned %d", ret);
	return ret;
}

/* Truncated, extended, damaged and made-up input: refused, no harm done. */
static void gs_comp_corrupt(struct kunit *test)
{
	const struct gs_kc_cfg *c = test->param_value;
	struct gs_comp_params *p = gs_kc_params(test, c);
	void *ctx = gs_kc_ctx(test, p);
	void *src = gs_kc_page(test, GS_KC_TEXT, 7);
	void *out = kunit_kmalloc(test, PAGE_SIZE, GFP_KERNEL);
	void *bad = kunit_kmalloc(test, 2 * PAGE_SIZE + 1, GFP_KERNEL);
	static const int garbage[] = { 1, 2, 7, 64, 1000, PAGE_SIZE };
	bool own = p->be != &gs_be_acomp;
	int len, i, n, ret, accepted = 0;
	u8 flip[2];
	void *comp;

	KUNIT_ASSERT_NOT_NULL(test, out);
	KUNIT_ASSERT_NOT_NULL(test, bad);
	len = gs_kc_compress(test, p, ctx, src, &comp);
	KUNIT_ASSERT_GT(test, len, 8);
	KUNIT_ASSERT_EQ(test, gs_kc_try(test, p, ctx, comp, len, out), 0);

	/*
	 * Every truncation that keeps less than all of it. 842 pads its
	 * output to 8 bytes: a cut into the padding goes unnoticed.
	 */
	for (n = 0; n < len; n += n < 16 || n >= len - 16 ? 1 : 13) {
		ret = gs_kc_try(test, p, ctx, comp, n, out);
		if (own || n <= len - 8)
			KUNIT_EXPECT_LT_MSG(test, ret, 0, "%d of %d bytes", n,
					    len);
	}

	/* One byte more. */
	memcpy(bad, comp, len);
	((u8 *)bad)[len] = 0x5a;
	n = gs_kc_try(test, p, ctx, bad, len + 1, out);
	if (own)
		KUNIT_EXPECT_LT(test, n, 0);

	/* A damaged byte: refused, or some page comes out (no checksum). */
	for (i = 0; i < 200; i++) {
		memcpy(bad, comp, len);
		gs_kc_prandom(flip, sizeof(flip), i);
		n = (i * 7919) % len;
		((u8 *)bad)[n] ^= flip[0] | 1;
		if (!gs_kc_try(test, p, ctx, bad, len, out))
			accepted++;
	}

	/* Made-up input of several lengths. */
	for (i = 0; i < ARRAY_SIZE(garbage); i++) {
		gs_kc_prandom(bad, garbage[i], 100 + i);
		KUNIT_EXPECT_LT_MSG(test, gs_kc_try(test, p, ctx, bad,
						    garbage[i], out),
				    0, "%d random bytes", garbage[i]);
	}

	/* The context still works. */
	KUNIT_EXPECT_EQ(test, gs_kc_try(test, p, ctx, comp, len, out), 0);
	KUNIT_EXPECT_MEMEQ(test, out, src, PAGE_SIZE);
	kunit_info(test, "%s: %d of 200 single-byte corruptions decoded to a page\n",
		   p->name, accepted);
}

#define GS_KC_CANARY	64

/*
 * Compress @src into exactly @cap bytes followed by a canary: the
 * length, or a negative errno.
 */
static int gs_kc_compress_cap(struct kunit *test, struct gs_comp_params *p,
			      void *ctx, const void *src, unsigned int cap)
{
	u8 *dst = kunit_kmalloc(test, cap + GS_KC_CANARY, GFP_KERNEL);
	int ret, i;

	KUNIT_ASSERT_NOT_NULL(test, dst);
	memset(dst, 0xa5, cap + GS_KC_CANARY);
	ret = p->be->compress(p, ctx, src, PAGE_SIZE, dst, cap);
	for (i = 0; i < GS_KC_CANARY; i++)
		if (dst[cap + i] != 0xa5)
			break;
	KUNIT_EXPECT_EQ_MSG(test, i, GS_KC_CANARY,
			    "wrote past %u bytes of room", cap);
	kunit_kfree(test, dst);
	return ret;
}

/* Output that does not fit: -ENOSPC, and nothing written past the room. */
static void gs_comp_enospc(struct kunit *test)
{
	const struct gs_kc_cfg *c = test->param_value;
	struct gs_comp_params *p = gs_kc_params(test, c);
	void *ctx = gs_kc_ctx(test, p);
	void *text = gs_kc_page(test, GS_KC_TEXT, 11);
	void *rnd = gs_kc_page(test, GS_KC_RANDOM, 11);
	unsigned int cap, step;
	void *comp;
	int len, ret;

	len = gs_kc_compress(test, p, ctx, text, &comp);
	KUNIT_ASSERT_GT(test, len, 0);
	/* Fine steps at both ends, coarse ones in between. */
	for (cap = 0; cap < len; cap += step) {
		step = cap < 32 || cap + 32 >= len ? 1 : 37;
		ret = gs_kc_compress_cap(test, p, ctx, text, cap);
		KUNIT_EXPECT_EQ_MSG(test, ret, -ENOSPC, "room %u of %d", cap,
				    len);
	}
	/* Some libraries want a little headroom; given it, the same result. */
	for (cap = len; cap < len + 32; cap++) {
		ret = gs_kc_compress_cap(test, p, ctx, text, cap);
		if (ret > 0)
			KUNIT_EXPECT_EQ(test, ret, len);
		else
			KUNIT_EXPECT_EQ(test, ret, -ENOSPC);
	}
	KUNIT_EXPECT_EQ(test, gs_kc_compress_cap(test, p, ctx, text, len + 32),
			len);
	/* Random bytes do not fit in a page. */
	KUNIT_EXPECT_EQ(test, gs_kc_compress_cap(test, p, ctx, rnd, PAGE_SIZE),
			-ENOSPC);
}

/* Bytes are counted exactly and all given back. */
static void gs_comp_bytes(struct kunit *test)
{
	const struct gs_kc_cfg *c = test->param_value;
	struct gs_comp_params *p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	long shared, one, two;
	void *ctx1, *ctx2;
	int ret;

	KUNIT_ASSERT_NOT_NULL(test, p);
	ret = gs_comp_params_init(p, c->alg);
	if (ret == -ENOENT)
		kunit_skip(test, "%s not in this kernel", c->alg);
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&p->bytes), 0);
	p->level = gs_kc_level(c->alg, c->level);
	p->deflate_winbits = c->winbits;
	if (c->dict) {
		KUNIT_ASSERT_EQ(test, gs_comp_params_set_dict(p, gs_kc_dict(test),
							      GS_KC_DICT_LEN), 0);
		/* A vmalloc area: three pages. */
		KUNIT_EXPECT_EQ(test, atomic_long_read(&p->bytes),
				GS_KC_DICT_LEN);
	}
	KUNIT_ASSERT_EQ(test, gs_comp_params_setup(p), 0);
	shared = atomic_long_read(&p->bytes);
	ctx1 = p->be->ctx_create(p, NUMA_NO_NODE);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ctx1));
	one = atomic_long_read(&p->bytes) - shared;
	ctx2 = p->be->ctx_create(p, NUMA_NO_NODE);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ctx2));
	two = atomic_long_read(&p->bytes) - shared;
	KUNIT_EXPECT_GT(test, one, 0);
	KUNIT_EXPECT_EQ(test, two, 2 * one);

	/* Where the workspace is one vmalloc area, its size is known. */
	if (!strcmp(c->alg, "lzo") || !strcmp(c->alg, "lzo-rle"))
		KUNIT_EXPECT_EQ(test, one, PAGE_ALIGN(LZO1X_1_MEM_COMPRESS));
	if (!strcmp(c->alg, "lz4"))
		KUNIT_EXPECT_EQ(test, one, PAGE_ALIGN(LZ4_MEM_COMPRESS));
	if (!strcmp(c->alg, "lz4hc"))
		KUNIT_EXPECT_EQ(test, one, PAGE_ALIGN(LZ4HC_MEM_COMPRESS));
	if (c->dict && strcmp(c->alg, "zstd"))
		KUNIT_EXPECT_EQ(test, shared - GS_KC_DICT_LEN, one);
	kunit_info(test, "%s%s%s: %ld bytes per stream, %ld shared\n",
		   p->name, gs_kc_level_str(p), c->dict ? " dict" : "", one,
		   shared);

	p->be->ctx_destroy(p, ctx2);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&p->bytes), shared + one);
	p->be->ctx_destroy(p, ctx1);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&p->bytes), shared);
	gs_comp_params_release(p);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&p->bytes), 0);
	KUNIT_EXPECT_NULL(test, p->dict);
	KUNIT_EXPECT_NULL(test, p->shared);
}

/* A dictionary of the same vocabulary makes text pages smaller. */
static void gs_comp_dict_helps(struct kunit *test)
{
	static const char *const algs[] = { "lz4", "lz4hc", "zstd" };
	int i, with, without;
	void *text, *comp;

	for (i = 0; i < ARRAY_SIZE(algs); i++) {
		struct gs_kc_cfg plain = { algs[i], GS_PARAM_UNSET,
					   GS_PARAM_UNSET, false };
		struct gs_kc_cfg dict = { algs[i], GS_PARAM_UNSET,
					  GS_PARAM_UNSET, true };
		struct gs_comp_params *p = gs_kc_params(test, &plain);
		struct gs_comp_params *pd = gs_kc_params(test, &dict);

		text = gs_kc_page(test, GS_KC_TEXT, 21);
		without = gs_kc_compress(test, p, gs_kc_ctx(test, p), text,
					 &comp);
		with = gs_kc_compress(test, pd, gs_kc_ctx(test, pd), text,
				      &comp);
		kunit_info(test, "%s: text page %d bytes, %d with a dictionary\n",
			   algs[i], without, with);
		KUNIT_EXPECT_GT(test, with, 0);
		KUNIT_EXPECT_LT(test, with, without);
	}
}

/* @comp (@len bytes) read back alone by the library: @page? */
static void gs_kc_lz4_alone(struct kunit *test, const void *comp, int len,
			    const void *page)
{
	void *in = gs_kc_exact(test, comp, len);
	void *out = kunit_kmalloc(test, PAGE_SIZE, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, out);
	KUNIT_EXPECT_EQ(test, LZ4_decompress_safe(in, out, len, PAGE_SIZE),
			PAGE_SIZE);
	KUNIT_EXPECT_MEMEQ(test, out, page, PAGE_SIZE);
	kunit_kfree(test, in);
	kunit_kfree(test, out);
}

/*
 * lz4 without a dictionary compresses each page alone with
 * LZ4_compress_fast() (see gs_be_lz4.c): a page makes the bytes the
 * library makes of it on a fresh state, as zram's lz4 does, whatever the
 * context compressed before, and they read back alone.
 */
static void gs_comp_lz4_alone(struct kunit *test)
{
	static const struct gs_kc_cfg c = { "lz4", GS_PARAM_UNSET,
					    GS_PARAM_UNSET, false };
	struct gs_comp_params *p = gs_kc_params(test, &c);
	void *ctx = gs_kc_ctx(test, p);
	void *page = gs_kc_page(test, GS_KC_TEXT, 31);
	void *wrk = kunit_kzalloc(test, LZ4_MEM_COMPRESS, GFP_KERNEL);
	void *ref = kunit_kmalloc(test, 2 * PAGE_SIZE, GFP_KERNEL);
	void *first, *after, *other;
	int len, n;

	KUNIT_ASSERT_NOT_NULL(test, wrk);
	KUNIT_ASSERT_NOT_NULL(test, ref);
	len = LZ4_compress_fast(page, ref, PAGE_SIZE, 2 * PAGE_SIZE,
				LZ4_ACCELERATION_DEFAULT, wrk);
	KUNIT_ASSERT_GT(test, len, 0);

	n = gs_kc_compress(test, p, ctx, page, &first);
	KUNIT_ASSERT_EQ(test, n, len);
	KUNIT_EXPECT_MEMEQ(test, first, ref, len);
	gs_kc_lz4_alone(test, first, n, page);

	KUNIT_ASSERT_GT(test, gs_kc_compress(test, p, ctx,
					     gs_kc_page(test, GS_KC_MIXED, 33),
					     &other), 0);
	n = gs_kc_compress(test, p, ctx, page, &after);
	KUNIT_ASSERT_EQ(test, n, len);
	KUNIT_EXPECT_MEMEQ(test, after, ref, len);
}

/* Levels, windows and dictionaries an algorithm does not take. */
static void gs_comp_bad_params(struct kunit *test)
{
	static const struct gs_kc_cfg bad[] = {
		{ "lz4", 0, GS_PARAM_UNSET },
		{ "lz4", -1, GS_PARAM_UNSET },
		{ "lz4", 65538, GS_PARAM_UNSET },
		{ "lz4hc", 0, GS_PARAM_UNSET },
		{ "lz4hc", LZ4HC_MAX_CLEVEL + 1, GS_PARAM_UNSET },
		{ "zstd", GS_KC_MIN, GS_PARAM_UNSET },
		{ "zstd", GS_KC_MAX, GS_PARAM_UNSET },
		{ "zstd", GS_PARAM_UNSET, -12 },
		{ "deflate", -2, GS_PARAM_UNSET },
		{ "deflate", 10, GS_PARAM_UNSET },
		{ "deflate", GS_PARAM_UNSET, 8 },
		{ "deflate", GS_PARAM_UNSET, -8 },
		{ "deflate", GS_PARAM_UNSET, 16 },
		{ "deflate", GS_PARAM_UNSET, -16 },
		{ "deflate", GS_PARAM_UNSET, 0 },
		{ "lzo", 1, GS_PARAM_UNSET },
		{ "lzo-rle", GS_PARAM_UNSET, 12 },
		{ "842", 1, GS_PARAM_UNSET },
	};
	struct gs_comp_params p;
	u8 dict[64] = { 1 };
	int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		if (gs_comp_params_init(&p, bad[i].alg))
			continue;
		p.level = gs_kc_level(bad[i].alg, bad[i].level);
		/* One past the ends of zstd's range. */
		if (bad[i].level == GS_KC_MIN)
			p.level--;
		if (bad[i].level == GS_KC_MAX)
			p.level++;
		p.deflate_winbits = bad[i].winbits;
		KUNIT_EXPECT_EQ_MSG(test, gs_comp_params_setup(&p), -EINVAL,
				    "%s level %d winbits %d", bad[i].alg,
				    p.level, p.deflate_winbits);
		gs_comp_params_release(&p);
		KUNIT_EXPECT_EQ(test, atomic_long_read(&p.bytes), 0);
	}
	/* No dictionary for lzo, lzo-rle, deflate or acomp. */
	KUNIT_ASSERT_EQ(test, gs_comp_params_init(&p, "deflate"), 0);
	KUNIT_EXPECT_EQ(test, gs_comp_params_set_dict(&p, dict, sizeof(dict)),
			-EINVAL);
	KUNIT_ASSERT_EQ(test, gs_comp_params_init(&p, "lzo"), 0);
	KUNIT_EXPECT_EQ(test, gs_comp_params_set_dict(&p, dict, sizeof(dict)),
			-EINVAL);
	/* Too short for lz4 to use; empty or too long for anyone. */
	KUNIT_ASSERT_EQ(test, gs_comp_params_init(&p, "lz4"), 0);
	KUNIT_EXPECT_EQ(test, gs_comp_params_set_dict(&p, dict, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, gs_comp_params_set_dict(&p, dict,
						      GS_DICT_MAX + 1),
			-EINVAL);
	KUNIT_ASSERT_EQ(test, gs_comp_params_set_dict(&p, dict, 4), 0);
	KUNIT_EXPECT_EQ(test, gs_comp_params_setup(&p), -EINVAL);
	gs_comp_params_release(&p);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&p.bytes), 0);
}

/* Our own backends by name, acomp for the rest, nothing for nonsense. */
static void gs_comp_lookup(struct kunit *test)
{
	static const char *const own[] = {
		"lzo", "lzo-rle", "lz4", "lz4hc", "zstd", "deflate",
	};
	const struct gs_backend *be;
	struct gs_comp_params p;
	char name[GS_ALG_NAME_MAX + 1];
	int i;

	for (i = 0; i < ARRAY_SIZE(own); i++) {
		be = gs_backend_find(own[i]);
		KUNIT_ASSERT_NOT_NULL(test, be);
		KUNIT_EXPECT_STREQ(test, be->name, own[i]);
		KUNIT_EXPECT_PTR_NE(test, be, &gs_be_acomp);
	}
	if (crypto_has_acomp("842", 0, 0) > 0)
		KUNIT_EXPECT_PTR_EQ(test, gs_backend_find("842"), &gs_be_acomp);
	KUNIT_EXPECT_NULL(test, gs_backend_find("no-such-alg"));
	KUNIT_EXPECT_NULL(test, gs_backend_find(""));
	memset(name, 'a', GS_ALG_NAME_MAX);
	name[GS_ALG_NAME_MAX] = '\0';
	KUNIT_EXPECT_NULL(test, gs_backend_find(name));
	KUNIT_EXPECT_EQ(test, gs_comp_params_init(&p, "no-such-alg"), -ENOENT);
	KUNIT_EXPECT_EQ(test, gs_comp_params_init(&p, "zstd"), 0);
	KUNIT_EXPECT_STREQ(test, p.name, "zstd");
	KUNIT_EXPECT_EQ(test, p.level, GS_PARAM_UNSET);
	KUNIT_EXPECT_EQ(test, p.deflate_winbits, GS_PARAM_UNSET);
}

/* algorithm_params strings that parse, and what they give. */
static void gs_params_good(struct kunit *test)
{
	struct gs_params_req r;

	KUNIT_ASSERT_EQ(test, gs_params_parse("priority=1 algo=zstd level=8 dict=/etc/zstd.dict",
					      &r), 0);
	KUNIT_EXPECT_EQ(test, r.prio, 1);
	KUNIT_EXPECT_STREQ(test, r.algo, "zstd");
	KUNIT_EXPECT_EQ(test, r.level, 8);
	KUNIT_EXPECT_STREQ(test, r.dict_path, "/etc/zstd.dict");
	KUNIT_EXPECT_EQ(test, r.deflate_winbits, GS_PARAM_UNSET);
	gs_params_req_free(&r);

	KUNIT_ASSERT_EQ(test, gs_params_parse("algo=deflate deflate.winbits=-12\n",
					      &r), 0);
	KUNIT_EXPECT_STREQ(test, r.algo, "deflate");
	KUNIT_EXPECT_EQ(test, r.deflate_winbits, -12);
	KUNIT_EXPECT_EQ(test, r.prio, GS_PARAM_UNSET);
	KUNIT_EXPECT_EQ(test, r.level, GS_PARAM_UNSET);
	KUNIT_EXPECT_NULL(test, r.dict_path);
	gs_params_req_free(&r);

	/* Blanks of any kind, a quoted value, the last of a key wins. */
	KUNIT_ASSERT_EQ(test, gs_params_parse(" \tlevel=-3  level=5\tdict=\"/a b/c\"\n",
					      &r), 0);
	KUNIT_EXPECT_EQ(test, r.level, 5);
	KUNIT_EXPECT_STREQ(test, r.dict_path, "/a b/c");
	KUNIT_EXPECT_STREQ(test, r.algo, "");
	gs_params_req_free(&r);

	KUNIT_ASSERT_EQ(test, gs_params_parse("algo=lz4\t ", &r), 0);
	KUNIT_EXPECT_STREQ(test, r.algo, "lz4");
	gs_params_req_free(&r);

	/* Nothing at all: every parameter of the primary to its default. */
	KUNIT_ASSERT_EQ(test, gs_params_parse("\n", &r), 0);
	KUNIT_EXPECT_EQ(test, r.prio, GS_PARAM_UNSET);
	KUNIT_EXPECT_EQ(test, r.level, GS_PARAM_UNSET);
	gs_params_req_free(&r);
	KUNIT_ASSERT_EQ(test, gs_params_parse("priority=3 level=-131072", &r),
			0);
	KUNIT_EXPECT_EQ(test, r.prio, 3);
	KUNIT_EXPECT_EQ(test, r.level, -131072);
	gs_params_req_free(&r);
}

/* algorithm_params strings that do not. */
static void gs_params_bad(struct kunit *test)
{
	static const char *const bad[] = {
		"level=abc", "level=", "level", "level=1x", "level=1.5",
		"level=99999999999", "level=-2147483648", "foo=1",
		"algo=zstd bar=2", "priority=4", "priority=-1", "priority=x",
		"deflate.winbits=", "deflate.winbit=12", "algo=",
		"algo=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		"dict=", "=5",
	};
	struct gs_params_req r;
	int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		KUNIT_EXPECT_EQ_MSG(test, gs_params_parse(bad[i], &r), -EINVAL,
				    "'%s'", bad[i]);
		KUNIT_EXPECT_NULL(test, r.dict_path);
	}
}

static int gs_kc_prio(const char *buf, const char *const names[GS_MAX_COMPS])
{
	struct gs_params_req r;
	int ret;

	ret = gs_params_parse(buf, &r);
	if (ret)
		return ret;
	ret = gs_params_prio(&r, names);
	gs_params_req_free(&r);
	return ret;
}

/* Which priority a write addresses, as zram decides it. */
static void gs_params_priority(struct kunit *test)
{
	static const char *const names[GS_MAX_COMPS] = {
		"lz4", "zstd", NULL, "zstd",
	};

	KUNIT_EXPECT_EQ(test, gs_kc_prio("level=1", names), 0);
	KUNIT_EXPECT_EQ(test, gs_kc_prio("algo=lz4 level=1", names), 0);
	KUNIT_EXPECT_EQ(test, gs_kc_prio("algo=zstd", names), 1);
	KUNIT_EXPECT_EQ(test, gs_kc_prio("priority=3 algo=zstd", names), 3);
	/* No algorithm at that priority: nothing to set parameters of. */
	KUNIT_EXPECT_EQ(test, gs_kc_prio("priority=2", names), -EINVAL);
	KUNIT_EXPECT_EQ(test, gs_kc_prio("priority=0", names), 0);
	KUNIT_EXPECT_EQ(test, gs_kc_prio("algo=deflate", names), -EINVAL);
	KUNIT_EXPECT_EQ(test, gs_kc_prio("priority=1 algo=lz4", names),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, gs_kc_prio("priority=2 algo=zstd", names),
			-EINVAL);
}

/*
 * A file of @len bytes of text at @path, for the dictionary loader.
 * Kernel threads (this test's too) look paths up in an empty root: the
 * files go where user space will find them, as a sysfs write would.
 */
static void gs_kc_file(struct kunit *test, const char *path, size_t len)
{
	u8 *buf = kunit_kzalloc(test, max_t(size_t, len, 1), GFP_KERNEL);
	struct file *f = NULL;
	ssize_t written = 0;
	loff_t pos = 0;
	size_t i;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	for (i = 0; i + PAGE_SIZE <= len; i += PAGE_SIZE)
		gs_kunit_fill_text(buf + i, i / PAGE_SIZE);
	scoped_with_init_fs() {
		f = filp_open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (!IS_ERR(f)) {
			if (len)
				written = kernel_write(f, buf, len, &pos);
			filp_close(f, NULL);
			/* A kernel thread's last fput is deferred: wait for it. */
			flush_delayed_fput();
		}
	}
	kunit_kfree(test, buf);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(f), "cannot create %s: %ld", path,
			       PTR_ERR(f));
	KUNIT_ASSERT_EQ(test, written, (ssize_t)len);
}

static int gs_kc_apply(struct kunit *test, const char *alg, const char *buf,
		       struct gs_comp_params *p)
{
	struct gs_params_req r;
	int ret;

	KUNIT_ASSERT_EQ(test, gs_comp_params_init(p, alg), 0);
	ret = gs_params_parse(buf, &r);
	if (ret)
		return ret;
	scoped_with_init_fs()
		ret = gs_params_apply(&r, p);
	gs_params_req_free(&r);
	if (ret)
		KUNIT_EXPECT_EQ(test, atomic_long_read(&p->bytes), 0);
	return ret;
}

/* Parameters applied to an algorithm, dictionaries from files. */
static void gs_params_apply_dict(struct kunit *test)
{
	struct gs_comp_params *p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	void *ctx, *src, *comp, *out;
	int len;

	KUNIT_ASSERT_NOT_NULL(test, p);
	KUNIT_EXPECT_EQ(test, gs_kc_apply(test, "zstd", "algo=zstd level=8", p),
			0);
	KUNIT_EXPECT_EQ(test, p->level, 8);
	gs_comp_params_release(p);
	/* Unset: the backend's default, filled in by setup. */
	KUNIT_EXPECT_EQ(test, gs_kc_apply(test, "zstd", "", p), 0);
	KUNIT_EXPECT_EQ(test, p->level, zstd_default_clevel());
	gs_comp_params_release(p);
	KUNIT_EXPECT_EQ(test, gs_kc_apply(test, "deflate",
					  "algo=deflate deflate.winbits=-12", p),
			0);
	KUNIT_EXPECT_EQ(test, p->deflate_winbits, -12);
	gs_comp_params_release(p);

	KUNIT_EXPECT_EQ(test, gs_kc_apply(test, "zstd", "level=23", p), -EINVAL);
	KUNIT_EXPECT_EQ(test, gs_kc_apply(test, "lzo", "level=1", p), -EINVAL);
	KUNIT_EXPECT_EQ(test, gs_kc_apply(test, "zstd", "deflate.winbits=-12",
					  p), -EINVAL);
	KUNIT_EXPECT_EQ(test, gs_kc_apply(test, "zstd",
					  "dict=/no/such/ghostswap.dict", p),
			-ENOENT);
	KUNIT_EXPECT_EQ(test, gs_kc_apply(test, "zstd", "dict=/", p), -EINVAL);
	/* Refused before the file is looked at. */
	KUNIT_EXPECT_EQ(test, gs_kc_apply(test, "lzo-rle",
					  "dict=/no/such/ghostswap.dict", p),
			-EINVAL);

	gs_kc_file(test, "/gs_kunit_empty.dict", 0);
	KUNIT_EXPECT_EQ(test, gs_kc_apply(test, "zstd",
					  "dict=/gs_kunit_empty.dict", p),
			-EINVAL);
	gs_kc_file(test, "/gs_kunit_big.dict", GS_DICT_MAX + PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, gs_kc_apply(test, "lz4",
					  "dict=/gs_kunit_big.dict", p), -EFBIG);
	gs_kc_file(test, "/gs_kunit_big.dict", 0);

	gs_kc_file(test, "/gs_kunit.dict", 4 * PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, gs_kc_apply(test, "zstd",
					  "algo=zstd level=5 dict=/gs_kunit.dict\n",
					  p), 0);
	KUNIT_EXPECT_EQ(test, p->dict_len, 4 * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, p->level, 5);
	KUNIT_EXPECT_GE(test, atomic_long_read(&p->bytes), 4 * PAGE_SIZE);
	ctx = p->be->ctx_create(p, NUMA_NO_NODE);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ctx));
	src = gs_kunit_page(test);
	out = gs_kunit_page(test);
	gs_kunit_fill_text(src, 1);
	len = gs_kc_compress(test, p, ctx, src, &comp);
	KUNIT_EXPECT_GT(test, len, 0);
	/* The page is one of the dictionary's: it compresses to little. */
	KUNIT_EXPECT_LT(test, len, 64);
	if (len > 0) {
		KUNIT_EXPECT_EQ(test, p->be->decompress(p, ctx, comp, len,
							out, PAGE_SIZE), 0);
		KUNIT_EXPECT_MEMEQ(test, out, src, PAGE_SIZE);
	}
	p->be->ctx_destroy(p, ctx);
	gs_comp_params_release(p);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&p->bytes), 0);
}

/* recomp_algorithm strings. */
static void gs_params_recomp(struct kunit *test)
{
	static const char *const bad[] = {
		"priority=1", "algo=zstd priority=0", "algo=zstd priority=4",
		"algo=no-such-alg", "algo=zstd foo=bar", "algo=zstd priority=",
		"algo", "",
	};
	char algo[GS_ALG_NAME_MAX];
	int prio, i;

	KUNIT_EXPECT_EQ(test, gs_recomp_algorithm_parse("algo=zstd priority=1",
							&prio, algo), 0);
	KUNIT_EXPECT_EQ(test, prio, 1);
	KUNIT_EXPECT_STREQ(test, algo, "zstd");
	KUNIT_EXPECT_EQ(test, gs_recomp_algorithm_parse("algo=deflate priority=2\n",
							&prio, algo), 0);
	KUNIT_EXPECT_EQ(test, prio, 2);
	KUNIT_EXPECT_STREQ(test, algo, "deflate");
	KUNIT_EXPECT_EQ(test, gs_recomp_algorithm_parse("algo=lz4hc", &prio,
							algo), 0);
	KUNIT_EXPECT_EQ(test, prio, 1);
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		KUNIT_EXPECT_EQ_MSG(test, gs_recomp_algorithm_parse(bad[i], &prio,
								    algo),
				    -EINVAL, "'%s'", bad[i]);
}

/* Zero the bytes at @a and @b of @p. */
static void gs_kc_zero2(u8 *p, int a, int b)
{
	p[a] = 0;
	p[b] = 0;
}

/*
 * Where the eight words the heuristic looks at first lie, four at a
 * time: one in each quarter (0, 2, 1, 3), at the eighths 0, 3, 6 and 1
 * of their quarters, then 4, 7, 2 and 5, at the offsets within those
 * eighths the word's index gives (gs_heuristic.c).
 */
#define GS_KC_QUARTER	(PAGE_SIZE / 4)
#define GS_KC_EIGHTH	(PAGE_SIZE / 32)
static const unsigned int gs_kc_heur_first[8] = {
	0,
	2 * GS_KC_QUARTER + 3 * GS_KC_EIGHTH + 72,
	1 * GS_KC_QUARTER + 6 * GS_KC_EIGHTH + 16,
	3 * GS_KC_QUARTER + 1 * GS_KC_EIGHTH + 24,
	0 * GS_KC_QUARTER + 4 * GS_KC_EIGHTH + 96,
	2 * GS_KC_QUARTER + 7 * GS_KC_EIGHTH + 40,
	1 * GS_KC_QUARTER + 2 * GS_KC_EIGHTH + 48,
	3 * GS_KC_QUARTER + 5 * GS_KC_EIGHTH + 120,
};

/*
 * The heuristic on pages of known make-up. Bytes drawn uniformly from
 * 2^bits values have an entropy of bits per byte: up to 7 they are worth
 * compressing, 8 is random.
 */
static void gs_heur_known(struct kunit *test)
{
	static const unsigned int periods[] = {
		1, 2, 3, 5, 8, 13, 24, 64, 100, 128, 256, 1024, 2048,
	};
	u8 *p = gs_kunit_page(test), *block = gs_kunit_page(test);
	int bits, i, seed, n;
	u64 *w = (u64 *)p;

	for (bits = 1; bits <= 7; bits++) {
		for (seed = 0; seed < 32; seed++) {
			gs_kc_prandom(p, PAGE_SIZE, seed);
			for (i = 0; i < PAGE_SIZE; i++)
				p[i] &= (1 << bits) - 1;
			KUNIT_EXPECT_FALSE_MSG(test,
					       gs_page_looks_incompressible(p),
					       "%d bits per byte", bits);
		}
	}
	for (seed = 0, n = 0; seed < 1024; seed++) {
		gs_kc_prandom(p, PAGE_SIZE, seed);
		n += gs_page_looks_incompressible(p);
	}
	kunit_info(test, "random pages called incompressible: %d of 1024\n",
		   n);
	KUNIT_EXPECT_GE(test, n, 1014);

	/* Zeroes, one repeated word. */
	memset(p, 0, PAGE_SIZE);
	KUNIT_EXPECT_FALSE(test, gs_page_looks_incompressible(p));
	memset64(w, 0x0123456789abcdefULL, PAGE_SIZE / 8);
	KUNIT_EXPECT_EQ(test, gs_page_heuristic(p), GS_HEUR_REPEATS);

	/* A random block repeated: the bytes look random, the page is not. */
	for (i = 0; i < ARRAY_SIZE(periods); i++) {
		for (seed = 0; seed < 16; seed++) {
			gs_kc_prandom(block, periods[i], seed);
			for (n = 0; n < PAGE_SIZE; n++)
				p[n] = block[n % periods[i]];
			KUNIT_EXPECT_FALSE_MSG(test,
					       gs_page_looks_incompressible(p),
					       "period %u", periods[i]);
		}
	}
	/* Equal halves. */
	gs_kc_prandom(p, PAGE_SIZE / 2, 5);
	memcpy(p + PAGE_SIZE / 2, p, PAGE_SIZE / 2);
	KUNIT_EXPECT_EQ(test, gs_page_heuristic(p), GS_HEUR_REPEATS);
	/* Half random, half zero, either way round. */
	gs_kc_prandom(p, PAGE_SIZE / 2, 6);
	memset(p + PAGE_SIZE / 2, 0, PAGE_SIZE / 2);
	KUNIT_EXPECT_FALSE(test, gs_page_looks_incompressible(p));
	memset(p, 0, PAGE_SIZE / 2);
	gs_kc_prandom(p + PAGE_SIZE / 2, PAGE_SIZE / 2, 6);
	KUNIT_EXPECT_FALSE(test, gs_page_looks_incompressible(p));
	/*
	 * fio's default buffers: 256 random bytes and 256 zeroes, over and
	 * over. The first four words hold both.
	 */
	gs_kc_prandom(p, PAGE_SIZE, 10);
	for (n = 0; n < PAGE_SIZE; n += 512)
		memset(p + n + 256, 0, 256);
	KUNIT_EXPECT_EQ(test, gs_page_heuristic(p), GS_HEUR_BYTES);
	n = 0;
	for (i = 0; i < 4; i++)
		n += gs_kc_heur_first[i] % 512 >= 256;
	KUNIT_EXPECT_EQ(test, n, 2);
	/*
	 * Random but for the four words looked at first, one in each
	 * quarter, which are text: the quick test calls it compressible,
	 * the one kind of mistake it may make.
	 */
	gs_kc_prandom(p, PAGE_SIZE, 8);
	for (i = 0; i < 4; i++)
		memcpy(p + gs_kc_heur_first[i],
		       &"abcdefghijklmnopqrstuvwxyz012345"[i * 8], 8);
	KUNIT_EXPECT_EQ(test, gs_page_heuristic(p), GS_HEUR_BYTES);
	/*
	 * One top bit in them: the page is looked at in full, and its 32
	 * distinct text bytes do not make it look less random.
	 */
	p[gs_kc_heur_first[1] + 3] |= 0x80;
	KUNIT_EXPECT_EQ(test, gs_page_heuristic(p), GS_HEUR_INCOMPRESSIBLE);
	/*
	 * Counters (usemem's pages: each word its index) and pointers: top
	 * bits set, so the first quick test cannot tell; their zero bytes
	 * do, before any counting.
	 */
	for (n = 0; n < PAGE_SIZE / 8; n++)
		w[n] = 0x1234f0 + n;
	KUNIT_EXPECT_EQ(test, gs_page_heuristic(p), GS_HEUR_BYTES);
	for (n = 0; n < PAGE_SIZE / 8; n++)
		w[n] = 0x7ffd8a3c9e10ULL + 0x98 * n;
	KUNIT_EXPECT_EQ(test, gs_page_heuristic(p), GS_HEUR_BYTES);
	/*
	 * Random with eight zero bytes, two in each of the four words looked
	 * at first: compressible; the same zeroes next to those words, where
	 * no sampled word lies: random.
	 */
	gs_kc_prandom(p, PAGE_SIZE, 9);
	for (i = 0; i < 4; i++)
		gs_kc_zero2(p + gs_kc_heur_first[i], 1, 6);
	KUNIT_EXPECT_EQ(test, gs_page_heuristic(p), GS_HEUR_BYTES);
	gs_kc_prandom(p, PAGE_SIZE, 9);
	for (i = 0; i < 4; i++)
		gs_kc_zero2(p + gs_kc_heur_first[i], 9, 14);
	KUNIT_EXPECT_EQ(test, gs_page_heuristic(p), GS_HEUR_INCOMPRESSIBLE);
	/*
	 * Four zero bytes among the first eight words are not enough: the
	 * page is counted, and random. A fifth in any of them, in the first
	 * four or the next four, makes it compressible.
	 */
	for (i = 0; i <= 8; i++) {
		gs_kc_prandom(p, PAGE_SIZE, 11);
		/* No zero byte in those words but the ones put there. */
		for (n = 0; n < 64; n++)
			if (!p[gs_kc_heur_first[n / 8] + n % 8])
				p[gs_kc_heur_first[n / 8] + n % 8] = 0xa5;
		gs_kc_zero2(p + gs_kc_heur_first[0], 1, 6);
		gs_kc_zero2(p + gs_kc_heur_first[7], 0, 7);
		if (i < 8)
			p[gs_kc_heur_first[i] + 3] = 0;
		KUNIT_EXPECT_EQ_MSG(test, gs_page_heuristic(p),
				    i < 8 ? GS_HEUR_BYTES :
				    GS_HEUR_INCOMPRESSIBLE, "fifth in word %d", i);
	}
	/* Skewed bytes (one in eight zero): worth a try, if not a gain. */
	gs_kc_prandom(p, PAGE_SIZE, 7);
	for (n = 0; n < PAGE_SIZE; n += 8)
		p[n] = 0;
	KUNIT_EXPECT_FALSE(test, gs_page_looks_incompressible(p));
}

static u64 gs_kc_next(u64 *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* Text-like page @n of kind @kind (several makes of text and data). */
static void gs_kc_textlike(void *page, int kind, u32 n)
{
	static const char *const words[] = {
		"The ", "quick ", "brown ", "fox ", "jumps ", "over ", "a ",
		"lazy ", "dog. ", "In ", "hole ", "in ", "the ", "ground ",
		"there ", "lived ", "hobbit, ", "not ", "nasty, ", "dirty, ",
		"wet ", "hole\n", "filled ", "with ", "ends ", "of ", "worms ",
		"and ", "an ", "oozy ", "smell.\n", "Lorem ", "ipsum ",
	};
	static const char b64[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *c = page;
	u64 x = n * 0x9e3779b97f4a7c15ULL + kind + 1;
	size_t off = 0, len;
	u16 *u = page;
	u64 *w = page;

	switch (kind) {
	case 0:		/* the store suites' text */
		gs_kunit_fill_text(page, n);
		return;
	case 1:		/* prose */
		while (off < PAGE_SIZE) {
			const char *s = words[gs_kc_next(&x) % ARRAY_SIZE(words)];

			len = min(strlen(s), PAGE_SIZE - off);
			memcpy(c + off, s, len);
			off += len;
		}
		return;
	case 2:		/* log lines with times, addresses, numbers */
		while (off < PAGE_SIZE - 1)
			off += scnprintf(c + off, PAGE_SIZE - off,
					 "[%6llu.%06llu] ghostswap: slot %llu at 0x%016llx, %llu bytes\n",
					 gs_kc_next(&x) % 100000,
					 gs_kc_next(&x) % 1000000,
					 gs_kc_next(&x) % (1ULL << 40),
					 0xffff888000000000ULL |
					 (gs_kc_next(&x) & 0xfffffff8ULL),
					 gs_kc_next(&x) % 4096);
		c[PAGE_SIZE - 1] = '\n';
		return;
	case 3:		/* JSON records */
		while (off < PAGE_SIZE - 1)
			off += scnprintf(c + off, PAGE_SIZE - off,
					 "{\"id\": %llu, \"user\": \"u%llu\", \"score\": %llu.%03llu, \"ok\": %s},\n",
					 gs_kc_next(&x) % 1000000,
					 gs_kc_next(&x) % 10000,
					 gs_kc_next(&x) % 1000,
					 gs_kc_next(&x) % 1000,
					 gs_kc_next(&x) & 1 ? "true" : "false");
		c[PAGE_SIZE - 1] = '\n';
		return;
	case 4:		/* a hex dump */
		for (off = 0; off < PAGE_SIZE; off++)
			c[off] = off % 65 == 64 ? '\n' :
				 hex_asc[gs_kc_next(&x) & 15];
		return;
	case 5:		/* base64 */
		for (off = 0; off < PAGE_SIZE; off++)
			c[off] = off % 77 == 76 ? '\n' : b64[gs_kc_next(&x) & 63];
		return;
	case 6:		/* UTF-16 prose */
		gs_kc_textlike(page, 1, n);
		for (off = PAGE_SIZE / 2; off-- > 0;)
			u[off] = (u8)c[off];
		return;
	case 7:		/* pointers, some NULL */
		for (off = 0; off < PAGE_SIZE / 8; off++)
			w[off] = gs_kc_next(&x) % 4 ? 0xffff888100000000ULL |
				 (gs_kc_next(&x) & 0xffffff8ULL) : 0;
		return;
	case 8:		/* small integers */
		for (off = 0; off < PAGE_SIZE / 4; off++)
			((u32 *)page)[off] = gs_kc_next(&x) % 5000;
		return;
	default:	/* half random, half zero (the bench's 'b' pages) */
		gs_kc_prandom(page, PAGE_SIZE / 2, x);
		memset(c + PAGE_SIZE / 2, 0, PAGE_SIZE / 2);
		return;
	}
}

#define GS_KC_TEXTLIKE_KINDS	10
#define GS_KC_TEXTLIKE_PAGES	4000

/*
 * False "incompressible" verdicts over text-like pages: must stay below
 * 1%. Each page is also compressed with zstd, to show it is worth it.
 */
static void gs_heur_text_false_positives(struct kunit *test)
{
	struct gs_kc_cfg cfg = { "zstd", GS_PARAM_UNSET, GS_PARAM_UNSET };
	struct gs_comp_params *p = gs_kc_params(test, &cfg);
	void *ctx = gs_kc_ctx(test, p);
	u8 *page = gs_kunit_page(test);
	u8 *dst = kunit_kmalloc(test, 2 * PAGE_SIZE, GFP_KERNEL);
	int fp[GS_KC_TEXTLIKE_KINDS] = {}, big = 0, total = 0, i, kind;
	unsigned long zbytes = 0;
	int dlen;

	KUNIT_ASSERT_NOT_NULL(test, dst);
	for (i = 0; i < GS_KC_TEXTLIKE_PAGES; i++) {
		kind = i % GS_KC_TEXTLIKE_KINDS;
		gs_kc_textlike(page, kind, i);
		dlen = p->be->compress(p, ctx, page, PAGE_SIZE, dst,
				       2 * PAGE_SIZE);
		KUNIT_ASSERT_GT(test, dlen, 0);
		zbytes += dlen;
		big += dlen >= PAGE_SIZE * 7 / 8;
		if (gs_page_looks_incompressible(page)) {
			fp[kind]++;
			total++;
		}
	}
	kunit_info(test, "%d text-like pages: %d called incompressible (%d.%02d%%), zstd average %lu bytes, %d above 7/8 of a page\n",
		   GS_KC_TEXTLIKE_PAGES, total,
		   total * 100 / GS_KC_TEXTLIKE_PAGES,
		   total * 10000 / GS_KC_TEXTLIKE_PAGES % 100,
		   zbytes / GS_KC_TEXTLIKE_PAGES, big);
	for (kind = 0; kind < GS_KC_TEXTLIKE_KINDS; kind++)
		KUNIT_EXPECT_EQ_MSG(test, fp[kind], 0, "text-like kind %d",
				    kind);
	KUNIT_EXPECT_LT(test, total * 100, GS_KC_TEXTLIKE_PAGES);
	KUNIT_EXPECT_EQ(test, big, 0);
}

#define GS_KC_UNIT_PAGES	(GS_BE_MAX_SRC / PAGE_SIZE)

/*
 * A unit of 16 pages, @text: of text only, else of every kind, in one
 * buffer; the length it compresses to, its pages' lengths summed in
 * *@pages_len (each compressed alone by the same parameters).
 */
static unsigned int gs_kc_unit(struct kunit *test, struct gs_comp_params *p,
			       void *ctx, u8 *src, u8 *dst, bool text,
			       unsigned int *pages_len)
{
	unsigned int i;
	void *page, *comp;
	int plen, len;

	*pages_len = 0;
	for (i = 0; i < GS_KC_UNIT_PAGES; i++) {
		page = gs_kc_page(test, text ? GS_KC_TEXT : i % GS_KC_KINDS,
				  i + 1);
		memcpy(src + i * PAGE_SIZE, page, PAGE_SIZE);
		plen = gs_kc_compress(test, p, ctx, page, &comp);
		KUNIT_ASSERT_GT(test, plen, 0);
		*pages_len += plen;
		kunit_kfree(test, comp);
		kunit_kfree(test, page);
	}
	len = p->be->compress(p, ctx, src, GS_BE_MAX_SRC, dst,
			      2 * GS_BE_MAX_SRC);
	KUNIT_ASSERT_GT(test, len, 0);
	return len;
}

/*
 * A unit of pages compressed as one comes back whole, exactly: not into
 * less room than it had (nothing written past the room given), not as
 * more bytes than it had. Text compresses better whole than page by
 * page with lz4 and zstd at their default levels.
 */
static void gs_comp_unit_roundtrip(struct kunit *test)
{
	const struct gs_kc_cfg *c = test->param_value;
	struct gs_comp_params *p = gs_kc_params_src(test, c, GS_BE_MAX_SRC);
	const unsigned int size = GS_BE_MAX_SRC;
	void *ctx = gs_kc_ctx(test, p);
	unsigned int len, pages_len;
	u8 *src, *dst, *out;
	int text;

	src = kunit_kmalloc(test, size, GFP_KERNEL);
	dst = kunit_kmalloc(test, 2 * size, GFP_KERNEL);
	out = kunit_kmalloc(test, size + PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, src);
	KUNIT_ASSERT_NOT_NULL(test, dst);
	KUNIT_ASSERT_NOT_NULL(test, out);
	for (text = 0; text < 2; text++) {
		len = gs_kc_unit(test, p, ctx, src, dst, text, &pages_len);
		memset(out, 0xa5, size + PAGE_SIZE);
		KUNIT_EXPECT_EQ(test, p->be->decompress(p, ctx, dst, len, out,
							size), 0);
		KUNIT_EXPECT_MEMEQ(test, out, src, size);
		KUNIT_EXPECT_EQ(test, out[size], 0xa5);
		/* Room for one page less: refused, nothing past it. */
		memset(out, 0xa5, size + PAGE_SIZE);
		KUNIT_EXPECT_NE(test, p->be->decompress(p, ctx, dst, len, out,
							size - PAGE_SIZE), 0);
		KUNIT_EXPECT_EQ(test, out[size - PAGE_SIZE], 0xa5);
		/* Room for one page more: it is not all there, refused. */
		KUNIT_EXPECT_NE(test, p->be->decompress(p, ctx, dst, len, out,
							size + PAGE_SIZE), 0);
		kunit_info(test, "%s%s%s, 16 pages of %s: %u bytes whole, %u page by page\n",
			   p->name, gs_kc_level_str(p), c->dict ? " dict" : "",
			   text ? "text" : "every kind", len, pages_len);
		if (text && c->level == GS_PARAM_UNSET && !c->dict &&
		    (!strcmp(c->alg, "lz4") || !strcmp(c->alg, "zstd")))
			KUNIT_EXPECT_LT(test, len, pages_len);
	}
}

/* The largest input is whole pages, up to GS_BE_MAX_SRC, set before setup. */
static void gs_comp_max_src(struct kunit *test)
{
	struct gs_comp_params *p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, p);
	KUNIT_ASSERT_EQ(test, gs_comp_params_init(p, "lzo"), 0);
	KUNIT_EXPECT_EQ(test, p->max_src, PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, gs_comp_params_set_max_src(p, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, gs_comp_params_set_max_src(p, PAGE_SIZE + 1),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, gs_comp_params_set_max_src(p, GS_BE_MAX_SRC +
							   PAGE_SIZE), -EINVAL);
	KUNIT_EXPECT_EQ(test, gs_comp_params_set_max_src(p, 4 * PAGE_SIZE), 0);
	KUNIT_EXPECT_EQ(test, p->max_src, 4 * PAGE_SIZE);
}

static struct kunit_case gs_comp_cases[] = {
	KUNIT_CASE_PARAM(gs_comp_roundtrip, gs_kc_cfg_gen_params),
	KUNIT_CASE_PARAM(gs_comp_unit_roundtrip, gs_kc_cfg_gen_params),
	KUNIT_CASE(gs_comp_max_src),
	KUNIT_CASE_PARAM(gs_comp_corrupt, gs_kc_cfg_gen_params),
	KUNIT_CASE_PARAM(gs_comp_enospc, gs_kc_cfg_gen_params),
	KUNIT_CASE_PARAM(gs_comp_bytes, gs_kc_cfg_gen_params),
	KUNIT_CASE(gs_comp_dict_helps),
	KUNIT_CASE(gs_comp_lz4_alone),
	KUNIT_CASE(gs_comp_bad_params),
	KUNIT_CASE(gs_comp_lookup),
	KUNIT_CASE(gs_params_good),
	KUNIT_CASE(gs_params_bad),
	KUNIT_CASE(gs_params_priority),
	KUNIT_CASE(gs_params_apply_dict),
	KUNIT_CASE(gs_params_recomp),
	KUNIT_CASE(gs_heur_known),
	KUNIT_CASE(gs_heur_text_false_positives),
	{}
};

static struct kunit_suite gs_comp_suite = {
	.name = "ghostswap_comp",
	.test_cases = gs_comp_cases,
};

kunit_test_suite(gs_comp_suite);
