// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswap writeback tier: reading written-back pages. A WRITTEN_BACK
 * entry is pinned (GS_FLAG_IO) while its backing slot is read, waited for
 * (gs_wb_read()) or started from a submit path, a page
 * (gs_wb_read_start()) or a run of pages with one read
 * (gs_wb_read_run_start()); what is read is unsealed, and decompressed if
 * it is compressed data. A unit on the device is read back whole, its
 * chain into a reserve of pages for one chain (ub_pool), which the first
 * writeback round that may take a unit makes. It calls unsealing
 * (gs_wb_seal.c), the end of submitted I/O (gs_wb_io.c), the core
 * (gs_core.h), the backing store (gs_backing.c) and the streams
 * (gs_comp.c).
 */
#define pr_fmt(fmt) "ghostswap: " fmt

#include <linux/atomic.h>
#include <linux/gfp.h>
#include <linux/highmem.h>
#include <linux/mempool.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include "gs_backing.h"
#include "gs_comp.h"
#include "gs_core.h"
#include "gs_store.h"
#include "gs_unit.h"
#include "gs_wb_internal.h"
#include "gs_writeback.h"

/* Pages to read a unit's chain back into: a reserve of one (ub_pool). */
struct gs_wb_ub {
	void *page[GS_UNIT_MAX_PAGES];
};

static void *gs_wb_ub_alloc(gfp_t gfp, void *data)
{
	struct gs_wb_ub *ub = kzalloc(sizeof(*ub), gfp);
	unsigned int j;

	if (!ub)
		return NULL;
	for (j = 0; j < GS_UNIT_MAX_PAGES; j++) {
		ub->page[j] = (void *)__get_free_page(gfp);
		if (!ub->page[j])
			goto fail;
	}
	return ub;
fail:
	while (j--)
		free_page((unsigned long)ub->page[j]);
	kfree(ub);
	return NULL;
}

/* The reserve's bytes: its one element. */
size_t gs_wb_ub_bytes(void)
{
	return kmalloc_size_roundup(sizeof(struct gs_wb_ub)) +
	       GS_UNIT_MAX_PAGES * PAGE_SIZE;
}

static void gs_wb_ub_free(void *element, void *data)
{
	struct gs_wb_ub *ub = element;
	unsigned int j;

	for (j = 0; j < GS_UNIT_MAX_PAGES; j++)
		free_page((unsigned long)ub->page[j]);
	kfree(ub);
}

/*
 * The reserve that units on the device are read back into (ub_pool):
 * made by the first round that may take a unit (wb.lock held), so that
 * a store that never writes a unit back never pays for it; kept until
 * the backing device is detached. Without it, units are split.
 */
void gs_wb_ub_pool_make(struct gs_store *s)
{
	if (s->wb.ub_pool || !s->comp->unit_bytes)
		return;
	s->wb.ub_pool = mempool_create(1, gs_wb_ub_alloc, gs_wb_ub_free, NULL);
	if (s->wb.ub_pool)
		atomic_long_add(gs_wb_ub_bytes(), &s->stats.wb_buffer_bytes);
}

/*
 * Decompress @len bytes that are at @dst into @dst, through a stream, with
 * the algorithm of @prio.
 */
static int gs_decompress_in_place(struct gs_store *s, void *dst,
				  unsigned int len, unsigned int prio)
{
	struct gs_stream *st = gs_stream_get(s->comp);
	int ret;

	memcpy(st->buf, dst, len);
	ret = gs_decompress(s->comp, st, prio, st->buf, len, dst);
	gs_stream_put(st);
	return ret;
}

/*
 * Read the chain of unit @u (counted as read by us) back from the device
 * and decompress it: all of its pages into @dst (@k < 0), or into the
 * stream's unit buffer, from which its page @k is copied to @dst. Each
 * slot is checked (and decrypted) as any page read back. No lock and no
 * stream is held across the I/O.
 */
