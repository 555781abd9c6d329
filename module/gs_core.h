/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ghostswap store core, the inside: the clusters of the table and what
 * the layers built on the table and pool share of them (gs_store.c, the
 * writeback tier's gs_writeback.c and gs_wb_*.c, gs_debug.c). The device,
 * sysfs and the tests use gs_store.h. The core's own files (gs_core.c and
 * its rooms beside it) share more of it in gs_core_internal.h.
 *
 * A cluster lock is a spinlock: nothing under it may sleep. The
 * functions that return a cluster return it locked; gs_cluster_put()
 * (or gs_cluster_unlock() of a cluster that cannot have gone empty) ends
 * the hold.
 */
#ifndef _GS_CORE_H
#define _GS_CORE_H

#include <linux/atomic.h>
#include <linux/jiffies.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/zsmalloc.h>
struct gs_comp_params;

#include "gs_store.h"
#include "gs_table.h"

struct gs_cluster {
	spinlock_t lock;	/* covers every field below */
	u32 age_base;		/* boot time, seconds, of age unit 0 */
	u16 used;		/* non-EMPTY slots */
	bool dead;		/* erased from the index, freed after RCU */
	u8 age_shift;		/* an age unit is 2^age_shift seconds */
	/*
	 * Readers whose pinned entry (GS_FLAG_PINNED) let go of its object
	 * (see gs_entry_take()): the cluster lives on for them, even with no
	 * slot used, so each unpins without looking it up again.
	 */
	u16 pins;
	/* Its units marked for gs_unit_split_work() (GS_UNIT_SPLIT_MARKED). */
	u16 units_marked;
	unsigned long ci;	/* its number in the index; set before it is in */
	atomic_long_t *table;	/* GS_CLUSTER_SLOTS words, one page */
	union {
		struct {
			/* 6 bits per slot, see gs_aux_hi_get() */
			u8 aux_hi[GS_AUX_HI_BYTES];
			/* (which reads into the first of these) */
			/* the age byte of each slot, see gs_table.h */
			u8 age[GS_CLUSTER_SLOTS];
		};
		/* Once dead: nobody reads aux_hi or ages any more. */
		struct {
			struct rcu_head rcu;
			struct gs_store *store;	/* whose reserve takes it */
		};
	};
};

/*
 * Make the entry of slot @i of @cl (locked) @new, and return what it
 * was. Any change to an entry that may be PINNED goes through here or
 * another atomic read-modify-write: its reader clears PINNED with no lock.
 * If the entry was PINNED, the pool object it let go of is its reader's
 * to free, and the cluster lives on until that reader unpins.
 */
static inline unsigned long gs_entry_take(struct gs_cluster *cl,
					  unsigned int i, unsigned long new)
{
	unsigned long old = atomic_long_xchg(&cl->table[i], new);

	if (gs_entry_pinned(old))
		cl->pins++;
	return old;
}

/*
 * The ages' clock: boot time in seconds, read from the boot clock at most
 * once a tick, and never kept into a tick in which the second may turn
 * (gs_age_reading()). Every read and write stamps its slot, and the boot
 * clock costs a call and a division where this costs two loads and a
 * compare. One word, so that a reading and its tick go together: the
 * seconds above, below the low 32 bits of jiffies for the tick they hold
 * for. (An old reading whose tick matches jiffies again 2^32 ticks later
 * is used for that one tick.)
 */
extern atomic64_t gs_age_clock;
u64 gs_age_reading(u64 ns, u32 tick);
u32 gs_age_clock_read(void);

static __always_inline u32 gs_age_now(void)
{
	u64 c = atomic64_read(&gs_age_clock);

	if (likely((u32)c == (u32)jiffies))
		return c >> 32;
	return gs_age_clock_read();
}

