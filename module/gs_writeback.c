// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswap writeback tier.
 *
 * Pages in the pool (COMPRESSED and RAW entries) can be written back to a
 * backing device, in the form they are stored in (compressed data padded
 * to a page, or the page as is), one backing slot each; the entry then
 * becomes WRITTEN_BACK and holds the backing slot, and the reverse map
 * (gs_backing.c) holds the ghost slot. Same-filled pages are never written
 * back: they cost nothing.
 *
 * A writeback round, one at a time under wb.lock, of the batches that
 * writeback_batch_size makes (pages in flight at once: two batches of
 * half of it, or more of GS_WB_BATCH pages each; one for a single page):
 *  1. collect: under each cluster's lock, copy the chosen objects into the
 *     batch's pages and set GS_FLAG_WB on their entries;
 *  2. allocate contiguous backing slots and start writing each run with
 *     one bio; then collect the next batch while those writes are in
 *     flight;
 *  3. finish, once its writes completed: under the cluster lock again, an
 *     entry that is still the one that was copied (GS_FLAG_WB set, same
 *     object) becomes WRITTEN_BACK and its pool object is freed. An entry
 *     that was freed or overwritten meanwhile lost the flag: its backing
 *     slot is freed again. A failed write clears the flag and leaves the
 *     entry where it was. Nothing is ever dropped before its copy is on
 *     the device.
 *
 * Only a round sets GS_FLAG_WB, rounds are serialised and the batches of
 * a round take disjoint slots (the position only moves forward within a
 * round: a round ends where the cold sweep wraps around). So an entry
 * that carries the flag belongs to exactly one batch in flight: a slot
 * freed and stored again meanwhile (perhaps with a zsmalloc handle of the
 * same value) cannot be mistaken for the one that was copied.
 *
 * Which pages: on demand by kind (idle, huge, incompressible, all), or the
 * cold ones: a clock hand sweeps the table; an entry not read since the
 * hand last passed (COLD flag still set) is written back, the others get
 * the flag and a second chance. Triggers: the pool limit (a store above
 * it writes back synchronously; nearing it kicks a background worker),
 * memory pressure (a shrinker) and the sysfs `writeback` attribute.
 *
 * The tier also owns the other ways to and from the backing device: a
 * page that does not fit the pool is written there directly
 * (gs_wb_write_page()), and WRITTEN_BACK pages are read back from it
 * (gs_wb_read()). It sits on the core and calls it (gs_core.h); the core
 * never calls it. The store (gs_store.c) calls it where a page does not
 * fit the pool or is on the backing device.
 */
#define pr_fmt(fmt) "ghostswap: " fmt

#include <linux/gfp.h>
#include <linux/mempool.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/shrinker.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/wait_bit.h>
#include <linux/highmem.h>
#include <linux/zsmalloc.h>
#include "gs_backing.h"
#include "gs_comp.h"
#include "gs_core.h"
#include "gs_crypt.h"
#include "gs_store.h"
#include "gs_unit.h"
#include "gs_writeback.h"

#define GS_WB_BATCH	32	/* pages per writeback batch, at most */
/* Reads of written-back pages that can always be started: a swap read's. */
#define GS_WB_RB_RESERVE	32
/* Pages one direct write started from a submit path takes at most. */
#define GS_WB_WR_PAGES		32
/* Such writes that can always be started: a few swap writes' worth. */
#define GS_WB_WR_RESERVE	4
/* Pages one run of reads started from a submit path takes at most. */
#define GS_WB_RR_PAGES		32
/* Such runs that can always be started. */
#define GS_WB_RR_RESERVE	4
/* Pages the pool limit's reclaim writes back between looks at the pool. */
#define GS_WB_RECLAIM_STEP	64

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

#define GS_NO_SLOT	U64_MAX

/* ------------------------------------------------------------- budget */

/*
 * Take up to @want pages of the writeback budget. *@charged says whether
 * they came out of it (the budget is in use): what is given back goes
 * back only then, even if the budget was switched on or off meanwhile.
 */
static u64 gs_budget_take(struct gs_store *s, u64 want, bool *charged)
{
	u64 take = want;

	spin_lock(&s->wb.limit_lock);
	*charged = s->wb.limit_enable;
	if (*charged) {
		take = min_t(u64, want, atomic_long_read(&s->wb.budget));
		atomic_long_sub(take, &s->wb.budget);
	}
	spin_unlock(&s->wb.limit_lock);
	return take;
}

static void gs_budget_give(struct gs_store *s, u64 pages, bool charged)
{
	if (!pages || !charged)
		return;
	spin_lock(&s->wb.limit_lock);
	atomic_long_add(pages, &s->wb.budget);
	spin_unlock(&s->wb.limit_lock);
}

/*
 * Switching the budget on or off leaves what is left of it alone, and
 * setting it leaves the switch alone: neither can undo a take.
 */
void gs_store_set_wb_limit_enable(struct gs_store *s, bool enable)
{
	spin_lock(&s->wb.limit_lock);
	WRITE_ONCE(s->wb.limit_enable, enable);
	spin_unlock(&s->wb.limit_lock);
}

void gs_store_set_wb_budget(struct gs_store *s, u64 pages)
{
	spin_lock(&s->wb.limit_lock);
	atomic_long_set(&s->wb.budget, min_t(u64, pages, LONG_MAX));
	spin_unlock(&s->wb.limit_lock);
}

/*
 * Can a writeback move anything: a backing device with a free slot, and
 * budget left if it is in use? If not, the shrinker reports nothing to
 * do and the background writeback is not started, until it can again.
 */
static bool gs_wb_can_progress(struct gs_store *s)
{
	struct gs_backing *bk = s->bk;

	if (!bk || gs_backing_full(bk))
		return false;
	return !READ_ONCE(s->wb.limit_enable) ||
	       atomic_long_read(&s->wb.budget) > 0;
}

/* ------------------------------------------------------ seal, unseal */

/*
 * The page at @src encrypted for backing slot @b into @dst (if encryption
 * is on; @dst may be @src). Returns what to write: @dst, or @src itself
 * without encryption; NULL if encryption failed (then nothing may be
 * written).
 */
static void *gs_wb_encrypt(struct gs_store *s, u64 b, void *src, void *dst)
{
	if (!s->wb.cipher)
		return src;
	if (gs_crypt_encrypt(s->wb.cipher, b, src, dst)) {
		pr_err_ratelimited("cannot encrypt for backing slot %llu: not written\n",
				   b);
		return NULL;
	}
	return dst;
}

/*
 * Make the page that goes to backing slot @b from the page at @src, whose
 * first @len bytes hold data (the rest of a compressed page is padding):
 * their checksum is recorded (if checksums are on), and the page is
 * encrypted (gs_wb_encrypt()).
 */
static void *gs_wb_seal(struct gs_store *s, u64 b, void *src, void *dst,
			unsigned int len)
{
	if (s->wb.checksum)
		gs_backing_set_sum(s->bk, b, gs_backing_sum(src, len));
	return gs_wb_encrypt(s, b, src, dst);
}

/*
 * The checksum of what was written to backing slot @b (which the caller
 * keeps allocated), 0 with checksums off. A read takes it with its pin:
 * the end of the read then checks the page without the reverse map's
 * lock, which a hard interrupt may not take.
 */
static u32 gs_wb_sum_of(struct gs_store *s, u64 b)
{
	return s->wb.checksum ? gs_backing_sum_of(s->bk, b) : 0;
}

/*
 * Check a page just read from backing slot @b (which the caller keeps
 * allocated): decrypt its first @len bytes in place (if encryption is
 * on), then check them against @sum, the checksum of what was written
 * there (gs_wb_sum_of(); if checksums are on). The padding after them is
 * never read: it is neither decrypted nor checked. A mismatch means the
 * device returned other data: the read fails with -EIO, and is counted
 * as a failed read and in bd_sum_errors. Unencrypted, any context.
 */
static int gs_wb_unseal(struct gs_store *s, u64 slot, u64 b, void *page,
			unsigned int len, u32 sum)
{
	if (s->wb.cipher && gs_crypt_decrypt(s->wb.cipher, b, page, len)) {
		pr_err_ratelimited("slot %llu: cannot decrypt backing slot %llu\n",
				   slot, b);
		return -EIO;
	}
	if (!s->wb.checksum || likely(gs_backing_sum(page, len) == sum))
		return 0;
	atomic_long_inc(&s->stats.bd_sum_errors);
	pr_err_ratelimited("slot %llu: backing slot %llu does not hold what was written there (checksum mismatch): read refused\n",
			   slot, b);
	return -EIO;
}

/* ------------------------------------------------------------ collect */

/*
 * Is @e, with age byte @age, wanted by @mode? GS_WB_COLD gives entries
 * without the COLD flag a second chance: *@mark says to set it. The idle
 * modes take what the user marked idle (GS_AGE_IDLE), never what only
 * the cold clock marked.
 */
static bool gs_wb_wanted(unsigned long e, u8 age, enum gs_wb_mode mode,
			 bool *mark)
{
	enum gs_kind kind = gs_entry_kind(e);

	/* A unit is never huge nor incompressible (it would not be one). */
	if (kind == GS_KIND_UNIT &&
	    (mode == GS_WB_HUGE || mode == GS_WB_HUGE_IDLE ||
	     mode == GS_WB_INCOMP))
		return false;
	if ((kind != GS_KIND_COMPRESSED && kind != GS_KIND_RAW &&
	     kind != GS_KIND_UNIT) || e & GS_FLAG_WB)
		return false;
	switch (mode) {
	case GS_WB_COLD:
		*mark = !(e & GS_FLAG_COLD);
		return !*mark;
	case GS_WB_IDLE:
		return age & GS_AGE_IDLE;
	case GS_WB_HUGE:
		return kind == GS_KIND_RAW;
	case GS_WB_HUGE_IDLE:
		return kind == GS_KIND_RAW && age & GS_AGE_IDLE;
	case GS_WB_INCOMP:
		return e & GS_FLAG_INCOMP;
	case GS_WB_ALL:
		return true;
	}
	return false;
}

