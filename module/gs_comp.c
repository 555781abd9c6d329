// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswap compression: a store's algorithms and their per-CPU streams.
 *
 * A gs_comp owns the parameters of up to GS_MAX_COMPS algorithms and one
 * stream per possible CPU: a buffer (GS_STREAM_BUF) and a context of every
 * algorithm. Callers take the stream of the CPU they run on and hold its
 * mutex while they use it; after a migration they keep using the stream
 * they locked, which is correct, only less local.
 *
 * With units on (gs_comp_set_unit()), every algorithm is set up for an
 * input of a unit's bytes and every stream has two unit buffers.
 *
 * CPU hotplug: a stream is set up when its CPU is prepared, before it runs
 * anything, and stays until the gs_comp is destroyed. Streams are never
 * torn down at CPU offline: a task that picked a stream on a CPU that then
 * went away may still hold it. Changing an algorithm holds the hotplug
 * lock, so that a CPU coming up meanwhile gets contexts of the new one.
 */
#define pr_fmt(fmt) "ghostswap: " fmt

#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/err.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/string.h>
#include "gs_backend.h"
#include "gs_comp.h"
#include "gs_compat.h"

const char *const gs_comp_known[] = {
	"lzo", "lzo-rle", "lz4", "lz4hc", "zstd", "deflate", "842", NULL,
};

static enum cpuhp_state gs_cpuhp_state;

bool gs_comp_available(const char *alg)
{
	return *alg && strlen(alg) < GS_ALG_NAME_MAX &&
	       gs_backend_find(alg);
}

static void gs_ctx_destroy(struct gs_comp_params *p, void **ctx)
{
	if (*ctx)
		p->be->ctx_destroy(p, *ctx);
	*ctx = NULL;
}

/* A stream's unit buffers: @ubuf of @bytes, @zbuf for their compressed form. */
static void gs_unit_bufs_free(struct gs_comp *comp, unsigned int bytes,
			      u8 *ubuf, u8 *zbuf)
{
	if (ubuf) {
		free_pages_exact(ubuf, bytes);
		atomic_long_sub(bytes, &comp->buf_bytes);
	}
	if (zbuf) {
		free_pages_exact(zbuf, gs_unit_zbuf_bytes(bytes));
		atomic_long_sub(gs_unit_zbuf_bytes(bytes), &comp->buf_bytes);
	}
}

static int gs_unit_bufs_alloc(struct gs_comp *comp, unsigned int bytes,
			      u8 **ubuf, u8 **zbuf)
{
	*ubuf = alloc_pages_exact(bytes, GFP_KERNEL | __GFP_NOWARN);
	if (*ubuf)
		atomic_long_add(bytes, &comp->buf_bytes);
	*zbuf = alloc_pages_exact(gs_unit_zbuf_bytes(bytes),
				  GFP_KERNEL | __GFP_NOWARN);
	if (*zbuf)
		atomic_long_add(gs_unit_zbuf_bytes(bytes), &comp->buf_bytes);
	if (*ubuf && *zbuf)
		return 0;
	gs_unit_bufs_free(comp, bytes, *ubuf, *zbuf);
	*ubuf = NULL;
	*zbuf = NULL;
	return -ENOMEM;
}

static void gs_stream_free(struct gs_comp *comp, struct gs_stream *st)
{
	unsigned int prio;

	gs_unit_bufs_free(comp, comp->unit_bytes, st->ubuf, st->zbuf);
	st->ubuf = NULL;
	st->zbuf = NULL;
	st->ubuf_seq = 0;
	for (prio = 0; prio < GS_MAX_COMPS; prio++)
		if (comp->params[prio])
			gs_ctx_destroy(comp->params[prio], &st->ctx[prio]);
	if (st->buf)
		atomic_long_sub(GS_STREAM_BUF, &comp->buf_bytes);
	kfree(st->buf);
	st->buf = NULL;
}

