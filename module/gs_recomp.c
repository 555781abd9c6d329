// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswap recompression: pages stored with the primary algorithm (or
 * as they are, RAW) compressed again with a secondary one, kept where
 * that takes less pool memory.
 *
 * A unit (gs_unit.h) is recompressed whole, its live pages together,
 * once per pass, and counts as its pages.
 *
 * By request, with zram's syntax and semantics (the sysfs `recompress`
 * attribute): which pages (all, idle, huge, huge and idle), from what
 * compressed size on (threshold), how many at most (max_pages), with
 * which algorithm (priority, or algo; without either, each secondary
 * algorithm in turn until one gains).
 *
 * In the background, what zram does not do: a sweep that recompresses
 * cold pages (marked idle, or not accessed for auto_age seconds)
 * with the highest secondary algorithm, within auto_pct percent of one
 * CPU: after each batch it sleeps long enough for its share. A page that
 * the highest algorithm cannot make smaller gets GS_FLAG_NOGAIN and is
 * not tried again while it stays.
 *
 * The table work (pin, read, compress, swap the objects) is the core's
 * (gs_slot_recompress()); this file chooses the pages. Lock order: the
 * pass's mutex, then what gs_slot_recompress() takes (a stream, then a
 * cluster lock).
 */
#define pr_fmt(fmt) "ghostswap: " fmt

#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/workqueue.h>
#include "gs_comp.h"
#include "gs_compat.h"
#include "gs_core.h"
#include "gs_recomp.h"
#include "gs_store.h"
#include "gs_unit.h"

/* Candidates taken from one hold of a cluster lock, then recompressed. */
#define GS_RECOMP_BATCH		16
/* Entries looked at per hold of a cluster lock. */
#define GS_RECOMP_SCAN		128
/* The background sweep: pages per batch, and its pause when idle. */
#define GS_RECOMP_AUTO_BATCH	64
#define GS_RECOMP_AUTO_REST	(10 * HZ)

/*
 * Is the unit of @e, at @i of @cl, wanted by @r, as far as the unit goes?
 * Once per unit: at its first live slot. Its compressed bytes per page
 * stand for a page's size.
 */
static bool gs_recomp_unit_wanted(const struct gs_recomp_req *r,
				  unsigned int i, unsigned long e)
{
	struct gs_unit *u = gs_entry_unit(e);

	return gs_unit_recompressible(u, r->prio_max) &&
	       __ffs(u->live) == (i & (u->pages - 1)) &&
	       (!r->threshold ||
		u->len / gs_unit_held(u) >= r->threshold);
}

/* Is @e, at @i of @cl, wanted by @r? */
static bool gs_recomp_wanted(const struct gs_recomp_req *r,
			     struct gs_cluster *cl, unsigned int i,
			     unsigned long e, u32 now)
{
	enum gs_kind kind = gs_entry_kind(e);
	bool idle;

	if (kind == GS_KIND_UNIT) {
		/* Units are never stored as they are: not huge. */
		if (r->type == GS_RECOMP_HUGE ||
		    r->type == GS_RECOMP_HUGE_IDLE ||
		    !gs_recomp_unit_wanted(r, i, e))
			return false;
	} else if ((kind != GS_KIND_COMPRESSED && kind != GS_KIND_RAW) ||
		   e & (GS_FLAG_PINNED | GS_FLAG_WB | GS_FLAG_NOGAIN)) {
		return false;
	} else if (kind == GS_KIND_COMPRESSED &&
		   gs_entry_prio(e) >= r->prio_max) {
		return false;
	} else if (r->threshold && (kind == GS_KIND_RAW ? PAGE_SIZE :
				    gs_slot_aux(cl, i, e)) < r->threshold) {
		return false;
	}
	idle = cl->age[i] & GS_AGE_IDLE ||
	       (r->age && gs_age_secs(cl, i, now) >= r->age);
	switch (r->type) {
	case GS_RECOMP_IDLE:
		return idle;
	case GS_RECOMP_HUGE:
		return kind == GS_KIND_RAW;
	case GS_RECOMP_HUGE_IDLE:
		return kind == GS_KIND_RAW && idle;
	default:
		return true;
	}
}

/*
 * Up to @max candidates from *@pos on into @slots; *@pos moves past what
 * was looked at (to nr_slots at the end).
 */
static unsigned int gs_recomp_collect(struct gs_store *s,
				      const struct gs_recomp_req *r, u64 *pos,
				      u64 *slots, unsigned int max)
{
	u32 now = gs_age_now();
	unsigned int n = 0, i, end;
	struct gs_cluster *cl;
	u64 base;

	while (!n && *pos < s->nr_slots) {
		cl = gs_scan_next(s, pos, GS_RECOMP_SCAN, &i, &end);
		if (!cl)
			break;
		base = *pos - i;
		for (; i < end && n < max; i++)
			if (gs_recomp_wanted(r, cl, i,
					     atomic_long_read(&cl->table[i]), now))
				slots[n++] = base + i;
		*pos = base + i;
		gs_cluster_unlock(cl);
		cond_resched();
	}
	return n;
}

/*
 * One slot (or its unit) with the algorithms r->prio_min..prio_max in
 * turn until one gains. Returns the pages recompressed (0 if none), an
 * errno on failure.
 */
