// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswap store core: one slot compressed again (gs_slot_recompress(),
 * for gs_recomp.c, which chooses the slots). A pool object is pinned and
 * read with no lock held, as a page read does, compressed with another
 * algorithm and put in place of the old one if it still is there; a
 * unit's live pages go into a new unit. It calls gs_core.c (pins and
 * pool objects: gs_core_internal.h), gs_unit.c and the streams.
 */
#include <linux/atomic.h>
#include <linux/bitops.h>
#include <linux/bug.h>
#include <linux/errno.h>
#include <linux/gfp.h>
#include <linux/spinlock.h>
#include <linux/zsmalloc.h>
#include "gs_comp.h"
#include "gs_core.h"
#include "gs_core_internal.h"
#include "gs_store.h"
#include "gs_unit.h"

/*
 * The pool object of @e (pinned by us in @cl) in a new form: the data of
 * @len bytes at @data, compressed with @prio (COMPRESSED), in place of the
 * old one, if the entry still holds the old object and no writeback has
 * it. Drops the pin and frees whichever object nobody holds any more.
 * Returns 1 if replaced, -EAGAIN if not (nothing of the new form is left).
 */
static int gs_obj_replace(struct gs_store *s, struct gs_cluster *cl,
			  u64 slot, unsigned long e, unsigned int old_len,
			  const void *data, unsigned int len, unsigned int prio,
			  gfp_t gfp)
{
	unsigned int i = slot & (GS_CLUSTER_SLOTS - 1);
	unsigned long handle, value, now, ne;

	handle = zs_malloc(s->pool, len, gfp | __GFP_NOWARN | __GFP_HIGHMEM |
			   __GFP_MOVABLE, NUMA_NO_NODE);
	if (IS_ERR_VALUE(handle)) {
		gs_obj_unpin(s, cl, slot, e);
		return -ENOMEM;
	}
	zs_obj_write(s->pool, handle, (void *)data, len);
	if (!gs_handle_encode(handle, &value)) {
		zs_free(s->pool, handle);
		gs_obj_unpin(s, cl, slot, e);
		return -EIO;
	}
	spin_lock(&cl->lock);
	now = atomic_long_read(&cl->table[i]);
	if (!gs_entry_holds_obj(now, e) || now & GS_FLAG_WB) {
		spin_unlock(&cl->lock);
		zs_free(s->pool, handle);
		gs_obj_unpin(s, cl, slot, e);
		return -EAGAIN;
	}
	/*
	 * COLD (the cold clock's mark) it keeps; the user's idle mark is in the
	 * age byte, untouched. The rest of its flags were about the old form,
	 * the pin among them: the slot is still used, the cluster lives on.
	 */
	ne = gs_entry_aux(GS_KIND_COMPRESSED,
			  (now & GS_FLAG_COLD) | gs_prio_flags(prio), value, len);
	atomic_long_set(&cl->table[i], ne);
	gs_aux_hi_set(cl->aux_hi, i, gs_aux_hi(len));
	spin_unlock(&cl->lock);
	if (gs_entry_kind(e) == GS_KIND_RAW) {
		gs_stat_dec(&s->stats, GS_STAT_HUGE_PAGES);
		gs_stat_inc(&s->stats, GS_STAT_COMP_PAGES);
	}
	gs_stat_add(&s->stats, GS_STAT_COMPR_BYTES, (long)len - old_len);
	/* The old object: ours, the entry let go of it. */
	zs_free(s->pool, gs_handle_decode(gs_entry_value(e)));
	return 1;
}

/*
 * Unit @u of @cl (locked; this unlocks it), @slot one of its slots,
 * compressed again with @prio: its live pages, kept in a new unit if its
 * chain is smaller (a unit that lost pages leaves them behind too). The
 * slots that still refer to it then refer to the new one. Returns the
 * pages moved, 0 if no gain (@mark_nogain: never try it again), an errno.
 */