/* The age unit @now falls in, past GS_AGE_UNIT_MAX if out of the window. */
static inline u32 gs_age_unit(const struct gs_cluster *cl, u32 now)
{
	s32 d = now - cl->age_base;

	return d > 0 ? (u32)d >> cl->age_shift : 0;
}

u32 gs_age_rescale(struct gs_cluster *cl, u32 now);

/*
 * Slot @i of @cl (locked) was stored or read at @now (boot time, s): its
 * age starts again and the user's idle mark goes.
 */
static inline void gs_age_touch(struct gs_cluster *cl, unsigned int i,
				u32 now)
{
	u32 unit = gs_age_unit(cl, now);

	if (unlikely(unit > GS_AGE_UNIT_MAX))
		unit = gs_age_rescale(cl, now);
	cl->age[i] = unit;
}

/* Seconds slot @i of @cl (locked) has surely gone without an access. */
static inline u32 gs_age_secs(const struct gs_cluster *cl, unsigned int i,
			      u32 now)
{
	u32 unit = cl->age[i] & GS_AGE_UNIT;
	u32 last = cl->age_base + ((unit + 1) << cl->age_shift) - 1;
	s32 d = now - last;

	return d > 0 ? d : 0;
}

static_assert(offsetof(struct gs_cluster, age) ==
	      offsetof(struct gs_cluster, aux_hi) + GS_AUX_HI_BYTES,
	      "gs_aux_hi_get() reads a byte past aux_hi: the age bytes follow");

/*
 * The aux of slot @i of @cl (locked), whose entry @e is COMPRESSED, RAW or
 * WRITTEN_BACK: its low bits are in @e, its high bits in aux_hi.
 */
static __always_inline unsigned int
gs_slot_aux(const struct gs_cluster *cl, unsigned int i, unsigned long e)
{
	return gs_entry_aux_get(e, gs_aux_hi_get(cl->aux_hi, i));
}

/* A page made ready for a slot (gs_page_store(), gs_pool_pack()). */
struct gs_packed {
	unsigned long entry;
	unsigned int aux_hi;	/* for the slot's aux_hi */
	bool near_limit;	/* its object took the pool near its limit */
};

/* -------------------------------------------------- life (gs_store.c) */

/* A new empty store, table and pool only (the writeback tier zeroed). */
struct gs_store *gs_core_create(const char *alg, u64 nr_slots);
/* Free every slot, any slot number; may sleep. */
void gs_core_free_all(struct gs_store *s);
/* Free the store itself; every slot must be free, the backing detached. */
void gs_core_destroy(struct gs_store *s);
/* gs_store_set_algorithm() and gs_store_set_comp(), nothing running. */
int gs_core_set_algorithm(struct gs_store *s, const char *alg);
/* gs_store_set_unit(). */
int gs_core_set_unit(struct gs_store *s, unsigned int pages);
/* gs_store_set_size(). */
int gs_core_set_size(struct gs_store *s, u64 nr_slots);
int gs_core_set_comp(struct gs_store *s, unsigned int prio,
		     struct gs_comp_params *p);

/* -------------------------------------------------------------- pages */

/* gs_page_store(): the page goes to the backing device as it is. */
#define GS_PACK_DIRECT		1
/* gs_page_store(): stored, and the pool is near its limit. */
#define GS_PACK_NEAR_LIMIT	2

/*
 * Store the page at @src in @slot, replacing what the slot held: SAME if
 * all its words are equal, else compressed into the pool (COMPRESSED),
 * or kept there as is (RAW) if it does not shrink below the huge class
 * size or the heuristic finds it incompressible; then installed as
 * gs_slot_install() installs. Returns 0, GS_PACK_NEAR_LIMIT if it is
 * stored and the pool is now near its limit (gs_pool_near_limit()), or,
 * the slot as it was:
 *  -EAGAIN          the pool is over its limit (found before compressing:
 *                   make room, then store it again);
 *  GS_PACK_DIRECT   compressed (or not) and no room for it, or the
 *                   @direct policy: it goes to the backing device as it
 *                   is, with no second compression;
 *  -ENOMEM          no room and no backing device, or no memory for a
 *                   new cluster.
 */