/*
 * What one hold of a cluster lock may do while collecting: look at
 * GS_HOLD_SCAN entries and copy GS_HOLD_COPY objects (16 KiB) at most,
 * or, once, the chain of a unit (at most 15 pages, 60 KiB) after fewer
 * than that. Then the lock is dropped and taken again: a free of a slot
 * of that cluster (swap_slot_free_notify(), atomic) spins at most that
 * long.
 */
#define GS_HOLD_SCAN	128
#define GS_HOLD_COPY	4

/*
 * Take unit @u, of the run at @first (@cl locked), into @batch from
 * candidate @n on: a candidate per object of its chain, copied.
 */
static void gs_wb_take_unit(struct gs_store *s, struct gs_wb_batch *batch,
			    unsigned int n, struct gs_unit *u, u64 first)
{
	unsigned int j, pieces;

	pieces = gs_unit_chain_copy(s, u, batch->bufs + n);
	for (j = 0; j < pieces; j++) {
		struct gs_wb_candidate *cand = &batch->candidates[n + j];

		cand->slot = first;
		cand->unit = u;
		cand->pieces = pieces;
		cand->aux = gs_unit_obj_size(u, j);
		cand->b = GS_NO_SLOT;
		cand->err = 0;
	}
}

/* Pages to read a unit's chain back into: a reserve of one (ub_pool). */
struct gs_wb_ub {
	void *page[GS_UNIT_MAX_PAGES];
};

static void *gs_wb_ub_alloc(gfp_t gfp, void *data)
{
	struct gs_wb_ub *ub = kzalloc(sizeof(*ub), gfp);
	unsigned int j;

	if (!ub)
		return NULL;
	for (j = 0; j < GS_UNIT_MAX_PAGES; j++) {
		ub->page[j] = (void *)__get_free_page(gfp);
		if (!ub->page[j])
			goto fail;
	}
	return ub;
fail:
	while (j--)
		free_page((unsigned long)ub->page[j]);
	kfree(ub);
	return NULL;
}

/* The reserve's bytes: its one element. */
static size_t gs_wb_ub_bytes(void)
{
	return kmalloc_size_roundup(sizeof(struct gs_wb_ub)) +
	       GS_UNIT_MAX_PAGES * PAGE_SIZE;
}

static void gs_wb_ub_free(void *element, void *data)
{
	struct gs_wb_ub *ub = element;
	unsigned int j;

	for (j = 0; j < GS_UNIT_MAX_PAGES; j++)
		free_page((unsigned long)ub->page[j]);
	kfree(ub);
}

/*
 * The reserve that units on the device are read back into (ub_pool):
 * made by the first round that may take a unit (wb.lock held), so that
 * a store that never writes a unit back never pays for it; kept until
 * the backing device is detached. Without it, units are split.
 */
static void gs_wb_ub_pool_make(struct gs_store *s)
{
	if (s->wb.ub_pool || !s->comp->unit_bytes)
		return;
	s->wb.ub_pool = mempool_create(1, gs_wb_ub_alloc, gs_wb_ub_free, NULL);
	if (s->wb.ub_pool)
		atomic_long_add(gs_wb_ub_bytes(), &s->stats.wb_buffer_bytes);
}

/*
 * Collect up to @max candidates into @batch at slots from *@pos up to
 * @lim (exclusive), advancing *@pos past what was looked at. A page of a
 * unit that is wanted brings its unit whole (gs_wb_take_unit()), if the
 * batch has room for its chain; else the batch ends before it, or if
 * even an empty batch could not take it, the unit is split
 * (gs_unit_split_at(), with the cluster lock dropped), its live pages,
 * stored one by one, then candidates like any other. A unit on the
 * device already, or split, or taken by this round, is passed over.
 */
static unsigned int gs_wb_collect(struct gs_store *s,
				  struct gs_wb_batch *batch,
				  enum gs_wb_mode mode, u64 *pos, u64 lim,
				  unsigned int max)
{
	unsigned int n = 0, i, end, len, copied;
	struct gs_cluster *cl;
	bool mark, unit, full = false;
	unsigned long e;
	u64 base;

	while (n < max && *pos < lim && !full) {
		cl = gs_scan_next(s, pos, GS_HOLD_SCAN, &i, &end);
		if (!cl)
			break;
		base = *pos - i;
		if (*pos >= lim) {
			gs_cluster_unlock(cl);
			break;
		}
		if (lim - base < end)
			end = lim - base;
		unit = false;
		for (copied = 0; i < end && n < max && copied < GS_HOLD_COPY;
		     i++) {
			struct gs_wb_candidate *cand = &batch->candidates[n];

			e = atomic_long_read(&cl->table[i]);
			mark = false;
			if (!gs_wb_wanted(e, cl->age[i], mode, &mark)) {
				/* Atomic: a reader may unpin it meanwhile. */
				if (mark)
					atomic_long_or(GS_FLAG_COLD,
						       &cl->table[i]);
				continue;
			}
			if (gs_entry_kind(e) == GS_KIND_UNIT) {
				struct gs_unit *u = gs_entry_unit(e);
				u64 first = (base + i) & ~(u64)(u->pages - 1);

				if (u->backed || u->wb || u->split)
					continue;
				if (gs_unit_nobj(u) > max || !s->wb.ub_pool) {
					unit = true;	/* never fits: split */
					break;
				}
				if (gs_unit_nobj(u) > max - n) {
					full = true;	/* the next batch's */
					break;
				}
				gs_unit_wb_begin(cl, u);
				gs_wb_take_unit(s, batch, n, u, first);
				n += gs_unit_nobj(u);
				copied += gs_unit_nobj(u);
				/* Its other slots are its. */
				i = first + u->pages - 1 - base;
				continue;
			}
			cand->pieces = 0;
			cand->aux = gs_entry_kind(e) == GS_KIND_RAW ? 0 :
				    gs_slot_aux(cl, i, e);
			len = cand->aux ?: PAGE_SIZE;
			gs_obj_copy(s, e, batch->bufs[n], len);
			memset(batch->bufs[n] + len, 0, PAGE_SIZE - len);
			cand->e = e | GS_FLAG_WB;
			atomic_long_or(GS_FLAG_WB, &cl->table[i]);
			cand->slot = base + i;
			cand->b = GS_NO_SLOT;
			cand->err = 0;
			n++;
			copied++;
		}
		*pos = base + i;
		gs_cluster_unlock(cl);
		if (unit && gs_unit_split_at(s, *pos) <= 0)
			(*pos)++;
		cond_resched();
	}
	return n;
}

/* ------------------------------------------------------- write, finish */

/*
 * Give the candidates backing slots and start writing them, a bio per
 * run of contiguous slots. Returns 0, or -ENOSPC / -ENOMEM if some got no
 * slot (they stay where they are).
 */
static int gs_wb_start(struct gs_store *s, struct gs_wb_batch *batch)
{
	struct gs_backing *bk = s->bk;
	unsigned int j = 0, k;
	struct gs_wb_run *r;
	int got, ret = 0;
	u64 b;

	for (k = 0; k < batch->n; k++)
		batch->owners[k] = batch->candidates[k].slot;
	while (j < batch->n) {
		got = gs_backing_alloc(bk, batch->owners + j, batch->n - j, &b,
				       U64_MAX, false);
		if (got <= 0) {
			ret = got ?: -ENOSPC;
			break;
		}
		for (k = 0; k < got; k++) {
			batch->candidates[j + k].b = b + k;
			batch->candidates[j + k].run = batch->nr_runs;
			/* Never plaintext on the device: write zeroes, fail it. */
			if (!gs_wb_seal(s, b + k, batch->bufs[j + k],
					batch->bufs[j + k],
					batch->candidates[j + k].aux ?:
					PAGE_SIZE)) {
				memset(batch->bufs[j + k], 0, PAGE_SIZE);
				batch->candidates[j + k].err = -EIO;
			}
		}
		r = &batch->runs[batch->nr_runs++];
		r->first = b;
		r->nr = got;
		gs_backing_write_start(bk, b, batch->bufs + j, got, &r->io);
		j += got;
	}
	return ret;
}

/* Wait for a batch's writes; returns -EIO if one failed. */
static int gs_wb_wait(struct gs_store *s, struct gs_wb_batch *batch)
{
	unsigned int k;
	int ret = 0;

	for (k = 0; k < batch->nr_runs; k++) {
		struct gs_wb_run *r = &batch->runs[k];
		int err = gs_backing_write_wait(&r->io);

		if (err) {
			atomic_long_add(r->nr, &s->stats.bd_write_errors);
			pr_err_ratelimited("cannot write %u pages at backing slot %llu: %d\n",
					   r->nr, r->first, err);
			ret = -EIO;
		} else {
			atomic_long_add(r->nr, &s->stats.bd_writes);
		}
	}
	for (k = 0; k < batch->n; k++) {
		struct gs_wb_candidate *cand = &batch->candidates[k];

		if (cand->b != GS_NO_SLOT && !cand->err)
			cand->err = batch->runs[cand->run].io.err;
	}
	return ret;
}

/*
 * Settle one candidate: the entry moves to the backing device if it is
 * still the one that was copied and the write succeeded; else it stays
 * (or is gone) and the backing slot is given back. Returns true if moved.
 */
