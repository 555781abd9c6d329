// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswap backing I/O: pages to and from a block device as bios,
 * through a map of extents (backing slots to sectors; gs_extent.h).
 *
 * A block device of its own is one extent: slot N at sector N * 8. A
 * file its filesystem mapped once (gs_chunk.c) is the extents the
 * filesystem gave, and a run of slots that crosses from one to the next
 * goes as one bio per extent, chained to the first, whose end ends the
 * run. Every bio comes from the store's own reserve (bk->bio_set): the
 * pages written may be what reclaim waits for.
 */
#define pr_fmt(fmt) "ghostswap: " fmt

#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/err.h>
#include <linux/file.h>
#include <linux/overflow.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/wait_bit.h>

#include "gs_backing.h"
#include "gs_compat.h"
#include "gs_extent.h"

struct gs_extent_map *gs_extent_map_alloc(unsigned int nr)
{
	struct gs_extent_map *map;

	map = kzalloc(struct_size(map, ext, nr), GFP_KERNEL);
	if (map)
		map->nr_extents = nr;
	return map;
}

size_t gs_extent_map_bytes(const struct gs_extent_map *map)
{
	return struct_size(map, ext, map->nr_extents);
}

sector_t gs_extent_sector(const struct gs_extent_map *map, u64 page,
			  u64 *run)
{
	unsigned int lo = 0, hi = map->nr_extents;

	/* The extent that holds @page: the last one starting at or before. */
	while (hi - lo > 1) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (map->ext[mid].first <= page)
			lo = mid;
		else
			hi = mid;
	}
	page -= map->ext[lo].first;
	*run = min(map->ext[lo].nr - page,
		   map->nr_pages - map->ext[lo].first - page);
	return map->ext[lo].sector + (page << (PAGE_SHIFT - SECTOR_SHIFT));
}

/*
 * The map that holds slot @slot of @ex and, in *@page, the slot's page
 * in it; NULL if there is none, or the page is past its end (a bug of
 * the caller: only slots handed out are read or written). Under
 * rcu_read_lock(), where maps are removed (ex->dynamic).
 */
static struct gs_extent_map *gs_extents_find(struct gs_extents *ex,
					     u64 slot, u64 *page)
{
	struct gs_extent_map *map;

	map = xa_load(&ex->maps, slot >> ex->shift);
	*page = slot & (BIT_ULL(ex->shift) - 1);
	if (WARN_ON_ONCE(!map || *page >= map->nr_pages))
		return NULL;
	return map;
}

/* The last I/O that counted itself in @map is done: wake its remover. */
static void gs_extent_map_put(struct gs_extent_map *map)
{
	if (map && atomic_dec_and_test(&map->inflight))
		wake_up_var(&map->inflight);
}

struct gs_extent_map *gs_extents_remove(struct gs_extents *ex,
					unsigned long i)
{
	struct gs_extent_map *map = xa_erase(&ex->maps, i);

	/* Every lookup that found it has counted itself in by now. */
	synchronize_rcu();
	wait_var_event(&map->inflight, !atomic_read(&map->inflight));
	return map;
}

void gs_extents_unmap_all(struct gs_extents *ex)
{
	struct gs_extent_map *map, *gone = NULL;
	unsigned long i;

	/* All out of sight first, so that one grace period does for all. */
	xa_for_each(&ex->maps, i, map) {
		xa_erase(&ex->maps, i);
		map->next = gone;
		gone = map;
	}
	xa_destroy(&ex->maps);
	synchronize_rcu();
	while (gone) {
		map = gone;
		gone = map->next;
		wait_var_event(&map->inflight, !atomic_read(&map->inflight));
		map->unmap(map);
	}
}

/*
 * A bio of ours (the bio set's front pad): on a store whose maps come
 * and go, the maps its I/O counted itself in, let go at its end.
 */
struct gs_extent_bio {
	struct gs_extent_map *maps[GS_EXTENT_IO_MAPS];
	struct bio bio;
};

#define GS_EXTENT_BIO_PAD	offsetof(struct gs_extent_bio, bio)

static void gs_extent_end_io(struct bio *bio)
{
	struct gs_extent_bio *eb = container_of(bio, struct gs_extent_bio,
						bio);
	struct gs_extent_map *maps[GS_EXTENT_IO_MAPS];
	struct gs_bk_io *io = bio->bi_private;
	unsigned int i;

	memcpy(maps, eb->maps, sizeof(maps));
	io->err = blk_status_to_errno(bio->bi_status);
	bio_put(bio);
	for (i = 0; i < GS_EXTENT_IO_MAPS; i++)
		gs_extent_map_put(maps[i]);
	if (io->end)
		io->end(io);
	else
		complete(&io->done);
}