static int gs_wb_unit_load(struct gs_store *s, struct gs_unit *u, u64 slot,
			   void *dst, int k)
{
	struct gs_backing *bk = s->bk;
	struct gs_stream *st;
	struct gs_wb_ub *ub;
	unsigned int j, len;
	int ret = 0;

	ub = mempool_alloc(s->wb.ub_pool, GFP_NOIO);
	for (j = 0; j < gs_unit_nobj(u) && !ret; j++) {
		len = gs_unit_obj_size(u, j);
		ret = bk->ops->read(bk, u->obj[j], ub->page[j]);
		if (ret)
			pr_err_ratelimited("slot %llu: cannot read backing slot %llu: %d\n",
					   slot, (u64)u->obj[j], ret);
		else
			ret = gs_wb_unseal(s, slot, u->obj[j], ub->page[j],
					   len, gs_wb_sum_of(s, u->obj[j]));
		atomic_long_inc(ret ? &s->stats.bd_read_errors :
				&s->stats.bd_reads);
	}
	if (!ret) {
		st = gs_stream_get(s->comp);
		ret = gs_unit_unpack_pieces(s, st, u, ub->page,
					    k < 0 ? dst : NULL);
		if (!ret && k >= 0)
			copy_page(dst, st->ubuf + k * PAGE_SIZE);
		gs_stream_put(st);
		if (ret)
			pr_err_ratelimited("slot %llu: %s cannot decompress a unit of %u bytes read back: %d\n",
					   slot, gs_comp_name(s->comp, u->prio) ?: "?",
					   u->len, ret);
	}
	mempool_free(ub, s->wb.ub_pool);
	return ret ? -EIO : 0;
}

/*
 * A page of a unit on the device (gs_unit.h): the unit counted as read
 * (so its slots stay), its chain read back whole and decompressed once
 * into a stream's unit buffer, the page copied out of it. The next pages
 * of the unit read on that stream are copies, as for a unit in the pool.
 */
static int gs_wb_read_unit(struct gs_store *s, u64 slot, void *dst)
{
	struct gs_cluster *cl;
	struct gs_stream *st;
	struct gs_unit *u;
	unsigned int k;
	bool cached;
	int ret = 0;

	u = gs_unit_bk_read_begin(s, slot, &cl);
	if (IS_ERR(u)) {
		/* Its slots are being moved: wait for that. */
		schedule_timeout_uninterruptible(1);
		return -EAGAIN;
	}
	if (!u)
		return -ESTALE;
	k = gs_unit_index(u, slot & (u->pages - 1));
	atomic_long_inc(&s->stats.unit_part_reads);
	st = gs_stream_get(s->comp);
	cached = st->ubuf_seq == u->seq;
	if (cached) {
		atomic_long_inc(&s->stats.unit_part_cached);
		copy_page(dst, st->ubuf + k * PAGE_SIZE);
	}
	gs_stream_put(st);
	/* Not in this CPU's copy: read it back. */
	if (!cached)
		ret = gs_wb_unit_load(s, u, slot, dst, k);
	gs_unit_bk_read_end(s, cl, slot, u, 0);
	return ret;
}

int gs_wb_read_unit_whole(struct gs_store *s, u64 first, void *dst,
			  unsigned int pages)
{
	struct gs_cluster *cl;
	struct gs_unit *u;
	int ret;

	u = gs_unit_bk_read_begin(s, first, &cl);
	if (IS_ERR_OR_NULL(u))
		return u ? PTR_ERR(u) : -ESTALE;
	/* Every slot of the run its own, as gs_store_read_unit_nowait() saw. */
	if (u->pages != pages || u->live != GENMASK(pages - 1, 0) ||
	    u->held != u->live) {
		gs_unit_bk_read_end(s, cl, first, u, 0);
		return -ESTALE;
	}
	ret = gs_wb_unit_load(s, u, first, dst, -1);
	if (!ret)
		atomic_long_inc(&s->stats.unit_reads);
	gs_unit_bk_read_end(s, cl, first, u, 0);
	return ret;
}

/*
 * The entry is pinned (GS_FLAG_IO) for the duration of the I/O: a
 * free or overwrite meanwhile leaves the backing slot allocated, and we
 * free it when we find the entry gone, so a backing slot is never reused
 * under a read of it. No lock and no stream is held across the I/O.
 */
