/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ghostswap store: the ghost address space of slots, kept in clusters
 * that exist only while they hold data, with the data compressed in a
 * zsmalloc pool and, past it, on a backing device. Independent of the
 * block layer so that it can be driven directly by tests.
 *
 * This is its public face, for the device, sysfs, debugfs and the tests.
 * It is built in layers, each calling only the ones below it:
 *  gs_store.c      create, destroy, write, read: the pool first, the
 *                  backing device past it
 *  gs_writeback.c  the writeback tier, with gs_wb_*.c: backing device I/O
 *                  both ways
 *  gs_core.c       the table (clusters of slot words) and the pool, with
 *                  the core's rooms beside it (gs_core_*.c, gs_slot_*.c)
 *  gs_backing.c    backing slots and their reverse map; gs_comp.c, the
 *                  compression streams
 * gs_debug.c checks and dumps the table. What the layers share of the
 * core's inside is in gs_core.h, for them only.
 */
#ifndef _GS_STORE_H
#define _GS_STORE_H

#include <linux/atomic.h>
#include <linux/log2.h>
#include <linux/mempool.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include "gs_index.h"
#include "gs_table.h"

struct gs_backing;
struct gs_comp;
struct gs_comp_params;
struct seq_file;
struct shrinker;
struct zs_pool;

/*
 * The counters every store, read and free touches, per CPU: each CPU adds
 * to its own, a read sums them all (exact once the store is quiet).
 */
enum gs_hot_stat {
	GS_STAT_SLOTS_USED,		/* every non-EMPTY slot */
	GS_STAT_SAME_PAGES,		/* SAME */
	GS_STAT_COMP_PAGES,		/* COMPRESSED */
	GS_STAT_HUGE_PAGES,		/* RAW */
	GS_STAT_HUGE_PAGES_SINCE,	/* RAW pages ever stored */
	GS_STAT_COMPR_BYTES,		/* pool bytes asked for (RAW: 4096) */
	GS_STAT_WB_PAGES,		/* WRITTEN_BACK entries */
	GS_STAT_NOTIFY_FREE,		/* slots freed by the swap core */
	GS_STAT_COMPRESSIONS,		/* compressions when storing */
	GS_STAT_PACKED,			/* pages stored but SAME ones */
	GS_STAT_HEUR_RAW,		/* stored as is: the heuristic */
	GS_STAT_UNITS,			/* units (gs_unit.h) */
	GS_STAT_UNIT_PAGES,		/* UNIT entries */
	GS_STAT_NR_HOT,
};

struct gs_hot_stats {
	long v[GS_STAT_NR_HOT];
};

struct gs_stats {
	struct gs_hot_stats __percpu *hot;	/* gs_stat_add(), gs_stat_read() */
	atomic_long_t clusters;
	atomic_long_t clusters_peak;
	atomic_long_t max_used_pages;	/* pool high water mark */
	atomic_long_t meta_bytes;	/* clusters and index nodes */
	atomic_long_t failed_reads;
	atomic_long_t failed_writes;
	atomic_long_t invalid_io;
	atomic_long_t discard_free;	/* slots freed by discard requests */
	/* The writeback tier, in pages. */
	atomic_long_t bd_reads;		/* pages read from the backing device */
	atomic_long_t bd_writes;	/* pages written to it */
	atomic_long_t bd_write_errors;	/* pages whose write failed */
	atomic_long_t bd_read_errors;	/* pages whose read failed */
	atomic_long_t bd_sum_errors;	/* of them: not what was written */
	atomic_long_t bd_relocated;	/* pages moved by backing compaction */
	/* Backing compaction's own I/O, not in bd_reads/bd_writes. */
	atomic_long_t bd_compact_reads;
	atomic_long_t bd_compact_writes;
	atomic_long_t wb_buffer_bytes;	/* writeback batch buffers */
	atomic_long_t injected;		/* allocation failures injected */
	/* Recompression (gs_recomp.c). */
	atomic_long_t recompressed;	/* pages moved to a secondary algorithm */
	atomic_long_t recomp_no_gain;	/* tried, and not made smaller */
	atomic_long_t recomp_auto;	/* of them, by the background worker */
	/* Units (gs_unit.h). */
	atomic_long_t units_stored;	/* units ever stored */
	atomic_long_t units_refused;	/* runs that did not shrink enough */
	atomic_long_t unit_reads;	/* units read whole, in one bio */
	atomic_long_t unit_part_reads;	/* a page of a unit read alone */
	/* of them: copied out of the stream's unit, not decompressed */
	atomic_long_t unit_part_cached;
	atomic_long_t unit_splits;	/* units whose live pages went singly */
	atomic_long_t units_backed;	/* units on the backing device now */
	atomic_long_t unit_bk_slots;	/* the backing slots they hold */
	atomic_long_t units_written;	/* units ever written back whole */
};