static bool gs_wb_finish(struct gs_store *s, struct gs_wb_candidate *cand)
{
	unsigned int i = cand->slot & (GS_CLUSTER_SLOTS - 1);
	bool same, moved = false;
	struct gs_cluster *cl;
	unsigned long e = 0;

	cl = gs_cluster_get(s, cand->slot >> GS_CLUSTER_SHIFT, 0);
	if (cl)
		e = atomic_long_read(&cl->table[i]);
	/*
	 * A read meanwhile may have cleared COLD, and may hold the object
	 * pinned; that changes nothing but who frees the object.
	 */
	same = cl && (e | GS_FLAG_COLD | GS_FLAG_PINNED) ==
		     (cand->e | GS_FLAG_COLD | GS_FLAG_PINNED);
	if (same && cand->b != GS_NO_SLOT && !cand->err) {
		if (gs_entry_kind(e) == GS_KIND_RAW) {
			gs_stat_dec(&s->stats, GS_STAT_HUGE_PAGES);
			gs_stat_add(&s->stats, GS_STAT_COMPR_BYTES,
				    -(long)PAGE_SIZE);
		} else {
			gs_stat_dec(&s->stats, GS_STAT_COMP_PAGES);
			gs_stat_add(&s->stats, GS_STAT_COMPR_BYTES,
				    -(long)cand->aux);
		}
		gs_stat_inc(&s->stats, GS_STAT_WB_PAGES);
		/* Compressed data keeps the algorithm it needs. */
		e = gs_entry_take(cl, i, gs_entry_aux(GS_KIND_WRITTEN_BACK,
						      cand->aux ?
						      e & GS_FLAG_PRIO : 0,
						      cand->b, cand->aux));
		/* A reader has it mapped: the reader frees it. */
		if (!(e & GS_FLAG_PINNED))
			zs_free(s->pool, gs_handle_decode(gs_entry_value(e)));
		gs_aux_hi_set(cl->aux_hi, i, gs_aux_hi(cand->aux));
		moved = true;
	} else if (same) {
		atomic_long_andnot(GS_FLAG_WB, &cl->table[i]);
	}
	if (cl)
		gs_cluster_unlock(cl);
	if (!moved && cand->b != GS_NO_SLOT)
		gs_backing_free(s->bk, cand->b);
	return moved;
}

/*
 * Settle the unit whose chain is candidates @c[0..pieces-1]: it moves to
 * the device if every object reached it and the unit is as it was taken;
 * else the backing slots are given back. Returns the pages written.
 */
static unsigned int gs_wb_finish_unit(struct gs_store *s,
				      struct gs_wb_candidate *c)
{
	unsigned int j, pieces = c->pieces;
	u64 slots[GS_UNIT_MAX_PAGES];
	bool ok = true;

	for (j = 0; j < pieces; j++) {
		slots[j] = c[j].b;
		if (c[j].b == GS_NO_SLOT || c[j].err)
			ok = false;
	}
	if (gs_unit_wb_end(s, c->slot, c->unit, ok ? slots : NULL))
		return pieces;
	for (j = 0; j < pieces; j++)
		if (c[j].b != GS_NO_SLOT)
			gs_backing_free(s->bk, c[j].b);
	return 0;
}

/* Take wb.lock; with GS_WB_TRY, only if it is free. */
#define GS_WB_TRY	1

/* Wait for a batch, settle its candidates; returns the pages moved. */
static u64 gs_wb_settle(struct gs_store *s, struct gs_wb_batch *batch,
			int *err)
{
	unsigned int k, n;
	u64 moved = 0;

	if (gs_wb_wait(s, batch))
		*err = -EIO;
	for (k = 0; k < batch->n; k++) {
		struct gs_wb_candidate *cand = &batch->candidates[k];

		if (cand->pieces) {
			/* Its chain is cand[0..pieces-1]. */
			n = gs_wb_finish_unit(s, cand);
			moved += n;
			gs_budget_give(s, cand->pieces - n, batch->charged);
			k += cand->pieces - 1;
			continue;
		}
		if (gs_wb_finish(s, cand))
			moved++;
		/* Only pages that reached the device use budget. */
		else if (cand->b == GS_NO_SLOT || cand->err)
			gs_budget_give(s, 1, batch->charged);
	}
	return moved;
}

/*
 * The writeback loop, a round at a time. wb.lock is taken per round, so
 * that stores waiting for room and other writebacks get their turn
 * between rounds; the GS_FLAG_WB of a round's entries never outlives its
 * hold of the lock.
 */
static int __gs_store_writeback(struct gs_store *s, enum gs_wb_mode mode,
				u64 lo, u64 hi, u64 max, unsigned int flags,
				u64 *done)
{
	unsigned int noio = memalloc_noio_save();
	bool cold = mode == GS_WB_COLD, stop = false, wrapped;
	unsigned int nb, k, want, laps = 0;
	int err, ret = 0;
	u64 pos = lo, queued;

	*done = 0;
	while (!stop && *done < max && !fatal_signal_pending(current)) {
		if (!(flags & GS_WB_TRY))
			mutex_lock(&s->wb.lock);
		else if (!mutex_trylock(&s->wb.lock))
			break;
		if (cold)
			pos = s->wb.hand;
		gs_wb_ub_pool_make(s);
		/* Full: collecting would copy and flag pages for nothing. */
		if (gs_backing_full(s->bk)) {
			mutex_unlock(&s->wb.lock);
			ret = -ENOSPC;
			break;
		}
		/*
		 * Fill the round's batches: each one is collected while the
		 * writes of the one before are in flight.
		 */
		queued = 0;
		for (nb = 0; nb < s->wb.nr_batches;) {
			struct gs_wb_batch *batch = &s->wb.batches[nb++];

			want = gs_budget_take(s, min_t(u64, max - *done - queued,
						       batch->cap),
					      &batch->charged);
			batch->n = want ? gs_wb_collect(s, batch, mode, &pos,
							hi, want) : 0;
			batch->nr_runs = 0;
			gs_budget_give(s, want - batch->n, batch->charged);
			err = batch->n ? gs_wb_start(s, batch) : 0;
			queued += batch->n;
			if (err)
				ret = err;
			/* The cold sweep goes round at most twice: mark, take. */
			wrapped = cold && pos >= hi;
			if (wrapped) {
				pos = 0;
				laps++;
			}
			if (!want) {
				ret = -EIO;	/* the budget ran out (zram's) */
				stop = true;
			}
			if (err == -ENOSPC || err == -ENOMEM || laps > 2 ||
			    (!batch->n && !cold))
				stop = true;
			/* A wrapped sweep may meet this round's slots again. */
			if (stop || wrapped || *done + queued >= max)
				break;
		}
		for (k = 0; k < nb; k++)
			*done += gs_wb_settle(s, &s->wb.batches[k], &ret);
		if (cold)
			s->wb.hand = pos;
		mutex_unlock(&s->wb.lock);
		cond_resched();
	}
	memalloc_noio_restore(noio);
	return ret;
}

int gs_store_writeback(struct gs_store *s, enum gs_wb_mode mode, u64 max,
		       u64 *done)
{
	*done = 0;
	if (!s->bk)
		return -ENODEV;
	return __gs_store_writeback(s, mode, 0, s->nr_slots, max, 0, done);
}

int gs_store_writeback_range(struct gs_store *s, enum gs_wb_mode mode,
			     u64 lo, u64 hi, u64 max, u64 *done)
{
	*done = 0;
	if (!s->bk)
		return -ENODEV;
	if (mode == GS_WB_COLD || lo >= hi || hi > s->nr_slots)
		return -EINVAL;
	return __gs_store_writeback(s, mode, lo, hi, max, 0, done);
}

/* ----------------------------------------------------- pool limit, LRU */

void gs_wb_reclaim(struct gs_store *s, unsigned long target)
{
	bool compacted = false;
	u64 done;
	int i;

	for (i = 0; i < 64 && zs_get_total_pages(s->pool) > target &&
	     gs_wb_can_progress(s); i++) {
		__gs_store_writeback(s, GS_WB_COLD, 0, s->nr_slots,
				     GS_WB_RECLAIM_STEP, 0, &done);
		if (!done) {
			/* Freed objects may sit in sparse zspages. */
			if (compacted)
				break;
			zs_compact(s->pool);
			compacted = true;
		}
	}
}

static void gs_wb_work(struct work_struct *work)
{
	struct gs_store *s = container_of(work, struct gs_store, wb.work);
	unsigned long limit = READ_ONCE(s->limit_pages);

	if (limit)
		gs_wb_reclaim(s, limit - limit / 8);
}

void gs_wb_kick(struct gs_store *s, unsigned long pages)
{
	if (s->bk && gs_pool_over(s, pages + READ_ONCE(s->limit_pages) / 16) &&
	    gs_wb_can_progress(s))
		queue_work(s->wb.wq, &s->wb.work);
}

/*
 * Whether reclaim with @gfp may wait for our writeback: it needs I/O and,
 * since the backing device may be a loop device over a file (which
 * ghostswapctl sets up), the filesystem too. A GFP_NOFS reclaimer may
 * hold a lock of that filesystem that the loop device's I/O waits for.
 * Nor from inside a block driver's submission (current->bio_list set: a
 * stacked device's, or our own): a bio submitted there is only queued
 * until that submission returns, so waiting for its end never ends.
 */
static bool gs_shrink_may_write(gfp_t gfp)
{
	if (current->bio_list)
		return false;
	return (gfp & (__GFP_IO | __GFP_FS)) == (__GFP_IO | __GFP_FS);
}

static unsigned long gs_shrink_count(struct shrinker *sh,
				     struct shrink_control *sc)
{
	struct gs_store *s = sh->private_data;
	unsigned long n;

