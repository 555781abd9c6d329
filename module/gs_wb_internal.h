/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ghostswap writeback tier, its inside: what the tier's files share, for
 * them only. The store calls the tier through gs_writeback.h, the rest of
 * the module through gs_store.h; nothing outside the tier includes this.
 *
 * The tier's files, one concern each; each calls only the tier's files
 * listed before it (besides the core, gs_core.h, and the backing store):
 *  gs_wb_budget.c   the writeback budget
 *  gs_wb_seal.c     sealing what goes to the device (checksum, cipher),
 *                   unsealing what comes back
 *  gs_wb_io.c       the end of backing I/O started from a submit path
 *  gs_wb_read.c     reading written-back pages (and units) back
 *  gs_wb_direct.c   direct stores: pages written to the device as they are
 *  gs_writeback.c   writeback rounds, the cold clock, idle marks
 *  gs_wb_compact.c  backing compaction
 *  gs_wb_reclaim.c  pool limit reclaim, the shrinker
 *  gs_wb_attach.c   the tier's life: attaching and detaching a backing
 *                   store, its batches and reserves, the cipher
 * The tier sits on the core and calls it (gs_core.h); the core never
 * calls it. The store (gs_store.c) calls it where a page does not fit
 * the pool or is on the backing device.
 */
#ifndef _GS_WB_INTERNAL_H
#define _GS_WB_INTERNAL_H

#include <linux/bits.h>
#include <linux/build_bug.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include "gs_backing.h"
#include "gs_store.h"

struct page;
struct shrink_control;
struct shrinker;
struct gs_unit;

/* --------------------------------------------- budget (gs_wb_budget.c) */

/*
 * Take up to @want pages of the budget; *@charged: whether they came out
 * of it, which gs_budget_give() then needs.
 */
u64 gs_budget_take(struct gs_store *s, u64 want, bool *charged);
void gs_budget_give(struct gs_store *s, u64 pages, bool charged);

/* --------------------------------------- seal, unseal (gs_wb_seal.c) */

/* The page at @src encrypted for backing slot @b; NULL if that failed. */
void *gs_wb_encrypt(struct gs_store *s, u64 b, void *src, void *dst);
/* Its checksum recorded for @b, the page at @src encrypted for it. */
void *gs_wb_seal(struct gs_store *s, u64 b, void *src, void *dst,
		 unsigned int len);
/* The checksum of what was written to backing slot @b. */
u32 gs_wb_sum_of(struct gs_store *s, u64 b);
/* A page read from backing slot @b decrypted and checked; 0 or -EIO. */
int gs_wb_unseal(struct gs_store *s, u64 slot, u64 b, void *page,
		 unsigned int len, u32 sum);

/* ----------------------------------------- submitted I/O (gs_wb_io.c) */

/*
 * A backing read or write started from a submit path. When it is done,
 * in whatever context its end runs (a hard interrupt included), @fast
 * (if any) may finish it there and then: a page fault waits for a read,
 * and a hop to a worker costs it a wake-up. What @fast cannot do (it
 * returns false) @work does on wb.end_wq, in process context.
 */
struct gs_wb_io {
	struct gs_bk_io io;
	struct work_struct work;
	struct gs_store *s;
	bool (*fast)(struct gs_wb_io *st);
};

/* Set up @st to end in @fast, where it ends, or else in @finish. */
void gs_wb_io_init(struct gs_wb_io *st, struct gs_store *s,
		   work_func_t finish, bool (*fast)(struct gs_wb_io *st));
/* Started reads and writes: one less in flight. */
void gs_wb_io_done(struct gs_store *s);

/* ---------------------------------------------- reads (gs_wb_read.c) */

/* Pages one run of reads started from a submit path takes at most. */
#define GS_WB_RR_PAGES		32

/*
 * A read of a written-back page started from the submit path
 * (gs_wb_read_start()): the entry pinned as by gs_wb_read(), the backing
 * slot read asynchronously into the caller's page (or, for compressed
 * data, into a page of its own), then checked, unpinned, decompressed
 * and handed back through @end: where the read ends if the page is
 * stored as it is and not encrypted (gs_wb_rb_fast()), else in process
 * context on wb.end_wq.
 */
struct gs_wb_rb {
	struct gs_wb_io st;
	u64 slot;
	u64 b;			/* the backing slot */
	unsigned long e;	/* the entry as it was before the pin */
	unsigned int len;	/* compressed length, 0: the page as is */
	struct page *page;	/* where the page goes */
	struct page *data;	/* what is read, if it must be decompressed */
	gs_io_end_t end;
	void *arg;
	u32 sum;		/* what was written there: gs_wb_sum_of() */
	bool orphan;		/* the entry let go of @b: ours to free */
	bool ended;		/* handed back (gs_wb_rb_fast()) */
};

/*
 * A run of written-back pages stored as they are (no compressed length),
 * on backing slots that follow each other as their ghost slots do, read
 * with one read started from the submit path (gs_wb_read_run_start()):
 * each entry pinned as by gs_wb_read_start(), the pages read straight
 * into the caller's, then checked (and decrypted) page by page, unpinned,
 * handed back through @end once: where the read ends if nothing is
 * encrypted (gs_wb_rr_fast()), else on wb.end_wq.
 */
