// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswap backend zstd: levels zstd_min_clevel() (negative: fastest)
 * to zstd_max_clevel() (22), default zstd_default_clevel() (3); level 0
 * means the default, as in zstd itself. A dictionary may be a trained
 * one (zstd --train) or raw content: zstd tells them apart by the magic
 * number.
 *
 * Contexts are static: a compression and a decompression context
 * placed in workspaces sized for the largest input
 * (gs_comp_params.max_src), so nothing is allocated while a page is
 * compressed. A page and a unit of pages each have parameters of their
 * own: zstd sizes its window and tables by the input, and those for a
 * unit, used for a page, would cost more and gain nothing. With a
 * dictionary, setup() digests it once into a decompression dictionary
 * and a compression one for each input size (all referring to
 * gs_comp_params.dict, not copying it) shared by all streams; zstd
 * allocates those through gs_zstd_alloc(), which records every size so
 * the bytes are counted.
 */
#define pr_fmt(fmt) "ghostswap: " fmt

#include <linux/err.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/printk.h>
#include <linux/zstd.h>
#include "gs_be.h"

#if GS_HAVE_ZSTD

/* How an input of one size is compressed. */
struct gs_zstd_input {
	zstd_parameters params;		/* without a dictionary */
	zstd_cdict *cdict;		/* with one */
};

struct gs_zstd_shared {
	/* A page [0], and a unit of max_src bytes [1] where units are on. */
	struct gs_zstd_input in[2];
	zstd_ddict *ddict;
	size_t cwork;			/* context workspace sizes */
	size_t dwork;
};

struct gs_zstd_ctx {
	zstd_cctx *cctx;
	zstd_dctx *dctx;
	void *cmem;
	void *dmem;
};

/*
 * zstd's allocations for the dictionaries: a header in front of each
 * keeps its size, for the free that is not told it. 16 bytes keep the
 * alignment zstd expects of an allocation.
 */
#define GS_ZSTD_HDR	16

static void *gs_zstd_alloc(void *opaque, size_t size)
{
	size_t *hdr = gs_be_alloc(opaque, size + GS_ZSTD_HDR, NUMA_NO_NODE);

	if (!hdr)
		return NULL;
	*hdr = size + GS_ZSTD_HDR;
	return (u8 *)hdr + GS_ZSTD_HDR;
}

static void gs_zstd_free(void *opaque, void *addr)
{
	size_t *hdr;

	if (!addr)
		return;
	hdr = (size_t *)((u8 *)addr - GS_ZSTD_HDR);
	gs_be_free(opaque, hdr, *hdr);
}

static void gs_zstd_release(struct gs_comp_params *p)
{
	struct gs_zstd_shared *sh = p->shared;

	if (!sh)
		return;
	if (sh->in[0].cdict)
		zstd_free_cdict(sh->in[0].cdict);
	if (sh->in[1].cdict)
		zstd_free_cdict(sh->in[1].cdict);
	if (sh->ddict)
		zstd_free_ddict(sh->ddict);
	gs_be_free(p, sh, sizeof(*sh));
	p->shared = NULL;
}

/*
 * Parameters (and with a dictionary, a compression dictionary) for an
 * input of @size bytes, in place @i of the shared state; the context
 * workspace grows to fit them. False if zstd cannot load the dictionary.
 */
static bool gs_zstd_setup_input(struct gs_comp_params *p, unsigned int i,
				unsigned int size, zstd_custom_mem mem)
{
	struct gs_zstd_shared *sh = p->shared;
	struct gs_zstd_input *in = &sh->in[i];
	zstd_compression_parameters cparams;

	in->params = zstd_get_params(p->level, size);
	/* The compression parameters in in->params. */
	cparams = zstd_get_cparams(p->level, size, 0);
	sh->cwork = max(sh->cwork, zstd_cctx_workspace_bound(&cparams));
	if (!p->dict_len)
		return true;
	cparams = zstd_get_cparams(p->level, size, p->dict_len);
	sh->cwork = max(sh->cwork, zstd_cctx_workspace_bound(&cparams));
	in->cdict = zstd_create_cdict_byreference(p->dict, p->dict_len,
						  cparams, mem);
	return in->cdict;
}

