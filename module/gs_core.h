/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ghostswap store core: the ghost address space of slots, kept in clusters
 * that exist only while they hold data. Independent of the block layer so
 * that it can be driven directly by tests.
 */
#ifndef _GS_CORE_H
#define _GS_CORE_H

#include <linux/atomic.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include <linux/xarray.h>
#include "gs_table.h"

struct gs_cluster {
	spinlock_t lock;	/* covers every field below */
	u16 used;		/* non-EMPTY slots */
	bool dead;		/* erased from the XArray, freed after RCU */
	atomic_long_t *table;	/* GS_CLUSTER_SLOTS words, one page */
	struct rcu_head rcu;
	u16 aux[GS_CLUSTER_SLOTS];
};

struct gs_stats {
	atomic_long_t clusters;
	atomic_long_t clusters_peak;
	atomic_long_t slots_used;
	atomic_long_t same_pages;
	atomic_long_t stored_pages;	/* GS_KIND_PAGE slots */
	atomic_long_t meta_bytes;	/* clusters: headers + tables */
	atomic_long_t failed_reads;
	atomic_long_t failed_writes;
	atomic_long_t invalid_io;
	atomic_long_t notify_free;
};

struct gs_store {
	struct xarray clusters;		/* cluster index -> struct gs_cluster */
	u64 nr_slots;			/* size of the ghost address space */
	struct gs_stats stats;
};

int gs_core_init(void);
void gs_core_exit(void);

void gs_store_init(struct gs_store *s, u64 nr_slots);
/* Frees every cluster and stored page; no I/O may run concurrently. */
void gs_store_destroy(struct gs_store *s);

/* @src and @dst are PAGE_SIZE kernel buffers. May sleep if @gfp allows. */
int gs_store_write(struct gs_store *s, u64 slot, const void *src, gfp_t gfp);
int gs_store_read(struct gs_store *s, u64 slot, void *dst);
/* Frees one slot; never sleeps (called under the swap core's spinlock). */
void gs_store_free(struct gs_store *s, u64 slot);
/* Frees [first, first + nr); may sleep. Returns the number of slots freed. */
u64 gs_store_free_range(struct gs_store *s, u64 first, u64 nr);

/* Bytes one cluster costs: its header (slab object) and its table. */
size_t gs_cluster_bytes(void);
/* Kind of a slot's entry, for tests and debugging. */
enum gs_kind gs_store_kind(struct gs_store *s, u64 slot);

#endif /* _GS_CORE_H */