static int gs_stream_setup(struct gs_comp *comp, unsigned int cpu)
{
	struct gs_stream *st = per_cpu_ptr(comp->streams, cpu);
	int node = cpu_to_node(cpu);
	struct gs_comp_params *p;
	unsigned int prio;
	void *ctx;

	/* Already there from an earlier online/offline cycle. */
	if (st->buf)
		return 0;
	st->buf = kmalloc_node(GS_STREAM_BUF, GFP_KERNEL, node);
	if (!st->buf)
		return -ENOMEM;
	atomic_long_add(GS_STREAM_BUF, &comp->buf_bytes);
	if (comp->unit_bytes &&
	    gs_unit_bufs_alloc(comp, comp->unit_bytes, &st->ubuf, &st->zbuf)) {
		gs_stream_free(comp, st);
		return -ENOMEM;
	}
	for (prio = 0; prio < GS_MAX_COMPS; prio++) {
		p = comp->params[prio];
		if (!p)
			continue;
		ctx = p->be->ctx_create(p, node);
		if (IS_ERR(ctx)) {
			pr_err("cannot set up %s for CPU %u: %ld\n", p->name,
			       cpu, PTR_ERR(ctx));
			gs_stream_free(comp, st);
			return PTR_ERR(ctx);
		}
		st->ctx[prio] = ctx;
	}
	return 0;
}

static int gs_comp_cpu_prepare(unsigned int cpu, struct hlist_node *node)
{
	return gs_stream_setup(hlist_entry(node, struct gs_comp, node), cpu);
}

struct gs_comp_params *gs_comp_params_new(const char *alg)
{
	struct gs_comp_params *p;
	int ret;

	p = kzalloc_obj(*p);
	if (!p)
		return ERR_PTR(-ENOMEM);
	ret = gs_comp_params_init(p, alg);
	if (!ret)
		ret = gs_comp_params_setup(p);
	if (ret) {
		gs_comp_params_release(p);
		kfree(p);
		return ERR_PTR(ret);
	}
	return p;
}

static void gs_params_free(struct gs_comp_params *p)
{
	if (!p)
		return;
	gs_comp_params_release(p);
	kfree(p);
}

struct gs_comp *gs_comp_create(const char *alg)
{
	struct gs_comp_params *p;
	struct gs_comp *comp;
	unsigned int cpu;
	int ret;

	if (!gs_comp_available(alg))
		return ERR_PTR(-ENOENT);
	p = gs_comp_params_new(alg);
	if (IS_ERR(p))
		return ERR_CAST(p);
	comp = kzalloc_obj(*comp);
	if (!comp) {
		gs_params_free(p);
		return ERR_PTR(-ENOMEM);
	}
	comp->params[GS_PRIMARY_COMP] = p;
	comp->streams = alloc_percpu(struct gs_stream);
	if (!comp->streams) {
		gs_comp_destroy(comp);
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
	unsigned int cpu, prio;

	if (!hlist_unhashed(&comp->node))
		cpuhp_state_remove_instance_nocalls(gs_cpuhp_state,
						    &comp->node);
	if (comp->streams) {
		for_each_possible_cpu(cpu)
			gs_stream_free(comp, per_cpu_ptr(comp->streams, cpu));
		free_percpu(comp->streams);
	}
	WARN_ON(atomic_long_read(&comp->buf_bytes));
	for (prio = 0; prio < GS_MAX_COMPS; prio++)
		gs_params_free(comp->params[prio]);
	kfree(comp);
}

/* The largest input the algorithms are set up for. */
static unsigned int gs_comp_max_src(const struct gs_comp *comp)
{
	return comp->unit_bytes ?: PAGE_SIZE;
}

/* A copy of @p (set up), made for inputs of up to @max_src bytes. */
static struct gs_comp_params *gs_params_copy(const struct gs_comp_params *p,
					     unsigned int max_src)
{
	struct gs_comp_params *np = kzalloc_obj(*np);
	int ret;

	if (!np)
		return ERR_PTR(-ENOMEM);
	ret = gs_comp_params_init(np, p->name);
	if (ret)
		goto fail;
	np->level = p->level;
	np->deflate_winbits = p->deflate_winbits;
	ret = gs_comp_params_set_max_src(np, max_src);
	if (!ret && p->dict_len)
		ret = gs_comp_params_set_dict(np, p->dict, p->dict_len);
	if (!ret)
		ret = gs_comp_params_setup(np);
	if (!ret)
		return np;
fail:
	gs_params_free(np);
	return ERR_PTR(ret);
}

int gs_comp_set(struct gs_comp *comp, unsigned int prio,
		struct gs_comp_params *p)
{
	struct gs_comp_params *old;
	struct gs_stream *st;
	unsigned int cpu;
	void **fresh;
	int ret = 0;

