// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswap store core.
 *
 * The ghost address space is an XArray of clusters indexed by slot >>
 * GS_CLUSTER_SHIFT. A cluster is allocated by the first write into its
 * range and freed when its last slot is freed, so space that holds nothing
 * costs nothing.
 *
 * Locking: each cluster has a spinlock that covers its table, aux array,
 * used count and dead flag. Lookups run under RCU, take the cluster lock and
 * retry if the cluster died in between. A cluster dies with its lock held:
 * it is marked dead and erased from the XArray (lock order: cluster lock,
 * then XArray lock), then freed after an RCU grace period. Nothing under a
 * cluster lock sleeps, so freeing works from swap_slot_free_notify(), which
 * the swap core calls under its own spinlock.
 */
#include <linux/gfp.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include "gs_core.h"

static struct kmem_cache *gs_cluster_cache;

size_t gs_cluster_bytes(void)
{
	return kmem_cache_size(gs_cluster_cache) + PAGE_SIZE;
}

static void gs_stat_max(atomic_long_t *max, long val)
{
	long old = atomic_long_read(max);

	while (old < val && !atomic_long_try_cmpxchg(max, &old, val))
		;
}

static struct gs_cluster *gs_cluster_alloc(gfp_t gfp)
{
	struct gs_cluster *cl;

	cl = kmem_cache_zalloc(gs_cluster_cache, gfp);
	if (!cl)
		return NULL;
	cl->table = (atomic_long_t *)get_zeroed_page(gfp);
	if (!cl->table) {
		kmem_cache_free(gs_cluster_cache, cl);
		return NULL;
	}
	spin_lock_init(&cl->lock);
	return cl;
}

static void gs_cluster_release(struct gs_cluster *cl)
{
	free_page((unsigned long)cl->table);
	kmem_cache_free(gs_cluster_cache, cl);
}

static void gs_cluster_free_rcu(struct rcu_head *head)
{
	gs_cluster_release(container_of(head, struct gs_cluster, rcu));
}

/* Publish a cluster that was allocated and inserted: update the counters. */
static void gs_cluster_account(struct gs_store *s)
{
	long n = atomic_long_inc_return(&s->stats.clusters);

	gs_stat_max(&s->stats.clusters_peak, n);
	atomic_long_add(gs_cluster_bytes(), &s->stats.meta_bytes);
}

/*
 * Find the cluster of @ci and return it locked, or NULL if it does not
 * exist and @gfp is 0. With @gfp, a missing cluster is created; returns an
 * ERR_PTR on allocation failure.
 */
static struct gs_cluster *gs_cluster_get(struct gs_store *s, unsigned long ci,
					 gfp_t gfp)
{
	struct gs_cluster *cl, *new = NULL;
	void *old;

	for (;;) {
		rcu_read_lock();
		cl = xa_load(&s->clusters, ci);
		if (cl) {
			spin_lock(&cl->lock);
			if (likely(!cl->dead)) {
				rcu_read_unlock();
				break;
			}
			spin_unlock(&cl->lock);
		}
		rcu_read_unlock();
		if (!gfp)
			return NULL;
		if (!new) {
			new = gs_cluster_alloc(gfp);
			if (!new)
				return ERR_PTR(-ENOMEM);
		}
		old = xa_cmpxchg(&s->clusters, ci, NULL, new, gfp);
		if (xa_is_err(old)) {
			gs_cluster_release(new);
			return ERR_PTR(xa_err(old));
		}
		if (!old) {
			/*
			 * Published. Look it up again like anybody else: it
			 * may already have been used and emptied by others.
			 */
			gs_cluster_account(s);
			new = NULL;
		}
		/* Else we lost a race with another creator: use theirs. */
	}
	if (new)
		gs_cluster_release(new);
	return cl;
}

/*
 * Called with the cluster locked; unlocks it. Kills it if it went empty.
 */