	/*
	 * Nothing to gain from us while writeback cannot move a page, or
	 * from a reclaimer that cannot wait for it.
	 */
	if (!gs_shrink_may_write(sc->gfp_mask) ||
	    !READ_ONCE(s->wb.use_shrinker) || !gs_wb_can_progress(s))
		return 0;
	n = gs_stat_read(&s->stats, GS_STAT_COMP_PAGES) +
	    gs_stat_read(&s->stats, GS_STAT_HUGE_PAGES);
	return n ?: SHRINK_EMPTY;
}

static unsigned long gs_shrink_scan(struct shrinker *sh,
				    struct shrink_control *sc)
{
	struct gs_store *s = sh->private_data;
	u64 done = 0;

	/*
	 * No I/O from a context that must not do any or must not enter a
	 * filesystem, nor from our own; never wait for a writeback that is
	 * running (it may be what allocates memory).
	 */
	if (!gs_shrink_may_write(sc->gfp_mask) ||
	    !READ_ONCE(s->wb.use_shrinker) || !gs_wb_can_progress(s))
		return SHRINK_STOP;
	__gs_store_writeback(s, GS_WB_COLD, 0, s->nr_slots, sc->nr_to_scan,
			     GS_WB_TRY, &done);
	return done ?: SHRINK_STOP;
}

/* ------------------------------------------------------- direct stores */

/*
 * Store a page on the backing device itself, replacing what the slot
 * held. The page goes out as it is: a backing slot takes a page whatever
 * it holds, so there is nothing to gain from compressing it, and no
 * stream is needed. No lock is held across the write: a free or another
 * store of the slot meanwhile is settled when the entry is installed, and
 * backing compaction pins the entries it copies (gs_relocate()), so a
 * backing slot freed and taken again meanwhile cannot be mistaken.
 */
int gs_wb_write_page(struct gs_store *s, u64 slot, const void *src,
		     gfp_t gfp)
{
	struct gs_backing *bk = s->bk;
	struct page *bounce = NULL;
	bool charged;
	void *data;
	int ret;
	u64 b;

	if (!bk)
		return -ENOMEM;
	/* Encrypted, the page goes through one of our own. */
	if (s->wb.cipher) {
		bounce = alloc_page(gfp | __GFP_NOWARN);
		if (!bounce)
			return -ENOMEM;
	}
	if (!gs_budget_take(s, 1, &charged)) {
		ret = -ENOSPC;
		goto out_bounce;
	}
	ret = gs_backing_alloc_at(bk, &slot, 1, &b, false);
	if (ret <= 0) {
		ret = ret ?: -ENOSPC;
		goto out;
	}
	data = gs_wb_seal(s, b, (void *)src,
			  bounce ? page_address(bounce) : NULL, PAGE_SIZE);
	ret = data ? bk->ops->write(bk, b, &data, 1) : -EIO;
	if (ret) {
		atomic_long_inc(&s->stats.bd_write_errors);
		gs_backing_free(bk, b);
		pr_err_ratelimited("slot %llu: cannot write backing slot %llu: %d\n",
				   slot, b, ret);
		ret = -EIO;
		goto out;
	}
	atomic_long_inc(&s->stats.bd_writes);
	ret = gs_slot_install(s, slot, gs_entry(GS_KIND_WRITTEN_BACK, 0, b), 0,
			      gfp);
out:
	if (ret)
		gs_budget_give(s, 1, charged);
out_bounce:
	if (bounce)
		__free_page(bounce);
	return ret;
}

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

static void gs_wb_io_end(struct gs_bk_io *io)
{
	struct gs_wb_io *st = container_of(io, struct gs_wb_io, io);

	if (st->fast && st->fast(st))
		return;
	queue_work(st->s->wb.end_wq, &st->work);
}

static void gs_wb_io_init(struct gs_wb_io *st, struct gs_store *s,
			  work_func_t finish, bool (*fast)(struct gs_wb_io *st))
{
	st->s = s;
	st->io.end = gs_wb_io_end;
	st->fast = fast;
	INIT_WORK(&st->work, finish);
}

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

/* The entry of the write's page @i, unpinned. */
static unsigned long gs_wb_wr_entry(const struct gs_wb_wr *wr,
				    unsigned int i)
{
	return gs_entry(GS_KIND_WRITTEN_BACK, 0, wr->b + i);
}

/* Encrypted copies from @from on go back. */
static void gs_wb_wr_unbounce(struct gs_wb_wr *wr, unsigned int from)
{
	unsigned int i;

	if (!wr->bounced)
		return;
	for (i = from; i < wr->nr; i++) {
		if (wr->pages[i])
			__free_page(wr->pages[i]);
		wr->pages[i] = NULL;
	}
}

/* Started reads and writes: one less in flight. */
static void gs_wb_io_done(struct gs_store *s)
{
	if (atomic_dec_and_test(&s->wb.inflight))
		wake_up_var(&s->wb.inflight);
}

/* The write is handed back: free what it held. Any context. */
static void gs_wb_wr_release(struct gs_store *s, struct gs_wb_wr *wr)
{
	unsigned int i;

	for_each_set_bit(i, &wr->orphans, wr->nr)
		gs_backing_free(s->bk, wr->b + i);
	gs_wb_wr_unbounce(wr, 0);
	mempool_free(wr, s->wb.wr_pool);
	gs_wb_io_done(s);
}

/*
 * The end of the write, in its own context: the entries are unpinned and
 * the write handed back there. A failed write, and backing slots let go
 * of meanwhile (freeing one takes the reverse map's lock), are left to
 * the worker.
 */
static bool gs_wb_wr_fast(struct gs_wb_io *io)
{
	struct gs_wb_wr *wr = container_of(io, struct gs_wb_wr, st);
	struct gs_store *s = io->s;
	unsigned long e;
	unsigned int i;

	if (io->io.err)
		return false;
	for (i = 0; i < wr->nr; i++) {
		e = gs_wb_wr_entry(wr, i);
		if (!gs_slot_replace(s, wr->slot + i, e | GS_FLAG_IO, e))
			__set_bit(i, &wr->orphans);
	}
	atomic_long_add(wr->nr, &s->stats.bd_writes);
	wr->end(wr->arg, 0);
	wr->ended = true;
	if (wr->orphans)
		return false;
	gs_wb_wr_release(s, wr);
	return true;
}

/*
 * On the worker: after a failed write its pages are not on the device,
 * so the entries installed for them go (a slot freed or overwritten
 * meanwhile has let go of its backing slot already), then the write is
 * handed back with -EIO. The slots read as empty, as after a discard:
 * what they held before was replaced when the write started.
 */
static void gs_wb_wr_finish(struct work_struct *work)
{
	struct gs_wb_wr *wr = container_of(work, struct gs_wb_wr, st.work);
	struct gs_store *s = wr->st.s;
	unsigned int i;

	if (!wr->ended) {
		atomic_long_add(wr->nr, &s->stats.bd_write_errors);
		pr_err_ratelimited("slot %llu: cannot write backing slots %llu-%llu: %d\n",
				   wr->slot, wr->b, wr->b + wr->nr - 1,
				   wr->st.io.err);
		for (i = 0; i < wr->nr; i++) {
			gs_slot_drop(s, wr->slot + i,
				     gs_wb_wr_entry(wr, i) | GS_FLAG_IO);
			__set_bit(i, &wr->orphans);
		}
		gs_budget_give(s, wr->nr, wr->charged);
		wr->end(wr->arg, -EIO);
	}
	gs_wb_wr_release(s, wr);
}

int gs_wb_write_start(struct gs_store *s, u64 slot, struct page *const *pages,
		      unsigned int nr, gs_io_end_t end, void *arg)
{
	/* From a submit path: nothing here may wait, not even for memory. */
	const gfp_t gfp = GFP_NOWAIT | __GFP_NOWARN;
	u64 owners[GS_WB_WR_PAGES];
	struct gs_backing *bk = s->bk;
	struct gs_wb_wr *wr;
	unsigned int i;
	void *data;
	int got;

	if (!bk || !bk->ops->submit)
		return -EAGAIN;
	wr = mempool_alloc(s->wb.wr_pool, gfp);
	if (!wr)
		return -EAGAIN;
	memset(wr, 0, sizeof(*wr));
	nr = gs_budget_take(s, min_t(unsigned int, nr, GS_WB_WR_PAGES),
			    &wr->charged);
	if (!nr)
		goto out_free;
	for (i = 0; i < nr; i++)
		owners[i] = slot + i;
	got = gs_backing_alloc_at(bk, owners, nr, &wr->b, true);
	gs_budget_give(s, nr - max(got, 0), wr->charged);
	if (got <= 0)
		goto out_free;
	wr->nr = got;
	/* Encrypted, the pages go through copies of our own. */
	wr->bounced = s->wb.cipher;
	for (i = 0; i < wr->nr; i++) {
		if (wr->bounced) {
			wr->pages[i] = alloc_page(gfp);
			if (!wr->pages[i])
				goto out_slots;
		}
		data = gs_wb_seal(s, wr->b + i, page_address(pages[i]),
				  wr->bounced ? page_address(wr->pages[i]) :
						NULL, PAGE_SIZE);
		if (!data)
			goto out_slots;
		if (!wr->bounced)
			wr->pages[i] = pages[i];
	}
	/* Installed pinned; without memory for a cluster, the run ends. */
	for (i = 0; i < wr->nr; i++)
		if (gs_slot_install(s, slot + i,
				    gs_wb_wr_entry(wr, i) | GS_FLAG_IO, 0, gfp))
			break;
	if (i < wr->nr) {
		/* gs_slot_install() gave back the backing slot of page i. */
		gs_budget_give(s, wr->nr - i, wr->charged);
		gs_wb_wr_unbounce(wr, i);
		for (got = i + 1; got < wr->nr; got++)
			gs_backing_free(bk, wr->b + got);
		wr->nr = i;
		if (!i)
			goto out_free;
	}
	got = wr->nr;
	wr->slot = slot;
	wr->end = end;
	wr->arg = arg;
	gs_wb_io_init(&wr->st, s, gs_wb_wr_finish, gs_wb_wr_fast);
	atomic_inc(&s->wb.inflight);
	/*
	 * Submitted, the write may end and be finished (@wr freed) on
	 * another CPU before the submit returns: @wr is not ours any more.
	 */
	if (!gs_backing_submit(bk, true, wr->b, wr->pages, got, &wr->st.io))
		return got;
	gs_wb_io_done(s);
	/* Pinned, the entries left their backing slots to us. */
	for (i = 0; i < wr->nr; i++)
		gs_slot_drop(s, slot + i, gs_wb_wr_entry(wr, i) | GS_FLAG_IO);

out_slots:
	for (i = 0; i < wr->nr; i++)
		gs_backing_free(bk, wr->b + i);
	gs_budget_give(s, wr->nr, wr->charged);
out_free:
	gs_wb_wr_unbounce(wr, 0);
	mempool_free(wr, s->wb.wr_pool);
	return -EAGAIN;
}

