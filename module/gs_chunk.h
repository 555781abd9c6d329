/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ghostswap chunk files: a regular file whose blocks the filesystem maps
 * once, as swapon maps a swap file, so that pages go to its block device
 * as bios without passing through the filesystem again.
 */
#ifndef _GS_CHUNK_H
#define _GS_CHUNK_H

#include <linux/fs.h>
#include <linux/types.h>

struct gs_backing;
struct gs_extent_map;

/*
 * Can @file be mapped: 0, -EOPNOTSUPP (its filesystem has no
 * swap_activate or no block device) or -EBUSY (a swap file already).
 */
int gs_chunk_mappable(struct file *file);

/*
 * Map up to @nr_pages pages of @file (allocated: no holes) and mark it
 * a swap file (S_SWAPFILE), after which the filesystem refuses to write,
 * truncate, move or reflink its blocks. Fewer pages (nr_pages of the
 * result) where blocks smaller than a page leave some pages of the file
 * not whole on the device, as swapon does. Takes a reference on @file.
 * Returns an ERR_PTR: -EOPNOTSUPP (no swap_activate, no block device, or
 * a filesystem that swaps through its own I/O), -EBUSY (already a swap
 * file), -EINVAL (holes, encrypted, no whole page), or what the
 * filesystem returns.
 */
struct gs_extent_map *gs_chunk_map(struct file *file, u64 nr_pages);

/* Undo gs_chunk_map(): the file is the filesystem's again. */
void gs_chunk_unmap(struct gs_extent_map *map);

/*
 * The regular file at @path as a backing store: allocated in full
 * (holes become unwritten extents), mapped once with gs_chunk_map(), and
 * written and read with bios straight to its filesystem's block device.
 * Returns an ERR_PTR: -ENOTBLK (not a regular file either), -EINVAL
 * (smaller than a page, or blocks larger than a page), -EBUSY (a swap
 * file already), -EOPNOTSUPP (the filesystem cannot map it), or what
 * opening or allocating it said (-ENOSPC, -EROFS, ...).
 */
struct gs_backing *gs_chunk_backing_open(const char *path);

#endif /* _GS_CHUNK_H */