struct gs_wb_rr {
	struct gs_wb_io st;
	u64 slot;		/* the first ghost slot */
	u64 b;			/* its backing slot; the others follow */
	unsigned int nr;
	gs_io_end_t end;
	void *arg;
	unsigned long e[GS_WB_RR_PAGES];	/* entries before the pin */
	struct page *pages[GS_WB_RR_PAGES];
	u32 sum[GS_WB_RR_PAGES];	/* what was written: gs_wb_sum_of() */
	/* Bit i: entry i let go of its backing slot, ours to free. */
	unsigned long orphans;
	bool ended;		/* handed back (gs_wb_rr_fast()) */
};

static_assert(GS_WB_RR_PAGES <= BITS_PER_LONG);

/* The bytes of the reserve that units are read back into. */
size_t gs_wb_ub_bytes(void);
/* Make that reserve, if units are on and it is not there yet. */
void gs_wb_ub_pool_make(struct gs_store *s);

/* ------------------------------------- direct stores (gs_wb_direct.c) */

/* Pages one direct write started from a submit path takes at most. */
#define GS_WB_WR_PAGES		32

/*
 * Pages stored on the backing device as they are, started from a submit
 * path (gs_wb_write_start()): a run of ghost slots on a run of backing
 * slots, one bio. The entries are installed before the write starts,
 * pinned (GS_FLAG_IO): a read of one waits for the write, and a free or
 * overwrite meanwhile leaves its backing slot to the write's end. Where
 * the write ends, a hard interrupt included, gs_wb_wr_fast() unpins them
 * with no lock and hands the write back; the worker (wb.end_wq) only
 * frees the backing slots let go of meanwhile, and, after a failed
 * write, drops the entries it installed. Nothing here waits, not for a
 * lock, memory or I/O: what cannot be had at once is -EAGAIN, and the
 * caller stores those pages with gs_wb_write_page().
 */
struct gs_wb_wr {
	struct gs_wb_io st;
	u64 slot;		/* the first ghost slot */
	u64 b;			/* its backing slot; the others follow */
	unsigned int nr;
	bool charged;		/* the budget paid for them */
	gs_io_end_t end;
	void *arg;
	/* What was written: the caller's pages, or encrypted copies. */
	struct page *pages[GS_WB_WR_PAGES];
	bool bounced;
	/* Bit i: entry i let go of its backing slot, ours to free. */
	unsigned long orphans;
	bool ended;		/* handed back (gs_wb_wr_fast()) */
};

static_assert(GS_WB_WR_PAGES <= BITS_PER_LONG);

/* ------------------------------------ writeback rounds (gs_writeback.c) */

#define GS_WB_BATCH	32	/* pages per writeback batch, at most */

struct gs_wb_candidate {
	u64 slot;		/* a unit's: its run's first slot */
	union {
		unsigned long e;	/* a page's entry as marked, GS_FLAG_WB set */
		struct gs_unit *unit;	/* a unit's (@pieces set) */
	};
	unsigned int aux;	/* compressed length, 0: the page as is */
	unsigned int run;	/* its write, in runs[] */
	u64 b;			/* backing slot, U64_MAX: none yet */
	int err;
	u8 pieces;		/* a unit's first: its chain's length; 0: a page */
};

/* One bio's worth: contiguous backing slots. */
struct gs_wb_run {
	struct gs_bk_io io;
	u64 first;
	unsigned int nr;
};

struct gs_wb_batch {
	unsigned int cap;	/* pages it can take (bufs[0..cap-1]) */
	unsigned int n;		/* candidates */
	unsigned int nr_runs;	/* writes started */
	bool charged;		/* its pages came out of the budget */
	void *bufs[GS_WB_BATCH];
	u64 owners[GS_WB_BATCH];
	struct gs_wb_candidate candidates[GS_WB_BATCH];
	struct gs_wb_run runs[GS_WB_BATCH];
};

/* Take wb.lock; with GS_WB_TRY, only if it is free. */
#define GS_WB_TRY	1

/*
 * Write back up to @max pages chosen by @mode at slots @lo..@hi - 1, a
 * round at a time; *@done gets the pages moved. @flags: GS_WB_TRY.
 */
int gs_wb_rounds(struct gs_store *s, enum gs_wb_mode mode, u64 lo, u64 hi,
		 u64 max, unsigned int flags, u64 *done);

/* ------------------------------ pool limit, shrinker (gs_wb_reclaim.c) */

/* wb.work: write back to below the pool limit. */
void gs_wb_reclaim_work(struct work_struct *work);
/* The shrinker's calls. */
unsigned long gs_shrink_count(struct shrinker *sh,
			      struct shrink_control *sc);
unsigned long gs_shrink_scan(struct shrinker *sh,
			     struct shrink_control *sc);

/* ------------------------------- backing compaction (gs_wb_compact.c) */

/* wb.compact_work: backing compaction a store that shrinks asked for. */
void gs_wb_compact_work(struct work_struct *work);
/* The backing store's ->sparse: queue that work. Any context. */
void gs_wb_sparse(struct gs_backing *bk);

#endif /* _GS_WB_INTERNAL_H */
