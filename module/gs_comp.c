// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswap compression streams.
 *
 * A gs_comp owns one stream per possible CPU: a crypto acomp transform, a
 * request and a PAGE_SIZE buffer. Callers take the stream of the CPU they
 * run on and hold its mutex while they use it; after a migration they keep
 * using the stream they locked, which is correct, only less local.
 *
 * CPU hotplug: a stream is set up when its CPU is prepared, before it runs
 * anything, and stays until the gs_comp is destroyed. Streams are never
 * torn down at CPU offline: a task that picked a stream on a CPU that then
 * went away may still hold it.
 */
#define pr_fmt(fmt) "ghostswap: " fmt

#include <linux/cpuhotplug.h>
#include <linux/err.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/string.h>
#include "gs_comp.h"
#include "gs_compat.h"

#define GS_ALG_NAME_MAX	64

struct gs_comp {
	struct gs_stream __percpu *streams;
	struct hlist_node node;		/* CPU hotplug instance */
	atomic_long_t bytes;
	char name[GS_ALG_NAME_MAX];
};

const char *const gs_comp_known[] = {
	"lzo", "lzo-rle", "lz4", "lz4hc", "zstd", "deflate", "842", NULL,
};

static enum cpuhp_state gs_cpuhp_state;

bool gs_comp_available(const char *alg)
{
	return crypto_has_acomp(alg, 0, 0) > 0;
}

/* What acomp_request_alloc() asks the slab for. */
static size_t gs_req_bytes(struct crypto_acomp *tfm)
{
	return ALIGN(sizeof(struct acomp_req) + crypto_acomp_reqsize(tfm),
		     CRYPTO_MINALIGN);
}

static void gs_stream_free(struct gs_comp *comp, struct gs_stream *st)
{
	if (st->buf)
		atomic_long_sub(PAGE_SIZE, &comp->bytes);
	kfree(st->buf);
	if (st->req) {
		atomic_long_sub(gs_req_bytes(st->tfm), &comp->bytes);
		acomp_request_free(st->req);
	}
	if (!IS_ERR_OR_NULL(st->tfm))
		crypto_free_acomp(st->tfm);
	st->buf = NULL;
	st->req = NULL;
	st->tfm = NULL;
}

static int gs_stream_setup(struct gs_comp *comp, unsigned int cpu)
{
	struct gs_stream *st = per_cpu_ptr(comp->streams, cpu);
	int node = cpu_to_node(cpu);

	/* Already there from an earlier online/offline cycle. */
	if (st->tfm)
		return 0;
	st->buf = kmalloc_node(PAGE_SIZE, GFP_KERNEL, node);
	if (!st->buf)
		goto nomem;
	atomic_long_add(PAGE_SIZE, &comp->bytes);
	st->tfm = crypto_alloc_acomp_node(comp->name, 0, 0, node);
	if (IS_ERR(st->tfm)) {
		int ret = PTR_ERR(st->tfm);

		pr_err("cannot set up %s for CPU %u: %d\n", comp->name, cpu, ret);
		st->tfm = NULL;
		gs_stream_free(comp, st);
		return ret;
	}
	st->req = acomp_request_alloc(st->tfm);
	if (!st->req)
		goto nomem;
	atomic_long_add(gs_req_bytes(st->tfm), &comp->bytes);
	return 0;

nomem:
	gs_stream_free(comp, st);
	return -ENOMEM;
}

static int gs_comp_cpu_prepare(unsigned int cpu, struct hlist_node *node)
{
	return gs_stream_setup(hlist_entry(node, struct gs_comp, node), cpu);
}

struct gs_comp *gs_comp_create(const char *alg)
{
	struct gs_comp *comp;
	unsigned int cpu;
	int ret;

	if (!*alg || strlen(alg) >= GS_ALG_NAME_MAX || !gs_comp_available(alg))
		return ERR_PTR(-ENOENT);
	comp = kzalloc_obj(*comp);
	if (!comp)
		return ERR_PTR(-ENOMEM);
	strscpy(comp->name, alg, sizeof(comp->name));
	comp->streams = alloc_percpu(struct gs_stream);
	if (!comp->streams) {
		kfree(comp);
		return ERR_PTR(-ENOMEM);
	}
	for_each_possible_cpu(cpu)
		mutex_init(&per_cpu_ptr(comp->streams, cpu)->lock);
	/* Sets up the streams of the CPUs that are up, serialised with hotplug. */
	ret = cpuhp_state_add_instance(gs_cpuhp_state, &comp->node);
	if (ret) {
		gs_comp_destroy(comp);
		return ERR_PTR(ret);
	}
	return comp;
}

void gs_comp_destroy(struct gs_comp *comp)
{
	unsigned int cpu;

	if (!hlist_unhashed(&comp->node))
		cpuhp_state_remove_instance_nocalls(gs_cpuhp_state,
						    &comp->node);
	for_each_possible_cpu(cpu)
		gs_stream_free(comp, per_cpu_ptr(comp->streams, cpu));
	WARN_ON(atomic_long_read(&comp->bytes));
	free_percpu(comp->streams);
	kfree(comp);
}

const char *gs_comp_name(const struct gs_comp *comp)
{
	return comp->name;
}

size_t gs_comp_bytes(const struct gs_comp *comp)
{
	return atomic_long_read(&comp->bytes);
}

struct gs_stream *gs_stream_get(struct gs_comp *comp)
{
	struct gs_stream *st = raw_cpu_ptr(comp->streams);

	mutex_lock(&st->lock);
	return st;
}

void gs_stream_put(struct gs_stream *st)
{
	mutex_unlock(&st->lock);
}

int gs_compress(struct gs_stream *st, const void *src)
{
	DECLARE_CRYPTO_WAIT(wait);
	int ret;

	acomp_request_set_callback(st->req, CRYPTO_TFM_REQ_MAY_BACKLOG,
				   crypto_req_done, &wait);
	gs_acomp_set_bufs(st->req, &st->bufs, src, PAGE_SIZE, st->buf,
			  PAGE_SIZE);
	ret = crypto_wait_req(crypto_acomp_compress(st->req), &wait);
	/*
	 * Algorithms report output that does not fit differently (lz4 and
	 * lzo -EINVAL, others -ENOSPC); any failure means: store it as is.
	 */
	if (ret || st->req->dlen >= PAGE_SIZE)
		return 0;
	return st->req->dlen;
}

int gs_decompress(struct gs_stream *st, const void *src, unsigned int len,
		  void *dst)
{
	DECLARE_CRYPTO_WAIT(wait);
	int ret;

	acomp_request_set_callback(st->req, CRYPTO_TFM_REQ_MAY_BACKLOG,
				   crypto_req_done, &wait);
	gs_acomp_set_bufs(st->req, &st->bufs, src, len, dst, PAGE_SIZE);
	ret = crypto_wait_req(crypto_acomp_decompress(st->req), &wait);
	if (ret)
		return ret;
	return st->req->dlen == PAGE_SIZE ? 0 : -EIO;
}

int gs_comp_init(void)
{
	int ret;

	ret = cpuhp_setup_state_multi(CPUHP_BP_PREPARE_DYN, "block/ghostswap:prepare",
				      gs_comp_cpu_prepare, NULL);
	if (ret < 0)
		return ret;
	gs_cpuhp_state = ret;
	return 0;
}

void gs_comp_exit(void)
{
	cpuhp_remove_multi_state(gs_cpuhp_state);
}
