// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswap backend for every other algorithm the kernel's crypto API
 * has (842, hardware engines): a context is a crypto acomp transform and
 * a request. No level, no dictionary: acomp has no way to pass them.
 *
 * Counted in bytes: the context and the request. The transform is the
 * crypto API's, as is whatever a driver allocates behind it.
 */
#define pr_fmt(fmt) "ghostswap: " fmt

#include <crypto/acompress.h>
#include <linux/crypto.h>
#include <linux/err.h>
#include <linux/mm.h>
#include <linux/printk.h>
#include <linux/slab.h>
#include "gs_backend.h"
#include "gs_compat.h"

struct gs_acomp_ctx {
	struct crypto_acomp *tfm;
	struct acomp_req *req;
	struct gs_acomp_bufs bufs;	/* what the request points at */
};

static int gs_acomp_setup(struct gs_comp_params *p)
{
	if (crypto_has_acomp(p->name, 0, 0) <= 0) {
		pr_err("%s: not in the kernel's crypto API\n", p->name);
		return -ENOENT;
	}
	return 0;
}

static void gs_acomp_release(struct gs_comp_params *p)
{
}

static void gs_acomp_ctx_destroy(struct gs_comp_params *p, void *ctx)
{
	struct gs_acomp_ctx *c = ctx;

	if (c->req) {
		atomic_long_sub(ksize(c->req), &p->bytes);
		acomp_request_free(c->req);
	}
	if (!IS_ERR_OR_NULL(c->tfm))
		crypto_free_acomp(c->tfm);
	gs_be_free(p, c, sizeof(*c));
}

static void *gs_acomp_ctx_create(struct gs_comp_params *p, int node)
{
	struct gs_acomp_ctx *c;
	int ret;

	c = gs_be_alloc(p, sizeof(*c), node);
	if (!c)
		return ERR_PTR(-ENOMEM);
	c->tfm = crypto_alloc_acomp_node(p->name, 0, 0, node);
	if (IS_ERR(c->tfm)) {
		ret = PTR_ERR(c->tfm);
		pr_err("%s: cannot allocate a transform: %d\n", p->name, ret);
		gs_acomp_ctx_destroy(p, c);
		return ERR_PTR(ret);
	}
	c->req = acomp_request_alloc(c->tfm);
	if (!c->req) {
		gs_acomp_ctx_destroy(p, c);
		return ERR_PTR(-ENOMEM);
	}
	atomic_long_add(ksize(c->req), &p->bytes);
	return c;
}

static int gs_acomp_run(struct acomp_req *req, bool compress)
{
	DECLARE_CRYPTO_WAIT(wait);

	acomp_request_set_callback(req, CRYPTO_TFM_REQ_MAY_BACKLOG,
				   crypto_req_done, &wait);
	return crypto_wait_req(compress ? crypto_acomp_compress(req) :
				crypto_acomp_decompress(req), &wait);
}

static int gs_acomp_compress(const struct gs_comp_params *p, void *ctx,
			     const void *src, unsigned int slen, void *dst,
			     unsigned int dst_cap)
{
	struct gs_acomp_ctx *c = ctx;
	int ret;

	gs_acomp_set_bufs(c->req, &c->bufs, src, slen, dst, dst_cap);
	ret = gs_acomp_run(c->req, true);
	/*
	 * Drivers report output that does not fit differently (lz4 and
	 * lzo -EINVAL, others -ENOSPC, some -EOVERFLOW or -E2BIG).
	 */
	if (ret == -EINVAL || ret == -ENOSPC || ret == -EOVERFLOW ||
	    ret == -E2BIG)
		return -ENOSPC;
	if (ret)
		return ret;
	if (WARN_ON_ONCE(c->req->dlen > dst_cap) || !c->req->dlen)
		return -EINVAL;
	return c->req->dlen;
}

static int gs_acomp_decompress(const struct gs_comp_params *p, void *ctx,
			       const void *src, unsigned int slen, void *dst,
			       unsigned int dlen)
{
	struct gs_acomp_ctx *c = ctx;
	int ret;

	gs_acomp_set_bufs(c->req, &c->bufs, src, slen, dst, dlen);
	ret = gs_acomp_run(c->req, false);
	if (ret == -ENOMEM || ret == -EAGAIN || ret == -EBUSY)
		return ret;
	return !ret && c->req->dlen == dlen ? 0 : -EIO;
}

const struct gs_backend gs_be_acomp = {
	.name = "acomp",
	.setup = gs_acomp_setup,
	.release = gs_acomp_release,
	.ctx_create = gs_acomp_ctx_create,
	.ctx_destroy = gs_acomp_ctx_destroy,
	.compress = gs_acomp_compress,
	.decompress = gs_acomp_decompress,
};