/* ------------------------------------------------------------- reads */

/*
 * Decompress @len bytes that are at @dst into @dst, through a stream, with
 * the algorithm of @prio.
 */
static int gs_decompress_in_place(struct gs_store *s, void *dst,
				  unsigned int len, unsigned int prio)
{
	struct gs_stream *st = gs_stream_get(s->comp);
	int ret;

	memcpy(st->buf, dst, len);
	ret = gs_decompress(s->comp, st, prio, st->buf, len, dst);
	gs_stream_put(st);
	return ret;
}

/*
 * Read the chain of unit @u (counted as read by us) back from the device
 * and decompress it: all of its pages into @dst (@k < 0), or into the
 * stream's unit buffer, from which its page @k is copied to @dst. Each
 * slot is checked (and decrypted) as any page read back. No lock and no
 * stream is held across the I/O.
 */
static int gs_wb_unit_load(struct gs_store *s, struct gs_unit *u, u64 slot,
			   void *dst, int k)
{
	struct gs_backing *bk = s->bk;
	struct gs_stream *st;
	struct gs_wb_ub *ub;
	unsigned int j, len;
	int ret = 0;

	ub = mempool_alloc(s->wb.ub_pool, GFP_NOIO);
	for (j = 0; j < gs_unit_nobj(u) && !ret; j++) {
		len = gs_unit_obj_size(u, j);
		ret = bk->ops->read(bk, u->obj[j], ub->page[j]);
		if (ret)
			pr_err_ratelimited("slot %llu: cannot read backing slot %llu: %d\n",
					   slot, (u64)u->obj[j], ret);
		else
			ret = gs_wb_unseal(s, slot, u->obj[j], ub->page[j],
					   len, gs_wb_sum_of(s, u->obj[j]));
		atomic_long_inc(ret ? &s->stats.bd_read_errors :
				&s->stats.bd_reads);
	}
	if (!ret) {
		st = gs_stream_get(s->comp);
		ret = gs_unit_unpack_pieces(s, st, u, ub->page,
					    k < 0 ? dst : NULL);
		if (!ret && k >= 0)
			copy_page(dst, st->ubuf + k * PAGE_SIZE);
		gs_stream_put(st);
		if (ret)
			pr_err_ratelimited("slot %llu: %s cannot decompress a unit of %u bytes read back: %d\n",
					   slot, gs_comp_name(s->comp, u->prio) ?: "?",
					   u->len, ret);
	}
	mempool_free(ub, s->wb.ub_pool);
	return ret ? -EIO : 0;
}

/*
 * A page of a unit on the device (gs_unit.h): the unit counted as read
 * (so its slots stay), its chain read back whole and decompressed once
 * into a stream's unit buffer, the page copied out of it. The next pages
 * of the unit read on that stream are copies, as for a unit in the pool.
 */
static int gs_wb_read_unit(struct gs_store *s, u64 slot, void *dst)
{
	struct gs_cluster *cl;
	struct gs_stream *st;
	struct gs_unit *u;
	unsigned int k;
	bool cached;
	int ret = 0;

	u = gs_unit_bk_read_begin(s, slot, &cl);
	if (IS_ERR(u)) {
		/* Its slots are being moved: wait for that. */
		schedule_timeout_uninterruptible(1);
		return -EAGAIN;
	}
	if (!u)
		return -ESTALE;
	k = gs_unit_index(u, slot & (u->pages - 1));
	atomic_long_inc(&s->stats.unit_part_reads);
	st = gs_stream_get(s->comp);
	cached = st->ubuf_seq == u->seq;
	if (cached) {
		atomic_long_inc(&s->stats.unit_part_cached);
		copy_page(dst, st->ubuf + k * PAGE_SIZE);
	}
	gs_stream_put(st);
	/* Not in this CPU's copy: read it back. */
	if (!cached)
		ret = gs_wb_unit_load(s, u, slot, dst, k);
	gs_unit_bk_read_end(s, cl, slot, u, 0);
	return ret;
}

int gs_wb_read_unit_whole(struct gs_store *s, u64 first, void *dst,
			  unsigned int pages)
{
	struct gs_cluster *cl;
	struct gs_unit *u;
	int ret;

	u = gs_unit_bk_read_begin(s, first, &cl);
	if (IS_ERR_OR_NULL(u))
		return u ? PTR_ERR(u) : -ESTALE;
	/* Every slot of the run its own, as gs_store_read_unit_nowait() saw. */
	if (u->pages != pages || u->live != GENMASK(pages - 1, 0) ||
	    u->held != u->live) {
		gs_unit_bk_read_end(s, cl, first, u, 0);
		return -ESTALE;
	}
	ret = gs_wb_unit_load(s, u, first, dst, -1);
	if (!ret)
		atomic_long_inc(&s->stats.unit_reads);
	gs_unit_bk_read_end(s, cl, first, u, 0);
	return ret;
}

/*
 * The entry is pinned (GS_FLAG_IO) for the duration of the I/O: a
 * free or overwrite meanwhile leaves the backing slot allocated, and we
 * free it when we find the entry gone, so a backing slot is never reused
 * under a read of it. No lock and no stream is held across the I/O.
 */
int gs_wb_read(struct gs_store *s, u64 slot, void *dst)
{
	unsigned int i = slot & (GS_CLUSTER_SLOTS - 1);
	struct gs_cluster *cl;
	unsigned int len;
	unsigned long e;
	int ret;
	u64 b;

	cl = gs_cluster_get(s, slot >> GS_CLUSTER_SHIFT, 0);
	if (!cl)
		return -EAGAIN;
	e = atomic_long_read(&cl->table[i]);
	if (gs_entry_kind(e) == GS_KIND_UNIT) {
		gs_cluster_unlock(cl);
		ret = gs_wb_read_unit(s, slot, dst);
		/* Else it is in the pool again, or gone: look again. */
		return ret == -ESTALE ? -EAGAIN : ret;
	}
	if (gs_entry_kind(e) != GS_KIND_WRITTEN_BACK || e & GS_FLAG_IO) {
		gs_cluster_unlock(cl);
		/* Another reader of this very slot: wait for it. */
		if (gs_entry_kind(e) == GS_KIND_WRITTEN_BACK)
			schedule_timeout_uninterruptible(1);
		return -EAGAIN;
	}
	b = gs_entry_value(e);
	len = gs_slot_aux(cl, i, e);
	atomic_long_set(&cl->table[i], e | GS_FLAG_IO);
	gs_cluster_unlock(cl);

	ret = s->bk->ops->read(s->bk, b, dst);
	if (ret)
		pr_err_ratelimited("slot %llu: cannot read backing slot %llu: %d\n",
				   slot, b, ret);
	else
		ret = gs_wb_unseal(s, slot, b, dst, len ?: PAGE_SIZE,
				   gs_wb_sum_of(s, b));
	atomic_long_inc(ret ? &s->stats.bd_read_errors : &s->stats.bd_reads);

	/* Unpin; if the entry went away meanwhile, the slot is ours to free. */
	if (!gs_slot_replace(s, slot, e | GS_FLAG_IO, e))
		gs_backing_free(s->bk, b);
	if (ret)
		return -EIO;
	if (len) {
		ret = gs_decompress_in_place(s, dst, len, gs_entry_prio(e));
		if (ret)
			pr_err_ratelimited("slot %llu: %s cannot decompress %u bytes from backing slot %llu: %d\n",
					   slot, gs_comp_name(s->comp,
							      gs_entry_prio(e)) ?: "?",
					   len, b, ret);
	}
	return ret;
}

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
 * Check what was read (against the checksum taken with the pin), unpin
 * the entry with no lock (gs_slot_replace()), decompress; returns 0 or
 * an errno. If the entry let go of the backing slot meanwhile, the slot
 * is ours to free: rb->orphan. Any context for a page stored as it is
 * and not encrypted; else process context (a stream, the cipher).
 */