static inline void gs_stat_add(struct gs_stats *st, enum gs_hot_stat i,
			       long n)
{
#ifdef __CHECKER__
	/*
	 * arm64's this_cpu_add() has a case for every size of counter;
	 * sparse expands each with a constant @n (PAGE_SIZE) and warns that
	 * the 8- and 16-bit ones truncate it. They are never taken.
	 */
	OPTIMIZER_HIDE_VAR(n);
#endif
	this_cpu_add(st->hot->v[i], n);
}

static inline void gs_stat_inc(struct gs_stats *st, enum gs_hot_stat i)
{
	gs_stat_add(st, i, 1);
}

static inline void gs_stat_dec(struct gs_stats *st, enum gs_hot_stat i)
{
	gs_stat_add(st, i, -1);
}

/* The sum over every CPU. */
long gs_stat_read(struct gs_stats *st, enum gs_hot_stat i);

/* Which entries a writeback takes (COMPRESSED and RAW ones only). */
enum gs_wb_mode {
	GS_WB_COLD,		/* second chance: IDLE ones, marking the rest */
	GS_WB_IDLE,		/* IDLE */
	GS_WB_HUGE,		/* RAW */
	GS_WB_HUGE_IDLE,	/* RAW and IDLE */
	GS_WB_INCOMP,		/* RAW that did not compress at all */
	GS_WB_ALL,
};

/* Pages that skip the pool and go straight to the backing device. */
enum gs_direct {
	GS_DIRECT_NONE,
	GS_DIRECT_HUGE,		/* everything that would be stored RAW */
	GS_DIRECT_INCOMP,	/* what did not compress at all */
	/*
	 * Every page but same-filled ones, never compressed (behind zswap,
	 * which compressed them before): to the backing device while it has
	 * room, else into the pool as it is.
	 */
	GS_DIRECT_ALL,
	/*
	 * Not a policy one can set: GS_DIRECT_ALL for swap's header, which
	 * goes into the pool as it is, never past it (gs_store_write_nowait()).
	 */
	GS_DIRECT_POOL,
};

/*
 * Clusters a store keeps in reserve for the first store into a range when
 * memory is short (gs_cluster_bytes() each: about 5 KiB), refilled by
 * clusters that are freed; the cluster index keeps the nodes for as many
 * new ranges (gs_index.h).
 */
#define GS_CLUSTER_RESERVE	4
static_assert(GS_CLUSTER_RESERVE <= GS_INDEX_INSERTS_MAX);
/* Slots freed under one hold of a cluster lock by gs_store_free_range(). */
#define GS_FREE_BATCH		64

struct gs_wb_batch;
struct crypto_sync_skcipher;

/* writeback_batch_size: pages in flight at once (zram's default). */
#define GS_WB_BATCH_SIZE_DEFAULT	32U
#define GS_WB_BATCH_SIZE_MAX		256U

/*
 * The writeback tier's own state (gs_writeback.c, gs_wb_*.c; made and
 * released in gs_wb_attach.c). Its policies (budget, shrinker, direct)
 * can be set with or without a backing device; the rest exists only
 * while one is attached.
 */
struct gs_wb {
	struct mutex lock;		/* one writeback at a time */
	struct gs_wb_batch *batches;	/* a round's batches, lock */
	unsigned int nr_batches;	/* lock */
	unsigned int batch_size;	/* pages in flight at most, lock */
	u64 hand;			/* clock hand of GS_WB_COLD */
	/* Covers changes of the budget and of limit_enable together. */
	spinlock_t limit_lock;
	atomic_long_t budget;		/* pages left, if limit_enable */
	bool limit_enable;
	bool use_shrinker;		/* write back under memory pressure */
	/*
	 * Keep and check a checksum of each page on the backing device.
	 * Changed only while the store is empty (no page was written
	 * without one that a read would then check).
	 */
	bool checksum;
	/*
	 * Encryption at rest (gs_crypt.c), NULL: off. Set and cleared only
	 * while the store is empty.
	 */
	struct crypto_sync_skcipher *cipher;
	enum gs_direct direct;
	struct workqueue_struct *wq;
	struct work_struct work;	/* background writeback to the limit */
	/* Backing compaction a store that shrinks asked for (gs_backing.h). */
	struct work_struct compact_work;
	/* Set by gs_wb_stop(): a compaction under way ends at its next page. */
	bool stopping;
	struct shrinker *shrinker;
	/*
	 * Reads of written-back pages and direct writes started from the
	 * submit path: finished there, never behind @wq.
	 */
	struct workqueue_struct *end_wq;
	mempool_t *rb_pool;		/* the reads' requests */
	mempool_t *wr_pool;		/* the writes' requests */
	mempool_t *rr_pool;		/* the read runs' requests */
	mempool_t *ub_pool;		/* pages to read units back into */
	atomic_t inflight;		/* started and not finished */
};