int gs_wb_read(struct gs_store *s, u64 slot, void *dst)
{
	unsigned int i = slot & (GS_CLUSTER_SLOTS - 1);
	struct gs_cluster *cl;
	unsigned int len;
	unsigned long e;
	int ret;
	u64 b;

	cl = gs_cluster_get(s, slot >> GS_CLUSTER_SHIFT, 0);
	if (!cl)
		return -EAGAIN;
	e = atomic_long_read(&cl->table[i]);
	if (gs_entry_kind(e) == GS_KIND_UNIT) {
		gs_cluster_unlock(cl);
		ret = gs_wb_read_unit(s, slot, dst);
		/* Else it is in the pool again, or gone: look again. */
		return ret == -ESTALE ? -EAGAIN : ret;
	}
	if (gs_entry_kind(e) != GS_KIND_WRITTEN_BACK || e & GS_FLAG_IO) {
		gs_cluster_unlock(cl);
		/* Another reader of this very slot: wait for it. */
		if (gs_entry_kind(e) == GS_KIND_WRITTEN_BACK)
			schedule_timeout_uninterruptible(1);
		return -EAGAIN;
	}
	b = gs_entry_value(e);
	len = gs_slot_aux(cl, i, e);
	atomic_long_set(&cl->table[i], e | GS_FLAG_IO);
	gs_cluster_unlock(cl);

	ret = s->bk->ops->read(s->bk, b, dst);
	if (ret)
		pr_err_ratelimited("slot %llu: cannot read backing slot %llu: %d\n",
				   slot, b, ret);
	else
		ret = gs_wb_unseal(s, slot, b, dst, len ?: PAGE_SIZE,
				   gs_wb_sum_of(s, b));
	atomic_long_inc(ret ? &s->stats.bd_read_errors : &s->stats.bd_reads);

	/* Unpin; if the entry went away meanwhile, the slot is ours to free. */
	if (!gs_slot_replace(s, slot, e | GS_FLAG_IO, e))
		gs_backing_free(s->bk, b);
	if (ret)
		return -EIO;
	if (len) {
		ret = gs_decompress_in_place(s, dst, len, gs_entry_prio(e));
		if (ret)
			pr_err_ratelimited("slot %llu: %s cannot decompress %u bytes from backing slot %llu: %d\n",
					   slot, gs_comp_name(s->comp,
							      gs_entry_prio(e)) ?: "?",
					   len, b, ret);
	}
	return ret;
}

/*
 * Check what was read (against the checksum taken with the pin), unpin
 * the entry with no lock (gs_slot_replace()), decompress; returns 0 or
 * an errno. If the entry let go of the backing slot meanwhile, the slot
 * is ours to free: rb->orphan. Any context for a page stored as it is
 * and not encrypted; else process context (a stream, the cipher).
 */
static int gs_wb_rb_done(struct gs_store *s, struct gs_wb_rb *rb)
{
	int ret = rb->st.io.err;
	struct gs_stream *st;
	void *dst;

	if (ret) {
		pr_err_ratelimited("slot %llu: cannot read backing slot %llu: %d\n",
				   rb->slot, rb->b, ret);
		ret = -EIO;
	} else if (rb->data) {
		ret = gs_wb_unseal(s, rb->slot, rb->b, page_address(rb->data),
				   rb->len, rb->sum);
	} else {
		dst = kmap_local_page(rb->page);
		ret = gs_wb_unseal(s, rb->slot, rb->b, dst, PAGE_SIZE, rb->sum);
		kunmap_local(dst);
	}
	atomic_long_inc(ret ? &s->stats.bd_read_errors : &s->stats.bd_reads);
	rb->orphan = !gs_slot_replace(s, rb->slot, rb->e | GS_FLAG_IO,
				      rb->e);
	if (!ret && rb->data) {
		dst = kmap_local_page(rb->page);
		st = gs_stream_get(s->comp);
		ret = gs_decompress(s->comp, st, gs_entry_prio(rb->e),
				    page_address(rb->data), rb->len, dst);
		gs_stream_put(st);
		kunmap_local(dst);
		if (ret)
			pr_err_ratelimited("slot %llu: %s cannot decompress %u bytes from backing slot %llu: %d\n",
					   rb->slot,
					   gs_comp_name(s->comp,
							gs_entry_prio(rb->e)) ?: "?",
					   rb->len, rb->b, ret);
	}
	if (!ret)
		flush_dcache_page(rb->page);
	return ret;
}

/* The read is handed back: free what it held. */
static void gs_wb_rb_release(struct gs_store *s, struct gs_wb_rb *rb)
{
	if (rb->orphan)
		gs_backing_free(s->bk, rb->b);
	if (rb->data)
		__free_page(rb->data);
	mempool_free(rb, s->wb.rb_pool);
	gs_wb_io_done(s);
}

static void gs_wb_rb_finish(struct work_struct *work)
{
	struct gs_wb_rb *rb = container_of(work, struct gs_wb_rb, st.work);
	struct gs_store *s = rb->st.s;

	if (!rb->ended)
		rb->end(rb->arg, gs_wb_rb_done(s, rb));
	gs_wb_rb_release(s, rb);
}

