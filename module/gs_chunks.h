/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ghostswap chunk store: a directory as the backing store, growing and
 * shrinking by unnamed chunk files its filesystem maps once.
 */
#ifndef _GS_CHUNKS_H
#define _GS_CHUNKS_H

#include <linux/bits.h>

struct gs_backing;

#define GS_CHUNK_SHIFT	14			/* 16384 pages: 64 MiB */
#define GS_CHUNK_PAGES	BIT_ULL(GS_CHUNK_SHIFT)

/*
 * The directory at @path as a backing store of chunk files, the first
 * one added at once. Returns an ERR_PTR: -ENOTBLK (not a directory
 * either), -EOPNOTSUPP (its filesystem is not on a block device, or
 * cannot map a file as a swap file), -EINVAL (its blocks are smaller
 * than a page, or on more than one device), -ENOSPC (no room for one
 * chunk), or what creating, allocating or mapping the chunk said.
 */
struct gs_backing *gs_chunks_open(const char *path);

#endif /* _GS_CHUNKS_H */
