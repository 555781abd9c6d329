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
#include <linux/slab.h>

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

void gs_backing_end_io(struct bio *bio)
{
	struct gs_bk_io *io = bio->bi_private;

	io->err = blk_status_to_errno(bio->bi_status);
	bio_put(bio);
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
 * Pages @bufs (or @pages) to or from backing slots @slot..: one bio per
 * extent the run crosses (one, nearly always), each chained to the
 * first, whose end ends @io. With @nowait (a submit path: a bio it
 * submits is only sent once it returns, so nothing here may wait for
 * one, not even for a bio of the reserve) every bio is allocated before
 * any is sent, and -EAGAIN returned if one cannot be at once; else they
 * are sent as they are made.
 */
static int gs_extent_io(struct gs_backing *bk, blk_opf_t opf, u64 slot,
			void *const *bufs, struct page *const *pages,
			unsigned int nr, struct gs_bk_io *io, bool nowait)
{
	gfp_t gfp = nowait ? GFP_NOWAIT | __GFP_NOWARN : GFP_NOIO;
	struct bio *parent = NULL, *bio, *held = NULL;
	struct gs_extent_map *map = bk->priv;
	unsigned int i, k, n;
	sector_t sector;
	u64 run;

	if (WARN_ON_ONCE(!nr || nr > BIO_MAX_VECS ||
			 slot + nr > map->nr_pages))
		return -EINVAL;
	for (i = 0; i < nr; i += n) {
		sector = gs_extent_sector(map, slot + i, &run);
		n = min_t(u64, run, nr - i);
		bio = bio_alloc_bioset(map->bdev, n, opf, gfp, &bk->bio_set);
		if (!bio)
			goto undo;
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
	parent->bi_private = io;
	parent->bi_end_io = gs_backing_end_io;
	submit_bio(parent);
	return 0;

undo:
	/* Only without waiting: nothing was sent. */
	while (held) {
		bio = held;
		held = bio->bi_next;
		bio_put(bio);
	}
	if (parent)
		bio_put(parent);
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
	struct gs_extent_map *map = bk->priv;
	sector_t sector;
	u64 run;
	int ret;

	if (slot + nr > map->nr_pages)
		return -EINVAL;
	while (nr) {
		sector = gs_extent_sector(map, slot, &run);
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
	struct gs_extent_map *map = bk->priv;

	return bdev_max_discard_sectors(map->bdev);
}

static void gs_extent_release(struct gs_backing *bk)
{
	struct gs_extent_map *map = bk->priv;

	bioset_exit(&bk->bio_set);
	map->unmap(map);
}

static const struct gs_backing_ops gs_extent_ops = {
	.write = gs_extent_write,
	.write_start = gs_extent_write_start,
	.read = gs_extent_read,
	.read_start = gs_extent_read_start,
	.submit = gs_extent_submit,
	.discard = gs_extent_discard,
	.can_discard = gs_extent_can_discard,
	.release = gs_extent_release,
};

struct gs_backing *gs_extent_backing(struct gs_extent_map *map)
{
	struct gs_backing *bk;
	int ret;

	ret = -EINVAL;
	if (bdev_logical_block_size(map->bdev) > PAGE_SIZE)
		goto out_unmap;
	bk = gs_backing_create(&gs_extent_ops, map, map->nr_pages);
	if (IS_ERR(bk)) {
		ret = PTR_ERR(bk);
		goto out_unmap;
	}
	ret = bioset_init(&bk->bio_set, 4, 0, BIOSET_NEED_BVECS);
	if (ret) {
		kfree(bk);
		goto out_unmap;
	}
	bk->map_bytes = gs_extent_map_bytes(map);
	return bk;

out_unmap:
	map->unmap(map);
	return ERR_PTR(ret);
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