/*
 * Recompression (gs_recomp.c): by request (sysfs recompress), and in the
 * background, idle pages to the highest secondary algorithm, within a
 * share of one CPU.
 */
struct gs_recomp {
	struct mutex lock;		/* one pass at a time */
	unsigned int auto_pct;		/* background: % of one CPU, 0: off */
	u32 auto_age;			/* cold: clusters not stored to, s */
	u64 hand;			/* where the background sweep is */
	struct delayed_work work;	/* the background sweep */
};

/*
 * Clusters whose number a lookup finds in gs_store.hint first, before the
 * index: cluster i in hint[i % GS_CLUSTER_HINTS] (GS_CLUSTER_HINTS *
 * GS_CLUSTER_SLOTS pages, 512 MiB of swap, reach the array).
 */
#define GS_CLUSTER_HINTS	256

struct gs_store {
	struct gs_index clusters;	/* cluster number -> struct gs_cluster */
	/*
	 * Live clusters the lookups found last, a hint in front of the
	 * index (gs_cluster_find(), gs_core_internal.h says how it stays
	 * true): each set with its cluster's lock held and the cluster live,
	 * and cleared under that lock when it dies.
	 */
	struct gs_cluster *hint[GS_CLUSTER_HINTS];
	u64 nr_slots;			/* size of the ghost address space */
	struct zs_pool *pool;
	struct gs_comp *comp;
	size_t huge_size;		/* objects this big are stored RAW */
	unsigned long limit_pages;	/* pool limit, 0: none */
	struct gs_stats stats;
	/* Clusters for when memory is short (GS_CLUSTER_RESERVE of them). */
	mempool_t *reserve;
	/* Fault injection (debugfs): fail this many allocations. */
	atomic_t fail_alloc;
	/* Store pages the heuristic finds incompressible as they are. */
	bool incomp_check;
	struct gs_recomp recomp;
	atomic64_t unit_seq;		/* units made, gs_unit.h's seq */
	/* Splits units that are mostly gone (gs_unit.h), from a mark. */
	struct work_struct unit_split_work;
	bool unit_split_off;		/* the store is going: no more work */
	/*
	 * Where WRITTEN_BACK entries live, NULL without a backing device.
	 * The writeback tier attaches and detaches it (the store empty);
	 * freeing an entry frees its backing slot.
	 */
	struct gs_backing *bk;
	struct gs_wb wb;
};

/* ----------- the store (gs_store.c; table, pool: gs_core.c, gs_core_unit.c) */

/* Module init and exit of the store and the layers below it. */
int gs_core_init(void);
void gs_core_exit(void);

/* A new empty store compressing with @alg; returns an ERR_PTR on failure. */
struct gs_store *gs_store_create(const char *alg, u64 nr_slots);
/* Frees every cluster and stored page; no I/O may run concurrently. */
void gs_store_destroy(struct gs_store *s);
/* Switch the algorithm of an empty store; no I/O may run concurrently. */
int gs_store_set_algorithm(struct gs_store *s, const char *alg);
/*
 * Resize a store that holds no cluster (its index takes the depth of the
 * new size); -EBUSY if it holds one, -EFBIG past what its backing
 * store's reverse map can hold (GS_BK_MAX_OWNER + 1 slots). No I/O may
 * run concurrently.
 */
int gs_store_set_size(struct gs_store *s, u64 nr_slots);
const char *gs_store_algorithm(struct gs_store *s);
/*
 * Make @p (set up: gs_backend.h) the algorithm of priority @prio (0: the
 * primary; 1..3: for recompression), or with @p NULL remove a secondary
 * one. The store owns @p from then on, also on failure. -EBUSY if the
 * store holds a page compressed with that priority (for the primary:
 * any page). No I/O may run concurrently.
 */
int gs_store_set_comp(struct gs_store *s, unsigned int prio,
		      struct gs_comp_params *p);
/* The name of the algorithm of @prio, NULL if none. */
const char *gs_store_comp_name(struct gs_store *s, unsigned int prio);

/*
 * @src and @dst are PAGE_SIZE, page aligned kernel buffers in the direct
 * map. May sleep, and may do I/O to the backing device: write back cold
 * pages to make room in the pool, write to or read from it.
 */
