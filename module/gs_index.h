/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ghostswap cluster index: a cluster's number -> the cluster, on an
 * XArray.
 *
 * The XArray keeps nodes only over entries that exist and grows and
 * shrinks its height with the highest index it holds, so unused space
 * costs nothing and no index is out of its reach. Lookups and scans take
 * RCU themselves (xa_load(), xa_find()). Inserts and erases take the
 * array's lock (xa_lock), a spinlock taken with nothing under it: erases
 * run under a cluster lock, from swap_slot_free_notify() too, and never
 * sleep or allocate.
 *
 * (A radix tree of a fixed depth stood here for a while: it saved 0.8% of
 * a read's instructions, for nodes of 2072 bytes against 576 and a depth
 * fixed when the store was made.)
 *
 * This room adds what the XArray does not say: how many nodes it holds
 * (their bytes are added to and taken from *bytes), and a reserve of
 * spare nodes so that the first insert into a new range does not fail
 * for want of memory (see gs_index_create()).
 */
#ifndef _GS_INDEX_H
#define _GS_INDEX_H

#include <linux/gfp.h>
#include <linux/kernel.h>
#include <linux/types.h>
#include <linux/xarray.h>

/* Levels of an XArray that holds every index of an unsigned long. */
#define GS_INDEX_HEIGHT_MAX	DIV_ROUND_UP(BITS_PER_LONG, XA_CHUNK_SHIFT)
/* Inserts in a row the reserve covers with no memory at all, at most. */
#define GS_INDEX_INSERTS_MAX	4
#define GS_INDEX_SPARES_MAX	(GS_INDEX_HEIGHT_MAX + GS_INDEX_INSERTS_MAX * \
				 (GS_INDEX_HEIGHT_MAX - 1))

struct gs_index {
	struct xarray xa;		/* inserts and erases: its xa_lock */
	unsigned long nodes;		/* in the array, under xa_lock */
	atomic_long_t *bytes;		/* where their memory is counted */
	unsigned int inserts;		/* the reserve covers this many */
	unsigned int target;		/* spare nodes wanted */
	unsigned int spares;		/* held, in spare[0..spares) */
	/* A spare node each, from xas_nomem(); under xa_lock. */
	struct xa_state spare[GS_INDEX_SPARES_MAX];
};

/* The entry at @i, or NULL. Any context; takes RCU itself. */
static inline void *gs_index_load(struct gs_index *ix, unsigned long i)
{
	return xa_load(&ix->xa, i);
}

/*
 * The bytes of one node, as the slab charges them: sizeof(struct xa_node),
 * 576 on 64-bit. lib/radix-tree.c makes radix_tree_node_cachep with that
 * size and no alignment of its own, so each object takes 576 bytes of
 * its slab (what the slab page leaves over, and debugging's redzones, are
 * not counted).
 */
static inline size_t gs_index_node_bytes(void)
{
	return sizeof(struct xa_node);
}

/*
 * An empty index for indices 0..@max (the highest that will be inserted:
 * it sizes the reserve, it does not bound the index), whose reserve
 * covers @inserts (at most GS_INDEX_INSERTS_MAX) first inserts into new
 * ranges in a row with no memory at all. The memory of its nodes is
 * added to and taken from *@bytes. Call gs_index_fill() to fill its
 * reserve.
 */
void gs_index_create(struct gs_index *ix, unsigned long max,
		     unsigned int inserts, atomic_long_t *bytes);
/*
 * A new highest index: the reserve's size follows it (spares past it are
 * freed; gs_index_fill() adds what it lacks). Never sleeps.
 */
void gs_index_set_max(struct gs_index *ix, unsigned long max);
/*
 * Top the reserve up with @gfp (it may sleep if @gfp does); -ENOMEM if
 * it could not be filled. Never with xa_lock held.
 */
int gs_index_fill(struct gs_index *ix, gfp_t gfp);
/* Spare nodes held now (a statistic). */
unsigned int gs_index_spares(struct gs_index *ix);
/* Frees the reserve and what is left of an index whose entries went. */
void gs_index_destroy(struct gs_index *ix);
/*
 * Put @entry (a pointer, not NULL) at @i if nothing is there: returns
 * NULL if it did, else what is there; ERR_PTR(-ENOMEM) if the nodes it
 * needs are neither to be had with @gfp nor in the reserve. A @gfp of 0
 * allocates nothing of its own: the nodes come from the reserve (but
 * for those the XArray finds with GFP_NOWAIT on its own). Tops the
 * reserve up with a @gfp that is not 0 first.
 */
void *gs_index_insert(struct gs_index *ix, unsigned long i, void *entry,
		      gfp_t gfp);
/* Take the entry at @i out and return it (NULL if none). Never sleeps. */
void *gs_index_erase(struct gs_index *ix, unsigned long i);
/*
 * The first entry at an index from *@i up to @last, with *@i set to its
 * index; NULL if none. Any context; takes RCU itself.
 */
static inline void *gs_index_find(struct gs_index *ix, unsigned long *i,
				  unsigned long last)
{
	return xa_find(&ix->xa, i, last, XA_PRESENT);
}

/*
 * Mark the entry at @i for gs_index_take_marked(). The caller keeps the
 * entry from being erased meanwhile (erasing it drops the mark). Never
 * sleeps, never allocates; takes xa_lock.
 */
static inline void gs_index_mark(struct gs_index *ix, unsigned long i)
{
	xa_set_mark(&ix->xa, i, XA_MARK_0);
}

/*
 * The first marked entry from *@i on, up to @last, its mark cleared and
 * its index in *@i; NULL if there is none.
 */
void *gs_index_take_marked(struct gs_index *ix, unsigned long *i,
			   unsigned long last);

#endif /* _GS_INDEX_H */