static int gs_wb_rb_done(struct gs_store *s, struct gs_wb_rb *rb)
{
	int ret = rb->st.io.err;
	struct gs_stream *st;
	void *dst;

	if (ret) {
		pr_err_ratelimited("slot %llu: cannot read backing slot %llu: %d\n",
				   rb->slot, rb->b, ret);
		ret = -EIO;
	} else if (rb->data) {
		ret = gs_wb_unseal(s, rb->slot, rb->b, page_address(rb->data),
				   rb->len, rb->sum);
	} else {
		dst = kmap_local_page(rb->page);
		ret = gs_wb_unseal(s, rb->slot, rb->b, dst, PAGE_SIZE, rb->sum);
		kunmap_local(dst);
	}
	atomic_long_inc(ret ? &s->stats.bd_read_errors : &s->stats.bd_reads);
	rb->orphan = !gs_slot_replace(s, rb->slot, rb->e | GS_FLAG_IO,
				      rb->e);
	if (!ret && rb->data) {
		dst = kmap_local_page(rb->page);
		st = gs_stream_get(s->comp);
		ret = gs_decompress(s->comp, st, gs_entry_prio(rb->e),
				    page_address(rb->data), rb->len, dst);
		gs_stream_put(st);
		kunmap_local(dst);
		if (ret)
			pr_err_ratelimited("slot %llu: %s cannot decompress %u bytes from backing slot %llu: %d\n",
					   rb->slot,
					   gs_comp_name(s->comp,
							gs_entry_prio(rb->e)) ?: "?",
					   rb->len, rb->b, ret);
	}
	if (!ret)
		flush_dcache_page(rb->page);
	return ret;
}

/* The read is handed back: free what it held. */
static void gs_wb_rb_release(struct gs_store *s, struct gs_wb_rb *rb)
{
	if (rb->orphan)
		gs_backing_free(s->bk, rb->b);
	if (rb->data)
		__free_page(rb->data);
	mempool_free(rb, s->wb.rb_pool);
	gs_wb_io_done(s);
}

static void gs_wb_rb_finish(struct work_struct *work)
{
	struct gs_wb_rb *rb = container_of(work, struct gs_wb_rb, st.work);
	struct gs_store *s = rb->st.s;

	if (!rb->ended)
		rb->end(rb->arg, gs_wb_rb_done(s, rb));
	gs_wb_rb_release(s, rb);
}

/*
 * The end of the read, in its own context: a page stored as it is and
 * not encrypted is checked, unpinned and handed back there. Only an
 * orphaned backing slot is left to the worker: freeing it takes the
 * reverse map's lock.
 */
static bool gs_wb_rb_fast(struct gs_wb_io *io)
{
	struct gs_wb_rb *rb = container_of(io, struct gs_wb_rb, st);
	struct gs_store *s = io->s;

	if (rb->data || s->wb.cipher)
		return false;
	rb->end(rb->arg, gs_wb_rb_done(s, rb));
	rb->ended = true;
	if (rb->orphan)
		return false;
	gs_wb_rb_release(s, rb);
	return true;
}

int gs_wb_read_start(struct gs_store *s, u64 slot, struct page *page,
		     gs_io_end_t end, void *arg)
{
	/* From a submit path: nothing here may wait, not even for memory. */
	const gfp_t gfp = GFP_NOWAIT | __GFP_NOWARN;
	unsigned int i = slot & (GS_CLUSTER_SLOTS - 1);
	struct gs_cluster *cl;
	struct gs_wb_rb *rb;
	unsigned long e;
	int ret;

	if (!s->bk->ops->read_start)
		return -EAGAIN;
	/* A reserve of them: one swap read's worth never waits for memory. */
	rb = mempool_alloc(s->wb.rb_pool, gfp);
	if (!rb)
		return -EAGAIN;
	memset(rb, 0, sizeof(*rb));
again:
	cl = gs_cluster_get(s, slot >> GS_CLUSTER_SHIFT, 0);
	e = cl ? atomic_long_read(&cl->table[i]) : 0;
	if (gs_entry_kind(e) != GS_KIND_WRITTEN_BACK || e & GS_FLAG_IO) {
		/* A unit on the device is read back whole, in process context. */
		ret = gs_entry_kind(e) == GS_KIND_WRITTEN_BACK ||
		      (gs_entry_kind(e) == GS_KIND_UNIT &&
		       gs_entry_unit(e)->backed) ? -EAGAIN : -ESTALE;
		goto out_unlock;
	}
	rb->len = gs_slot_aux(cl, i, e);
	/* Compressed data is read into a page of its own: get one first. */
	if (rb->len && !rb->data) {
		gs_cluster_unlock(cl);
		rb->data = alloc_page(gfp);
		if (!rb->data) {
			ret = -EAGAIN;
			goto out_free;
		}
		goto again;
	}
	atomic_long_set(&cl->table[i], e | GS_FLAG_IO);
	gs_cluster_unlock(cl);

	rb->slot = slot;
	rb->b = gs_entry_value(e);
	rb->e = e;
	rb->page = page;
	rb->end = end;
	rb->arg = arg;
	rb->sum = gs_wb_sum_of(s, rb->b);
	gs_wb_io_init(&rb->st, s, gs_wb_rb_finish, gs_wb_rb_fast);
	if (!rb->len && rb->data) {
		/* It changed into a page stored as is meanwhile. */
		__free_page(rb->data);
		rb->data = NULL;
	}
	atomic_inc(&s->wb.inflight);
	ret = gs_backing_read_start(s->bk, rb->b, rb->data ?: page, &rb->st.io);
	if (!ret)
		return 0;
	gs_wb_io_done(s);
	if (!gs_slot_replace(s, slot, e | GS_FLAG_IO, e))
		gs_backing_free(s->bk, rb->b);
	goto out_free;

out_unlock:
	if (cl)
		gs_cluster_unlock(cl);
out_free:
	if (rb->data)
		__free_page(rb->data);
	mempool_free(rb, s->wb.rb_pool);
	return ret;
}

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

/*
 * Unpin the run's entries with no lock (gs_slot_replace()): any context.
 * What let go of its backing slot meanwhile goes into rr->orphans.
 */
static void gs_wb_rr_unpin(struct gs_store *s, struct gs_wb_rr *rr)
{
	unsigned int i;

	for (i = 0; i < rr->nr; i++)
		if (!gs_slot_replace(s, rr->slot + i,
				     rr->e[i] | GS_FLAG_IO, rr->e[i]))
			__set_bit(i, &rr->orphans);
}

/* The run is handed back (or was never started): free what it held. */
static void gs_wb_rr_release(struct gs_store *s, struct gs_wb_rr *rr)
{
	unsigned int i;

	for_each_set_bit(i, &rr->orphans, rr->nr)
		gs_backing_free(s->bk, rr->b + i);
	mempool_free(rr, s->wb.rr_pool);
}

/*
 * Check the run's pages, unpin them; returns 0 or -EIO. Any context
 * unless encrypted.
 */
static int gs_wb_rr_done(struct gs_store *s, struct gs_wb_rr *rr)
{
	unsigned int i, ok = 0;
	int ret = 0, err;
	void *dst;

	for (i = 0; i < rr->nr; i++) {
		err = rr->st.io.err;
		if (!err) {
			dst = kmap_local_page(rr->pages[i]);
			err = gs_wb_unseal(s, rr->slot + i, rr->b + i, dst,
					   PAGE_SIZE, rr->sum[i]);
			kunmap_local(dst);
			flush_dcache_page(rr->pages[i]);
		}
		if (err)
			ret = -EIO;
		else
			ok++;
	}
	if (rr->st.io.err)
		pr_err_ratelimited("slot %llu: cannot read backing slots %llu-%llu: %d\n",
				   rr->slot, rr->b, rr->b + rr->nr - 1,
				   rr->st.io.err);
	atomic_long_add(ok, &s->stats.bd_reads);
	atomic_long_add(rr->nr - ok, &s->stats.bd_read_errors);
	gs_wb_rr_unpin(s, rr);
	return ret;
}

static void gs_wb_rr_finish(struct work_struct *work)
{
	struct gs_wb_rr *rr = container_of(work, struct gs_wb_rr, st.work);
	struct gs_store *s = rr->st.s;

	if (!rr->ended)
		rr->end(rr->arg, gs_wb_rr_done(s, rr));
	gs_wb_rr_release(s, rr);
	gs_wb_io_done(s);
}

/* The end of the run, in its own context: see gs_wb_rb_fast(). */
static bool gs_wb_rr_fast(struct gs_wb_io *io)
{
	struct gs_wb_rr *rr = container_of(io, struct gs_wb_rr, st);
	struct gs_store *s = io->s;

	if (s->wb.cipher)
		return false;
	rr->end(rr->arg, gs_wb_rr_done(s, rr));
	rr->ended = true;
	if (rr->orphans)
		return false;
	gs_wb_rr_release(s, rr);
	gs_wb_io_done(s);
	return true;
}

int gs_wb_read_run_start(struct gs_store *s, u64 slot, struct page *const *pages,
			 unsigned int nr, gs_io_end_t end, void *arg)
{
	unsigned int i = slot & (GS_CLUSTER_SLOTS - 1), k;
	struct gs_cluster *cl;
	struct gs_wb_rr *rr;
	unsigned long e;

	if (!s->bk->ops->submit)
		return -EAGAIN;
	/* Within one cluster: one lock hold pins them all. */
	nr = min3(nr, (unsigned int)GS_WB_RR_PAGES, GS_CLUSTER_SLOTS - i);
	rr = mempool_alloc(s->wb.rr_pool, GFP_NOWAIT | __GFP_NOWARN);
	if (!rr)
		return -EAGAIN;
	cl = gs_cluster_get(s, slot >> GS_CLUSTER_SHIFT, 0);
	for (k = 0; cl && k < nr; k++) {
		e = atomic_long_read(&cl->table[i + k]);
		if (gs_entry_kind(e) != GS_KIND_WRITTEN_BACK ||
		    e & GS_FLAG_IO || gs_slot_aux(cl, i + k, e) ||
		    (k && gs_entry_value(e) != rr->b + k))
			break;
		if (!k)
			rr->b = gs_entry_value(e);
		rr->e[k] = e;
		rr->pages[k] = pages[k];
		atomic_long_set(&cl->table[i + k], e | GS_FLAG_IO);
	}
	if (cl)
		gs_cluster_unlock(cl);
	rr->nr = k;
	rr->slot = slot;
	rr->end = end;
	rr->arg = arg;
	rr->orphans = 0;
	rr->ended = false;
	gs_wb_io_init(&rr->st, s, gs_wb_rr_finish, gs_wb_rr_fast);
	/* One page alone is gs_wb_read_start()'s. */
	if (k > 1) {
		for (i = 0; i < k; i++)
			rr->sum[i] = gs_wb_sum_of(s, rr->b + i);
		atomic_inc(&s->wb.inflight);
		if (!gs_backing_submit(s->bk, false, rr->b, rr->pages, k,
				       &rr->st.io))
			return k;
		gs_wb_io_done(s);
	}
	gs_wb_rr_unpin(s, rr);
	gs_wb_rr_release(s, rr);
	return -EAGAIN;
}

