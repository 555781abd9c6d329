/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ghostswap chunk store: a directory as the backing store, growing and
 * shrinking by unnamed chunk files its filesystem maps once.
 */
#ifndef _GS_CHUNKS_H
#define _GS_CHUNKS_H

struct gs_backing;

/* Chunk files' sizes: chunk_mib, a power of two in this range. */
#define GS_CHUNK_MIN_MIB	4
#define GS_CHUNK_MAX_MIB	1024
#define GS_CHUNK_DEFAULT_MIB	64

/*
 * The directory at @path as a backing store of chunk files of 2^@shift
 * pages, the first one added at once. Returns an ERR_PTR: -ENOTBLK (not
 * a directory either), -EOPNOTSUPP (its filesystem is not on a block device, or
 * cannot map a file as a swap file), -EINVAL (its blocks are smaller
 * than a page, or on more than one device), -ENOSPC (no room for one
 * chunk), or what creating, allocating or mapping the chunk said.
 */
struct gs_backing *gs_chunks_open(const char *path, unsigned int shift);

#endif /* _GS_CHUNKS_H */
