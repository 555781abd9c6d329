// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswap backends lz4 and lz4hc, with or without a dictionary.
 *
 * lz4's level is the library's acceleration, as zram has it: 1 (the
 * default) compresses best, higher values are faster and compress less;
 * up to 65537, the bound the lz4 library itself puts on it. lz4hc's
 * level is its search depth: 1 to 16, default 9.
 *
 * A context is the compressor's state (LZ4_MEM_COMPRESS bytes for lz4,
 * LZ4HC_MEM_COMPRESS for lz4hc). With a dictionary, setup() loads it
 * once into a state the streams share, and each compression starts from
 * a copy of it: copying the state costs less than hashing the
 * dictionary again.
 *
 * Without one, each page is compressed alone by LZ4_compress_fast(), as
 * zram does: the library clears its state (the 16 KiB hash table) and,
 * for an input under 64 KiB, hashes positions into 8192 16-bit entries.
 * The output is the bytes zram's lz4 makes of the same page.
 *
 * An earlier version kept the state from page to page to skip that
 * clear (LZ4_loadDict(ctx, NULL, 0), then LZ4_compress_fast_continue()).
 * That was chosen on QEMU's "-cpu max", whose instruction counter
 * counts the clear's "rep stosb" byte by byte: 16.4k instructions a
 * page. Counted as the loop it is without FSRS and FSRM, the clear is
 * 2.9k, and the streaming compressor (32-bit entries, dictionary
 * checks: 25 instructions to try a match where LZ4_compress_fast()
 * takes 18) spent 4.7k to 12.5k more a page than that: 4 KiB writes
 * were 0.81x to 0.96x zram's.
 *
 * Decompression needs no state: the dictionary is handed to the
 * decompressor. lz4 only looks back 64 KiB: of a longer dictionary only
 * the last 64 KiB count.
 */
#define pr_fmt(fmt) "ghostswap: " fmt

#include <linux/err.h>
#include <linux/lz4.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/printk.h>
#include <linux/string.h>
#include "gs_be.h"

#if GS_HAVE_LZ4 || GS_HAVE_LZ4HC

#define GS_LZ4_ACCEL_MAX	65537
#define GS_LZ4_WINDOW		(64 * 1024)

/* The part of the dictionary lz4 can refer to: its last 64 KiB. */
static const char *gs_lz4_dict(const struct gs_comp_params *p, int *len)
{
	size_t n = min_t(size_t, p->dict_len, GS_LZ4_WINDOW);

	*len = n;
	return (const char *)p->dict + p->dict_len - n;
}

static int gs_lz4_decompress(const struct gs_comp_params *p, void *ctx,
			     const void *src, unsigned int slen, void *dst,
			     unsigned int dlen)
{
	const char *dict;
	int len, ret;

	if (slen > INT_MAX)
		return -EIO;
	/* A shared state means a dictionary was set up: compress agrees. */
	if (!p->shared) {
		ret = LZ4_decompress_safe(src, dst, slen, dlen);
	} else {
		dict = gs_lz4_dict(p, &len);
		ret = LZ4_decompress_safe_usingDict(src, dst, slen, dlen,
						    dict, len);
	}
	return (unsigned int)ret == dlen ? 0 : -EIO;
}

#if GS_HAVE_LZ4
static int gs_lz4_setup(struct gs_comp_params *p)
{
	void *stream;
	const char *dict;
	int len;

	if (p->level == GS_PARAM_UNSET) {
		p->level = LZ4_ACCELERATION_DEFAULT;
	} else if (p->level < 1 || p->level > GS_LZ4_ACCEL_MAX) {
		pr_err("lz4: level %d, valid: 1 (default) to %d (acceleration: higher is faster)\n",
		       p->level, GS_LZ4_ACCEL_MAX);
		return -EINVAL;
	}
	if (!p->dict_len)
		return 0;
	stream = gs_be_alloc(p, LZ4_MEM_COMPRESS, NUMA_NO_NODE);
	if (!stream)
		return -ENOMEM;
	dict = gs_lz4_dict(p, &len);
	if (LZ4_loadDict(stream, dict, len) != len) {
		pr_err("lz4: dictionary of %zu bytes is too short\n",
		       p->dict_len);
		gs_be_free(p, stream, LZ4_MEM_COMPRESS);
		return -EINVAL;
	}
	p->shared = stream;
	return 0;
}

static void gs_lz4_release(struct gs_comp_params *p)
{
	gs_be_free(p, p->shared, LZ4_MEM_COMPRESS);
	p->shared = NULL;
}