/*
 * The end of the read, in its own context: a page stored as it is and
 * not encrypted is checked, unpinned and handed back there. Only an
 * orphaned backing slot is left to the worker: freeing it takes the
 * reverse map's lock.
 */
static bool gs_wb_rb_fast(struct gs_wb_io *io)
{
	struct gs_wb_rb *rb = container_of(io, struct gs_wb_rb, st);
	struct gs_store *s = io->s;

	if (rb->data || s->wb.cipher)
		return false;
	rb->end(rb->arg, gs_wb_rb_done(s, rb));
	rb->ended = true;
	if (rb->orphan)
		return false;
	gs_wb_rb_release(s, rb);
	return true;
}

int gs_wb_read_start(struct gs_store *s, u64 slot, struct page *page,
		     gs_io_end_t end, void *arg)
{
	/* From a submit path: nothing here may wait, not even for memory. */
	const gfp_t gfp = GFP_NOWAIT | __GFP_NOWARN;
	unsigned int i = slot & (GS_CLUSTER_SLOTS - 1);
	struct gs_cluster *cl;
	struct gs_wb_rb *rb;
	unsigned long e;
	int ret;

	if (!s->bk->ops->read_start)
		return -EAGAIN;
	/* A reserve of them: one swap read's worth never waits for memory. */
	rb = mempool_alloc(s->wb.rb_pool, gfp);
	if (!rb)
		return -EAGAIN;
	memset(rb, 0, sizeof(*rb));
again:
	cl = gs_cluster_get(s, slot >> GS_CLUSTER_SHIFT, 0);
	e = cl ? atomic_long_read(&cl->table[i]) : 0;
	if (gs_entry_kind(e) != GS_KIND_WRITTEN_BACK || e & GS_FLAG_IO) {
		/* A unit on the device is read back whole, in process context. */
		ret = gs_entry_kind(e) == GS_KIND_WRITTEN_BACK ||
		      (gs_entry_kind(e) == GS_KIND_UNIT &&
		       gs_entry_unit(e)->backed) ? -EAGAIN : -ESTALE;
		goto out_unlock;
	}
	rb->len = gs_slot_aux(cl, i, e);
	/* Compressed data is read into a page of its own: get one first. */
	if (rb->len && !rb->data) {
		gs_cluster_unlock(cl);
		rb->data = alloc_page(gfp);
		if (!rb->data) {
			ret = -EAGAIN;
			goto out_free;
		}
		goto again;
	}
	atomic_long_set(&cl->table[i], e | GS_FLAG_IO);
	gs_cluster_unlock(cl);

	rb->slot = slot;
	rb->b = gs_entry_value(e);
	rb->e = e;
	rb->page = page;
	rb->end = end;
	rb->arg = arg;
	rb->sum = gs_wb_sum_of(s, rb->b);
	gs_wb_io_init(&rb->st, s, gs_wb_rb_finish, gs_wb_rb_fast);
	if (!rb->len && rb->data) {
		/* It changed into a page stored as is meanwhile. */
		__free_page(rb->data);
		rb->data = NULL;
	}
	atomic_inc(&s->wb.inflight);
	ret = gs_backing_read_start(s->bk, rb->b, rb->data ?: page, &rb->st.io);
	if (!ret)
		return 0;
	gs_wb_io_done(s);
	if (!gs_slot_replace(s, slot, e | GS_FLAG_IO, e))
		gs_backing_free(s->bk, rb->b);
	goto out_free;

out_unlock:
	if (cl)
		gs_cluster_unlock(cl);
out_free:
	if (rb->data)
		__free_page(rb->data);
	mempool_free(rb, s->wb.rb_pool);
	return ret;
}

/*
 * Unpin the run's entries with no lock (gs_slot_replace()): any context.
 * What let go of its backing slot meanwhile goes into rr->orphans.
 */
static void gs_wb_rr_unpin(struct gs_store *s, struct gs_wb_rr *rr)
{
	unsigned int i;

	for (i = 0; i < rr->nr; i++)
		if (!gs_slot_replace(s, rr->slot + i,
				     rr->e[i] | GS_FLAG_IO, rr->e[i]))
			__set_bit(i, &rr->orphans);
}

/* The run is handed back (or was never started): free what it held. */
static void gs_wb_rr_release(struct gs_store *s, struct gs_wb_rr *rr)
{
	unsigned int i;

	for_each_set_bit(i, &rr->orphans, rr->nr)
		gs_backing_free(s->bk, rr->b + i);
	mempool_free(rr, s->wb.rr_pool);
}