static void gs_cluster_put(struct gs_store *s, unsigned long ci,
			   struct gs_cluster *cl)
{
	if (cl->used) {
		spin_unlock(&cl->lock);
		return;
	}
	cl->dead = true;
	xa_erase(&s->clusters, ci);
	spin_unlock(&cl->lock);
	atomic_long_dec(&s->stats.clusters);
	atomic_long_sub(gs_cluster_bytes(), &s->stats.meta_bytes);
	call_rcu(&cl->rcu, gs_cluster_free_rcu);
}

/*
 * Clear one slot's entry under the cluster lock. Returns false if it was
 * empty. *@page gets the page that held its data, if any, for the caller to
 * free once the lock is dropped.
 */
static bool gs_slot_clear(struct gs_store *s, struct gs_cluster *cl,
			  unsigned int i, struct page **page)
{
	unsigned long e = atomic_long_read(&cl->table[i]);

	*page = NULL;
	switch (gs_entry_kind(e)) {
	case GS_KIND_EMPTY:
		return false;
	case GS_KIND_SAME:
		atomic_long_dec(&s->stats.same_pages);
		break;
	case GS_KIND_PAGE:
		*page = pfn_to_page(gs_entry_payload(e));
		atomic_long_dec(&s->stats.stored_pages);
		break;
	default:
		WARN_ONCE(1, "ghostswap: bad entry %lx\n", e);
		break;
	}
	atomic_long_set(&cl->table[i], 0);
	cl->aux[i] = 0;
	cl->used--;
	atomic_long_dec(&s->stats.slots_used);
	return true;
}

static bool gs_page_same_filled(const void *src, unsigned long *word)
{
	const unsigned long *p = src;
	unsigned long val = p[0];
	unsigned int i, n = PAGE_SIZE / sizeof(*p);

	if (p[n - 1] != val)
		return false;
	for (i = 1; i < n - 1; i++)
		if (p[i] != val)
			return false;
	*word = val;
	return true;
}

int gs_store_write(struct gs_store *s, u64 slot, const void *src, gfp_t gfp)
{
	unsigned long ci = slot >> GS_CLUSTER_SHIFT;
	unsigned int i = slot & (GS_CLUSTER_SLOTS - 1);
	struct page *page = NULL, *old;
	struct gs_cluster *cl;
	unsigned long word, e;
	u16 aux = 0;

	if (slot >= s->nr_slots)
		return -EINVAL;
	if (gs_page_same_filled(src, &word)) {
		e = gs_same_entry(word, &aux);
	} else {
		page = alloc_page(gfp | __GFP_HIGHMEM | __GFP_NOWARN);
		if (!page)
			return -ENOMEM;
		memcpy_to_page(page, 0, src, PAGE_SIZE);
		e = gs_entry(GS_KIND_PAGE, 0, page_to_pfn(page));
	}

	cl = gs_cluster_get(s, ci, gfp);
	if (IS_ERR(cl)) {
		if (page)
			__free_page(page);
		return PTR_ERR(cl);
	}
	gs_slot_clear(s, cl, i, &old);
	atomic_long_set(&cl->table[i], e);
	cl->aux[i] = aux;
	cl->used++;
	spin_unlock(&cl->lock);

	atomic_long_inc(&s->stats.slots_used);
	atomic_long_inc(page ? &s->stats.stored_pages : &s->stats.same_pages);
	if (old)
		__free_page(old);
	return 0;
}