	if (WARN_ON(prio >= GS_MAX_COMPS || (!p && prio == GS_PRIMARY_COMP))) {
		gs_params_free(p);
		return -EINVAL;
	}
	/* Set up for a page where units are on: for a unit, then. */
	if (p && p->max_src != gs_comp_max_src(comp)) {
		old = p;
		p = gs_params_copy(old, gs_comp_max_src(comp));
		gs_params_free(old);
		if (IS_ERR(p))
			return PTR_ERR(p);
	}
	fresh = kcalloc(nr_cpu_ids, sizeof(*fresh), GFP_KERNEL);
	if (!fresh) {
		gs_params_free(p);
		return -ENOMEM;
	}
	cpus_read_lock();
	/* The new contexts first: a failure leaves every stream as it was. */
	for_each_possible_cpu(cpu) {
		st = per_cpu_ptr(comp->streams, cpu);
		if (!p || !st->buf)
			continue;
		fresh[cpu] = p->be->ctx_create(p, cpu_to_node(cpu));
		if (IS_ERR(fresh[cpu])) {
			ret = PTR_ERR(fresh[cpu]);
			fresh[cpu] = NULL;
			break;
		}
	}
	if (ret) {
		for_each_possible_cpu(cpu)
			if (fresh[cpu])
				p->be->ctx_destroy(p, fresh[cpu]);
		old = p;
	} else {
		old = comp->params[prio];
		for_each_possible_cpu(cpu) {
			st = per_cpu_ptr(comp->streams, cpu);
			if (old)
				gs_ctx_destroy(old, &st->ctx[prio]);
			st->ctx[prio] = fresh[cpu];
		}
		comp->params[prio] = p;
	}
	cpus_read_unlock();
	gs_params_free(old);
	kfree(fresh);
	return ret;
}

int gs_comp_set_unit(struct gs_comp *comp, unsigned int bytes)
{
	struct gs_comp_params *p[GS_MAX_COMPS] = {};
	unsigned int cpu, prio, old = comp->unit_bytes;
	struct gs_stream *st;
	u8 **bufs;
	int ret = 0;

	if (bytes && (bytes < PAGE_SIZE || bytes > GS_BE_MAX_SRC ||
		      !IS_ALIGNED(bytes, PAGE_SIZE)))
		return -EINVAL;
	if (bytes == old)
		return 0;
	bufs = kcalloc(2 * nr_cpu_ids, sizeof(*bufs), GFP_KERNEL);
	if (!bufs)
		return -ENOMEM;
	/* Everything new first: a failure leaves every stream as it was. */
	for (prio = 0; prio < GS_MAX_COMPS; prio++) {
		if (!comp->params[prio])
			continue;
		p[prio] = gs_params_copy(comp->params[prio],
					 bytes ?: PAGE_SIZE);
		if (IS_ERR(p[prio])) {
			ret = PTR_ERR(p[prio]);
			p[prio] = NULL;
			goto out;
		}
	}
	cpus_read_lock();
	for_each_possible_cpu(cpu) {
		st = per_cpu_ptr(comp->streams, cpu);
		if (!bytes || !st->buf)
			continue;
		ret = gs_unit_bufs_alloc(comp, bytes, &bufs[2 * cpu],
					 &bufs[2 * cpu + 1]);
		if (ret)
			break;
	}
	if (ret) {
		for_each_possible_cpu(cpu)
			gs_unit_bufs_free(comp, bytes, bufs[2 * cpu],
					  bufs[2 * cpu + 1]);
		cpus_read_unlock();
		goto out;
	}
	/* Every stream's buffers at once: a CPU prepared later gets its own. */
	for_each_possible_cpu(cpu) {
		st = per_cpu_ptr(comp->streams, cpu);
		if (!st->buf)
			continue;
		gs_unit_bufs_free(comp, old, st->ubuf, st->zbuf);
		st->ubuf = bufs[2 * cpu];
		st->zbuf = bufs[2 * cpu + 1];
		st->ubuf_seq = 0;
	}
	comp->unit_bytes = bytes;
	cpus_read_unlock();
	/*
	 * Then the algorithms, one by one. gs_comp_set() fails only for
	 * want of memory for the contexts: an algorithm left with its old
	 * parameters refuses units larger than they were made for (see
	 * gs_compress_unit()), and those are stored page by page.
	 */
	for (prio = 0; prio < GS_MAX_COMPS; prio++) {
		if (!p[prio])
			continue;
		if (!ret)
			ret = gs_comp_set(comp, prio, p[prio]);
		else
			gs_params_free(p[prio]);
		p[prio] = NULL;
	}
out:
	for (prio = 0; prio < GS_MAX_COMPS; prio++)
		gs_params_free(p[prio]);
	kfree(bufs);
	return ret;
}

const char *gs_comp_name(const struct gs_comp *comp, unsigned int prio)
{
	return prio < GS_MAX_COMPS && comp->params[prio] ?
	       comp->params[prio]->name : NULL;
}

const struct gs_comp_params *gs_comp_get_params(const struct gs_comp *comp,
						unsigned int prio)
{
	return prio < GS_MAX_COMPS ? comp->params[prio] : NULL;
}

unsigned int gs_comp_top(const struct gs_comp *comp)
{
	unsigned int prio = GS_MAX_COMPS - 1;

	while (prio && !comp->params[prio])
		prio--;
	return prio;
}

size_t gs_comp_bytes(const struct gs_comp *comp)
{
	size_t bytes = atomic_long_read(&comp->buf_bytes);
	unsigned int prio;

	for (prio = 0; prio < GS_MAX_COMPS; prio++)
		if (comp->params[prio])
			bytes += atomic_long_read(&comp->params[prio]->bytes);
	return bytes;
}

/*
 * Every read of a compressed page or unit comes here. The priority is
 * checked once, below: the bounds sanitizer's checks of the two arrays
 * (where the kernel has it, as Debian's does) would cost every read a
 * stack frame to call its report from.
 */
__no_sanitize_undefined
int gs_decompress_len(struct gs_comp *comp, struct gs_stream *st,
		      unsigned int prio, const void *src, unsigned int len,
		      void *dst, unsigned int dlen)
{
	struct gs_comp_params *p;
	void *ctx;

	if (unlikely(prio >= GS_MAX_COMPS))
		return -EIO;
	p = comp->params[prio];
	ctx = st->ctx[prio];
	if (unlikely(!p || !ctx))
		return -EIO;	/* an entry of an algorithm not set up */
	return p->be->decompress(p, ctx, src, len, dst, dlen);
}

unsigned int gs_compress_unit(struct gs_comp *comp, struct gs_stream *st,
			      unsigned int prio, const void *src,
			      unsigned int slen, unsigned int max)
{
	struct gs_comp_params *p = comp->params[prio];
	int len;

	if (WARN_ON_ONCE(!p || !st->ctx[prio] || !st->zbuf ||
			 slen > comp->unit_bytes))
		return 0;
	/* Parameters left for a smaller unit by a failed gs_comp_set_unit(). */
	if (slen > p->max_src)
		return 0;
	len = p->be->compress(p, st->ctx[prio], src, slen, st->zbuf,
			      gs_unit_zbuf_bytes(comp->unit_bytes));
	return len > 0 && len < max ? len : 0;
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
