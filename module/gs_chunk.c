// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswap chunk files.
 *
 * A chunk is a regular file, allocated in full, that the filesystem maps
 * once through its own a_ops->swap_activate (ext4 and xfs through iomap,
 * btrfs its own), exactly as swapon does for a swap file: into a list of
 * extents, pages of the file to sectors of the filesystem's block
 * device. The file is then marked S_SWAPFILE, after which the filesystem
 * refuses writes, truncation, fallocate, reflink and defragmentation of
 * it, so the extents stay true and pages can go to the block device as
 * bios. Only filesystems on a block device: one that swaps through its
 * own I/O (NFS) has none and is refused before anything is asked of it.
 *
 * swap_activate fills a struct swap_info_struct; the one given here is
 * ours, never seen by the swap core: its extent tree is copied into a
 * flat array and freed, and its other fields are read for nothing but
 * the block device the filesystem chose.
 */
#define pr_fmt(fmt) "ghostswap: " fmt

#include <linux/blkdev.h>
#include <linux/file.h>
#include <linux/namei.h>
#include <linux/pagemap.h>
#include <linux/rbtree.h>
#include <linux/slab.h>
#include <linux/swap.h>

#include "gs_backing.h"
#include "gs_chunk.h"
#include "gs_compat.h"

/* Free the extents swap_activate added to @sis (add_swap_extent()'s). */
static void gs_chunk_free_tree(struct swap_info_struct *sis)
{
	struct swap_extent *se, *next;

	rbtree_postorder_for_each_entry_safe(se, next, &sis->swap_extent_root,
					     rb_node)
		kfree(se);
	sis->swap_extent_root = RB_ROOT;
}

/* The extents of @sis, in page order, as @c's. */
static struct gs_chunk *gs_chunk_from_tree(struct swap_info_struct *sis)
{
	struct gs_chunk *c;
	struct rb_node *rb;
	unsigned int n = 0;

	for (rb = rb_first(&sis->swap_extent_root); rb; rb = rb_next(rb))
		n++;
	c = kzalloc(struct_size(c, ext, n), GFP_KERNEL);
	if (!c)
		return NULL;
	c->nr_extents = n;
	n = 0;
	for (rb = rb_first(&sis->swap_extent_root); rb; rb = rb_next(rb)) {
		struct swap_extent *se = rb_entry(rb, struct swap_extent,
						  rb_node);

		c->ext[n].first = se->start_page;
		c->ext[n].nr = se->nr_pages;
		c->ext[n].sector = se->start_block << (PAGE_SHIFT - SECTOR_SHIFT);
		c->nr_pages = se->start_page + se->nr_pages;
		n++;
	}
	return c;
}

int gs_chunk_mappable(struct file *file)
{
	struct address_space *mapping = file->f_mapping;
	struct inode *inode = mapping->host;

	if (!mapping->a_ops->swap_activate || !inode->i_sb->s_bdev)
		return -EOPNOTSUPP;
	return IS_SWAPFILE(inode) ? -EBUSY : 0;
}

struct gs_chunk *gs_chunk_map(struct file *file, u64 nr_pages)
{
	struct address_space *mapping = file->f_mapping;
	struct inode *inode = mapping->host;
	struct swap_info_struct *sis;
	struct gs_chunk *c = NULL;
	sector_t span;
	int ret;

	if (!S_ISREG(inode->i_mode) || !nr_pages || nr_pages > UINT_MAX)
		return ERR_PTR(-EINVAL);
	if (gs_chunk_mappable(file) == -EOPNOTSUPP)
		return ERR_PTR(-EOPNOTSUPP);
	sis = kzalloc_obj(*sis);
	if (!sis)
		return ERR_PTR(-ENOMEM);
	sis->bdev = inode->i_sb->s_bdev;
	sis->max = nr_pages;
	sis->swap_extent_root = RB_ROOT;

	inode_lock(inode);
	ret = -EBUSY;
	if (IS_SWAPFILE(inode))
		goto unlock;
	/* As swapon: no encrypted files, no blocks larger than a page. */
	ret = -EINVAL;
	if (IS_ENCRYPTED(inode) || mapping_min_folio_order(mapping) > 0)
		goto unlock;
	ret = mapping->a_ops->swap_activate(sis, file, &span);
	if (ret < 0)
		goto unlock;
	ret = -ENOMEM;
	c = gs_chunk_from_tree(sis);
	if (!c)
		goto deactivate;
	/*
	 * With blocks smaller than a page, a page of the file whose blocks
	 * do not fill one page of the device is left out, as swapon does.
	 */
	ret = -EINVAL;
	if (!c->nr_pages || !sis->bdev)
		goto deactivate;
	c->nr_pages = min(c->nr_pages, nr_pages);
	c->bdev = sis->bdev;
	/* As swapon: marked first, then what was in flight is let go. */
	inode->i_flags |= S_SWAPFILE;
	ret = inode_drain_writes(inode);
	if (ret) {
		inode->i_flags &= ~S_SWAPFILE;
		goto deactivate;
	}
	inode_unlock(inode);
	gs_chunk_free_tree(sis);
	kfree(sis);
	c->file = get_file(file);
	return c;

deactivate:
	if (mapping->a_ops->swap_deactivate)
		mapping->a_ops->swap_deactivate(file);
unlock:
	inode_unlock(inode);
	gs_chunk_free_tree(sis);
	kfree(sis);
	kfree(c);
	return ERR_PTR(ret);
}

