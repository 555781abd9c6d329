/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ghostswap cluster index: a cluster's number -> the cluster.
 *
 * A radix tree of a fixed depth, chosen once for the device's size: each
 * node holds GS_INDEX_FANOUT pointers, to nodes below it or, in the last
 * level, to clusters. Nodes exist only over clusters that exist: one is
 * allocated by the first insert under it and freed (after an RCU grace
 * period) with the last erase, so unused space costs nothing. Depth: 1
 * level up to 256 clusters (512 MiB), 2 up to 128 GiB, 3 up to 32 TiB, 4
 * up to 8 PiB.
 *
 * A lookup is a walk of that many loads, under RCU, with no branch for
 * the tree's shape: the reason it exists next to the XArray, whose walk
 * handles any shape. Inserts and erases take the index lock, a spinlock
 * taken with nothing under it: erases run under a cluster lock, from
 * swap_slot_free_notify() too, so nothing here sleeps but the
 * allocation of nodes, done with the lock dropped.
 */
#ifndef _GS_INDEX_H
#define _GS_INDEX_H

#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/compiler.h>
#include <linux/gfp.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include <linux/types.h>

#define GS_INDEX_SHIFT		8
#define GS_INDEX_FANOUT		BIT(GS_INDEX_SHIFT)
#define GS_INDEX_MASK		(GS_INDEX_FANOUT - 1)
#define GS_INDEX_LEVELS_MAX	(BITS_PER_LONG / GS_INDEX_SHIFT)

struct gs_index_node {
	void __rcu *slot[GS_INDEX_FANOUT];
	unsigned int used;		/* non-NULL slots, under the index lock */
	struct rcu_head rcu;		/* freed after a grace period */
};

struct gs_index {
	void __rcu *root;		/* a struct gs_index_node */
	unsigned long max;		/* the highest index it can hold */
	unsigned int levels;		/* of nodes, root to clusters: 1.. */
	spinlock_t lock;		/* inserts and erases */
	unsigned long nodes;		/* allocated, under the lock */
	atomic_long_t *bytes;		/* where the nodes' memory is counted */
};

/*
 * A node's or the root's pointer in a lookup, under rcu_read_lock() or
 * with preemption disabled: both hold off the grace period that frees a
 * node (see gs_lookup_begin() in gs_core.c).
 */
#define gs_index_load_ptr(p) \
	rcu_dereference_check(p, rcu_read_lock_sched_held())

/*
 * The entry at @i, or NULL. Under rcu_read_lock() or with preemption
 * disabled.
 */
static __always_inline void *gs_index_load(struct gs_index *ix,
					   unsigned long i)
{
	struct gs_index_node *n = gs_index_load_ptr(ix->root);
	unsigned int shift = (ix->levels - 1) * GS_INDEX_SHIFT;

	if (unlikely(i > ix->max))
		return NULL;
	for (; n && shift; shift -= GS_INDEX_SHIFT)
		n = gs_index_load_ptr(n->slot[(i >> shift) & GS_INDEX_MASK]);
	return n ? gs_index_load_ptr(n->slot[i & GS_INDEX_MASK]) : NULL;
}

int gs_index_init(void);
void gs_index_exit(void);
/* The bytes of one node, as allocated. */
size_t gs_index_node_bytes(void);

/*
 * An empty index for indices 0..@max; the memory of its nodes is added
 * to and taken from *@bytes.
 */
void gs_index_create(struct gs_index *ix, unsigned long max,
		     atomic_long_t *bytes);
/*
 * An empty index takes a new highest index, and the depth that goes with
 * it; -EBUSY if it holds any entry. No lookup may run meanwhile.
 */
int gs_index_resize(struct gs_index *ix, unsigned long max);
/* Frees what is left of an index whose entries were all erased. */
void gs_index_destroy(struct gs_index *ix);
/*
 * Put @entry (not NULL) at @i if nothing is there: returns NULL if it
 * did, else what is there; ERR_PTR(-ENOMEM) if a node could not be
 * allocated with @gfp, ERR_PTR(-ERANGE) if @i is past the index's max.
 */
void *gs_index_insert(struct gs_index *ix, unsigned long i, void *entry,
		      gfp_t gfp);
/* Take the entry at @i out and return it (NULL if none). Never sleeps. */
void *gs_index_erase(struct gs_index *ix, unsigned long i);
/*
 * The first entry at an index from *@i up to @last, with *@i set to its
 * index; NULL if none. Under rcu_read_lock().
 */
void *gs_index_find(struct gs_index *ix, unsigned long *i,
		    unsigned long last);

#endif /* _GS_INDEX_H */
