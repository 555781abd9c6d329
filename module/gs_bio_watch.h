/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ghostswap bio watch (gs_bio_watch.c): in kernels built with
 * CONFIG_DEBUG_VM, a check that each read and write bio of
 * /dev/ghostswap ends after every part of it that went to the backing
 * device on its own, with its pages still held by their owner, and a
 * swap-cache folio still locked (read) or under writeback (write).
 * Elsewhere every call here compiles to nothing and gs_bio_watch.c is
 * not built.
 */
#ifndef _GS_BIO_WATCH_H
#define _GS_BIO_WATCH_H

#include <linux/kconfig.h>
#include <linux/types.h>

struct bio;
struct dentry;

/* What the watch did since the module was loaded, and holds now. */
struct gs_bio_watch_stats {
	long watched;		/* bios watched */
	long unwatched;		/* not watched: no memory for the watch */
	long violations;	/* reports made */
	long bytes;		/* the watches of bios in flight */
};

void __gs_bio_watch_begin(struct bio *bio);
void __gs_bio_watch_part(struct bio *bio, int delta);
void gs_bio_watch_read_stats(struct gs_bio_watch_stats *st);
void __gs_bio_watch_debugfs(struct dentry *dir);

/* The submit path, first thing, for a read or a write. */
static inline void gs_bio_watch_begin(struct bio *bio)
{
	if (IS_ENABLED(CONFIG_DEBUG_VM))
		__gs_bio_watch_begin(bio);
}

/*
 * A part of @bio started on its own: it holds one of the bio's remaining
 * counts (bio_inc_remaining()) until it calls bio_endio().
 */
static inline void gs_bio_watch_part(struct bio *bio)
{
	if (IS_ENABLED(CONFIG_DEBUG_VM))
		__gs_bio_watch_part(bio, 1);
}

/* That part has ended (or was not started): just before its bio_endio(). */
static inline void gs_bio_watch_part_end(struct bio *bio)
{
	if (IS_ENABLED(CONFIG_DEBUG_VM))
		__gs_bio_watch_part(bio, -1);
}

/* debugfs "bio_watch" in @dir: the counters above, one line. */
static inline void gs_bio_watch_debugfs(struct dentry *dir)
{
	if (IS_ENABLED(CONFIG_DEBUG_VM))
		__gs_bio_watch_debugfs(dir);
}

#endif /* _GS_BIO_WATCH_H */
