/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ghostswap backing store: the space of a real block device, handed out in
 * page-sized slots, with a reverse map from each backing slot to the ghost
 * slot that owns it.
 */
#ifndef _GS_BACKING_H
#define _GS_BACKING_H

#include <linux/atomic.h>
#include <linux/bio.h>
#include <linux/bits.h>
#include <linux/completion.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#define GS_BK_CLUSTER_SHIFT	9
#define GS_BK_CLUSTER_SLOTS	BIT(GS_BK_CLUSTER_SHIFT)	/* 512 */

/* Missing clusters gs_backing_last_used() skips under one hold of the lock. */
#define GS_BK_SKIP_BATCH	64

/*
 * The reverse map stores a ghost slot plus one: 0 is a free slot, and
 * GS_BK_DISCARDING one that was freed and waits for its discard (it is
 * not handed out again before that is done).
 */
#define GS_BK_DISCARDING	U32_MAX
#define GS_BK_MAX_OWNER		((u64)U32_MAX - 2)

struct gs_backing;

/*
 * An I/O in flight: a write (gs_backing_write_start(), then
 * gs_backing_write_wait()) or a read (gs_backing_read_start(), which
 * calls @end).
 */
struct gs_bk_io {
	struct completion done;
	int err;
	/* If set: called when done (err set), in any context, not @done. */
	void (*end)(struct gs_bk_io *io);
};

/*
 * How a backing store moves pages. Buffers are page aligned, PAGE_SIZE
 * each, in the kernel's direct map. May sleep; return 0 or a negative
 * errno for the whole request. write_start is optional: it starts what
 * write does and returns at once, completing @io (err set) when done, in
 * any context; without it, writes are synchronous.
 */
struct gs_backing_ops {
	int (*write)(struct gs_backing *bk, u64 slot, void *const *bufs,
		     unsigned int nr);
	void (*write_start)(struct gs_backing *bk, u64 slot,
			    void *const *bufs, unsigned int nr,
			    struct gs_bk_io *io);
	int (*read)(struct gs_backing *bk, u64 slot, void *buf);
	/*
	 * Optional: start reading @slot into @page and return at once, or
	 * -EAGAIN if that cannot be done without waiting (for memory);
	 * io->end(io) is called when it is done, in any context. Called
	 * from a block device's submit path: it must not wait for I/O.
	 */
	int (*read_start)(struct gs_backing *bk, u64 slot, struct page *page,
			  struct gs_bk_io *io);
	/*
	 * Optional: start writing (@write) the @nr whole pages @pages to
	 * slots @slot.., or reading them from there, and return at once, or
	 * -EAGAIN if that cannot be done without waiting; io->end(io) is
	 * called when it is done, in any context. From a submit path, as
	 * read_start.
	 */
	int (*submit)(struct gs_backing *bk, bool write, u64 slot,
		      struct page *const *pages, unsigned int nr,
		      struct gs_bk_io *io);
	/*
	 * Optional: tell the device that @nr slots from @slot hold nothing
	 * (a sparse file gives the space back). May sleep.
	 */
	int (*discard)(struct gs_backing *bk, u64 slot, u64 nr);
	/* Optional: can ->discard do anything on this device? */
	bool (*can_discard)(struct gs_backing *bk);
	/*
	 * Optional: the slots below the limit run short (an allocation
	 * took some, or found none): the store may add more and raise the
	 * limit (gs_backing_set_limit()). Any context; must not wait.
	 */
	void (*short_of_slots)(struct gs_backing *bk);
	/*
	 * Optional: stop calling short_of_slots' growth and the user's
	 * sparse; waits for what is running. Before release; more than
	 * once is harmless.
	 */
	void (*stop)(struct gs_backing *bk);
	void (*release)(struct gs_backing *bk);
};

/*
 * One cluster of the reverse map; exists while one of its slots is used.
 * Beside each owner, the CRC32C of the page written to the slot: what is
 * read back must match it (gs_wb_unseal()).
 */
struct gs_bk_cluster {
	unsigned int used;
	u32 owner[GS_BK_CLUSTER_SLOTS];	/* ghost slot + 1, 0: free */
	u32 sum[GS_BK_CLUSTER_SLOTS];	/* of the page written there */
};

