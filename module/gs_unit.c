// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswap units, their pool side: a run's held pages compressed into a
 * chain of zsmalloc objects and a descriptor (gs_unit.h), read back, and
 * freed. Where a unit's entries go in the table, and who may free it
 * when, is the core's (gs_core_unit.c, gs_core.c).
 */
#define pr_fmt(fmt) "ghostswap: " fmt

#include <linux/gfp.h>
#include <linux/math.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <kunit/static_stub.h>
#include "gs_backing.h"
#include "gs_comp.h"
#include "gs_compat.h"
#include "gs_core.h"
#include "gs_unit.h"

/*
 * A pool object of @size for a unit's chain: fault injection first
 * (debugfs fail_alloc), and a seam for the KUnit suites, which fail one
 * in the middle of a chain (a static stub; a plain call without KUnit).
 */
unsigned long gs_unit_obj_alloc(struct gs_store *s, unsigned int size,
				gfp_t gfp)
{
	KUNIT_STATIC_STUB_REDIRECT(gs_unit_obj_alloc, s, size, gfp);
	if (gs_fail_alloc(s))
		return (unsigned long)ERR_PTR(-ENOMEM);
	return zs_malloc(s->pool, size, gfp | __GFP_NOWARN | __GFP_HIGHMEM |
			 __GFP_MOVABLE, NUMA_NO_NODE);
}

static void gs_unit_objs_free(struct gs_store *s, struct gs_unit *u,
			      unsigned int n)
{
	while (n--)
		zs_free(s->pool, u->obj[n]);
}

void gs_unit_free(struct gs_store *s, struct gs_unit *u)
{
	unsigned int j, n = gs_unit_nobj(u);

	if (u->backed) {
		/* Never sleeps: this may be under the swap core's lock. */
		for (j = 0; j < n; j++)
			gs_backing_free(s->bk, u->obj[j]);
		atomic_long_dec(&s->stats.units_backed);
		atomic_long_sub(n, &s->stats.unit_bk_slots);
	} else {
		gs_unit_objs_free(s, u, n);
		gs_stat_add(&s->stats, GS_STAT_COMPR_BYTES, -(long)u->len);
	}
	gs_stat_dec(&s->stats, GS_STAT_UNITS);
	atomic_long_sub(ksize(u), &s->stats.meta_bytes);
	kfree(u);
}

/* Copy object @j of @u's chain (in the pool) to @dst; returns its size. */
static unsigned int gs_unit_obj_copy(struct gs_store *s,
				     const struct gs_unit *u, unsigned int j,
				     void *dst)
{
	unsigned int size = gs_unit_obj_size(u, j);
	void *obj;

	obj = zs_obj_read_begin(s->pool, u->obj[j], size, dst);
	if (obj != dst)
		memcpy(dst, obj, size);
	zs_obj_read_end(s->pool, u->obj[j], size, obj);
	return size;
}

unsigned int gs_unit_chain_copy(struct gs_store *s, const struct gs_unit *u,
				void *const *bufs)
{
	unsigned int j, n = gs_unit_nobj(u), size;

	for (j = 0; j < n; j++) {
		size = gs_unit_obj_copy(s, u, j, bufs[j]);
		memset(bufs[j] + size, 0, PAGE_SIZE - size);
	}
	return n;
}

void gs_unit_to_backing(struct gs_store *s, struct gs_unit *u,
			const u64 *slots)
{
	unsigned int j, n = gs_unit_nobj(u);

	gs_unit_objs_free(s, u, n);
	for (j = 0; j < n; j++)
		u->obj[j] = slots[j];
	u->backed = true;
	gs_stat_add(&s->stats, GS_STAT_COMPR_BYTES, -(long)u->len);
	atomic_long_inc(&s->stats.units_backed);
	atomic_long_add(n, &s->stats.unit_bk_slots);
	atomic_long_inc(&s->stats.units_written);
}

int gs_unit_unpack_pieces(struct gs_store *s, struct gs_stream *st,
			  const struct gs_unit *u, void *const *pieces,
			  void *dst)
{
	unsigned int j;
	int ret;

	for (j = 0; j < gs_unit_nobj(u); j++)
		memcpy(st->zbuf + j * PAGE_SIZE, pieces[j],
		       gs_unit_obj_size(u, j));
	ret = gs_decompress_len(s->comp, st, u->prio, st->zbuf, u->len,
				dst ?: st->ubuf, gs_unit_held(u) * PAGE_SIZE);
	if (!dst)
		st->ubuf_seq = ret ? 0 : u->seq;
	return ret;
}

/*
 * A unit of the run of @pages whose @held pages, compressed with @prio,
 * are the @len bytes in @st's zbuf: its chain and descriptor.
 */
static int gs_unit_make(struct gs_store *s, struct gs_stream *st,
			unsigned int prio, unsigned int len,
			unsigned int pages, u16 held, gfp_t gfp,
			struct gs_unit **up)
{
	unsigned int nobj = DIV_ROUND_UP(len, PAGE_SIZE), i, size;
	unsigned long handle, pool_pages;
	struct gs_unit *u;