static struct page *gs_extent_page(void *const *bufs,
				   struct page *const *pages, unsigned int i)
{
	if (pages)
		return pages[i];
	WARN_ON_ONCE(offset_in_page(bufs[i]));
	return virt_to_page(bufs[i]);
}

/*
 * The maps of slots @slot..@slot + @nr - 1 (at most GS_EXTENT_IO_MAPS,
 * consecutive) in @maps, the first one's index in *@first; where maps
 * come and go, each counted in (in flight) under RCU, so that it stays
 * until the I/O ends. 0, or -EIO if a slot has no map.
 */
static int gs_extent_maps_get(struct gs_extents *ex, u64 slot,
			      unsigned int nr, struct gs_extent_map **maps,
			      unsigned long *first)
{
	struct gs_extent_map *map;
	unsigned int i, k = 0, n;
	int ret = 0;
	u64 page;

	*first = slot >> ex->shift;
	rcu_read_lock();
	for (i = 0; i < nr; i += n) {
		map = gs_extents_find(ex, slot + i, &page);
		if (!map || WARN_ON_ONCE(k == GS_EXTENT_IO_MAPS)) {
			ret = -EIO;
			break;
		}
		if (ex->dynamic)
			atomic_inc(&map->inflight);
		maps[k++] = map;
		n = min_t(u64, map->nr_pages - page, nr - i);
	}
	rcu_read_unlock();
	if (ret && ex->dynamic)
		while (k)
			gs_extent_map_put(maps[--k]);
	return ret;
}

/*
 * Pages @bufs (or @pages) to or from backing slots @slot..: one bio per
 * extent the run crosses (one, nearly always), each chained to the
 * first, whose end ends @io. With @nowait (a submit path: a bio it
 * submits is only sent once it returns, so nothing here may wait for
 * one, not even for a bio of the reserve) every bio is allocated before
 * any is sent, and -EAGAIN returned if one cannot be at once; else they
 * are sent as they are made.
 *
 * Writes are swap I/O, as the swap core's own writes to a swap file are
 * (REQ_SWAP): the block layer's write throttling gives them a class of
 * their own at the queue's full depth, not the filesystem's background
 * writeback's, and the cgroup I/O controllers send them on at once, even
 * over a limit, charging them afterwards.
 */
static int gs_extent_io(struct gs_backing *bk, blk_opf_t opf, u64 slot,
			void *const *bufs, struct page *const *pages,
			unsigned int nr, struct gs_bk_io *io, bool nowait)
{
	gfp_t gfp = nowait ? GFP_NOWAIT | __GFP_NOWARN : GFP_NOIO;
	struct gs_extent_map *maps[GS_EXTENT_IO_MAPS] = { NULL };
	struct bio *parent = NULL, *bio, *held = NULL;
	struct gs_extents *ex = bk->priv;
	struct gs_extent_bio *eb;
	struct gs_extent_map *map;
	bool short_of_bios = false;
	unsigned long first;
	unsigned int i, k, n;
	sector_t sector;
	u64 page, run;
	int ret;

	if (WARN_ON_ONCE(!nr || nr > BIO_MAX_VECS))
		return -EINVAL;
	if (op_is_write(opf))
		opf |= REQ_SWAP;
	ret = gs_extent_maps_get(ex, slot, nr, maps, &first);
	if (ret)
		return ret;
	for (i = 0; i < nr; i += n) {
		map = maps[((slot + i) >> ex->shift) - first];
		page = (slot + i) & (BIT_ULL(ex->shift) - 1);
		sector = gs_extent_sector(map, page, &run);
		n = min_t(u64, run, nr - i);
		bio = bio_alloc_bioset(map->bdev, n, opf, gfp, &bk->bio_set);
		if (!bio && (nowait || !parent))
			goto undo;	/* nothing was sent */
		/*
		 * Cannot happen: an allocation that may wait is served from
		 * the bio set's reserve. Bios were sent, chained to @parent:
		 * it ends, with an error, once they have.
		 */
		if (WARN_ON_ONCE(!bio)) {
			short_of_bios = true;
			break;
		}
		bio->bi_iter.bi_sector = sector;
		for (k = 0; k < n; k++)
			__bio_add_page(bio, gs_extent_page(bufs, pages, i + k),
				       PAGE_SIZE, 0);
		if (!parent) {
			parent = bio;
			continue;
		}
		bio_chain(bio, parent);
		if (nowait) {
			bio->bi_next = held;
			held = bio;
		} else {
			submit_bio(bio);
		}
	}
	while (held) {
		bio = held;
		held = bio->bi_next;
		bio->bi_next = NULL;
		submit_bio(bio);
	}
	eb = container_of(parent, struct gs_extent_bio, bio);
	if (ex->dynamic)
		memcpy(eb->maps, maps, sizeof(maps));
	else
		memset(eb->maps, 0, sizeof(eb->maps));
	parent->bi_private = io;
	parent->bi_end_io = gs_extent_end_io;
	if (short_of_bios) {
		parent->bi_status = BLK_STS_RESOURCE;
		bio_endio(parent);
	} else {
		submit_bio(parent);
	}
	return 0;

undo:
	while (held) {
		bio = held;
		held = bio->bi_next;
		bio_put(bio);
	}
	if (parent)
		bio_put(parent);
	if (ex->dynamic)
		for (k = 0; k < GS_EXTENT_IO_MAPS; k++)
			gs_extent_map_put(maps[k]);
	return -EAGAIN;
}