struct gs_backing {
	const struct gs_backing_ops *ops;
	void *priv;			/* the ops' own */
	u64 nr_slots;
	/*
	 * Index of the reverse map clusters. Its lock covers every
	 * cluster's contents and @used. Frees take it from
	 * atomic context; nothing under it sleeps.
	 */
	struct xarray clusters;
	/* Serialises allocation (and so the reuse of freed slots). */
	struct mutex alloc_lock;
	u64 cursor;			/* next-fit allocation, alloc_lock */
	/*
	 * Slots are handed out below it only: nr_slots, or what a store
	 * that grows has in place (gs_chunks.c). Written under alloc_lock.
	 */
	u64 limit;
	u64 used;			/* slots owned */
	/*
	 * Every slot in use is below it (it may be above the last one):
	 * raised by allocations, lowered by gs_backing_last_used().
	 */
	u64 top;
	atomic_long_t meta_bytes;	/* reverse map clusters */

	/*
	 * Discard of freed slots (gs_backing_set_discard()): a free marks
	 * the slot GS_BK_DISCARDING, counted in @discarding, and starts
	 * @discard_work, which discards runs of such slots and then frees
	 * them. @discarded counts slots discarded.
	 */
	bool discard;
	u64 discarding;			/* the lock of @clusters */
	atomic_long_t discarded;
	atomic_long_t discard_errors;
	struct delayed_work discard_work;

	/*
	 * A store that grows (gs_chunks.c): times it could not, and the
	 * errno of the last time (0 once it grew again).
	 */
	atomic_long_t grow_errors;
	int grow_err;
	/*
	 * Set by the store's user (gs_wb_attach.c) with @owner: a store
	 * that shrinks calls it (gs_backing_sparse()) when the slots in use
	 * are spread over more room than they need, so that backing
	 * compaction moves them down and the top can go. Any context; must
	 * not wait. Published with a release, read with an acquire.
	 */
	void (*sparse)(struct gs_backing *bk);
	void *owner;

	/* Bios to a block device (gs_extent.c). */
	char *path;			/* as written to backing_dev */
	struct bio_set bio_set;
	size_t map_bytes;		/* its extent maps (gs_extent.h) */
};

int gs_backing_init(void);
void gs_backing_exit(void);

/* Bytes one reverse map cluster costs (its slab object). */
size_t gs_bk_cluster_bytes(void);

/* A backing store of @nr_slots slots that moves pages through @ops. */
struct gs_backing *gs_backing_create(const struct gs_backing_ops *ops,
				     void *priv, u64 nr_slots);
/* Every slot must be free. Calls ops->release. */
void gs_backing_destroy(struct gs_backing *bk);

/*
 * Allocate up to @nr contiguous slots, the first for ghost slot
 * @owners[0] and so on; *@first gets the first. Slots below @below only
 * (U64_MAX: anywhere); with @low, the lowest free slot is taken, else the
 * next one after the last allocation. Returns the number allocated (0:
 * none free), -ENOMEM, or -ERANGE if an owner is past GS_BK_MAX_OWNER.
 * May sleep.
 */
int gs_backing_alloc(struct gs_backing *bk, const u64 *owners,
		     unsigned int nr, u64 *first, u64 below, bool low);
/* Hand out slots below @limit (at most nr_slots) from now on. */
void gs_backing_set_limit(struct gs_backing *bk, u64 limit);
/*
 * Lower the limit to @limit if no slot at or above it is in use (or
 * waits for its discard): true if it was lowered, and then no slot there
 * is handed out again until the limit is raised. May sleep.
 */
bool gs_backing_lower_limit(struct gs_backing *bk, u64 limit);
/*
 * The same for ghost slots that follow each other (@owners[0]..): the
 * backing slots of the same numbers if they are free, so that a run of
 * slots stays a run on the device, as in a swap file (else the first
 * free ones after them). With @nowait without waiting for anything (from
 * a submit path): -EAGAIN if another allocation holds the lock, -ENOMEM
 * if a reverse map cluster is needed and memory is not at hand at once;
 * -ERANGE as above. Tells ops->short_of_slots, as gs_backing_alloc()
 * does, whatever it got.
 */
