/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ghostswap backing I/O: the pages of a backing store as bios to one
 * block device, through a map of extents. A block device of its own is
 * one extent; a file its filesystem mapped (gs_chunk.c) is the extents
 * the filesystem gave.
 */
#ifndef _GS_EXTENT_H
#define _GS_EXTENT_H

#include <linux/blk_types.h>
#include <linux/fs.h>
#include <linux/types.h>

struct gs_backing;

/* @nr pages of the store from page @first are at @sector of the device. */
struct gs_extent {
	u64 first;
	u64 nr;
	sector_t sector;
};

struct gs_extent_map {
	struct block_device *bdev;	/* where every extent is */
	u64 nr_pages;			/* below the last extent's end */
	/* Undoes what made the map (closes the device, unmaps the file). */
	void (*unmap)(struct gs_extent_map *map);
	void *owner;			/* @unmap's own */
	unsigned int nr_extents;
	struct gs_extent ext[] __counted_by(nr_extents);
};

/* A map of @nr extents, all zero, or NULL. */
struct gs_extent_map *gs_extent_map_alloc(unsigned int nr);
/* The map's bytes, as counted in the backing store's meta bytes. */
size_t gs_extent_map_bytes(const struct gs_extent_map *map);

/*
 * Where page @page of @map is: its sector, and in *@run how many pages
 * from it are contiguous on the device. @page must be below nr_pages.
 */
sector_t gs_extent_sector(const struct gs_extent_map *map, u64 page,
			  u64 *run);

/*
 * A backing store of @map's pages, written and read with bios from its
 * own reserve. Owns @map: on failure, and when the store is destroyed,
 * map->unmap(map) is called.
 */
struct gs_backing *gs_extent_backing(struct gs_extent_map *map);

/*
 * The block device at @path, opened exclusively for @holder, as a
 * backing store of one extent. Returns an ERR_PTR: -ENOTBLK (not a block
 * device: gs_chunk_backing_open() takes a regular file), -EBUSY (mounted
 * or held), -EINVAL (smaller than a page), or what opening it said.
 */
struct gs_backing *gs_backing_open(const char *path, void *holder);
/* The same for a block device file already opened; owns @file. */
struct gs_backing *gs_backing_from_file(struct file *file);

#endif /* _GS_EXTENT_H */