static int gs_extent_io_wait(struct gs_backing *bk, blk_opf_t opf, u64 slot,
			     void *const *bufs, unsigned int nr)
{
	struct gs_bk_io io = { .end = NULL };
	int ret;

	init_completion(&io.done);
	ret = gs_extent_io(bk, opf, slot, bufs, NULL, nr, &io, false);
	if (ret)
		return ret;
	wait_for_completion_io(&io.done);
	return io.err;
}

static int gs_extent_write(struct gs_backing *bk, u64 slot, void *const *bufs,
			   unsigned int nr)
{
	return gs_extent_io_wait(bk, REQ_OP_WRITE, slot, bufs, nr);
}

static void gs_extent_write_start(struct gs_backing *bk, u64 slot,
				  void *const *bufs, unsigned int nr,
				  struct gs_bk_io *io)
{
	int ret;

	/*
	 * A bio may end inside submit_bio() (a device that fails it at
	 * once): its error is in io->err then, not to be overwritten.
	 */
	ret = gs_extent_io(bk, REQ_OP_WRITE, slot, bufs, NULL, nr, io, false);
	if (ret) {
		io->err = ret;
		complete(&io->done);
	}
}

static int gs_extent_read(struct gs_backing *bk, u64 slot, void *buf)
{
	return gs_extent_io_wait(bk, REQ_OP_READ, slot, &buf, 1);
}

static int gs_extent_read_start(struct gs_backing *bk, u64 slot,
				struct page *page, struct gs_bk_io *io)
{
	return gs_extent_io(bk, REQ_OP_READ, slot, NULL, &page, 1, io, true);
}

static int gs_extent_submit(struct gs_backing *bk, bool write, u64 slot,
			    struct page *const *pages, unsigned int nr,
			    struct gs_bk_io *io)
{
	return gs_extent_io(bk, write ? REQ_OP_WRITE : REQ_OP_READ, slot,
			    NULL, pages, nr, io, true);
}

/* Discards the blocks under the slots (for a file, as swap does). */
static int gs_extent_discard(struct gs_backing *bk, u64 slot, u64 nr)
{
	struct gs_extents *ex = bk->priv;
	struct gs_extent_map *map;
	sector_t sector;
	u64 page, run;
	int ret;

	while (nr) {
		map = gs_extents_find(ex, slot, &page);
		if (!map)
			return -EINVAL;
		sector = gs_extent_sector(map, page, &run);
		run = min(run, nr);
		ret = blkdev_issue_discard(map->bdev, sector,
					   run << (PAGE_SHIFT - SECTOR_SHIFT),
					   GFP_NOIO);
		if (ret)
			return ret;
		slot += run;
		nr -= run;
	}
	return 0;
}

static bool gs_extent_can_discard(struct gs_backing *bk)
{
	struct gs_extents *ex = bk->priv;

	return bdev_max_discard_sectors(ex->bdev);
}

