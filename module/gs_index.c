// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswap cluster index (see gs_index.h): inserts, erases and scans of
 * a fixed-depth radix tree whose lookups take RCU only.
 *
 * Level 0 is the root. A node at level l is indexed by the bits of the
 * index at shift (levels - 1 - l) * GS_INDEX_SHIFT. Under the index lock,
 * each node counts its non-NULL slots; the one that counts none is taken
 * out of its parent (or the root) and freed after a grace period, so a
 * walk under RCU that still reaches it reads NULLs.
 */
#include <linux/bitops.h>
#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/slab.h>
#include "gs_index.h"

/* Unmerged, so that its slab counters show exactly our nodes. */
static struct kmem_cache *gs_index_cache;

int gs_index_init(void)
{
	gs_index_cache = KMEM_CACHE(gs_index_node, SLAB_NO_MERGE);
	return gs_index_cache ? 0 : -ENOMEM;
}

void gs_index_exit(void)
{
	/* Nodes freed after a grace period: wait for their callbacks. */
	rcu_barrier();
	kmem_cache_destroy(gs_index_cache);
}

size_t gs_index_node_bytes(void)
{
	return kmem_cache_size(gs_index_cache);
}

/* Whole levels of GS_INDEX_SHIFT bits for indices up to @max. */
static void gs_index_size(struct gs_index *ix, unsigned long max)
{
	unsigned int bits = max ? fls_long(max) : 1;

	ix->levels = DIV_ROUND_UP(bits, GS_INDEX_SHIFT);
	ix->max = ix->levels * GS_INDEX_SHIFT >= BITS_PER_LONG ? ULONG_MAX :
		  BIT(ix->levels * GS_INDEX_SHIFT) - 1;
}

void gs_index_create(struct gs_index *ix, unsigned long max,
		     atomic_long_t *bytes)
{
	RCU_INIT_POINTER(ix->root, NULL);
	gs_index_size(ix, max);
	spin_lock_init(&ix->lock);
	ix->nodes = 0;
	ix->bytes = bytes;
}

int gs_index_resize(struct gs_index *ix, unsigned long max)
{
	int ret = 0;

	spin_lock(&ix->lock);
	if (rcu_access_pointer(ix->root))
		ret = -EBUSY;
	else
		gs_index_size(ix, max);
	spin_unlock(&ix->lock);
	return ret;
}

static struct gs_index_node *gs_index_node_new(struct gs_index *ix, gfp_t gfp)
{
	struct gs_index_node *n = kmem_cache_zalloc(gs_index_cache, gfp);

	if (n)
		atomic_long_add(gs_index_node_bytes(), ix->bytes);
	return n;
}

/* A node nobody ever saw. */
static void gs_index_node_drop(struct gs_index *ix, struct gs_index_node *n)
{
	atomic_long_sub(gs_index_node_bytes(), ix->bytes);
	kmem_cache_free(gs_index_cache, n);
}

static void gs_index_node_free_rcu(struct rcu_head *head)
{
	kmem_cache_free(gs_index_cache,
			container_of(head, struct gs_index_node, rcu));
}

/* A node taken out of the tree (index lock held): walks may still see it. */
static void gs_index_node_retire(struct gs_index *ix, struct gs_index_node *n)
{
	ix->nodes--;
	atomic_long_sub(gs_index_node_bytes(), ix->bytes);
	call_rcu(&n->rcu, gs_index_node_free_rcu);
}

static struct gs_index_node *gs_index_deref(struct gs_index *ix,
					    void __rcu *const *p)
{
	return rcu_dereference_protected(*p, lockdep_is_held(&ix->lock));
}

/* Where the node at @level on the way to @i hangs: the root or a slot. */
static unsigned int gs_index_off(struct gs_index *ix, unsigned int level,
				 unsigned long i)
{
	return (i >> ((ix->levels - 1 - level) * GS_INDEX_SHIFT)) &
	       GS_INDEX_MASK;
}

/* Nodes missing on the way to @i (index lock held). */
static unsigned int gs_index_missing(struct gs_index *ix, unsigned long i)
{
	struct gs_index_node *n = gs_index_deref(ix, &ix->root);
	unsigned int level;

	for (level = 0; level < ix->levels; level++) {
		if (!n)
			return ix->levels - level;
		if (level + 1 < ix->levels)
			n = gs_index_deref(ix, &n->slot[gs_index_off(ix, level,
								     i)]);
	}
	return 0;
}

