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
 * This file holds the rounds and what they pick (the cold clock, the
 * user's idle marks); the tier's other parts are files of their own
 * (gs_wb_internal.h lists them). It calls the budget (gs_wb_budget.c),
 * sealing (gs_wb_seal.c), the reserve that units are read back into
 * (gs_wb_read.c), the core (gs_core.h, units through it) and the backing
 * store (gs_backing.c).
 */
#define pr_fmt(fmt) "ghostswap: " fmt

#include <linux/atomic.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/string.h>
#include <linux/zsmalloc.h>
#include "gs_backing.h"
#include "gs_core.h"
#include "gs_store.h"
#include "gs_unit.h"
#include "gs_wb_internal.h"

#define GS_NO_SLOT	U64_MAX

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
int gs_wb_rounds(struct gs_store *s, enum gs_wb_mode mode, u64 lo, u64 hi,
		 u64 max, unsigned int flags, u64 *done)
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
	return gs_wb_rounds(s, mode, 0, s->nr_slots, max, 0, done);
}

int gs_store_writeback_range(struct gs_store *s, enum gs_wb_mode mode,
			     u64 lo, u64 hi, u64 max, u64 *done)
{
	*done = 0;
	if (!s->bk)
		return -ENODEV;
	if (mode == GS_WB_COLD || lo >= hi || hi > s->nr_slots)
		return -EINVAL;
	return gs_wb_rounds(s, mode, lo, hi, max, 0, done);
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