static void gs_extent_release(struct gs_backing *bk)
{
	struct gs_extents *ex = bk->priv;

	bioset_exit(&bk->bio_set);
	ex->release(ex);
}

static void gs_extent_short_of_slots(struct gs_backing *bk)
{
	struct gs_extents *ex = bk->priv;

	if (ex->short_of_slots)
		ex->short_of_slots(ex);
}

static void gs_extent_stop(struct gs_backing *bk)
{
	struct gs_extents *ex = bk->priv;

	if (ex->stop)
		ex->stop(ex);
}

static const struct gs_backing_ops gs_extent_ops = {
	.write = gs_extent_write,
	.write_start = gs_extent_write_start,
	.read = gs_extent_read,
	.read_start = gs_extent_read_start,
	.submit = gs_extent_submit,
	.discard = gs_extent_discard,
	.can_discard = gs_extent_can_discard,
	.short_of_slots = gs_extent_short_of_slots,
	.stop = gs_extent_stop,
	.release = gs_extent_release,
};

struct gs_backing *gs_extents_backing(struct gs_extents *ex, u64 nr_slots)
{
	struct gs_extent_map *map;
	struct gs_backing *bk;
	unsigned long i;
	size_t bytes = 0;
	int ret;

	ret = -EINVAL;
	if (bdev_logical_block_size(ex->bdev) > PAGE_SIZE)
		goto out_release;
	bk = gs_backing_create(&gs_extent_ops, ex, nr_slots);
	if (IS_ERR(bk)) {
		ret = PTR_ERR(bk);
		goto out_release;
	}
	ret = bioset_init(&bk->bio_set, 4, GS_EXTENT_BIO_PAD, BIOSET_NEED_BVECS);
	if (ret) {
		kfree(bk);
		goto out_release;
	}
	xa_for_each(&ex->maps, i, map)
		bytes += gs_extent_map_bytes(map);
	bk->map_bytes = sizeof(*ex) + bytes;
	return bk;

out_release:
	ex->release(ex);
	return ERR_PTR(ret);
}

static void gs_extents_one_release(struct gs_extents *ex)
{
	gs_extents_unmap_all(ex);
	kfree(ex);
}

struct gs_backing *gs_extent_backing(struct gs_extent_map *map)
{
	struct gs_extents *ex;
	int ret;

	ex = kzalloc_obj(*ex);
	if (!ex) {
		map->unmap(map);
		return ERR_PTR(-ENOMEM);
	}
	ex->shift = 63;		/* every slot in map 0 */
	ex->bdev = map->bdev;
	ex->release = gs_extents_one_release;
	xa_init(&ex->maps);
	ret = xa_err(xa_store(&ex->maps, 0, map, GFP_KERNEL));
	if (ret) {
		kfree(ex);
		map->unmap(map);
		return ERR_PTR(ret);
	}
	return gs_extents_backing(ex, map->nr_pages);
}

/* ------------------------------------------ a block device of its own */

static void gs_bdev_unmap(struct gs_extent_map *map)
{
	bdev_fput(map->owner);
	kfree(map);
}

struct gs_backing *gs_backing_from_file(struct file *file)
{
	struct block_device *bdev = file_bdev(file);
	struct gs_extent_map *map;
	u64 nr;

	nr = bdev_nr_bytes(bdev) >> PAGE_SHIFT;
	map = nr ? gs_extent_map_alloc(1) : NULL;
	if (!map) {
		bdev_fput(file);
		return ERR_PTR(nr ? -ENOMEM : -EINVAL);
	}
	map->bdev = bdev;
	map->nr_pages = nr;
	map->ext[0].nr = nr;
	map->unmap = gs_bdev_unmap;
	map->owner = file;
	return gs_extent_backing(map);
}

struct gs_backing *gs_backing_open(const char *path, void *holder)
{
	struct gs_backing *bk;
	struct file *file;
	char *name;

	name = kstrdup(path, GFP_KERNEL);
	if (!name)
		return ERR_PTR(-ENOMEM);
	file = bdev_file_open_by_path(path, BLK_OPEN_READ | BLK_OPEN_WRITE |
				      BLK_OPEN_EXCL, holder, NULL);
	bk = IS_ERR(file) ? ERR_CAST(file) : gs_backing_from_file(file);
	if (IS_ERR(bk)) {
		kfree(name);
		return bk;
	}
	bk->path = name;
	pr_info("backing device %s, %llu pages\n", path, bk->nr_slots);
	return bk;
}