int gs_page_store(struct gs_store *s, u64 slot, const void *src, gfp_t gfp,
		  enum gs_direct direct);
/*
 * Install a new entry, replacing what the slot held. On failure (no
 * memory for a new cluster) what @e holds is given back.
 */
int gs_slot_install(struct gs_store *s, u64 slot, unsigned long e,
		    unsigned int aux_hi, gfp_t gfp);
/*
 * Recompress (gs_slot_recomp.c) the COMPRESSED or RAW entry of @slot with
 * the algorithm of @prio (a COMPRESSED one only if it was compressed with
 * a lower one): kept if it lands in a smaller zsmalloc size class, else
 * the entry is left as it was, with GS_FLAG_NOGAIN if @mark_nogain. A
 * UNIT entry: its unit's live pages together, kept if the chain gets
 * smaller (the unit marked, not the entry). @page is a PAGE_SIZE buffer.
 * Returns the pages recompressed (1, or a unit's), 0 if no gain, -EAGAIN
 * if the entry is not a candidate (any more), or an errno. May sleep.
 */
int gs_slot_recompress(struct gs_store *s, u64 slot, unsigned int prio,
		       bool mark_nogain, void *page);
/* Where a reader holds a pool object pinned and no lock (for tests). */
void gs_read_window(struct gs_store *s, u64 slot);
/*
 * If the entry of @slot is @old, make it @new (the same aux value).
 * Returns whether it was @old. For pins (GS_FLAG_IO) around I/O.
 * Takes no lock: any context, hard interrupts included.
 */
bool gs_slot_replace(struct gs_store *s, u64 slot, unsigned long old,
		     unsigned long new);
/*
 * If the entry of @slot is @e, free it as gs_store_free() would. Returns
 * whether it was @e. Takes the cluster lock: not from a hard interrupt.
 */
bool gs_slot_drop(struct gs_store *s, u64 slot, unsigned long e);
/* Copy the pool object of entry @e to @dst, under its cluster lock. */
void gs_obj_copy(struct gs_store *s, unsigned long e, void *dst,
		 unsigned int len);
/*
 * The pool's limit and high-water mark, and fault injection: inline, for
 * the core and the units' pool side alike (gs_unit.c calls nothing of
 * the core's files).
 */
static inline void gs_stat_max(atomic_long_t *max, long val)
{
	long old = atomic_long_read(max);

	while (old < val && !atomic_long_try_cmpxchg(max, &old, val))
		;
}

/* Pool above @pages? (With no limit set, never.) */
static inline bool gs_pool_over(struct gs_store *s, unsigned long pages)
{
	unsigned long limit = READ_ONCE(s->limit_pages);

	return limit && pages > limit;
}

/*
 * A pool of @pages near @limit, the limit its caller read: within a 16th
 * of it, where the background writeback starts. (With no limit, never.)
 */
static inline bool gs_pool_near_limit(unsigned long pages, unsigned long limit)
{
	return limit && pages > limit - limit / 16;
}

/*
 * Pool over its limit now? The pool's size is read only with a limit set
 * (a call, on every page written).
 */
static inline bool gs_pool_full(struct gs_store *s)
{
	unsigned long limit = READ_ONCE(s->limit_pages);

	return limit && zs_get_total_pages(s->pool) > limit;
}

/*
 * The pool took new objects: its high-water mark follows it (*@pages:
 * its size now). Is it over its limit now? Then the caller frees them.
 */
static inline bool gs_pool_grew(struct gs_store *s, unsigned long *pages)
{
	*pages = zs_get_total_pages(s->pool);
	gs_stat_max(&s->stats.max_used_pages, *pages);
	return gs_pool_over(s, *pages);
}

