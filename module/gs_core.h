/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ghostswap store core: the ghost address space of slots, kept in clusters
 * that exist only while they hold data, with the data compressed in a
 * zsmalloc pool. Independent of the block layer so that it can be driven
 * directly by tests.
 */
#ifndef _GS_CORE_H
#define _GS_CORE_H

#include <linux/atomic.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include <linux/xarray.h>
#include "gs_table.h"

struct gs_comp;
struct zs_pool;

struct gs_cluster {
	spinlock_t lock;	/* covers every field below */
	u16 used;		/* non-EMPTY slots */
	bool dead;		/* erased from the XArray, freed after RCU */
	atomic_long_t *table;	/* GS_CLUSTER_SLOTS words, one page */
	struct rcu_head rcu;
	u8 aux[GS_AUX_BYTES];	/* 12 bits per slot, see gs_aux_get() */
};

struct gs_stats {
	atomic_long_t clusters;
	atomic_long_t clusters_peak;
	atomic_long_t slots_used;	/* every non-EMPTY slot */
	atomic_long_t same_pages;	/* SAME */
	atomic_long_t comp_pages;	/* COMPRESSED */
	atomic_long_t huge_pages;	/* RAW */
	atomic_long_t huge_pages_since;	/* RAW pages ever stored */
	atomic_long_t compr_bytes;	/* pool bytes asked for (RAW: 4096) */
	atomic_long_t max_used_pages;	/* pool high water mark */
	atomic_long_t meta_bytes;	/* clusters: headers + tables */
	atomic_long_t failed_reads;
	atomic_long_t failed_writes;
	atomic_long_t invalid_io;
	atomic_long_t notify_free;
};

struct gs_store {
	struct xarray clusters;		/* cluster index -> struct gs_cluster */
	u64 nr_slots;			/* size of the ghost address space */
	struct zs_pool *pool;
	struct gs_comp *comp;
	size_t huge_size;		/* objects this big are stored RAW */
	unsigned long limit_pages;	/* pool limit, 0: none */
	struct gs_stats stats;
};

int gs_core_init(void);
void gs_core_exit(void);

/* A new empty store compressing with @alg; returns an ERR_PTR on failure. */
struct gs_store *gs_store_create(const char *alg, u64 nr_slots);
/* Frees every cluster and stored page; no I/O may run concurrently. */
void gs_store_destroy(struct gs_store *s);
/* Switch the algorithm of an empty store; no I/O may run concurrently. */
int gs_store_set_algorithm(struct gs_store *s, const char *alg);
const char *gs_store_algorithm(struct gs_store *s);

/* @src and @dst are PAGE_SIZE kernel buffers. May sleep. */
int gs_store_write(struct gs_store *s, u64 slot, const void *src, gfp_t gfp);
int gs_store_read(struct gs_store *s, u64 slot, void *dst);
/* Frees one slot; never sleeps (called under the swap core's spinlock). */
void gs_store_free(struct gs_store *s, u64 slot);
/* Frees [first, first + nr); may sleep. Returns the number of slots freed. */
u64 gs_store_free_range(struct gs_store *s, u64 first, u64 nr);

/* Pool pages in use (zsmalloc's count) and compaction. */
unsigned long gs_store_pool_pages(struct gs_store *s);
unsigned long gs_store_pages_compacted(struct gs_store *s);
unsigned long gs_store_compact(struct gs_store *s);

/* Bytes one cluster costs: its header (slab object) and its table. */
size_t gs_cluster_bytes(void);
/*
 * Kind of a slot's entry, for tests and debugging; *@len (if not NULL)
 * gets the bytes it takes in the pool.
 */
enum gs_kind gs_store_kind(struct gs_store *s, u64 slot, unsigned int *len);

#endif /* _GS_CORE_H */
