// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswap cluster index (see gs_index.h): an XArray, the count of its
 * nodes and a reserve of spare ones.
 *
 * Counting. The XArray does not report its nodes, but under xa_lock
 * their number follows from lib/xarray.c:
 *
 *  - An insert at a free index i (xas_store() -> xas_create()) makes, if
 *    the array is empty, the h(i) nodes of i's path (h(i): the chunks of
 *    XA_CHUNK_SHIFT (6) bits of i, 0 for index 0, which is kept in the
 *    head). If i is past
 *    what the head reaches (height t < h(i)), xas_expand() first puts
 *    h(i) - t nodes over the head, each holding the one below in slot 0,
 *    and xas_create() the h(i) - 1 below the new top on i's path, whose
 *    slot for i is not slot 0. Else the path exists down to the node
 *    whose slot for i is free, where xas_load() stopped, and the nodes
 *    below it are made: its shift / XA_CHUNK_SHIFT of them. gs_index_need() says so
 *    before the insert, which makes exactly that many.
 *  - An erase frees, in xas_delete_node(), the nodes of i's path that
 *    held nothing else (count 1, from the leaf up), then, if the node it
 *    stopped at is the root, in xas_shrink(), each root that holds only
 *    slot 0: one per level the height loses. If the array went empty,
 *    the whole path went and nothing was shrunk.
 *
 * The KUnit suite checks the count against a walk of the whole tree
 * after every step of random inserts and erases.
 *
 * The reserve. The XArray takes a node from xas->xa_alloc first (one,
 * put there by xas_nomem()) and with GFP_NOWAIT after that. A spare node
 * is therefore kept as an xa_state of its own, loaded by xas_nomem(). An
 * insert that runs out of memory at a node (xas_store() fails -ENOMEM,
 * the path made so far stays, all under xa_lock) goes on with the next
 * spare state: its store needs that node first and takes the spare. An
 * insert starts only if the spares cover all the nodes it may need, so
 * it never stops half way, and an array never holds a node nobody
 * counted.
 *
 * Its bound: @inserts first inserts into new ranges in a row, with no
 * memory at all, below a highest index of height H. Their paths share
 * the root and have H - 1 nodes each below it; the levels the tree grows
 * over what it held before add at most H - 1 nodes off those paths (the
 * chain down slot 0 of the new root): at most H + inserts * (H - 1)
 * nodes, the reserve's target. One insert
 * needs at most 2H - 1, which it covers too. Freed nodes go back to the
 * slab, not to the reserve: every insert that may allocate tops it up.
 */
#include <linux/atomic.h>
#include <linux/bitops.h>
#include <linux/err.h>
#include <linux/spinlock.h>
#include "gs_index.h"

/* Levels of the path to @i: its chunks of XA_CHUNK_SHIFT bits. */
static unsigned int gs_index_levels(unsigned long i)
{
	return i ? DIV_ROUND_UP(fls_long(i), XA_CHUNK_SHIFT) : 0;
}

/* The array's height now: 0 if empty or if the head holds index 0. */
static unsigned int gs_index_height(struct gs_index *ix)
{
	void *head = xa_head_locked(&ix->xa);

	return xa_is_node(head) ?
	       xa_to_node(head)->shift / XA_CHUNK_SHIFT + 1 : 0;
}

static unsigned int gs_index_target(unsigned long max, unsigned int inserts)
{
	unsigned int h = max(gs_index_levels(max), 1U);

	return h + inserts * (h - 1);
}

void gs_index_create(struct gs_index *ix, unsigned long max,
		     unsigned int inserts, atomic_long_t *bytes)
{
	xa_init(&ix->xa);
	ix->nodes = 0;
	ix->bytes = bytes;
	ix->inserts = min_t(unsigned int, inserts, GS_INDEX_INSERTS_MAX);
	ix->target = gs_index_target(max, ix->inserts);
	ix->spares = 0;
}

/*
 * Free the node @x holds, if it still does. xas_nomem() does that for a
 * state that lacks nothing (xas_destroy() is not exported on 6.12).
 */
static void gs_index_spare_free(struct xa_state *x)
{
	xas_reset(x);
	xas_nomem(x, 0);
}

/* Free the spares past @keep (xa_lock held or no other user). */
static void gs_index_drain(struct gs_index *ix, unsigned int keep)
{
	while (ix->spares > keep)
		gs_index_spare_free(&ix->spare[--ix->spares]);
}

void gs_index_set_max(struct gs_index *ix, unsigned long max)
{
	xa_lock(&ix->xa);
	WRITE_ONCE(ix->target, gs_index_target(max, ix->inserts));
	gs_index_drain(ix, ix->target);
	xa_unlock(&ix->xa);
}