/* Fault injection (debugfs fail_alloc): fail this allocation? */
static inline bool gs_fail_alloc(struct gs_store *s)
{
	if (likely(!atomic_read(&s->fail_alloc)) ||
	    !atomic_add_unless(&s->fail_alloc, -1, 0))
		return false;
	atomic_long_inc(&s->stats.injected);
	return true;
}

/* -------------------------------------------------- units (gs_unit.c) */

struct gs_stream;
struct gs_unit;

/*
 * Compress the @held pages of a run of @pages (gs_unit.h), at @src one
 * after the other, into a new unit, with stream @st: not installed, not
 * visible to anybody. Returns 0 and *@up, or -E2BIG (it does not take a
 * page less than its pages as they are: store them one by one), -EAGAIN
 * (the pool is over its limit), -ENOMEM.
 */
int gs_unit_pack(struct gs_store *s, struct gs_stream *st, const void *src,
		 unsigned int pages, u16 held, gfp_t gfp, struct gs_unit **up);
/* A pool object of @size for a unit's chain (a seam for the tests). */
unsigned long gs_unit_obj_alloc(struct gs_store *s, unsigned int size,
				gfp_t gfp);
/*
 * Decompress unit @u, which the caller reads (gs_unit.h), into its held
 * pages at @dst, with stream @st. Returns 0 or -EIO.
 */
int gs_unit_unpack(struct gs_store *s, struct gs_stream *st,
		   const struct gs_unit *u, void *dst);
/*
 * gs_unit_unpack() into @st's unit buffer, unless it holds @u's pages
 * already (see gs_unit.h). Returns 0 or -EIO.
 */
int gs_unit_unpack_cached(struct gs_store *s, struct gs_stream *st,
			  const struct gs_unit *u);
/*
 * Unit @u, which the caller reads, compressed again with @prio: its @live
 * pages alone, in a new unit (not installed), with stream @st. Returns 0
 * and *@up, -E2BIG if its chain would not be smaller, or -ENOMEM,
 * -EAGAIN (the pool over its limit), -EIO.
 */
int gs_unit_repack(struct gs_store *s, struct gs_stream *st,
		   const struct gs_unit *u, u16 live, unsigned int prio,
		   gfp_t gfp, struct gs_unit **up);
/*
 * Free @u: never installed, or neither referred to nor read. Atomic-safe.
 * A unit on the backing device gives its backing slots back.
 */
void gs_unit_free(struct gs_store *s, struct gs_unit *u);
/*
 * Copy the chain of @u (in the pool; its cluster locked) to the pages
 * @bufs, one object each (gs_unit_obj_size()), zero-padded. Returns how
 * many.
 */
unsigned int gs_unit_chain_copy(struct gs_store *s, const struct gs_unit *u,
				void *const *bufs);
/*
 * @u's chain is at backing slots @slots now: its pool objects go, obj[]
 * holds the slots. Its cluster locked, no other reader.
 */
void gs_unit_to_backing(struct gs_store *s, struct gs_unit *u,
			const u64 *slots);
/*
 * Decompress @u from its chain, read back into the pages @pieces, into
 * @dst (its held pages), or with @dst NULL into @st's unit buffer (which
 * then holds @u). Returns 0 or an errno.
 */
int gs_unit_unpack_pieces(struct gs_store *s, struct gs_stream *st,
			  const struct gs_unit *u, void *const *pieces,
			  void *dst);
/*
 * Units and the writeback tier (gs_slot_wb.c): the tier writes a unit back
 * whole, reads it back, moves its backing slots. Each _begin counts the
 * caller as one of the unit's readers (the unit and its cluster stay)
 * until the matching _end.
 *
 * gs_unit_wb_begin(): unit @u of @cl (locked) for a writeback, unless it
 * is on the device already, split, or another writeback or move has it.
 * gs_unit_wb_end(): the writeback of the unit whose run starts at @first
 * is over; with @slots (its chain written there), it moves to the
 * device if nothing read, freed or split it meanwhile. Returns whether
 * it moved (if not, the slots are the caller's to free).
 */