void gs_chunk_unmap(struct gs_chunk *c)
{
	struct address_space *mapping = c->file->f_mapping;
	struct inode *inode = mapping->host;

	if (mapping->a_ops->swap_deactivate)
		mapping->a_ops->swap_deactivate(c->file);
	inode_lock(inode);
	inode->i_flags &= ~S_SWAPFILE;
	inode_unlock(inode);
	fput(c->file);
	kfree(c);
}

sector_t gs_chunk_sector(const struct gs_chunk *c, u64 page, u64 *run)
{
	unsigned int lo = 0, hi = c->nr_extents;

	/* The extent that holds @page: the last one starting at or before. */
	while (hi - lo > 1) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (c->ext[mid].first <= page)
			lo = mid;
		else
			hi = mid;
	}
	page -= c->ext[lo].first;
	*run = min(c->ext[lo].nr - page,
		   c->nr_pages - c->ext[lo].first - page);
	return c->ext[lo].sector + (page << (PAGE_SHIFT - SECTOR_SHIFT));
}

/* ------------------------------------------- a mapped file as the backing */

static struct page *gs_chunk_page(void *const *bufs, struct page *const *pages,
				  unsigned int i)
{
	return pages ? pages[i] : virt_to_page(bufs[i]);
}

/*
 * Pages @bufs (or @pages) to or from backing slots @slot.. of a mapped
 * file: one bio per extent the run crosses (one, nearly always), each
 * chained to the first, whose end ends @io. With @nowait (a submit path)
 * every bio is allocated before any is sent, and -EAGAIN returned if
 * one cannot be at once; else they are sent as they are made.
 */