int gs_store_write(struct gs_store *s, u64 slot, const void *src, gfp_t gfp);
int gs_store_read(struct gs_store *s, u64 slot, void *dst);
/*
 * The same without backing device I/O: -EAGAIN where it would be needed
 * (nothing has changed then). For the block layer's submit path, which
 * must not wait for another device's bios.
 */
int gs_store_write_nowait(struct gs_store *s, u64 slot, const void *src,
			  gfp_t gfp);
/*
 * gs_store_write_nowait(): the page is to go to the backing device as it
 * is (nothing has changed): gs_store_write_direct() stores it there
 * without compressing it again.
 */
#define GS_WRITE_DIRECT		1
int gs_store_write_direct(struct gs_store *s, u64 slot, const void *src,
			  gfp_t gfp);
int gs_store_read_nowait(struct gs_store *s, u64 slot, void *dst);

/* The largest unit; its bytes are what a backend may be given at once. */
#define GS_UNIT_MAX_PAGES	16
/* Smaller runs are stored page by page. */
#define GS_UNIT_MIN_PAGES	4

/* A unit size one may set: 0 (none), or a power of two in between. */
static inline bool gs_unit_pages_valid(unsigned int pages)
{
	return !pages || (pages >= GS_UNIT_MIN_PAGES &&
			  pages <= GS_UNIT_MAX_PAGES && is_power_of_2(pages));
}

/*
 * Units (gs_unit.h): the aligned run of @pages slots from @first, 4 to
 * the store's unit size, at @src or @dst, contiguous, in the direct map.
 * A write compresses the run's pages as one unit, in place of what the
 * slots held: 0, or nothing changed and the pages are to be stored one
 * by one (-E2BIG: they do not shrink enough together; -EINVAL: units
 * are off or not for this run; -EAGAIN: the pool is over its limit;
 * -ENOMEM). A read fills the run from one unit (and same-filled pages):
 * 0, -ENOENT if the run is not exactly that (read it page by page), or
 * -EIO; -EAGAIN if it is one unit on the backing device. Neither waits
 * for backing device I/O; gs_store_read_unit() reads such a unit back,
 * straight into @dst (may sleep).
 */
int gs_store_write_unit_nowait(struct gs_store *s, u64 first, const void *src,
			       unsigned int pages, gfp_t gfp);
int gs_store_read_unit_nowait(struct gs_store *s, u64 first, void *dst,
			      unsigned int pages);
int gs_store_read_unit(struct gs_store *s, u64 first, void *dst,
		       unsigned int pages);
/*
 * The largest unit, in pages: 0 (none), or 4, 8 or 16. Only while the
 * store holds nothing (-EBUSY), -EINVAL for any other size.
 */
int gs_store_set_unit(struct gs_store *s, unsigned int pages);
unsigned int gs_store_unit(struct gs_store *s);

/* gs_store_read_start(): the read is in flight, @end will be called. */
#define GS_READ_STARTED		1
typedef void (*gs_io_end_t)(void *arg, int err);
/*
 * Store up to @nr whole pages (@pages) in slots @slot.., which
 * gs_store_write_nowait() sent to the backing device (GS_WRITE_DIRECT),
 * without waiting for the I/O: returns how many it took (at least one;
 * @end(@arg, err) is called from process context once they are stored),
 * or -EAGAIN: store them with gs_store_write_direct(). For the block
 * layer's submit path.
 */
int gs_store_write_start(struct gs_store *s, u64 slot,
			 struct page *const *pages, unsigned int nr,
			 gs_io_end_t end, void *arg);
/*
 * Read @slot into @page without waiting for backing device I/O: a page
 * on the backing device is read asynchronously, and @end(@arg, err) is
 * called from process context once it is in @page (GS_READ_STARTED); any
 * other page is read at once (0, @end is not called). -EAGAIN: this read
 * cannot be started now (another reader of the slot, no memory): use
 * gs_store_read(). For the block layer's submit path: what it submits
 * is only sent once it returns.
 */
int gs_store_read_start(struct gs_store *s, u64 slot, struct page *page,
			gs_io_end_t end, void *arg);
/*
 * Pages @slot.. that gs_store_read_nowait() found on the backing device
 * (-EAGAIN): start reading as many of the @nr as can be read with one
 * read (stored as they are, their backing slots following each other).
 * Returns how many (at least two; @end(@arg, err) is called from process
 * context once they are in @pages), or -EAGAIN: gs_store_read_start()
 * the first one. For the block layer's submit path.
 */