static int gs_recomp_slot(struct gs_store *s, const struct gs_recomp_req *r,
			  u64 slot, void *page)
{
	unsigned int top = gs_comp_top(s->comp), prio;
	int ret = 0;

	for (prio = r->prio_min; prio <= r->prio_max; prio++) {
		if (!gs_store_comp_name(s, prio))
			continue;
		ret = gs_slot_recompress(s, slot, prio, prio == top, page);
		if (ret > 0)
			return ret;
		if (ret == -EAGAIN)
			return 0;	/* changed, or not a candidate for it */
		if (ret)
			return ret;
	}
	if (!ret)
		atomic_long_inc(&s->stats.recomp_no_gain);
	return 0;
}

/*
 * Recompress what @r asks for from *@pos on, until max_pages, the end, or
 * @budget_ns of CPU time (0: no limit). *@done gets the pages
 * recompressed. Returns 0 or the last error.
 */
static int gs_recomp_pass(struct gs_store *s, const struct gs_recomp_req *r,
			  u64 *pos, u64 budget_ns, u64 *done)
{
	u64 slots[GS_RECOMP_BATCH], t0 = ktime_get_ns(), tried = 0;
	unsigned int n, k;
	void *page;
	int ret = 0, err;

	*done = 0;
	page = (void *)__get_free_page(GFP_KERNEL);
	if (!page)
		return -ENOMEM;
	while ((!r->max_pages || tried < r->max_pages) &&
	       *pos < s->nr_slots && !fatal_signal_pending(current)) {
		n = gs_recomp_collect(s, r, pos, slots,
				      min_t(u64, GS_RECOMP_BATCH,
					    r->max_pages ? r->max_pages - tried :
							   GS_RECOMP_BATCH));
		for (k = 0; k < n; k++) {
			err = gs_recomp_slot(s, r, slots[k], page);
			if (err < 0)
				ret = err;
			else
				*done += err;
			tried++;
		}
		if (budget_ns && ktime_get_ns() - t0 >= budget_ns)
			break;
	}
	free_page((unsigned long)page);
	atomic_long_add(*done, &s->stats.recompressed);
	return ret;
}

int gs_store_recompress(struct gs_store *s, const struct gs_recomp_req *r,
			u64 *done)
{
	struct gs_recomp_req req = *r;
	u64 pos = 0;
	int ret;

	*done = 0;
	/* Without a priority: each secondary algorithm in turn. */
	if (!req.prio_min) {
		req.prio_min = GS_SECONDARY_COMP;
		req.prio_max = gs_comp_top(s->comp);
	}
	if (req.prio_max < GS_SECONDARY_COMP ||
	    !gs_store_comp_name(s, req.prio_max))
		return -EINVAL;
	mutex_lock(&s->recomp.lock);
	ret = gs_recomp_pass(s, &req, &pos, 0, done);
	mutex_unlock(&s->recomp.lock);
	return ret;
}

/* ----------------------------------------------------- in the background */

static void gs_recomp_work(struct work_struct *work)
{
	struct gs_store *s = container_of(to_delayed_work(work),
					  struct gs_store, recomp.work);
	unsigned int pct = READ_ONCE(s->recomp.auto_pct);
	struct gs_recomp_req r = {
		.type = GS_RECOMP_IDLE,
		.age = READ_ONCE(s->recomp.auto_age),
		.max_pages = GS_RECOMP_AUTO_BATCH,
	};
	unsigned long rest = GS_RECOMP_AUTO_REST;
	u64 t0, spent, done = 0;

	r.prio_max = gs_comp_top(s->comp);
	r.prio_min = r.prio_max;
	if (!pct || r.prio_max < GS_SECONDARY_COMP)
		return;
	if (!mutex_trylock(&s->recomp.lock))
		goto again;
	t0 = ktime_get_ns();
	gs_recomp_pass(s, &r, &s->recomp.hand, 0, &done);
	spent = ktime_get_ns() - t0;
	if (s->recomp.hand >= s->nr_slots) {
		s->recomp.hand = 0;	/* round done: rest before the next */
	} else {
		/* Sleep so that the work takes @pct percent of the time. */
		rest = nsecs_to_jiffies(div_u64(spent * (100 - pct), pct)) + 1;
	}
	mutex_unlock(&s->recomp.lock);
	atomic_long_add(done, &s->stats.recomp_auto);
again:
	queue_delayed_work(system_dfl_wq, &s->recomp.work, rest);
}

void gs_recomp_init(struct gs_store *s)
{
	mutex_init(&s->recomp.lock);
	INIT_DELAYED_WORK(&s->recomp.work, gs_recomp_work);
	s->recomp.auto_pct = GS_RECOMP_AUTO_PCT;
	s->recomp.auto_age = GS_RECOMP_AUTO_AGE;
}

void gs_recomp_start(struct gs_store *s)
{
	if (READ_ONCE(s->recomp.auto_pct) &&
	    gs_comp_top(s->comp) >= GS_SECONDARY_COMP)
		mod_delayed_work(system_dfl_wq, &s->recomp.work, HZ);
}

void gs_recomp_stop(struct gs_store *s)
{
	cancel_delayed_work_sync(&s->recomp.work);
}

void gs_store_set_recomp_auto(struct gs_store *s, unsigned int pct, u32 age)
{
	gs_recomp_stop(s);
	WRITE_ONCE(s->recomp.auto_pct, pct);
	WRITE_ONCE(s->recomp.auto_age, age);
	gs_recomp_start(s);
}