static void *gs_lz4_ctx_create(struct gs_comp_params *p, int node)
{
	void *ctx = gs_be_alloc(p, LZ4_MEM_COMPRESS, node);

	return ctx ?: ERR_PTR(-ENOMEM);
}

static void gs_lz4_ctx_destroy(struct gs_comp_params *p, void *ctx)
{
	gs_be_free(p, ctx, LZ4_MEM_COMPRESS);
}

static int gs_lz4_compress(const struct gs_comp_params *p, void *ctx,
			   const void *src, unsigned int slen, void *dst,
			   unsigned int dst_cap)
{
	int cap = min_t(unsigned int, dst_cap, INT_MAX);
	int ret;

	if (!p->shared) {
		/* A fresh state for every page (see above). */
		ret = LZ4_compress_fast(src, dst, slen, cap, p->level, ctx);
	} else {
		memcpy(ctx, p->shared, LZ4_MEM_COMPRESS);
		ret = LZ4_compress_fast_continue(ctx, src, dst, slen, cap,
						 p->level);
	}
	/* With valid input the only failure is output that does not fit. */
	return ret > 0 ? ret : -ENOSPC;
}

const struct gs_backend gs_be_lz4 = {
	.name = "lz4",
	.caps = GS_BE_LEVEL | GS_BE_DICT,
	.setup = gs_lz4_setup,
	.release = gs_lz4_release,
	.ctx_create = gs_lz4_ctx_create,
	.ctx_destroy = gs_lz4_ctx_destroy,
	.compress = gs_lz4_compress,
	.decompress = gs_lz4_decompress,
};
#endif /* GS_HAVE_LZ4 */

#if GS_HAVE_LZ4HC
static int gs_lz4hc_setup(struct gs_comp_params *p)
{
	void *stream;
	const char *dict;
	int len;

	if (p->level == GS_PARAM_UNSET) {
		p->level = LZ4HC_DEFAULT_CLEVEL;
	} else if (p->level < 1 || p->level > LZ4HC_MAX_CLEVEL) {
		pr_err("lz4hc: level %d, valid: 1 to %d (default %d)\n",
		       p->level, LZ4HC_MAX_CLEVEL, LZ4HC_DEFAULT_CLEVEL);
		return -EINVAL;
	}
	if (!p->dict_len)
		return 0;
	stream = gs_be_alloc(p, LZ4HC_MEM_COMPRESS, NUMA_NO_NODE);
	if (!stream)
		return -ENOMEM;
	dict = gs_lz4_dict(p, &len);
	LZ4_resetStreamHC(stream, p->level);
	LZ4_loadDictHC(stream, dict, len);
	p->shared = stream;
	return 0;
}

static void gs_lz4hc_release(struct gs_comp_params *p)
{
	gs_be_free(p, p->shared, LZ4HC_MEM_COMPRESS);
	p->shared = NULL;
}

static void *gs_lz4hc_ctx_create(struct gs_comp_params *p, int node)
{
	void *ctx = gs_be_alloc(p, LZ4HC_MEM_COMPRESS, node);

	return ctx ?: ERR_PTR(-ENOMEM);
}

static void gs_lz4hc_ctx_destroy(struct gs_comp_params *p, void *ctx)
{
	gs_be_free(p, ctx, LZ4HC_MEM_COMPRESS);
}

static int gs_lz4hc_compress(const struct gs_comp_params *p, void *ctx,
			     const void *src, unsigned int slen, void *dst,
			     unsigned int dst_cap)
{
	int cap = min_t(unsigned int, dst_cap, INT_MAX);
	int ret;

	if (!p->shared) {
		ret = LZ4_compress_HC(src, dst, slen, cap, p->level, ctx);
	} else {
		memcpy(ctx, p->shared, LZ4HC_MEM_COMPRESS);
		ret = LZ4_compress_HC_continue(ctx, src, dst, slen, cap);
	}
	return ret > 0 ? ret : -ENOSPC;
}

const struct gs_backend gs_be_lz4hc = {
	.name = "lz4hc",
	.caps = GS_BE_LEVEL | GS_BE_DICT,
	.setup = gs_lz4hc_setup,
	.release = gs_lz4hc_release,
	.ctx_create = gs_lz4hc_ctx_create,
	.ctx_destroy = gs_lz4hc_ctx_destroy,
	.compress = gs_lz4hc_compress,
	.decompress = gs_lz4_decompress,
};
#endif /* GS_HAVE_LZ4HC */

#endif /* GS_HAVE_LZ4 || GS_HAVE_LZ4HC */
