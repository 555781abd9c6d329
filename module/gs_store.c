// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswap store: creating, destroying, writing and reading a store, the
 * calls that go through both of its tiers.
 *
 * A page is kept in the table and the pool (gs_core.c) if it can be. When
 * the pool has no room for it (full, or over its limit) or the direct
 * policy sends it past the pool, the writeback tier (gs_wb_*.c)
 * writes cold pages back to make room, and if that did not help, writes
 * this page to the backing device itself. A read is served from the table
 * and the pool, unless the entry is WRITTEN_BACK: then the writeback tier
 * reads it from the backing device.
 *
 * The calls go one way: this file calls both tiers, the writeback tier
 * calls the core, and the core calls neither.
 */
#include <linux/compiler.h>
#include <linux/err.h>
#include <linux/highmem.h>
#include "gs_backing.h"
#include "gs_comp.h"
#include "gs_core.h"
#include "gs_recomp.h"
#include "gs_store.h"
#include "gs_writeback.h"

struct gs_store *gs_store_create(const char *alg, u64 nr_slots)
{
	struct gs_store *s = gs_core_create(alg, nr_slots);

	if (!IS_ERR(s)) {
		gs_wb_init(s);
		gs_recomp_init(s);
	}
	return s;
}

void gs_store_destroy(struct gs_store *s)
{
	/*
	 * Stop what runs on its own (the shrinker, the background writeback,
	 * unit splits; waits for them), then free every slot: all clusters there are,
	 * wherever they are. The backing store goes whatever it still holds
	 * (it would only hold something if I/O ran concurrently, which the
	 * caller excludes): nothing of it is ever left behind.
	 */
	gs_recomp_stop(s);
	gs_wb_stop(s);
	gs_unit_split_stop(s);
	gs_core_free_all(s);
	gs_wb_detach(s);
	gs_wb_destroy(s);
	gs_core_destroy(s);
}

int gs_store_set_size(struct gs_store *s, u64 nr_slots)
{
	/* The backing store's reverse map holds ghost slots up to its max. */
	if (s->bk && nr_slots > GS_BK_MAX_OWNER + 1)
		return -EFBIG;
	return gs_core_set_size(s, nr_slots);
}

/* The background recompression stops while an algorithm changes. */
int gs_store_set_algorithm(struct gs_store *s, const char *alg)
{
	int ret;

	gs_recomp_stop(s);
	ret = gs_core_set_algorithm(s, alg);
	gs_recomp_start(s);
	return ret;
}

int gs_store_set_unit(struct gs_store *s, unsigned int pages)
{
	int ret;

	gs_recomp_stop(s);
	ret = gs_core_set_unit(s, pages);
	gs_recomp_start(s);
	return ret;
}

unsigned int gs_store_unit(struct gs_store *s)
{
	return s->comp->unit_bytes / PAGE_SIZE;
}

int gs_store_set_comp(struct gs_store *s, unsigned int prio,
		      struct gs_comp_params *p)
{
	int ret;

	gs_recomp_stop(s);
	ret = gs_core_set_comp(s, prio, p);
	gs_recomp_start(s);
	return ret;
}

/*
 * @src packed with policy @direct and installed in @slot: 0,
 * GS_WRITE_DIRECT (nothing changed), or an errno (nothing changed).
 */
static int gs_store_pack(struct gs_store *s, u64 slot, const void *src,
			 gfp_t gfp, enum gs_direct direct)
{
	int ret;

	ret = gs_page_store(s, slot, src, gfp, direct);
	if (ret == GS_PACK_DIRECT)
		return GS_WRITE_DIRECT;
	if (ret == GS_PACK_NEAR_LIMIT) {
		/* Stored: the pool's writeback starts in the background. */
		gs_wb_kick(s);
		return 0;
	}
	return ret;
}

int gs_store_write_nowait(struct gs_store *s, u64 slot, const void *src,
			  gfp_t gfp)
{
	enum gs_direct direct;

	if (slot >= s->nr_slots)
		return -EINVAL;
	/*
	 * Slot 0 is swap's header (mkswap writes it, swapon reads it): one
	 * page for as long as the device is swap. Not sent past the pool
	 * where every page is, so that it holds no backing slot (nor a chunk
	 * of a backing directory) of its own.
	 */
	direct = READ_ONCE(s->wb.direct);
	if (!slot && direct == GS_DIRECT_ALL)
		direct = GS_DIRECT_POOL;
	return gs_store_pack(s, slot, src, gfp, direct);
}