/* Spares up to @want, with @gfp; -ENOMEM if it could not get them. */
static int gs_index_fill_to(struct gs_index *ix, unsigned int want, gfp_t gfp)
{
	for (;;) {
		XA_STATE(x, &ix->xa, 0);
		bool kept = false;

		if (READ_ONCE(ix->spares) >= want)
			return 0;
		/* A state that lacks a node: xas_nomem() gets it one. */
		xas_set_err(&x, -ENOMEM);
		if (!xas_nomem(&x, gfp | __GFP_NOWARN))
			return -ENOMEM;
		xa_lock(&ix->xa);
		if (ix->spares < want) {
			/* The state, its node with it, goes to the reserve. */
			ix->spare[ix->spares] = x;
			WRITE_ONCE(ix->spares, ix->spares + 1);
			kept = true;
		}
		xa_unlock(&ix->xa);
		if (!kept) {
			/* Filled by somebody else meanwhile. */
			gs_index_spare_free(&x);
			return 0;
		}
	}
}

int gs_index_fill(struct gs_index *ix, gfp_t gfp)
{
	return gs_index_fill_to(ix, READ_ONCE(ix->target), gfp);
}

unsigned int gs_index_spares(struct gs_index *ix)
{
	return READ_ONCE(ix->spares);
}

void gs_index_destroy(struct gs_index *ix)
{
	/* Every entry was erased, and their nodes with them. */
	WARN_ON(!xa_empty(&ix->xa));
	xa_destroy(&ix->xa);
	atomic_long_sub(ix->nodes * gs_index_node_bytes(), ix->bytes);
	ix->nodes = 0;
	gs_index_drain(ix, 0);
}

/*
 * The nodes an insert at the free index of @xas makes (xa_lock held,
 * xas_load() just returned NULL there): see the top of the file.
 */
static unsigned int gs_index_need(struct gs_index *ix, struct xa_state *xas)
{
	unsigned int h = gs_index_levels(xas->xa_index);
	unsigned int t = gs_index_height(ix);

	if (!xa_head_locked(&ix->xa))
		return h;
	if (h > t)
		return 2 * h - t - 1;
	return xas->xa_node->shift / XA_CHUNK_SHIFT;
}

/* The next spare state, set for index @i (xa_lock held). */
static struct xa_state *gs_index_spare(struct gs_index *ix, unsigned long i)
{
	struct xa_state *x = &ix->spare[ix->spares - 1];

	WRITE_ONCE(ix->spares, ix->spares - 1);
	xas_set(x, i);
	return x;
}

void *gs_index_insert(struct gs_index *ix, unsigned long i, void *entry,
		      gfp_t gfp)
{
	XA_STATE(xas, &ix->xa, i);
	struct xa_state *x = &xas;
	unsigned int need;
	void *old;
	int err;

	if (gfp)
		gs_index_fill(ix, gfp);
	for (;;) {
		xas_lock(&xas);
		old = xas_load(&xas);
		if (old)
			goto out;
		need = gs_index_need(ix, &xas);
		if (need <= ix->spares)
			break;
		xas_unlock(&xas);
		/* Short: past the highest index it was sized for? */
		if (!gfp || gs_index_fill_to(ix, need, gfp))
			return ERR_PTR(-ENOMEM);
		xas_reset(&xas);
	}
	/* Nothing of our own: the first node the insert makes is a spare. */
	if (!gfp && need)
		x = gs_index_spare(ix, i);
	for (;;) {
		xas_store(x, entry);
		err = xas_error(x);
		/* A spare's node, should its store not have taken it. */
		if (x != &xas)
			gs_index_spare_free(x);
		if (err != -ENOMEM)
			break;
		/* Cannot happen: the spares cover all it needs. */
		if (WARN_ON_ONCE(!ix->spares))
			break;
		x = gs_index_spare(ix, i);
	}
	if (WARN_ON_ONCE(err)) {
		old = ERR_PTR(err);
		goto out;
	}
	ix->nodes += need;
	atomic_long_add(need * gs_index_node_bytes(), ix->bytes);
out:
	xas_unlock(&xas);
	return old;
}

void *gs_index_erase(struct gs_index *ix, unsigned long i)
{
	XA_STATE(xas, &ix->xa, i);
	unsigned int freed = 0, t;
	struct xa_node *n;
	void *old;

	xas_lock(&xas);
	old = xas_load(&xas);
	if (!old)
		goto out;
	t = gs_index_height(ix);
	/* What xas_delete_node() will free: the nodes that hold only i. */
	for (n = xas.xa_node; n && n->count == 1;
	     n = xa_parent_locked(&ix->xa, n))
		freed++;
	xas_store(&xas, NULL);
	/* What xas_shrink() freed, unless the whole path went. */
	if (xa_head_locked(&ix->xa))
		freed += t - gs_index_height(ix);
	ix->nodes -= freed;
	atomic_long_sub(freed * gs_index_node_bytes(), ix->bytes);
out:
	xas_unlock(&xas);
	return old;
}

void *gs_index_take_marked(struct gs_index *ix, unsigned long *i,
			   unsigned long last)
{
	XA_STATE(xas, &ix->xa, *i);
	void *entry;

	xas_lock(&xas);
	entry = xas_find_marked(&xas, last, XA_MARK_0);
	if (entry) {
		xas_clear_mark(&xas, XA_MARK_0);
		*i = xas.xa_index;
	}
	xas_unlock(&xas);
	return entry;
}