int gs_backing_alloc_at(struct gs_backing *bk, const u64 *owners,
			unsigned int nr, u64 *first, bool nowait);
/*
 * Free one slot. Never sleeps. With discard on, the slot is discarded
 * shortly after, and only then handed out again.
 */
void gs_backing_free(struct gs_backing *bk, u64 slot);
/*
 * Discard freed slots from now on (@on), or not: -EOPNOTSUPP if the
 * device cannot. Turning it off discards what is pending first. May
 * sleep.
 */
int gs_backing_set_discard(struct gs_backing *bk, bool on);
/* Wait until every slot freed so far is discarded and free. May sleep. */
void gs_backing_drain(struct gs_backing *bk);
/* Owner of @slot, or U64_MAX if it is free. */
u64 gs_backing_owner(struct gs_backing *bk, u64 slot);
/*
 * The checksum of the first @len bytes of a page (what of it holds data:
 * a compressed page's length, PAGE_SIZE for a page as it is), as the
 * reverse map keeps it.
 */
u32 gs_backing_sum(const void *page, unsigned int len);
/*
 * Record @sum as the checksum of what was written to @slot, which must
 * be allocated. Never sleeps.
 */
void gs_backing_set_sum(struct gs_backing *bk, u64 slot, u32 sum);
/* The checksum recorded for @slot (0 if it is free). Never sleeps. */
u32 gs_backing_sum_of(struct gs_backing *bk, u64 slot);
/*
 * Copy the owners of the reverse map cluster @ci (ghost slot + 1, 0:
 * free, GS_BK_DISCARDING: freed, not discarded yet) to @owners.
 * Returns false if the cluster does not exist.
 */
bool gs_backing_cluster_owners(struct gs_backing *bk, unsigned long ci,
			       u32 *owners);
/*
 * Start writing @nr pages from @bufs to slots @slot.. (asynchronously if
 * the store can); the buffers must stay until gs_backing_write_wait(@io)
 * returned, which gives the result. May sleep.
 */
void gs_backing_write_start(struct gs_backing *bk, u64 slot,
			    void *const *bufs, unsigned int nr,
			    struct gs_bk_io *io);
int gs_backing_write_wait(struct gs_bk_io *io);
/*
 * Start reading @slot into @page; @io->end(@io) (which must be set) is
 * called when it is done, in any context. Returns 0, or -EAGAIN if the
 * store cannot start a read without waiting (then nothing was started:
 * read it with ops->read).
 */
int gs_backing_read_start(struct gs_backing *bk, u64 slot, struct page *page,
			  struct gs_bk_io *io);
/*
 * Start writing (@write) the whole pages @pages to slots @slot.., or
 * reading them from there (at most BIO_MAX_VECS); @io->end(@io) (which
 * must be set) is called when it is done, in any context. Returns 0, or
 * -EAGAIN if the store cannot start one without waiting (then nothing
 * was started). For a submit path.
 */
int gs_backing_submit(struct gs_backing *bk, bool write, u64 slot,
		      struct page *const *pages, unsigned int nr,
		      struct gs_bk_io *io);
/*
 * Highest slot in use, or U64_MAX if none. May sleep: the reverse map's
 * lock is held for one cluster's scan, or GS_BK_SKIP_BATCH lookups of
 * missing clusters, at a time.
 */
u64 gs_backing_last_used(struct gs_backing *bk);
/* Slots that hold a page (not those waiting for their discard). */
u64 gs_backing_used(struct gs_backing *bk);
/* No free slot (a hint: without the lock, it may change at once). */
bool gs_backing_full(struct gs_backing *bk);
/* Tell the store's user that its slots are spread thin (see ->sparse). */
void gs_backing_sparse(struct gs_backing *bk);
/*
 * Nothing calls back from the store from now on (ops->stop): before
 * what the callbacks use goes. May sleep.
 */
void gs_backing_stop(struct gs_backing *bk);

#endif /* _GS_BACKING_H */