int gs_store_read(struct gs_store *s, u64 slot, void *dst)
{
	unsigned long ci = slot >> GS_CLUSTER_SHIFT;
	unsigned int i = slot & (GS_CLUSTER_SLOTS - 1);
	struct gs_cluster *cl;
	unsigned long e;
	int ret = 0;

	if (slot >= s->nr_slots)
		return -EINVAL;
	cl = gs_cluster_get(s, ci, 0);
	if (!cl) {
		memset(dst, 0, PAGE_SIZE);
		return 0;
	}
	e = atomic_long_read(&cl->table[i]);
	switch (gs_entry_kind(e)) {
	case GS_KIND_EMPTY:
		memset(dst, 0, PAGE_SIZE);
		break;
	case GS_KIND_SAME:
		memset64(dst, gs_same_word(e, cl->aux[i]), PAGE_SIZE / 8);
		break;
	case GS_KIND_PAGE:
		memcpy_from_page(dst, pfn_to_page(gs_entry_payload(e)), 0,
				 PAGE_SIZE);
		break;
	default:
		ret = -EIO;
		break;
	}
	spin_unlock(&cl->lock);
	return ret;
}

void gs_store_free(struct gs_store *s, u64 slot)
{
	unsigned long ci = slot >> GS_CLUSTER_SHIFT;
	struct gs_cluster *cl;
	struct page *page;

	if (slot >= s->nr_slots)
		return;
	cl = gs_cluster_get(s, ci, 0);
	if (!cl)
		return;
	gs_slot_clear(s, cl, slot & (GS_CLUSTER_SLOTS - 1), &page);
	gs_cluster_put(s, ci, cl);
	if (page)
		__free_page(page);
}

u64 gs_store_free_range(struct gs_store *s, u64 first, u64 nr)
{
	u64 end = min(first + nr, s->nr_slots), freed = 0;
	unsigned long ci = first >> GS_CLUSTER_SHIFT;
	unsigned long last, lo, hi, i;
	struct gs_cluster *cl;
	struct page *page;

	if (first >= end)
		return 0;
	last = (end - 1) >> GS_CLUSTER_SHIFT;
	for (;;) {
		/* Skip the holes: only existing clusters are visited. */
		rcu_read_lock();
		cl = xa_find(&s->clusters, &ci, last, XA_PRESENT);
		rcu_read_unlock();
		if (!cl)
			break;
		cl = gs_cluster_get(s, ci, 0);
		if (cl) {
			lo = max_t(u64, first, (u64)ci << GS_CLUSTER_SHIFT);
			hi = min_t(u64, end, ((u64)ci + 1) << GS_CLUSTER_SHIFT);
			for (i = lo; i < hi; i++) {
				if (!gs_slot_clear(s, cl,
						   i & (GS_CLUSTER_SLOTS - 1),
						   &page))
					continue;
				freed++;
				if (page)
					__free_page(page);
			}
			gs_cluster_put(s, ci, cl);
		}
		if (ci == last)
			break;
		ci++;
		cond_resched();
	}
	return freed;
}

enum gs_kind gs_store_kind(struct gs_store *s, u64 slot)
{
	struct gs_cluster *cl;
	enum gs_kind kind;

	cl = gs_cluster_get(s, slot >> GS_CLUSTER_SHIFT, 0);
	if (!cl)
		return GS_KIND_EMPTY;
	kind = gs_entry_kind(atomic_long_read(&cl->table[slot &
						(GS_CLUSTER_SLOTS - 1)]));
	spin_unlock(&cl->lock);
	return kind;
}

void gs_store_init(struct gs_store *s, u64 nr_slots)
{
	memset(s, 0, sizeof(*s));
	xa_init(&s->clusters);
	s->nr_slots = nr_slots;
}

void gs_store_destroy(struct gs_store *s)
{
	gs_store_free_range(s, 0, s->nr_slots);
	WARN_ON(!xa_empty(&s->clusters));
	xa_destroy(&s->clusters);
	/* Let the RCU callbacks give the memory back before we return. */
	rcu_barrier();
}

int gs_core_init(void)
{
	/* Unmerged, so that its slab counters show exactly our clusters. */
	gs_cluster_cache = KMEM_CACHE(gs_cluster, SLAB_NO_MERGE);
	return gs_cluster_cache ? 0 : -ENOMEM;
}

void gs_core_exit(void)
{
	rcu_barrier();
	kmem_cache_destroy(gs_cluster_cache);
}