static int gs_unit_recompress(struct gs_store *s, struct gs_cluster *cl,
			      u64 slot, struct gs_unit *u, unsigned int prio,
			      bool mark_nogain)
{
	unsigned long ci = slot >> GS_CLUSTER_SHIFT, e, value;
	u64 first = slot & ~(u64)(u->pages - 1);
	unsigned int i0 = first & (GS_CLUSTER_SLOTS - 1), k;
	struct gs_unit *nu = NULL;
	struct gs_stream *st;
	u16 live = u->live;
	int ret;

	if (!gs_unit_recompressible(u, prio)) {
		gs_cluster_unlock(cl);
		return -EAGAIN;
	}
	gs_unit_read_begin(cl, u);
	gs_cluster_unlock(cl);

	st = gs_stream_get(s->comp);
	ret = gs_unit_repack(s, st, u, live, prio, GFP_NOIO, &nu);
	gs_stream_put(st);
	gs_read_window(s, first);
	if (!ret && WARN_ONCE(!gs_handle_encode((unsigned long)nu, &value),
			      "ghostswap: unit %p does not fit the table\n",
			      nu)) {
		gs_unit_free(s, nu);
		ret = -EIO;
	}

	spin_lock(&cl->lock);
	if (ret == -E2BIG) {
		u->nogain |= mark_nogain;
		ret = 0;
	} else if (!ret) {
		/* Slots only ever leave a unit: those left were live. */
		for (k = 0; k < u->pages; k++) {
			e = atomic_long_read(&cl->table[i0 + k]);
			if (gs_entry_kind(e) != GS_KIND_UNIT ||
			    gs_entry_unit(e) != u)
				continue;
			atomic_long_set(&cl->table[i0 + k],
					gs_entry(GS_KIND_UNIT, gs_entry_flags(e),
						 value));
			u->live &= ~BIT(k);
			nu->live |= BIT(k);
		}
		if (!u->live)
			gs_unit_unmark(cl, u);
		ret = hweight16(nu->live);
		if (!ret)
			gs_unit_free(s, nu);
	}
	spin_unlock(&cl->lock);
	gs_unit_read_end(s, cl, ci, u, slot, 0);
	return ret;
}

int gs_slot_recompress(struct gs_store *s, u64 slot, unsigned int prio,
		       bool mark_nogain, void *page)
{
	unsigned long ci = slot >> GS_CLUSTER_SHIFT;
	unsigned int i = slot & (GS_CLUSTER_SLOTS - 1);
	unsigned int len, new_len, max;
	struct gs_stream *st;
	struct gs_cluster *cl;
	unsigned long e;
	int ret;

	cl = gs_cluster_get(s, ci, 0);
	if (!cl)
		return -EAGAIN;
	e = atomic_long_read(&cl->table[i]);
	if (gs_entry_kind(e) == GS_KIND_UNIT)
		return gs_unit_recompress(s, cl, slot, gs_entry_unit(e), prio,
					  mark_nogain);
	if ((gs_entry_kind(e) != GS_KIND_COMPRESSED &&
	     gs_entry_kind(e) != GS_KIND_RAW) ||
	    e & (GS_FLAG_PINNED | GS_FLAG_WB) ||
	    (gs_entry_kind(e) == GS_KIND_COMPRESSED &&
	     gs_entry_prio(e) >= prio)) {
		gs_cluster_unlock(cl);
		return -EAGAIN;
	}
	len = gs_obj_len(cl, i, e);
	e = gs_obj_pin(cl, i, e);
	gs_cluster_unlock(cl);

	st = gs_stream_get(s->comp);
	ret = gs_obj_read(s, st, e, len, page);
	if (ret) {
		gs_stream_put(st);
		gs_obj_unpin(s, cl, slot, e);
		return ret;
	}
	/*
	 * Worth it only in a smaller zsmalloc size class (a RAW page: below
	 * the huge class size).
	 */
	max = gs_entry_kind(e) == GS_KIND_RAW ? s->huge_size : len;
	new_len = gs_compress(s->comp, st, prio, page, max);
	if (new_len && gs_entry_kind(e) == GS_KIND_COMPRESSED &&
	    zs_lookup_class_index(s->pool, new_len) >=
	    zs_lookup_class_index(s->pool, len))
		new_len = 0;
	if (!new_len) {
		gs_stream_put(st);
		gs_obj_unpin_mark(s, cl, slot, e,
				  mark_nogain ? GS_FLAG_NOGAIN : 0);
		return 0;
	}
	ret = gs_obj_replace(s, cl, slot, e, len, st->buf, new_len, prio,
			     GFP_NOIO);
	gs_stream_put(st);
	return ret;
}