/* ----------------------------------------------------------- idle marks */

void gs_store_mark_idle(struct gs_store *s, u64 age)
{
	u32 now = gs_age_now();
	struct gs_cluster *cl;
	unsigned long ci = 0, e;
	enum gs_kind kind;
	unsigned int i;

	for (; (cl = gs_cluster_next(s, &ci, ULONG_MAX)); ci++) {
		for (i = 0; i < GS_CLUSTER_SLOTS; i++) {
			e = atomic_long_read(&cl->table[i]);
			kind = gs_entry_kind(e);
			if ((kind == GS_KIND_COMPRESSED || kind == GS_KIND_RAW ||
			     kind == GS_KIND_UNIT) &&
			    (!age || gs_age_secs(cl, i, now) >= age))
				cl->age[i] |= GS_AGE_IDLE;
		}
		gs_cluster_unlock(cl);
		cond_resched();
	}
}

/* ------------------------------------------------ backing compaction */

/*
 * Copy backing slot @from (@len bytes of data, of ghost slot @owner) to
 * @to through @buf: checked, and sealed again for @to. Returns 0 or an
 * errno; the I/O counts in bd_compact_reads and bd_compact_writes.
 */
static int gs_relocate_copy(struct gs_store *s, u64 owner, u64 from, u64 to,
			    void *buf, unsigned int len)
{
	struct gs_backing *bk = s->bk;
	int ret;

	ret = bk->ops->read(bk, from, buf);
	if (!ret)
		ret = gs_wb_unseal(s, owner, from, buf, len,
				   gs_wb_sum_of(s, from));
	if (ret) {
		atomic_long_inc(&s->stats.bd_read_errors);
		return ret;
	}
	atomic_long_inc(&s->stats.bd_compact_reads);
	/* The same data: its checksum moves with it. */
	if (s->wb.checksum)
		gs_backing_set_sum(bk, to, gs_backing_sum_of(bk, from));
	/* Encrypted again: the tweak is the slot. */
	ret = gs_wb_encrypt(s, to, buf, buf) ?
	      bk->ops->write(bk, to, &buf, 1) : -EIO;
	atomic_long_inc(ret ? &s->stats.bd_write_errors :
			&s->stats.bd_compact_writes);
	return ret;
}

/*
 * gs_relocate() of a slot of a unit's chain, the unit's run at @first:
 * the same, the unit counted in as its mover (no reader meanwhile).
 */
static int gs_relocate_unit(struct gs_store *s, u64 first, u64 from,
			    u64 to, void *buf)
{
	struct gs_backing *bk = s->bk;
	struct gs_cluster *cl;
	struct gs_unit *u;
	unsigned int j;
	int ret;

	u = gs_unit_bk_move_begin(s, first, from, &j, &cl);
	if (IS_ERR_OR_NULL(u)) {
		gs_backing_free(bk, to);
		return -EAGAIN;
	}
	ret = gs_relocate_copy(s, first, from, to, buf,
			       gs_unit_obj_size(u, j));
	/* Moved (@from freed), or where it was (@to ours to free). */
	gs_unit_bk_move_end(s, cl, first, u, j, ret ? U64_MAX : to);
	if (ret) {
		gs_backing_free(bk, to);
		return -EIO;
	}
	return 1;
}

/*
 * Move the page at backing slot @from, owned by ghost slot @owner, to the
 * lowest free slot below it. Returns 1 if moved, 0 if nothing below is
 * free, -EAGAIN if the slot is busy (pinned by a reader, or it changed),
 * or an I/O error. The entry is pinned (GS_FLAG_IO) while its page is
 * copied, as by a reader: a free or an overwrite meanwhile leaves @from
 * allocated, for us to free, so it cannot be taken again under the copy.
 * Its I/O counts in bd_compact_reads and bd_compact_writes only.
 */
static int gs_relocate(struct gs_store *s, u64 owner, u64 from)
{
	unsigned int i = owner & (GS_CLUSTER_SLOTS - 1), len;
	void *buf = s->wb.batches->bufs[0];
	struct gs_backing *bk = s->bk;
	unsigned long was, moved;
	struct gs_cluster *cl;
	bool mine;
	int ret;
	u64 to;

	ret = gs_backing_alloc(bk, &owner, 1, &to, from, true);
	if (ret <= 0)
		return ret;
	/*
	 * Pin it, its length read with it. Its flags (the algorithm) stay;
	 * a pinned one is busy.
	 */
	cl = gs_cluster_get(s, owner >> GS_CLUSTER_SHIFT, 0);
	was = cl ? atomic_long_read(&cl->table[i]) : 0;
	/*
	 * Not a page of its own: one of a unit's chain whose run starts
	 * here, or nothing (gs_relocate_unit() finds no unit then).
	 */
	if (gs_entry_kind(was) != GS_KIND_WRITTEN_BACK ||
	    gs_entry_value(was) != from) {
		if (cl)
			gs_cluster_unlock(cl);
		return gs_relocate_unit(s, owner, from, to, buf);
	}
	if (was & GS_FLAG_IO) {
		gs_cluster_unlock(cl);
		gs_backing_free(bk, to);
		return -EAGAIN;
	}
	len = gs_slot_aux(cl, i, was) ?: PAGE_SIZE;
	atomic_long_set(&cl->table[i], was | GS_FLAG_IO);
	gs_cluster_unlock(cl);

	ret = gs_relocate_copy(s, owner, from, to, buf, len);

	/* Unpin: moved, or back where it was if the copy failed. */
	moved = gs_entry_move(was, to);
	mine = gs_slot_replace(s, owner, was | GS_FLAG_IO,
			       ret ? was : moved);
	/* What the entry no longer holds is ours to free. */
	if (!mine || !ret)
		gs_backing_free(bk, from);
	if (!mine || ret)
		gs_backing_free(bk, to);
	if (ret)
		return -EIO;
	return mine ? 1 : -EAGAIN;
}

int gs_store_backing_compact(struct gs_store *s, u64 *moved)
{
	struct gs_backing *bk = s->bk;
	unsigned int busy = 0;
	u64 last, owner, steps;
	int ret = 0;

	*moved = 0;
	if (!bk)
		return -ENODEV;
	/* Slots freed but not yet discarded are holes to fill, too. */
	gs_backing_drain(bk);
	/* Bounded: pages written back meanwhile may land above the holes. */
	for (steps = gs_backing_used(bk) + 1; steps &&
	     !fatal_signal_pending(current) && !READ_ONCE(s->wb.stopping);
	     steps--) {
		/* Per page, so that stores and writeback are not held up. */
		mutex_lock(&s->wb.lock);
		last = gs_backing_last_used(bk);
		owner = last == U64_MAX ? U64_MAX : gs_backing_owner(bk, last);
		ret = owner == U64_MAX ? 0 : gs_relocate(s, owner, last);
		mutex_unlock(&s->wb.lock);
		if (last == U64_MAX)
			break;
		if (owner == U64_MAX) {
			/* Freed meanwhile: once discarded, it is a hole. */
			gs_backing_drain(bk);
			continue;
		}
		if (ret == 1) {
			(*moved)++;
			atomic_long_inc(&s->stats.bd_relocated);
			busy = 0;
		} else if (ret == -EAGAIN && ++busy < 100) {
			/* A reader holds it, or it is being freed: wait. */
			schedule_timeout_uninterruptible(1);
		} else if (owner != U64_MAX) {
			break;	/* packed (0), or an I/O error */
		}
		cond_resched();
	}
	/* Allocate from the start again: the holes are at the end now. */
	mutex_lock(&bk->alloc_lock);
	bk->cursor = 0;
	mutex_unlock(&bk->alloc_lock);
	if (ret == -EAGAIN)
		return -EBUSY;
	return ret < 0 ? ret : 0;
}

/*
 * A backing store that shrinks (a directory's chunks) has its slots in use
 * spread out: move them down, so that its top can go.
 */
static void gs_wb_compact_work(struct work_struct *work)
{
	struct gs_store *s = container_of(work, struct gs_store,
					  wb.compact_work);
	u64 moved;
	int ret;

	ret = gs_store_backing_compact(s, &moved);
	pr_debug("backing compaction of a sparse store moved %llu pages: %d\n",
		 moved, ret);
}

/* The backing store's ->sparse: any context. */
static void gs_wb_sparse(struct gs_backing *bk)
{
	struct gs_store *s = bk->owner;

	queue_work(s->wb.wq, &s->wb.compact_work);
}

/* ---------------------------------------------- life, attach, detach */

