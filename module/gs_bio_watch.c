// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswap bio watch: built only with CONFIG_DEBUG_VM (Kbuild), where
 * the submit path puts a watch in front of every read and write bio.
 *
 * The watch takes a reference on each page of the bio and puts its own
 * end_io in front of the bio's. Each part of the bio the submit path
 * starts on its own (a read from or a write to the backing device that
 * holds a remaining count of the bio) is counted until it ends. When the
 * bio ends, before its owner's end_io runs:
 *  - no counted part may still be running: the bio ended while the
 *    backing device still moved its pages;
 *  - each page must still be held by someone besides the watch: its
 *    owner did not let it go while the I/O ran;
 *  - a swap-cache folio must still be locked (a read) or under writeback
 *    (a write), as at the start: nothing ended its I/O before the bio.
 * A broken rule is reported (an error line, the page's state, a WARN once)
 * and counted; the bio then ends as it would have. The watch's memory is
 * counted too (debugfs "bio_watch"). Reached from any context the bio
 * path runs in: it allocates without waiting and takes no lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/bio.h>
#include <linux/debugfs.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include "gs_bio_watch.h"

struct gs_bio_watch {
	bio_end_io_t *end_io;	/* the bio's own, and its bi_private */
	void *private;
	atomic_t parts;		/* started on their own, not ended */
	bool write;
	sector_t sector;	/* where the bio started, for a report */
	unsigned int size;	/* its bytes */
	unsigned int nr;
	size_t bytes;		/* this watch's, as counted */
	struct page *pages[];
};

static atomic_long_t gs_bw_watched, gs_bw_unwatched, gs_bw_violations;
static atomic_long_t gs_bw_bytes;

static void gs_bio_watch_end(struct bio *bio);

static void gs_bw_report(struct gs_bio_watch *w, struct page *page,
			 const char *what)
{
	atomic_long_inc(&gs_bw_violations);
	pr_err("bio watch: %s (a %s of %u bytes at sector %llu)\n", what,
	       w->write ? "write" : "read", w->size,
	       (unsigned long long)w->sector);
	if (page)
		dump_page(page, "ghostswap bio watch");
	WARN_ONCE(1, "ghostswap: bio watch: %s\n", what);
}

/* What is wrong with @page of a bio, at its start or its end (@ending). */
static const char *gs_bw_page_wrong(struct page *page, bool write,
				    bool ending)
{
	struct folio *folio = page_folio(page);

	if (ending && folio_ref_count(folio) < 2)
		return "a page was let go by its owner while its bio ran";
	if (!folio_test_swapcache(folio))
		return NULL;
	if (!write && !folio_test_locked(folio))
		return "a swap-cache folio being read is not locked";
	if (write && !folio_test_writeback(folio))
		return "a swap-cache folio being written is not under writeback";
	return NULL;
}

void __gs_bio_watch_begin(struct bio *bio)
{
	unsigned int nr = bio_segments(bio), i = 0;
	struct gs_bio_watch *w;
	struct bvec_iter iter;
	struct bio_vec bv;
	const char *wrong;

	w = kmalloc(struct_size(w, pages, nr), GFP_NOWAIT | __GFP_NOWARN);
	if (!w) {
		atomic_long_inc(&gs_bw_unwatched);
		return;
	}
	w->end_io = bio->bi_end_io;
	w->private = bio->bi_private;
	atomic_set(&w->parts, 0);
	w->write = op_is_write(bio_op(bio));
	w->sector = bio->bi_iter.bi_sector;
	w->size = bio->bi_iter.bi_size;
	w->nr = nr;
	w->bytes = ksize(w);
	bio_for_each_segment(bv, bio, iter) {
		wrong = gs_bw_page_wrong(bv.bv_page, w->write, false);
		if (wrong)
			gs_bw_report(w, bv.bv_page, wrong);
		get_page(bv.bv_page);
		w->pages[i++] = bv.bv_page;
	}
	atomic_long_add(w->bytes, &gs_bw_bytes);
	atomic_long_inc(&gs_bw_watched);
	bio->bi_private = w;
	bio->bi_end_io = gs_bio_watch_end;
}

void __gs_bio_watch_part(struct bio *bio, int delta)
{
	struct gs_bio_watch *w = bio->bi_private;

	if (bio->bi_end_io == gs_bio_watch_end &&
	    atomic_add_return(delta, &w->parts) < 0)
		gs_bw_report(w, NULL, "a part of a bio ended twice");
}

static void gs_bio_watch_end(struct bio *bio)
{
	struct gs_bio_watch *w = bio->bi_private;
	const char *wrong;
	unsigned int i;

	if (atomic_read(&w->parts))
		gs_bw_report(w, NULL, "a bio ended with parts of it running");
	for (i = 0; i < w->nr; i++) {
		wrong = gs_bw_page_wrong(w->pages[i], w->write, true);
		if (wrong)
			gs_bw_report(w, w->pages[i], wrong);
		put_page(w->pages[i]);
	}
	bio->bi_end_io = w->end_io;
	bio->bi_private = w->private;
	atomic_long_sub(w->bytes, &gs_bw_bytes);
	kfree(w);
	if (bio->bi_end_io)
		bio->bi_end_io(bio);
}

void gs_bio_watch_read_stats(struct gs_bio_watch_stats *st)
{
	st->watched = atomic_long_read(&gs_bw_watched);
	st->unwatched = atomic_long_read(&gs_bw_unwatched);
	st->violations = atomic_long_read(&gs_bw_violations);
	st->bytes = atomic_long_read(&gs_bw_bytes);
}

static int gs_bw_show(struct seq_file *m, void *v)
{
	struct gs_bio_watch_stats st;

	gs_bio_watch_read_stats(&st);
	seq_printf(m, "%ld %ld %ld %ld\n", st.watched, st.unwatched,
		   st.violations, st.bytes);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(gs_bw);

void __gs_bio_watch_debugfs(struct dentry *dir)
{
	debugfs_create_file("bio_watch", 0400, dir, NULL, &gs_bw_fops);
}
