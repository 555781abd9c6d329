/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ghostswap backing I/O: the pages of a backing store as bios to one
 * block device, through a map of extents. A block device of its own is
 * one extent; a file its filesystem mapped (gs_chunk.c) is the extents
 * the filesystem gave.
 */
#ifndef _GS_EXTENT_H
#define _GS_EXTENT_H

#include <linux/atomic.h>
#include <linux/blk_types.h>
#include <linux/fs.h>
#include <linux/types.h>
#include <linux/xarray.h>

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
	atomic_t inflight;		/* I/O counted in (gs_extents.dynamic) */
	struct gs_extent_map *next;	/* gs_extents_unmap_all()'s list */
	unsigned int nr_extents;
	struct gs_extent ext[] __counted_by(nr_extents);
};

/*
 * The maps of a backing store: slot S is page S & (2^shift - 1) of map
 * S >> shift. A block device or a single file is one map (shift 63); a
 * directory of chunk files (gs_chunks.c) is a map per chunk, each in
 * place from before its first slot is handed out until after its last
 * one is freed.
 */
struct gs_extents {
	unsigned int shift;
	struct xarray maps;
	struct block_device *bdev;	/* the device the maps are on */
	/*
	 * Maps are removed while the store is in use: every I/O counts
	 * itself in the maps it uses (found under RCU) until its bio ends,
	 * and a map is removed with gs_extents_remove().
	 */
	bool dynamic;
	/* Stops what adds or removes maps, unmaps them all, frees @ex. */
	void (*release)(struct gs_extents *ex);
	/* Optional: the backing store's short_of_slots and stop (gs_backing.h). */
	void (*short_of_slots)(struct gs_extents *ex);
	void (*stop)(struct gs_extents *ex);
};

/* The most maps one I/O (at most BIO_MAX_VECS slots) may span. */
#define GS_EXTENT_IO_MAPS	2

/*
 * Take map @i out of @ex, once the I/O that may have found it is done;
 * returns it, for its owner to unmap. May sleep.
 */
struct gs_extent_map *gs_extents_remove(struct gs_extents *ex,
					unsigned long i);
/* Remove and unmap every map of @ex. */
void gs_extents_unmap_all(struct gs_extents *ex);

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
 * A backing store of @nr_slots slots over @ex's maps, written and read
 * with bios from its own reserve. Owns @ex: on failure, and when the
 * store is destroyed, ex->release(ex) is called.
 */
struct gs_backing *gs_extents_backing(struct gs_extents *ex, u64 nr_slots);

/* The same over one map: owns @map (map->unmap(map) at the end). */
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