/*
 * A page for the backing device, stored there as it is. If it finds no
 * room there (the device full, a backing directory's next chunk not
 * added yet, the budget spent, no memory for the reverse map), it goes
 * into the pool as it is, if the pool has room: swap sees no error, and
 * a later writeback moves it. Else the backing device's errno.
 */
static int gs_store_write_past(struct gs_store *s, u64 slot, const void *src,
			       gfp_t gfp)
{
	int ret = gs_wb_write_page(s, slot, src, gfp);

	if ((ret != -ENOSPC && ret != -ENOMEM) || !s->bk)
		return ret;
	return gs_store_pack(s, slot, src, gfp, GS_DIRECT_POOL) ? ret : 0;
}

int gs_store_write(struct gs_store *s, u64 slot, const void *src, gfp_t gfp)
{
	unsigned long limit = READ_ONCE(s->limit_pages);
	int ret;

	/*
	 * Near or over the pool limit: write back cold pages down to the
	 * background watermark first, so that this page is compressed
	 * once. What still does not fit the pool goes to the backing
	 * device as it is.
	 */
	if (s->bk && gs_pool_near_limit(gs_store_pool_pages(s), limit))
		gs_wb_reclaim(s, limit - limit / 16);
	ret = gs_store_write_nowait(s, slot, src, gfp);
	if (ret != -EAGAIN && ret != GS_WRITE_DIRECT)
		return ret;
	return gs_store_write_past(s, slot, src, gfp);
}

int gs_store_write_direct(struct gs_store *s, u64 slot, const void *src,
			  gfp_t gfp)
{
	if (slot >= s->nr_slots)
		return -EINVAL;
	return gs_store_write_past(s, slot, src, gfp);
}

int gs_store_write_start(struct gs_store *s, u64 slot,
			 struct page *const *pages, unsigned int nr,
			 gs_io_end_t end, void *arg)
{
	if (!nr || slot >= s->nr_slots || nr > s->nr_slots - slot)
		return -EAGAIN;
	return gs_wb_write_start(s, slot, pages, nr, end, arg);
}

int gs_store_read_run_start(struct gs_store *s, u64 slot,
			    struct page *const *pages, unsigned int nr,
			    gs_io_end_t end, void *arg)
{
	if (!s->bk || nr < 2 || slot >= s->nr_slots ||
	    nr > s->nr_slots - slot)
		return -EAGAIN;
	return gs_wb_read_run_start(s, slot, pages, nr, end, arg);
}

int gs_store_read_unit(struct gs_store *s, u64 first, void *dst,
		       unsigned int pages)
{
	int ret = gs_store_read_unit_nowait(s, first, dst, pages);

	if (ret != -EAGAIN)
		return ret;
	ret = gs_wb_read_unit_whole(s, first, dst, pages);
	/* Changed meanwhile: page by page. */
	return ret == -EAGAIN || ret == -ESTALE ? -ENOENT : ret;
}

/* gs_store_read_nowait() is the core's (gs_core.c): it reads the table. */
int gs_store_read(struct gs_store *s, u64 slot, void *dst)
{
	int ret;

	for (;;) {
		/* -EAGAIN: the entry is WRITTEN_BACK, nothing was read. */
		ret = gs_store_read_nowait(s, slot, dst);
		if (ret != -EAGAIN)
			return ret;
		ret = gs_wb_read(s, slot, dst);
		/* Else it changed, or another reader had it: look again. */
		if (ret != -EAGAIN)
			return ret;
	}
}

int gs_store_read_start(struct gs_store *s, u64 slot, struct page *page,
			gs_io_end_t end, void *arg)
{
	void *dst;
	int ret;

	for (;;) {
		dst = kmap_local_page(page);
		ret = gs_store_read_nowait(s, slot, dst);
		kunmap_local(dst);
		if (ret != -EAGAIN)
			return ret;
		ret = gs_wb_read_start(s, slot, page, end, arg);
		/* Else it is no longer on the backing device: look again. */
		if (ret != -ESTALE)
			return ret ?: GS_READ_STARTED;
	}
}