	u = kmalloc(struct_size(u, obj, nobj), gfp | __GFP_NOWARN);
	if (!u)
		return -ENOMEM;
	for (i = 0; i < nobj; i++) {
		size = min_t(unsigned int, len - i * PAGE_SIZE, PAGE_SIZE);
		handle = gs_unit_obj_alloc(s, size, gfp);
		if (IS_ERR_VALUE(handle)) {
			gs_unit_objs_free(s, u, i);
			kfree(u);
			return -ENOMEM;
		}
		u->obj[i] = handle;
		zs_obj_write(s->pool, handle, st->zbuf + i * PAGE_SIZE, size);
	}
	if (gs_pool_grew(s, &pool_pages)) {
		gs_unit_objs_free(s, u, nobj);
		kfree(u);
		return -EAGAIN;
	}
	u->held = held;
	u->live = 0;
	u->readers = 0;
	u->pages = pages;
	u->prio = prio;
	u->len = len;
	u->split = 0;
	u->nogain = false;
	u->backed = false;
	u->wb = false;
	u->seq = atomic64_inc_return(&s->unit_seq);
	gs_stat_inc(&s->stats, GS_STAT_UNITS);
	gs_stat_add(&s->stats, GS_STAT_COMPR_BYTES, len);
	atomic_long_add(ksize(u), &s->stats.meta_bytes);
	*up = u;
	return 0;
}

int gs_unit_pack(struct gs_store *s, struct gs_stream *st, const void *src,
		 unsigned int pages, u16 held, gfp_t gfp, struct gs_unit **up)
{
	unsigned int n = hweight16(held), len;
	int ret;

	if (gs_pool_full(s))
		return -EAGAIN;
	/*
	 * Kept only if it takes at least a page less than its pages would
	 * stored as they are: else each is better off on its own.
	 */
	len = gs_compress_unit(s->comp, st, GS_PRIMARY_COMP, src,
			       n * PAGE_SIZE, (n - 1) * PAGE_SIZE);
	gs_stat_inc(&s->stats, GS_STAT_COMPRESSIONS);
	if (!len) {
		atomic_long_inc(&s->stats.units_refused);
		return -E2BIG;
	}
	ret = gs_unit_make(s, st, GS_PRIMARY_COMP, len, pages, held, gfp, up);
	if (!ret)
		atomic_long_inc(&s->stats.units_stored);
	return ret;
}

/* Pool bytes of a chain of @len: its full pages, and its tail's class. */
static bool gs_unit_chain_smaller(struct gs_store *s, unsigned int len,
				  unsigned int than)
{
	unsigned int full = (len - 1) / PAGE_SIZE, old = (than - 1) / PAGE_SIZE;

	if (full != old)
		return full < old;
	return zs_lookup_class_index(s->pool, len - full * PAGE_SIZE) <
	       zs_lookup_class_index(s->pool, than - old * PAGE_SIZE);
}

int gs_unit_repack(struct gs_store *s, struct gs_stream *st,
		   const struct gs_unit *u, u16 live, unsigned int prio,
		   gfp_t gfp, struct gs_unit **up)
{
	unsigned int k, j, n = 0, len;
	int ret;

	ret = gs_unit_unpack_cached(s, st, u);
	if (ret)
		return ret;
	/* Its live pages only, gathered in place (each moves down). */
	for (k = 0; k < u->pages; k++) {
		if (!(live & BIT(k)))
			continue;
		j = gs_unit_index(u, k);
		if (j != n)
			memcpy(st->ubuf + n * PAGE_SIZE,
			       st->ubuf + j * PAGE_SIZE, PAGE_SIZE);
		n++;
	}
	if (live != u->held)
		st->ubuf_seq = 0;
	len = gs_compress_unit(s->comp, st, prio, st->ubuf, n * PAGE_SIZE,
			       (n - 1) * PAGE_SIZE);
	if (!len || !gs_unit_chain_smaller(s, len, u->len))
		return -E2BIG;
	return gs_unit_make(s, st, prio, len, u->pages, live, gfp, up);
}

int gs_unit_unpack(struct gs_store *s, struct gs_stream *st,
		   const struct gs_unit *u, void *dst)
{
	unsigned int i;

	/* The chain, gathered where the compressor made it. */
	for (i = 0; i < gs_unit_nobj(u); i++)
		gs_unit_obj_copy(s, u, i, st->zbuf + i * PAGE_SIZE);
	return gs_decompress_len(s->comp, st, u->prio, st->zbuf, u->len, dst,
				 gs_unit_held(u) * PAGE_SIZE);
}

int gs_unit_unpack_cached(struct gs_store *s, struct gs_stream *st,
			  const struct gs_unit *u)
{
	int ret;

	if (st->ubuf_seq == u->seq) {
		atomic_long_inc(&s->stats.unit_part_cached);
		return 0;
	}
	ret = gs_unit_unpack(s, st, u, st->ubuf);
	st->ubuf_seq = ret ? 0 : u->seq;
	return ret;
}
