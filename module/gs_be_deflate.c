// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswap backend deflate: zlib's deflate with the crypto API's
 * defaults (crypto/deflate.c): raw deflate (no zlib header) with a
 * 2^11-byte window and memLevel MAX_MEM_LEVEL. deflate.winbits as zram
 * takes it: -15 to -9 for raw deflate, 9 to 15 for a zlib stream with
 * header and checksum; default -11. Levels -1 (zlib's default, 6) and
 * 0 (stored) to 9; default 6. No dictionary.
 *
 * A context is a deflate and an inflate stream with their workspaces.
 */
#define pr_fmt(fmt) "ghostswap: " fmt

#include <linux/err.h>
#include <linux/mm.h>
#include <linux/printk.h>
#include <linux/zlib.h>
#include "gs_be.h"

#if GS_HAVE_DEFLATE

#define GS_DEFLATE_WINBITS	(-11)
#define GS_DEFLATE_MEMLEVEL	MAX_MEM_LEVEL
#define GS_DEFLATE_LEVEL	6

struct gs_deflate_ctx {
	struct z_stream_s def;
	struct z_stream_s inf;
	size_t def_size;
};

static bool gs_deflate_winbits_ok(s32 wb)
{
	return (wb >= -MAX_WBITS && wb <= -9) || (wb >= 9 && wb <= MAX_WBITS);
}

static int gs_deflate_setup(struct gs_comp_params *p)
{
	if (p->level == GS_PARAM_UNSET) {
		p->level = GS_DEFLATE_LEVEL;
	} else if (p->level < Z_DEFAULT_COMPRESSION ||
		   p->level > Z_BEST_COMPRESSION) {
		pr_err("deflate: level %d, valid: %d to %d (default %d)\n",
		       p->level, Z_DEFAULT_COMPRESSION, Z_BEST_COMPRESSION,
		       GS_DEFLATE_LEVEL);
		return -EINVAL;
	}
	if (p->deflate_winbits == GS_PARAM_UNSET) {
		p->deflate_winbits = GS_DEFLATE_WINBITS;
	} else if (!gs_deflate_winbits_ok(p->deflate_winbits)) {
		pr_err("deflate: deflate.winbits %d, valid: -%d to -9 (raw deflate) or 9 to %d (zlib), default %d\n",
		       p->deflate_winbits, MAX_WBITS, MAX_WBITS,
		       GS_DEFLATE_WINBITS);
		return -EINVAL;
	}
	return 0;
}

static void gs_deflate_release(struct gs_comp_params *p)
{
}

static void gs_deflate_ctx_destroy(struct gs_comp_params *p, void *ctx)
{
	struct gs_deflate_ctx *c = ctx;

	gs_be_free(p, c->def.workspace, c->def_size);
	gs_be_free(p, c->inf.workspace, zlib_inflate_workspacesize());
	gs_be_free(p, c, sizeof(*c));
}

static void *gs_deflate_ctx_create(struct gs_comp_params *p, int node)
{
	struct gs_deflate_ctx *c;

	c = gs_be_alloc(p, sizeof(*c), node);
	if (!c)
		return ERR_PTR(-ENOMEM);
	c->def_size = zlib_deflate_workspacesize(p->deflate_winbits,
						 GS_DEFLATE_MEMLEVEL);
	c->def.workspace = gs_be_alloc(p, c->def_size, node);
	c->inf.workspace = gs_be_alloc(p, zlib_inflate_workspacesize(), node);
	if (!c->def.workspace || !c->inf.workspace) {
		gs_deflate_ctx_destroy(p, c);
		return ERR_PTR(-ENOMEM);
	}
	if (zlib_deflateInit2(&c->def, p->level, Z_DEFLATED,
			      p->deflate_winbits, GS_DEFLATE_MEMLEVEL,
			      Z_DEFAULT_STRATEGY) != Z_OK ||
	    zlib_inflateInit2(&c->inf, p->deflate_winbits) != Z_OK) {
		gs_deflate_ctx_destroy(p, c);
		return ERR_PTR(-EINVAL);
	}
	return c;
}

static int gs_deflate_compress(const struct gs_comp_params *p, void *ctx,
			       const void *src, unsigned int slen, void *dst,
			       unsigned int dst_cap)
{
	struct z_stream_s *s = &((struct gs_deflate_ctx *)ctx)->def;
	int ret;

	if (zlib_deflateReset(s) != Z_OK)
		return -EINVAL;
	s->next_in = src;
	s->avail_in = slen;
	s->next_out = dst;
	s->avail_out = dst_cap;
	ret = zlib_deflate(s, Z_FINISH);
	if (ret == Z_STREAM_END)
		return s->total_out && s->total_out <= INT_MAX ?
		       (int)s->total_out : -EINVAL;
	/* Z_OK or Z_BUF_ERROR: the output is full, the input is not done. */
	return ret == Z_OK || ret == Z_BUF_ERROR ? -ENOSPC : -EINVAL;
}

static int gs_deflate_decompress(const struct gs_comp_params *p, void *ctx,
				 const void *src, unsigned int slen, void *dst,
				 unsigned int dlen)
{
	struct z_stream_s *s = &((struct gs_deflate_ctx *)ctx)->inf;

	if (zlib_inflateReset(s) != Z_OK)
		return -EIO;
	s->next_in = src;
	s->avail_in = slen;
	s->next_out = dst;
	s->avail_out = dlen;
	/* The whole input is one stream, and it makes exactly @dlen bytes. */
	if (zlib_inflate(s, Z_FINISH) != Z_STREAM_END || s->avail_in ||
	    s->total_out != dlen)
		return -EIO;
	return 0;
}

const struct gs_backend gs_be_deflate = {
	.name = "deflate",
	.caps = GS_BE_LEVEL | GS_BE_WINBITS,
	.setup = gs_deflate_setup,
	.release = gs_deflate_release,
	.ctx_create = gs_deflate_ctx_create,
	.ctx_destroy = gs_deflate_ctx_destroy,
	.compress = gs_deflate_compress,
	.decompress = gs_deflate_decompress,
};

#endif /* GS_HAVE_DEFLATE */