void *gs_index_insert(struct gs_index *ix, unsigned long i, void *entry,
		      gfp_t gfp)
{
	struct gs_index_node *spare[GS_INDEX_LEVELS_MAX], *n, *parent = NULL;
	unsigned int nspare = 0, need, level;
	void __rcu **pp;
	void *old;

	if (i > ix->max)
		return ERR_PTR(-ERANGE);
	for (;;) {
		spin_lock(&ix->lock);
		need = gs_index_missing(ix, i);
		if (need <= nspare)
			break;
		spin_unlock(&ix->lock);
		/* Allocated with the lock dropped; the path is looked at again. */
		while (nspare < need) {
			n = gs_index_node_new(ix, gfp);
			if (!n) {
				old = ERR_PTR(-ENOMEM);
				goto out;
			}
			spare[nspare++] = n;
		}
	}
	pp = &ix->root;
	for (level = 0;; level++) {
		n = gs_index_deref(ix, pp);
		if (!n) {
			n = spare[--nspare];
			ix->nodes++;
			rcu_assign_pointer(*pp, n);
			if (parent)
				parent->used++;
		}
		pp = &n->slot[gs_index_off(ix, level, i)];
		if (level + 1 == ix->levels)
			break;
		parent = n;
	}
	old = gs_index_deref(ix, pp);
	if (!old) {
		rcu_assign_pointer(*pp, entry);
		n->used++;
	}
	spin_unlock(&ix->lock);
out:
	while (nspare)
		gs_index_node_drop(ix, spare[--nspare]);
	return old;
}

void *gs_index_erase(struct gs_index *ix, unsigned long i)
{
	struct gs_index_node *path[GS_INDEX_LEVELS_MAX], *n;
	void __rcu **pp = NULL;
	unsigned int level;
	void *old = NULL;

	if (i > ix->max)
		return NULL;
	spin_lock(&ix->lock);
	n = gs_index_deref(ix, &ix->root);
	for (level = 0; n; level++) {
		path[level] = n;
		pp = &n->slot[gs_index_off(ix, level, i)];
		if (level + 1 == ix->levels) {
			old = gs_index_deref(ix, pp);
			break;
		}
		n = gs_index_deref(ix, pp);
	}
	if (!old)
		goto out;
	RCU_INIT_POINTER(*pp, NULL);
	/* The nodes it leaves empty, from the bottom up. */
	for (level = ix->levels; level-- > 0;) {
		n = path[level];
		if (--n->used)
			break;
		pp = level ? &path[level - 1]->slot[gs_index_off(ix, level - 1,
								 i)] :
			     &ix->root;
		RCU_INIT_POINTER(*pp, NULL);
		gs_index_node_retire(ix, n);
	}
out:
	spin_unlock(&ix->lock);
	return old;
}

void *gs_index_find(struct gs_index *ix, unsigned long *i,
		    unsigned long last)
{
	unsigned long idx = *i, next;
	struct gs_index_node *n;
	unsigned int shift;
	void *p;

	last = min(last, ix->max);
	while (idx <= last) {
		n = rcu_dereference(ix->root);
		if (!n)
			return NULL;
		shift = (ix->levels - 1) * GS_INDEX_SHIFT;
		for (;;) {
			p = rcu_dereference(n->slot[(idx >> shift) &
						    GS_INDEX_MASK]);
			if (p && !shift) {
				*i = idx;
				return p;
			}
			if (p) {
				n = p;
				shift -= GS_INDEX_SHIFT;
				continue;
			}
			/* Nothing under this slot: the next one's first index. */
			next = ((idx >> shift) + 1) << shift;
			if (next <= idx || next > last)
				return NULL;
			idx = next;
			/* Past this node's last slot: walk down from the root. */
			if (!((idx >> shift) & GS_INDEX_MASK))
				break;
		}
	}
	return NULL;
}

/* Free @n, at @level, and whatever hangs below it (index lock held). */
static void gs_index_free_tree(struct gs_index *ix, struct gs_index_node *n,
			       unsigned int level)
{
	unsigned int k;

	if (level + 1 < ix->levels)
		for (k = 0; k < GS_INDEX_FANOUT; k++)
			if (rcu_access_pointer(n->slot[k]))
				gs_index_free_tree(ix,
						   gs_index_deref(ix, &n->slot[k]),
						   level + 1);
	gs_index_node_retire(ix, n);
}

void gs_index_destroy(struct gs_index *ix)
{
	struct gs_index_node *root;

	spin_lock(&ix->lock);
	root = gs_index_deref(ix, &ix->root);
	/* Every entry was erased, and their nodes with them. */
	if (WARN_ON(root)) {
		RCU_INIT_POINTER(ix->root, NULL);
		gs_index_free_tree(ix, root, 0);
	}
	spin_unlock(&ix->lock);
}