static int gs_chunk_io(struct gs_backing *bk, blk_opf_t opf, u64 slot,
		       void *const *bufs, struct page *const *pages,
		       unsigned int nr, struct gs_bk_io *io, bool nowait)
{
	gfp_t gfp = nowait ? GFP_NOWAIT | __GFP_NOWARN : GFP_NOIO;
	struct bio *parent = NULL, *bio, *held = NULL;
	struct gs_chunk *c = bk->priv;
	unsigned int i, k, n;
	sector_t sector;
	u64 run;

	if (WARN_ON_ONCE(!nr || nr > BIO_MAX_VECS || slot + nr > c->nr_pages))
		return -EINVAL;
	for (i = 0; i < nr; i += n) {
		sector = gs_chunk_sector(c, slot + i, &run);
		n = min_t(u64, run, nr - i);
		bio = bio_alloc_bioset(c->bdev, n, opf, gfp, &bk->bio_set);
		if (!bio)
			goto undo;
		bio->bi_iter.bi_sector = sector;
		for (k = 0; k < n; k++)
			__bio_add_page(bio, gs_chunk_page(bufs, pages, i + k),
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

static int gs_chunk_io_wait(struct gs_backing *bk, blk_opf_t opf, u64 slot,
			    void *const *bufs, unsigned int nr)
{
	struct gs_bk_io io = { .end = NULL };
	int ret;

	init_completion(&io.done);
	ret = gs_chunk_io(bk, opf, slot, bufs, NULL, nr, &io, false);
	if (ret)
		return ret;
	wait_for_completion_io(&io.done);
	return io.err;
}

static int gs_chunk_write(struct gs_backing *bk, u64 slot, void *const *bufs,
			  unsigned int nr)
{
	return gs_chunk_io_wait(bk, REQ_OP_WRITE, slot, bufs, nr);
}

static void gs_chunk_write_start(struct gs_backing *bk, u64 slot,
				 void *const *bufs, unsigned int nr,
				 struct gs_bk_io *io)
{
	io->err = gs_chunk_io(bk, REQ_OP_WRITE, slot, bufs, NULL, nr, io,
			      false);
	if (io->err)
		complete(&io->done);
}

static int gs_chunk_read(struct gs_backing *bk, u64 slot, void *buf)
{
	return gs_chunk_io_wait(bk, REQ_OP_READ, slot, &buf, 1);
}

static int gs_chunk_read_start(struct gs_backing *bk, u64 slot,
			       struct page *page, struct gs_bk_io *io)
{
	return gs_chunk_io(bk, REQ_OP_READ, slot, NULL, &page, 1, io, true);
}

static int gs_chunk_submit(struct gs_backing *bk, bool write, u64 slot,
			   struct page *const *pages, unsigned int nr,
			   struct gs_bk_io *io)
{
	return gs_chunk_io(bk, write ? REQ_OP_WRITE : REQ_OP_READ, slot, NULL,
			   pages, nr, io, true);
}

/* Discards the blocks under the slots, as swap does for a swap file's. */
static int gs_chunk_discard(struct gs_backing *bk, u64 slot, u64 nr)
{
	struct gs_chunk *c = bk->priv;
	sector_t sector;
	u64 run;
	int ret;

	if (slot + nr > c->nr_pages)
		return -EINVAL;
	while (nr) {
		sector = gs_chunk_sector(c, slot, &run);
		run = min(run, nr);
		ret = blkdev_issue_discard(c->bdev, sector,
					   run << (PAGE_SHIFT - SECTOR_SHIFT),
					   GFP_NOIO);
		if (ret)
			return ret;
		slot += run;
		nr -= run;
	}
	return 0;
}

static bool gs_chunk_can_discard(struct gs_backing *bk)
{
	struct gs_chunk *c = bk->priv;

	return bdev_max_discard_sectors(c->bdev);
}

static void gs_chunk_release(struct gs_backing *bk)
{
	bioset_exit(&bk->bio_set);
	gs_chunk_unmap(bk->priv);
}

static const struct gs_backing_ops gs_chunk_ops = {
	.write = gs_chunk_write,
	.write_start = gs_chunk_write_start,
	.read = gs_chunk_read,
	.read_start = gs_chunk_read_start,
	.submit = gs_chunk_submit,
	.discard = gs_chunk_discard,
	.can_discard = gs_chunk_can_discard,
	.release = gs_chunk_release,
};

struct gs_backing *gs_chunk_backing_open(const char *path)
{
	struct gs_backing *bk;
	struct inode *inode;
	struct gs_chunk *c;
	struct path p;
	struct file *file;
	u64 nr;
	int ret;

	/* Nothing but a regular file is opened (not a FIFO, not a device). */
	ret = kern_path(path, LOOKUP_FOLLOW, &p);
	if (ret)
		return ERR_PTR(ret);
	ret = d_is_reg(p.dentry) ? 0 : -ENOTBLK;
	path_put(&p);
	if (ret)
		return ERR_PTR(ret);
	file = filp_open(path, O_RDWR | O_LARGEFILE, 0);
	if (IS_ERR(file))
		return ERR_CAST(file);
	inode = file_inode(file);
	ret = -ENOENT;
	if (d_unlinked(file->f_path.dentry))
		goto out_put;
	ret = -EINVAL;
	nr = i_size_read(inode) >> PAGE_SHIFT;
	if (!S_ISREG(inode->i_mode) || !nr)
		goto out_put;
	/* Asked before anything is allocated (tmpfs would take memory). */
	ret = gs_chunk_mappable(file);
	if (ret) {
		pr_err("backing_dev: %s cannot be mapped once, as a swap file is: %s\n",
		       path, ret == -EBUSY ? "a swap file already" :
		       "its filesystem cannot map it, or has no block device");
		goto out_put;
	}
	/*
	 * Allocated in full (holes cannot be mapped): blocks already there
	 * stay as they are, holes become unwritten extents.
	 */
	ret = vfs_fallocate(file, 0, 0, nr << PAGE_SHIFT);
	if (ret && ret != -EOPNOTSUPP) {
		pr_err("backing_dev: cannot allocate %s: %d\n", path, ret);
		goto out_put;
	}
	c = gs_chunk_map(file, nr);
	if (IS_ERR(c)) {
		ret = PTR_ERR(c);
		pr_err("backing_dev: %s cannot be mapped once, as a swap file is: %d\n",
		       path, ret);
		goto out_put;
	}
	fput(file);
	ret = -EINVAL;
	if (bdev_logical_block_size(c->bdev) > PAGE_SIZE)
		goto out_unmap;
	bk = gs_backing_create(&gs_chunk_ops, c, c->nr_pages);
	if (IS_ERR(bk)) {
		ret = PTR_ERR(bk);
		goto out_unmap;
	}
	ret = bioset_init(&bk->bio_set, 4, 0, BIOSET_NEED_BVECS);
	if (ret) {
		kfree(bk);
		goto out_unmap;
	}
	bk->path = kstrdup(path, GFP_KERNEL);
	if (!bk->path) {
		gs_backing_destroy(bk);	/* unmaps @c */
		return ERR_PTR(-ENOMEM);
	}
	bk->map_bytes = struct_size(c, ext, c->nr_extents);
	pr_info("backing file %s: %llu pages (of %llu) in %u extents of %pg\n",
		path, c->nr_pages, nr, c->nr_extents, c->bdev);
	return bk;

out_unmap:
	gs_chunk_unmap(c);
	return ERR_PTR(ret);
out_put:
	fput(file);
	return ERR_PTR(ret);
}