int gs_store_read_run_start(struct gs_store *s, u64 slot,
			    struct page *const *pages, unsigned int nr,
			    gs_io_end_t end, void *arg);
/* Frees one slot; never sleeps (called under the swap core's spinlock). */
void gs_store_free(struct gs_store *s, u64 slot);
/*
 * Frees [first, first + nr); may sleep. Returns the number of slots freed.
 * Holds a cluster lock for GS_FREE_BATCH slots at most at a time.
 */
u64 gs_store_free_range(struct gs_store *s, u64 first, u64 nr);

/* Pool pages in use (zsmalloc's count) and compaction. */
unsigned long gs_store_pool_pages(struct gs_store *s);
unsigned long gs_store_pages_compacted(struct gs_store *s);
unsigned long gs_store_compact(struct gs_store *s);

/* Bytes one cluster costs: its header (slab object) and its table. */
size_t gs_cluster_bytes(void);
/* Bytes of the clusters held in the store's reserve now. */
size_t gs_store_reserve_bytes(struct gs_store *s);
/* Bytes of the spare nodes its cluster index holds for them now. */
size_t gs_store_index_reserve_bytes(struct gs_store *s);
/*
 * Kind of a slot's entry, for tests and debugging; *@len (if not NULL)
 * gets the bytes it takes in the pool.
 */
enum gs_kind gs_store_kind(struct gs_store *s, u64 slot, unsigned int *len);
/* The whole entry word of a slot (0 if empty), for tests and debugging. */
unsigned long gs_store_entry(struct gs_store *s, u64 slot);
/*
 * Whether the user's idle mark is on a slot, and *@secs, how long it has
 * surely gone without an access, for tests and debugging.
 */
bool gs_store_idle(struct gs_store *s, u64 slot, u32 *secs);

/* -------------------------------------- writeback (gs_writeback.c, gs_wb_*.c) */

/*
 * Attach a backing store to an empty store; it owns @bk from then on
 * (also on failure). -EBUSY if the store holds data or has one, -EFBIG
 * if it has more slots than the reverse map can hold (GS_BK_MAX_OWNER + 1).
 */
int gs_store_set_backing(struct gs_store *s, struct gs_backing *bk);
/* Detach and release the backing store of an empty store. */
int gs_store_clear_backing(struct gs_store *s);

/*
 * Write back up to @max pages chosen by @mode. *@done gets the number of
 * pages now on the backing device. Returns 0, or the last error seen:
 * -ENODEV (no backing device), -ENOSPC (backing device full), -EIO
 * (write errors, or the writeback budget ran out), -ENOMEM.
 */
int gs_store_writeback(struct gs_store *s, enum gs_wb_mode mode, u64 max,
		       u64 *done);
/*
 * The same for slots @lo..@hi - 1 only; -EINVAL for GS_WB_COLD or a
 * range that is empty or past the end.
 */
int gs_store_writeback_range(struct gs_store *s, enum gs_wb_mode mode,
			     u64 lo, u64 hi, u64 max, u64 *done);
/*
 * Encrypt what goes to the backing device (a new random key), or stop
 * to. Only while the store is empty (the caller checks); -ENOENT if the
 * kernel has no AES-XTS.
 */
int gs_store_set_wb_encrypt(struct gs_store *s, bool on);
/*
 * Pages a writeback has in flight at most, 1..GS_WB_BATCH_SIZE_MAX
 * (else -EINVAL); -ENOMEM leaves it as it was.
 */
int gs_store_set_wb_batch_size(struct gs_store *s, unsigned int size);
/* Mark COMPRESSED, RAW and UNIT entries idle: all, or those >= @age s old. */
void gs_store_mark_idle(struct gs_store *s, u64 age);
/* Writeback budget: use it (or not), and set what is left of it. */
void gs_store_set_wb_limit_enable(struct gs_store *s, bool enable);
void gs_store_set_wb_budget(struct gs_store *s, u64 pages);
/*
 * Move written-back pages down to fill holes on the backing device, so
 * that it is used from its start on. *@moved gets the pages moved.
 */
int gs_store_backing_compact(struct gs_store *s, u64 *moved);

/* ---------------------------------------------------- debugging (gs_debug.c) */

/*
 * Check the table against the reverse map, both ways, and the counters
 * against both. Returns the number of mismatches; details of the first
 * ones go to @m (may be NULL). Exact on a quiet store only.
 */
long gs_store_check(struct gs_store *s, struct seq_file *m);
/* Print the entries of cluster @ci to @m. */
void gs_store_dump_cluster(struct gs_store *s, unsigned long ci,
			   struct seq_file *m);

#endif /* _GS_STORE_H */