bool gs_unit_wb_begin(struct gs_cluster *cl, struct gs_unit *u);
bool gs_unit_wb_end(struct gs_store *s, u64 first, struct gs_unit *u,
		    const u64 *slots);
/*
 * A read of @slot's unit from the device: returns it (its cluster in
 * *@clp), NULL if the slot holds no unit on the device (-ESTALE), or
 * ERR_PTR(-EAGAIN) while a move of its slots is under way.
 */
struct gs_unit *gs_unit_bk_read_begin(struct gs_store *s, u64 slot,
				      struct gs_cluster **clp);
void gs_unit_bk_read_end(struct gs_store *s, struct gs_cluster *cl,
			 u64 slot, struct gs_unit *u, int err);
/*
 * A move of backing slot @b, of the unit whose run starts at @first
 * (the slot's owner): returns the unit, *@j the chain object b is, or
 * NULL if no unit there holds @b, ERR_PTR(-EAGAIN) if it is read or
 * written back now. gs_unit_bk_move_end(): obj[j] is @to now (U64_MAX:
 * the move failed, @to is the caller's to free).
 */
struct gs_unit *gs_unit_bk_move_begin(struct gs_store *s, u64 first, u64 b,
				      unsigned int *j,
				      struct gs_cluster **clp);
void gs_unit_bk_move_end(struct gs_store *s, struct gs_cluster *cl,
			 u64 first, struct gs_unit *u, unsigned int j, u64 to);
/*
 * For the debug check: does a unit of the run at @first hold backing
 * slot @b? Takes the cluster lock.
 */
bool gs_unit_bk_holds(struct gs_store *s, u64 first, u64 b);
/*
 * Split the unit @slot's entry refers to now (the units' split,
 * gs_core_unit.c), its live pages stored one by one (writeback wants
 * them), unless it is split or being split.
 * Returns the pages moved, -EAGAIN if @slot holds no unit to split.
 * May sleep.
 */
int gs_unit_split_at(struct gs_store *s, u64 slot);
/*
 * Stop splitting units and wait for a split under way: before the store's
 * last frees, which would otherwise start more.
 */
void gs_unit_split_stop(struct gs_store *s);

/* ----------------------------------------------------------- clusters */

/*
 * The cluster of @ci, locked; NULL if it does not exist and @gfp is 0.
 * With @gfp, a missing cluster is created: an ERR_PTR if that fails.
 */
struct gs_cluster *gs_cluster_get(struct gs_store *s, unsigned long ci,
				  gfp_t gfp);
/* The first live cluster at *@ci..@last, locked, *@ci set; or NULL. */
struct gs_cluster *gs_cluster_next(struct gs_store *s, unsigned long *ci,
				   unsigned long last);
/*
 * A scan's next cluster at or after *@pos, locked; *@i where *@pos is in
 * it, *@end at most @span further. NULL (*@pos = nr_slots) at the end.
 */
struct gs_cluster *gs_scan_next(struct gs_store *s, u64 *pos,
				unsigned int span, unsigned int *i,
				unsigned int *end);
/* Unlock a cluster; kill it if it went empty. */
void gs_cluster_put(struct gs_store *s, unsigned long ci,
		    struct gs_cluster *cl);

/*
 * Unlock a cluster that one of the lookups above returned. Sparse checks
 * locking function by function (on kernels where it checks locks): the
 * lookups hand the lock over out of its sight, so it is taken back here,
 * right before the unlock, and lock and unlock in one function still
 * have to pair up.
 */
static inline void gs_cluster_unlock(struct gs_cluster *cl)
{
	__acquire(&cl->lock);
	spin_unlock(&cl->lock);
}

#endif /* _GS_CORE_H */