void gs_wb_init(struct gs_store *s)
{
	mutex_init(&s->wb.lock);
	spin_lock_init(&s->wb.limit_lock);
	INIT_WORK(&s->wb.work, gs_wb_work);
	INIT_WORK(&s->wb.compact_work, gs_wb_compact_work);
	s->wb.use_shrinker = true;
	s->wb.checksum = true;
	s->wb.batch_size = GS_WB_BATCH_SIZE_DEFAULT;
}

/* Bytes of the batches for @size pages, counted in wb_buffer_bytes. */
static size_t gs_wb_batches_bytes(struct gs_wb_batch *batches,
				  unsigned int size)
{
	return batches ? ksize(batches) + (size_t)size * PAGE_SIZE : 0;
}

static void gs_wb_batches_free(struct gs_wb_batch *batches, unsigned int nr)
{
	unsigned int i, k;

	if (!batches)
		return;
	for (k = 0; k < nr; k++)
		for (i = 0; i < batches[k].cap; i++)
			free_page((unsigned long)batches[k].bufs[i]);
	kfree(batches);
}

/*
 * Batches for @size pages in flight: two of half of it (one is collected
 * while the other is written), more if that is over GS_WB_BATCH each.
 */
static struct gs_wb_batch *gs_wb_batches_alloc(unsigned int size,
					       unsigned int *nr)
{
	unsigned int per = min_t(unsigned int, GS_WB_BATCH,
				 DIV_ROUND_UP(size, 2));
	struct gs_wb_batch *batches;
	unsigned int i, k;

	*nr = DIV_ROUND_UP(size, per);
	batches = kcalloc(*nr, sizeof(*batches), GFP_KERNEL);
	if (!batches)
		return NULL;
	for (k = 0; k < *nr; k++) {
		unsigned int cap = min(per, size - k * per);

		for (i = 0; i < cap; i++) {
			void *buf = (void *)__get_free_page(GFP_KERNEL);

			if (!buf) {
				gs_wb_batches_free(batches, k + 1);
				return NULL;
			}
			batches[k].bufs[i] = buf;
			batches[k].cap = i + 1;
		}
	}
	return batches;
}

/* The reserves of the requests of reads and writes started from a submit path. */
static size_t gs_wb_rb_pool_bytes(struct gs_store *s)
{
	return GS_WB_RB_RESERVE * kmalloc_size_roundup(sizeof(struct gs_wb_rb)) +
	       GS_WB_WR_RESERVE * kmalloc_size_roundup(sizeof(struct gs_wb_wr)) +
	       GS_WB_RR_RESERVE * kmalloc_size_roundup(sizeof(struct gs_wb_rr)) +
	       (s->wb.ub_pool ? gs_wb_ub_bytes() : 0);
}

static void gs_wb_batch_free(struct gs_store *s)
{
	mempool_destroy(s->wb.rb_pool);
	s->wb.rb_pool = NULL;
	mempool_destroy(s->wb.wr_pool);
	s->wb.wr_pool = NULL;
	mempool_destroy(s->wb.rr_pool);
	s->wb.rr_pool = NULL;
	mempool_destroy(s->wb.ub_pool);
	s->wb.ub_pool = NULL;
	gs_wb_batches_free(s->wb.batches, s->wb.nr_batches);
	s->wb.batches = NULL;
	s->wb.nr_batches = 0;
	atomic_long_set(&s->stats.wb_buffer_bytes, 0);
}

static int gs_wb_batch_alloc(struct gs_store *s)
{
	s->wb.rb_pool = mempool_create_kmalloc_pool(GS_WB_RB_RESERVE,
						    sizeof(struct gs_wb_rb));
	s->wb.wr_pool = mempool_create_kmalloc_pool(GS_WB_WR_RESERVE,
						    sizeof(struct gs_wb_wr));
	s->wb.rr_pool = mempool_create_kmalloc_pool(GS_WB_RR_RESERVE,
						    sizeof(struct gs_wb_rr));
	if (!s->wb.rb_pool || !s->wb.wr_pool || !s->wb.rr_pool) {
		gs_wb_batch_free(s);
		return -ENOMEM;
	}
	s->wb.batches = gs_wb_batches_alloc(s->wb.batch_size,
					    &s->wb.nr_batches);
	if (!s->wb.batches) {
		gs_wb_batch_free(s);
		return -ENOMEM;
	}
	atomic_long_set(&s->stats.wb_buffer_bytes,
			gs_wb_batches_bytes(s->wb.batches, s->wb.batch_size) +
			gs_wb_rb_pool_bytes(s));
	return 0;
}

int gs_store_set_wb_batch_size(struct gs_store *s, unsigned int size)
{
	struct gs_wb_batch *batches = NULL, *old;
	unsigned int nr = 0, old_nr;

	if (!size || size > GS_WB_BATCH_SIZE_MAX)
		return -EINVAL;
	mutex_lock(&s->wb.lock);
	if (s->bk) {
		batches = gs_wb_batches_alloc(size, &nr);
		if (!batches) {
			mutex_unlock(&s->wb.lock);
			return -ENOMEM;
		}
	}
	old = s->wb.batches;
	old_nr = s->wb.nr_batches;
	if (s->bk) {
		s->wb.batches = batches;
		s->wb.nr_batches = nr;
		atomic_long_set(&s->stats.wb_buffer_bytes,
				gs_wb_batches_bytes(batches, size) +
				gs_wb_rb_pool_bytes(s));
	}
	WRITE_ONCE(s->wb.batch_size, size);
	mutex_unlock(&s->wb.lock);
	if (batches)
		gs_wb_batches_free(old, old_nr);
	return 0;
}

void gs_wb_stop(struct gs_store *s)
{
	/*
	 * Nothing asks for compaction any more; one under way ends at its
	 * next page.
	 */
	WRITE_ONCE(s->wb.stopping, true);
	if (s->bk)
		gs_backing_stop(s->bk);
	cancel_work_sync(&s->wb.compact_work);
	if (s->wb.shrinker) {
		shrinker_free(s->wb.shrinker);
		s->wb.shrinker = NULL;
	}
	cancel_work_sync(&s->wb.work);
	/*
	 * Reads and writes started from a submit path end on their own:
	 * wait for them.
	 */
	wait_var_event(&s->wb.inflight, !atomic_read(&s->wb.inflight));
}

int gs_store_set_backing(struct gs_store *s, struct gs_backing *bk)
{
	struct gs_wb *wb = &s->wb;
	int ret = -EBUSY;

	if (s->bk || gs_stat_read(&s->stats, GS_STAT_SLOTS_USED))
		goto out_bk;
	/* The reverse map holds ghost slots up to GS_BK_MAX_OWNER. */
	ret = -EFBIG;
	if (s->nr_slots > GS_BK_MAX_OWNER + 1)
		goto out_bk;
	/* An entry holds a backing slot in 48 bits: 1 EiB, none past it. */
	bk->nr_slots = min_t(u64, bk->nr_slots, GS_VALUE_MAX + 1);
	ret = gs_wb_batch_alloc(s);
	if (ret)
		goto out_bk;
	ret = -ENOMEM;
	wb->wq = alloc_workqueue("ghostswap-wb", WQ_UNBOUND | WQ_MEM_RECLAIM, 1);
	if (!wb->wq)
		goto out_batch;
	/*
	 * Page faults wait on these reads, reclaim on these writes: high
	 * priority.
	 */
	wb->end_wq = alloc_workqueue("ghostswap-rb", WQ_UNBOUND | WQ_HIGHPRI |
				      WQ_MEM_RECLAIM, 0);
	if (!wb->end_wq)
		goto out_wq;
	wb->shrinker = shrinker_alloc(0, "ghostswap");
	if (!wb->shrinker)
		goto out_read_wq;
	wb->shrinker->count_objects = gs_shrink_count;
	wb->shrinker->scan_objects = gs_shrink_scan;
	wb->shrinker->seeks = DEFAULT_SEEKS;
	wb->shrinker->private_data = s;
	wb->stopping = false;
	bk->owner = s;
	/* The chunk worker may call it now: @owner before it. */
	smp_store_release(&bk->sparse, gs_wb_sparse);
	s->bk = bk;
	wb->hand = 0;
	shrinker_register(wb->shrinker);
	return 0;

out_read_wq:
	destroy_workqueue(wb->end_wq);
	wb->end_wq = NULL;
out_wq:
	destroy_workqueue(wb->wq);
	wb->wq = NULL;
out_batch:
	gs_wb_batch_free(s);
out_bk:
	gs_backing_destroy(bk);
	return ret;
}

int gs_store_set_wb_encrypt(struct gs_store *s, bool on)
{
	struct crypto_sync_skcipher *tfm = NULL;

	if (on == !!s->wb.cipher)
		return 0;
	if (on) {
		tfm = gs_crypt_create();
		if (IS_ERR(tfm))
			return PTR_ERR(tfm);
	}
	gs_crypt_destroy(s->wb.cipher);
	s->wb.cipher = tfm;
	return 0;
}

void gs_wb_destroy(struct gs_store *s)
{
	gs_crypt_destroy(s->wb.cipher);
	s->wb.cipher = NULL;
}

void gs_wb_detach(struct gs_store *s)
{
	if (!s->bk)
		return;
	/* Waits for a running shrinker scan and the background writeback. */
	gs_wb_stop(s);
	destroy_workqueue(s->wb.end_wq);
	s->wb.end_wq = NULL;
	destroy_workqueue(s->wb.wq);
	s->wb.wq = NULL;
	gs_wb_batch_free(s);
	gs_backing_destroy(s->bk);
	s->bk = NULL;
}

int gs_store_clear_backing(struct gs_store *s)
{
	if (!s->bk)
		return 0;
	if (gs_stat_read(&s->stats, GS_STAT_SLOTS_USED))
		return -EBUSY;
	gs_wb_detach(s);
	return 0;
}