/*
 * Check the run's pages, unpin them; returns 0 or -EIO. Any context
 * unless encrypted.
 */
static int gs_wb_rr_done(struct gs_store *s, struct gs_wb_rr *rr)
{
	unsigned int i, ok = 0;
	int ret = 0, err;
	void *dst;

	for (i = 0; i < rr->nr; i++) {
		err = rr->st.io.err;
		if (!err) {
			dst = kmap_local_page(rr->pages[i]);
			err = gs_wb_unseal(s, rr->slot + i, rr->b + i, dst,
					   PAGE_SIZE, rr->sum[i]);
			kunmap_local(dst);
			flush_dcache_page(rr->pages[i]);
		}
		if (err)
			ret = -EIO;
		else
			ok++;
	}
	if (rr->st.io.err)
		pr_err_ratelimited("slot %llu: cannot read backing slots %llu-%llu: %d\n",
				   rr->slot, rr->b, rr->b + rr->nr - 1,
				   rr->st.io.err);
	atomic_long_add(ok, &s->stats.bd_reads);
	atomic_long_add(rr->nr - ok, &s->stats.bd_read_errors);
	gs_wb_rr_unpin(s, rr);
	return ret;
}

static void gs_wb_rr_finish(struct work_struct *work)
{
	struct gs_wb_rr *rr = container_of(work, struct gs_wb_rr, st.work);
	struct gs_store *s = rr->st.s;

	if (!rr->ended)
		rr->end(rr->arg, gs_wb_rr_done(s, rr));
	gs_wb_rr_release(s, rr);
	gs_wb_io_done(s);
}

/* The end of the run, in its own context: see gs_wb_rb_fast(). */
static bool gs_wb_rr_fast(struct gs_wb_io *io)
{
	struct gs_wb_rr *rr = container_of(io, struct gs_wb_rr, st);
	struct gs_store *s = io->s;

	if (s->wb.cipher)
		return false;
	rr->end(rr->arg, gs_wb_rr_done(s, rr));
	rr->ended = true;
	if (rr->orphans)
		return false;
	gs_wb_rr_release(s, rr);
	gs_wb_io_done(s);
	return true;
}

int gs_wb_read_run_start(struct gs_store *s, u64 slot, struct page *const *pages,
			 unsigned int nr, gs_io_end_t end, void *arg)
{
	unsigned int i = slot & (GS_CLUSTER_SLOTS - 1), k;
	struct gs_cluster *cl;
	struct gs_wb_rr *rr;
	unsigned long e;

	if (!s->bk->ops->submit)
		return -EAGAIN;
	/* Within one cluster: one lock hold pins them all. */
	nr = min3(nr, (unsigned int)GS_WB_RR_PAGES, GS_CLUSTER_SLOTS - i);
	rr = mempool_alloc(s->wb.rr_pool, GFP_NOWAIT | __GFP_NOWARN);
	if (!rr)
		return -EAGAIN;
	cl = gs_cluster_get(s, slot >> GS_CLUSTER_SHIFT, 0);
	for (k = 0; cl && k < nr; k++) {
		e = atomic_long_read(&cl->table[i + k]);
		if (gs_entry_kind(e) != GS_KIND_WRITTEN_BACK ||
		    e & GS_FLAG_IO || gs_slot_aux(cl, i + k, e) ||
		    (k && gs_entry_value(e) != rr->b + k))
			break;
		if (!k)
			rr->b = gs_entry_value(e);
		rr->e[k] = e;
		rr->pages[k] = pages[k];
		atomic_long_set(&cl->table[i + k], e | GS_FLAG_IO);
	}
	if (cl)
		gs_cluster_unlock(cl);
	rr->nr = k;
	rr->slot = slot;
	rr->end = end;
	rr->arg = arg;
	rr->orphans = 0;
	rr->ended = false;
	gs_wb_io_init(&rr->st, s, gs_wb_rr_finish, gs_wb_rr_fast);
	/* One page alone is gs_wb_read_start()'s. */
	if (k > 1) {
		for (i = 0; i < k; i++)
			rr->sum[i] = gs_wb_sum_of(s, rr->b + i);
		atomic_inc(&s->wb.inflight);
		if (!gs_backing_submit(s->bk, false, rr->b, rr->pages, k,
				       &rr->st.io))
			return k;
		gs_wb_io_done(s);
	}
	gs_wb_rr_unpin(s, rr);
	gs_wb_rr_release(s, rr);
	return -EAGAIN;
}