static int gs_zstd_setup(struct gs_comp_params *p)
{
	/* zstd's allocator, its free and their argument, in that order. */
	zstd_custom_mem mem = { gs_zstd_alloc, gs_zstd_free, p };
	struct gs_zstd_shared *sh;

	if (p->level == GS_PARAM_UNSET) {
		p->level = zstd_default_clevel();
	} else if (p->level < zstd_min_clevel() ||
		   p->level > zstd_max_clevel()) {
		pr_err("zstd: level %d, valid: %d to %d (default %d)\n",
		       p->level, zstd_min_clevel(), zstd_max_clevel(),
		       zstd_default_clevel());
		return -EINVAL;
	}
	sh = gs_be_alloc(p, sizeof(*sh), NUMA_NO_NODE);
	if (!sh)
		return -ENOMEM;
	p->shared = sh;
	sh->dwork = zstd_dctx_workspace_bound();
	if (!gs_zstd_setup_input(p, 0, PAGE_SIZE, mem))
		goto bad_dict;
	/* A unit's own only where units are on. */
	if (p->max_src > PAGE_SIZE &&
	    !gs_zstd_setup_input(p, 1, p->max_src, mem))
		goto bad_dict;
	if (!p->dict_len)
		return 0;
	sh->ddict = zstd_create_ddict_byreference(p->dict, p->dict_len, mem);
	if (sh->ddict)
		return 0;
bad_dict:
	pr_err("zstd: cannot load the dictionary (%zu bytes)\n", p->dict_len);
	gs_zstd_release(p);
	return -EINVAL;
}

static void gs_zstd_ctx_destroy(struct gs_comp_params *p, void *ctx)
{
	struct gs_zstd_shared *sh = p->shared;
	struct gs_zstd_ctx *c = ctx;

	gs_be_free(p, c->cmem, sh->cwork);
	gs_be_free(p, c->dmem, sh->dwork);
	gs_be_free(p, c, sizeof(*c));
}

static void *gs_zstd_ctx_create(struct gs_comp_params *p, int node)
{
	struct gs_zstd_shared *sh = p->shared;
	struct gs_zstd_ctx *c;

	c = gs_be_alloc(p, sizeof(*c), node);
	if (!c)
		return ERR_PTR(-ENOMEM);
	c->cmem = gs_be_alloc(p, sh->cwork, node);
	c->dmem = gs_be_alloc(p, sh->dwork, node);
	if (!c->cmem || !c->dmem)
		goto nomem;
	c->cctx = zstd_init_cctx(c->cmem, sh->cwork);
	c->dctx = zstd_init_dctx(c->dmem, sh->dwork);
	if (!c->cctx || !c->dctx)
		goto nomem;
	return c;

nomem:
	gs_zstd_ctx_destroy(p, c);
	return ERR_PTR(-ENOMEM);
}

static int gs_zstd_compress(const struct gs_comp_params *p, void *ctx,
			    const void *src, unsigned int slen, void *dst,
			    unsigned int dst_cap)
{
	const struct gs_zstd_shared *sh = p->shared;
	const struct gs_zstd_input *in = &sh->in[slen > PAGE_SIZE];
	struct gs_zstd_ctx *c = ctx;
	size_t ret;

	if (!in->cdict)
		ret = zstd_compress_cctx(c->cctx, dst, dst_cap, src, slen,
					 &in->params);
	else
		ret = zstd_compress_using_cdict(c->cctx, dst, dst_cap, src,
						slen, in->cdict);
	/*
	 * With room for the worst case zstd cannot run out of it: short
	 * of that, running out is what fails.
	 */
	if (zstd_is_error(ret))
		return dst_cap < zstd_compress_bound(slen) ? -ENOSPC : -EINVAL;
	return ret && ret <= INT_MAX ? (int)ret : -EINVAL;
}

static int gs_zstd_decompress(const struct gs_comp_params *p, void *ctx,
			      const void *src, unsigned int slen, void *dst,
			      unsigned int dlen)
{
	const struct gs_zstd_shared *sh = p->shared;
	struct gs_zstd_ctx *c = ctx;
	size_t ret;

	if (!sh->ddict)
		ret = zstd_decompress_dctx(c->dctx, dst, dlen, src, slen);
	else
		ret = zstd_decompress_using_ddict(c->dctx, dst, dlen, src,
						  slen, sh->ddict);
	return !zstd_is_error(ret) && ret == dlen ? 0 : -EIO;
}

const struct gs_backend gs_be_zstd = {
	.name = "zstd",
	.caps = GS_BE_LEVEL | GS_BE_DICT,
	.setup = gs_zstd_setup,
	.release = gs_zstd_release,
	.ctx_create = gs_zstd_ctx_create,
	.ctx_destroy = gs_zstd_ctx_destroy,
	.compress = gs_zstd_compress,
	.decompress = gs_zstd_decompress,
};

#endif /* GS_HAVE_ZSTD */
