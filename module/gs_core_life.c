// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswap store core: a store's life. Its table and pool made (the
 * cluster index, the reserve of clusters, the zsmalloc pool, the
 * algorithms and streams, the units' split work) and unmade, and the
 * settings that want the store empty or an algorithm unused (the
 * algorithms, the unit size, the size). It calls gs_core.c
 * (gs_core_internal.h), gs_core_unit.c (the split work it sets up), the
 * index, the streams and the backends' parameters.
 */
#include <linux/atomic.h>
#include <linux/err.h>
#include <linux/mempool.h>
#include <linux/minmax.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <linux/zsmalloc.h>
#include "gs_backend.h"
#include "gs_comp.h"
#include "gs_core.h"
#include "gs_core_internal.h"
#include "gs_index.h"
#include "gs_store.h"
#include "gs_unit.h"

/* Does the store hold a page compressed with @prio (any, for the primary)? */
static bool gs_store_uses_prio(struct gs_store *s, unsigned int prio)
{
	struct gs_cluster *cl;
	unsigned long ci = 0, e;
	unsigned int i;
	bool used = false;

	if (prio == GS_PRIMARY_COMP)
		return gs_stat_read(&s->stats, GS_STAT_SLOTS_USED);
	for (; !used && (cl = gs_cluster_next(s, &ci, ULONG_MAX)); ci++) {
		for (i = 0; !used && i < GS_CLUSTER_SLOTS; i++) {
			e = atomic_long_read(&cl->table[i]);
			if (gs_entry_kind(e) == GS_KIND_UNIT)
				used = gs_entry_unit(e)->prio == prio;
			else
				used = (gs_entry_kind(e) == GS_KIND_COMPRESSED ||
					(gs_entry_kind(e) == GS_KIND_WRITTEN_BACK &&
					 gs_slot_aux(cl, i, e))) &&
				       gs_entry_prio(e) == prio;
		}
		gs_cluster_unlock(cl);
		cond_resched();
	}
	return used;
}

int gs_core_set_comp(struct gs_store *s, unsigned int prio,
		     struct gs_comp_params *p)
{
	if (gs_store_uses_prio(s, prio)) {
		if (p) {
			gs_comp_params_release(p);
			kfree(p);
		}
		return -EBUSY;
	}
	return gs_comp_set(s->comp, prio, p);
}

int gs_core_set_algorithm(struct gs_store *s, const char *alg)
{
	struct gs_comp_params *p;

	if (gs_stat_read(&s->stats, GS_STAT_SLOTS_USED))
		return -EBUSY;
	if (!gs_comp_available(alg))
		return -ENOENT;
	/* zram's rule: a new algorithm starts with its default parameters. */
	p = gs_comp_params_new(alg);
	if (IS_ERR(p))
		return PTR_ERR(p);
	return gs_comp_set(s->comp, GS_PRIMARY_COMP, p);
}

int gs_core_set_unit(struct gs_store *s, unsigned int pages)
{
	if (!gs_unit_pages_valid(pages))
		return -EINVAL;
	if (gs_stat_read(&s->stats, GS_STAT_SLOTS_USED))
		return -EBUSY;
	return gs_comp_set_unit(s->comp, pages * PAGE_SIZE);
}

/* The highest cluster number of @nr_slots slots. */
static unsigned long gs_cluster_max(u64 nr_slots)
{
	return nr_slots ? (nr_slots - 1) >> GS_CLUSTER_SHIFT : 0;
}

/*
 * The XArray reaches any index, but a store that holds a cluster keeps
 * its size: the slots it holds may lie past a smaller one. The index's
 * reserve takes the new size's height.
 */
int gs_core_set_size(struct gs_store *s, u64 nr_slots)
{
	if (!xa_empty(&s->clusters.xa))
		return -EBUSY;
	gs_index_set_max(&s->clusters, gs_cluster_max(nr_slots));
	/* Short of memory, inserts top it up. */
	gs_index_fill(&s->clusters, GFP_KERNEL);
	s->nr_slots = nr_slots;
	return 0;
}

struct gs_store *gs_core_create(const char *alg, u64 nr_slots)
{
	static atomic_t pool_id = ATOMIC_INIT(0);
	struct gs_store *s;
	char name[32];
	int ret = -ENOMEM;

	s = kzalloc_obj(*s);
	if (!s)
		return ERR_PTR(-ENOMEM);
	gs_index_create(&s->clusters, gs_cluster_max(nr_slots),
			GS_CLUSTER_RESERVE, &s->stats.meta_bytes);
	s->stats.hot = alloc_percpu(struct gs_hot_stats);
	if (!s->stats.hot)
		goto out_free;
	/* Its first reading: 0 in the low bits could pass for a tick's. */
	gs_age_clock_read();
	s->nr_slots = nr_slots;
	INIT_WORK(&s->unit_split_work, gs_unit_split_work);
	/* zsmalloc wants a distinct name per pool (debugfs). */
	snprintf(name, sizeof(name), "ghostswap%d",
		 atomic_inc_return(&pool_id));
	s->reserve = mempool_create(GS_CLUSTER_RESERVE, gs_cluster_alloc,
				    gs_cluster_release, NULL);
	if (!s->reserve)
		goto out_free;
	/* The nodes for the clusters of the reserve to go in new ranges. */
	if (gs_index_fill(&s->clusters, GFP_KERNEL))
		goto out_reserve;
	s->pool = zs_create_pool(name);
	if (!s->pool)
		goto out_reserve;
	/*
	 * A page compressed to huge_size or more is stored RAW: so a
	 * COMPRESSED entry's length is always below PAGE_SIZE, and a
	 * length of PAGE_SIZE means RAW (__gs_pool_pack()).
	 */
	s->huge_size = min_t(size_t, zs_huge_class_size(s->pool), PAGE_SIZE);
	s->incomp_check = true;
	s->comp = gs_comp_create(alg);
	if (IS_ERR(s->comp)) {
		ret = PTR_ERR(s->comp);
		goto out_pool;
	}
	return s;

out_pool:
	zs_destroy_pool(s->pool);
out_reserve:
	mempool_destroy(s->reserve);
out_free:
	gs_index_destroy(&s->clusters);
	free_percpu(s->stats.hot);
	kfree(s);
	return ERR_PTR(ret);
}

void gs_core_destroy(struct gs_store *s)
{
	gs_index_destroy(&s->clusters);
	gs_comp_destroy(s->comp);
	zs_destroy_pool(s->pool);
	/* The RCU callbacks give dead clusters to the reserve: wait for them. */
	rcu_barrier();
	mempool_destroy(s->reserve);
	free_percpu(s->stats.hot);
	kfree(s);
}
