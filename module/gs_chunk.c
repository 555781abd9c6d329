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
 * bios (gs_extent.c). Only filesystems on a block device: one that swaps
 * through its own I/O (NFS) has none and is refused before anything is
 * asked of it.
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
#include "gs_extent.h"

/* Free the extents swap_activate added to @sis (add_swap_extent()'s). */
static void gs_chunk_free_tree(struct swap_info_struct *sis)
{
	struct swap_extent *se, *next;

	rbtree_postorder_for_each_entry_safe(se, next, &sis->swap_extent_root,
					     rb_node)
		kfree(se);
	sis->swap_extent_root = RB_ROOT;
}

/* The extents of @sis, in page order, as a map. */
static struct gs_extent_map *gs_chunk_from_tree(struct swap_info_struct *sis)
{
	struct gs_extent_map *map;
	struct rb_node *rb;
	unsigned int n = 0;

	for (rb = rb_first(&sis->swap_extent_root); rb; rb = rb_next(rb))
		n++;
	map = gs_extent_map_alloc(n);
	if (!map)
		return NULL;
	n = 0;
	for (rb = rb_first(&sis->swap_extent_root); rb; rb = rb_next(rb)) {
		struct swap_extent *se = rb_entry(rb, struct swap_extent,
						  rb_node);

		map->ext[n].first = se->start_page;
		map->ext[n].nr = se->nr_pages;
		map->ext[n].sector = se->start_block <<
				     (PAGE_SHIFT - SECTOR_SHIFT);
		map->nr_pages = se->start_page + se->nr_pages;
		n++;
	}
	return map;
}

int gs_chunk_mappable(struct file *file)
{
	struct address_space *mapping = file->f_mapping;
	struct inode *inode = mapping->host;

	/*
	 * On block devices: not NFS or SMB, whose swap_activate has swap
	 * go through their own I/O. (btrfs has no s_bdev of its own: its
	 * swap_activate names the device.)
	 */
	if (!mapping->a_ops->swap_activate ||
	    !(inode->i_sb->s_type->fs_flags & FS_REQUIRES_DEV))
		return -EOPNOTSUPP;
	return IS_SWAPFILE(inode) ? -EBUSY : 0;
}

struct gs_extent_map *gs_chunk_map(struct file *file, u64 nr_pages)
{
	struct address_space *mapping = file->f_mapping;
	struct inode *inode = mapping->host;
	struct gs_extent_map *map = NULL;
	struct swap_info_struct *sis;
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
	map = gs_chunk_from_tree(sis);
	if (!map)
		goto deactivate;
	ret = -EOPNOTSUPP;
	if (!sis->bdev)		/* the filesystem did not name its device */
		goto deactivate;
	/*
	 * With blocks smaller than a page, a page of the file whose blocks
	 * do not fill one page of the device is left out, as swapon does.
	 */
	ret = -EINVAL;
	if (!map->nr_pages)
		goto deactivate;
	map->nr_pages = min(map->nr_pages, nr_pages);
	map->bdev = sis->bdev;
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
	map->owner = get_file(file);
	map->unmap = gs_chunk_unmap;
	return map;

deactivate:
	if (mapping->a_ops->swap_deactivate)
		mapping->a_ops->swap_deactivate(file);
unlock:
	inode_unlock(inode);
	gs_chunk_free_tree(sis);
	kfree(sis);
	kfree(map);
	return ERR_PTR(ret);
}

void gs_chunk_unmap(struct gs_extent_map *map)
{
	struct file *file = map->owner;
	struct address_space *mapping = file->f_mapping;
	struct inode *inode = mapping->host;

	if (mapping->a_ops->swap_deactivate)
		mapping->a_ops->swap_deactivate(file);
	inode_lock(inode);
	inode->i_flags &= ~S_SWAPFILE;
	inode_unlock(inode);
	fput(file);
	kfree(map);
}

struct gs_backing *gs_chunk_backing_open(const char *path)
{
	struct gs_extent_map *map;
	struct gs_backing *bk;
	struct inode *inode;
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
	map = gs_chunk_map(file, nr);
	fput(file);
	if (IS_ERR(map)) {
		pr_err("backing_dev: %s cannot be mapped once, as a swap file is: %ld\n",
		       path, PTR_ERR(map));
		return ERR_CAST(map);
	}
	bk = gs_extent_backing(map);	/* unmaps @map on failure */
	if (IS_ERR(bk))
		return bk;
	bk->path = kstrdup(path, GFP_KERNEL);
	if (!bk->path) {
		gs_backing_destroy(bk);	/* unmaps @map */
		return ERR_PTR(-ENOMEM);
	}
	pr_info("backing file %s: %llu pages (of %llu) in %u extents of %pg\n",
		path, map->nr_pages, nr, map->nr_extents, map->bdev);
	return bk;

out_put:
	fput(file);
	return ERR_PTR(ret);
}
