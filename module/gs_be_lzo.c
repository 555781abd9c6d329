// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswap backends lzo and lzo-rle: no level, no dictionary. A context
 * is the compressor's dictionary (LZO1X_1_MEM_COMPRESS bytes); both
 * formats decompress with lzo1x_decompress_safe(), which tells them
 * apart by the version mark lzo-rle starts with.
 */
#include <linux/err.h>
#include <linux/lzo.h>
#include <linux/mm.h>
#include "gs_be.h"

#if GS_HAVE_LZO

static int gs_lzo_setup(struct gs_comp_params *p)
{
	return 0;
}

static void gs_lzo_release(struct gs_comp_params *p)
{
}

static void *gs_lzo_ctx_create(struct gs_comp_params *p, int node)
{
	void *wrkmem = gs_be_alloc(p, LZO1X_1_MEM_COMPRESS, node);

	return wrkmem ?: ERR_PTR(-ENOMEM);
}

static void gs_lzo_ctx_destroy(struct gs_comp_params *p, void *ctx)
{
	gs_be_free(p, ctx, LZO1X_1_MEM_COMPRESS);
}

static int gs_lzo_done(int ret, size_t len)
{
	if (ret == LZO_E_OUTPUT_OVERRUN)
		return -ENOSPC;
	if (ret != LZO_E_OK || !len || len > INT_MAX)
		return -EINVAL;
	return len;
}

/*
 * Every output ends with a 3-byte end marker, and lzo-rle writes its
 * 2-byte version mark before checking the room it has: below 3 bytes
 * nothing fits.
 */
#define GS_LZO_MIN_OUT	3

static int gs_lzo_compress(const struct gs_comp_params *p, void *ctx,
			   const void *src, unsigned int slen, void *dst,
			   unsigned int dst_cap)
{
	size_t len = dst_cap;
	int ret;

	if (dst_cap < GS_LZO_MIN_OUT)
		return -ENOSPC;
	ret = lzo1x_1_compress_safe(src, slen, dst, &len, ctx);
	return gs_lzo_done(ret, len);
}

static int gs_lzo_rle_compress(const struct gs_comp_params *p, void *ctx,
			       const void *src, unsigned int slen, void *dst,
			       unsigned int dst_cap)
{
	size_t len = dst_cap;
	int ret;

	if (dst_cap < GS_LZO_MIN_OUT)
		return -ENOSPC;
	ret = lzorle1x_1_compress_safe(src, slen, dst, &len, ctx);
	return gs_lzo_done(ret, len);
}

static int gs_lzo_decompress(const struct gs_comp_params *p, void *ctx,
			     const void *src, unsigned int slen, void *dst,
			     unsigned int dlen)
{
	size_t len = dlen;
	int ret;

	ret = lzo1x_decompress_safe(src, slen, dst, &len);
	return ret == LZO_E_OK && len == dlen ? 0 : -EIO;
}

const struct gs_backend gs_be_lzo = {
	.name = "lzo",
	.setup = gs_lzo_setup,
	.release = gs_lzo_release,
	.ctx_create = gs_lzo_ctx_create,
	.ctx_destroy = gs_lzo_ctx_destroy,
	.compress = gs_lzo_compress,
	.decompress = gs_lzo_decompress,
};

const struct gs_backend gs_be_lzo_rle = {
	.name = "lzo-rle",
	.setup = gs_lzo_setup,
	.release = gs_lzo_release,
	.ctx_create = gs_lzo_ctx_create,
	.ctx_destroy = gs_lzo_ctx_destroy,
	.compress = gs_lzo_rle_compress,
	.decompress = gs_lzo_decompress,
};

#endif /* GS_HAVE_LZO */
