// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswap backing store.
 *
 * A backing device is cut into page-sized slots. Slots are handed out
 * next-fit, so that writeback on a fresh device is sequential, several
 * contiguous slots at a time so that one bio carries a whole batch.
 *
 * The reverse map says which ghost slot owns each backing slot (32 bits
 * per slot), and keeps the CRC32C of the data written there (32 more
 * bits; the caller says how much of the page holds data): a page read
 * back that does not match is refused, so a backing device that returns
 * other data than it was given (a flipped bit, a misdirected write)
 * cannot hand wrong memory to a process. Like the ghost table it lives
 * in clusters of 512 slots, in an XArray, that exist only while one of
 * their slots is in use: a large backing device that holds little costs
 * little. The XArray's lock covers
 * the clusters' contents; frees take it from swap_slot_free_notify()
 * (atomic context), so nothing under it sleeps. Allocations are
 * serialised by a mutex, which also means that a slot that was freed is
 * not handed out again while its allocator holds the mutex.
 *
 * With discard on (a sparse file behind a loop device gives the space
 * of a discarded range back), a freed slot is not free yet: it is marked
 * GS_BK_DISCARDING and a worker, a tenth of a second later, discards the
 * runs of such slots cluster by cluster, without the lock, and only then
 * frees them. So a slot is never written again before its discard is
 * done, and a free stays atomic.
 */
#define pr_fmt(fmt) "ghostswap: " fmt

#include <linux/crc32c.h>
#include <linux/err.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include "gs_backing.h"
#include "gs_compat.h"

static struct kmem_cache *gs_bk_cluster_cache;

/*
 * The discard worker's queue. Backing compaction runs on the writeback
 * workqueue (WQ_MEM_RECLAIM: it frees memory) and waits for pending
 * discards (gs_backing_drain()); work that reclaim waits for must have a
 * rescuer too, or under memory pressure no worker may come for it.
 */
static struct workqueue_struct *gs_bk_wq;

/* Frees gathered before their discard, and runs taken per lock hold. */
#define GS_BK_DISCARD_DELAY	(HZ / 10)
#define GS_BK_DISCARD_RUNS	16

static void gs_backing_discard_work(struct work_struct *work);

size_t gs_bk_cluster_bytes(void)
{
	return kmem_cache_size(gs_bk_cluster_cache);
}

struct gs_backing *gs_backing_create(const struct gs_backing_ops *ops,
				     void *priv, u64 nr_slots)
{
	struct gs_backing *bk;

	if (!nr_slots)
		return ERR_PTR(-EINVAL);
	bk = kzalloc_obj(*bk);
	if (!bk)
		return ERR_PTR(-ENOMEM);
	bk->ops = ops;
	bk->priv = priv;
	bk->nr_slots = nr_slots;
	bk->limit = nr_slots;
	xa_init(&bk->clusters);
	mutex_init(&bk->alloc_lock);
	INIT_DELAYED_WORK(&bk->discard_work, gs_backing_discard_work);
	return bk;
}

void gs_backing_destroy(struct gs_backing *bk)
{
	struct gs_bk_cluster *bc;
	unsigned long ci;

	gs_backing_drain(bk);
	/* A pass that found nothing left may still be queued. */
	cancel_delayed_work_sync(&bk->discard_work);
	/* Slots still in use are a bug of the caller: do not leak them. */
	WARN_ON(bk->used);
	/* First: it stops what may still look at the slots (gs_chunks.c). */
	if (bk->ops->release)
		bk->ops->release(bk);
	xa_for_each(&bk->clusters, ci, bc)
		kmem_cache_free(gs_bk_cluster_cache, bc);
	xa_destroy(&bk->clusters);
	kfree(bk->path);
	kfree(bk);
}

/*
 * gs_backing_alloc() with alloc_lock held; @gfp for new clusters. With
 * @at, the search starts at the slot of the ghost slot's number (where
 * the device has it), else after the last allocation.
 */
static int __gs_backing_alloc(struct gs_backing *bk, const u64 *owners,
			      unsigned int nr, u64 *first, u64 below, bool low,
			      bool at, gfp_t gfp)
{
	u64 end = min(READ_ONCE(bk->limit), below), pos, start, base;
	struct gs_bk_cluster *bc, *new = NULL;
	bool wrapped = false;
	unsigned int i, cap;
	unsigned long ci;
	int got = 0, ret;

	lockdep_assert_held(&bk->alloc_lock);
	if (!nr || !end)
		return 0;
	/*
	 * An owner past GS_BK_MAX_OWNER would be stored as a code of the
	 * map's own (GS_BK_DISCARDING): refused, nothing allocated. The
	 * store never asks for one (gs_store_set_backing()).
	 */
	for (i = 0; i < nr; i++)
		if (owners[i] > GS_BK_MAX_OWNER)
			return -ERANGE;
	pos = low ? 0 : at && owners[0] < end ? owners[0] : bk->cursor;
	if (pos >= end)
		pos = 0;
	start = pos;
	for (;;) {
		ci = pos >> GS_BK_CLUSTER_SHIFT;
		base = (u64)ci << GS_BK_CLUSTER_SHIFT;
		cap = min_t(u64, GS_BK_CLUSTER_SLOTS, end - base);

		xa_lock(&bk->clusters);
		if (bk->used >= bk->nr_slots) {
			xa_unlock(&bk->clusters);
			break;
		}
		bc = xa_load(&bk->clusters, ci);
		if (!bc) {
			/* A cluster nobody uses: all of it is free. */
			xa_unlock(&bk->clusters);
			/*
			 * Failing only fails this writeback or direct store
			 * (the pages stay where they are): no warning.
			 */
			if (!new) {
				new = kmem_cache_zalloc(gs_bk_cluster_cache,
							gfp | __GFP_NOWARN);
				if (!new) {
					got = -ENOMEM;
					break;
				}
			}
			ret = xa_insert(&bk->clusters, ci, new,
					gfp | __GFP_NOWARN);
			if (ret == -ENOMEM) {
				got = -ENOMEM;
				break;
			}
			if (!ret) {
				atomic_long_add(gs_bk_cluster_bytes(),
						&bk->meta_bytes);
				new = NULL;
			}
			continue;
		}
		i = bc->used == GS_BK_CLUSTER_SLOTS ? cap : pos - base;
		while (i < cap && bc->owner[i])
			i++;
		if (i < cap) {
			*first = base + i;
			while (got < nr && i < cap && !bc->owner[i])
				bc->owner[i++] = owners[got++] + 1;
			bc->used += got;
			bk->used += got;
			bk->top = max(bk->top, base + i);
			xa_unlock(&bk->clusters);
			if (!low)
				bk->cursor = base + i;
			break;
		}
		xa_unlock(&bk->clusters);
		pos = base + GS_BK_CLUSTER_SLOTS;
		if (wrapped && pos > start)
			break;
		if (pos >= end) {
			if (wrapped || !start)
				break;
			pos = 0;
			wrapped = true;
		}
	}
	if (new)
		kmem_cache_free(gs_bk_cluster_cache, new);
	return got;
}

int gs_backing_alloc(struct gs_backing *bk, const u64 *owners,
		     unsigned int nr, u64 *first, u64 below, bool low)
{
	int got;

	mutex_lock(&bk->alloc_lock);
	got = __gs_backing_alloc(bk, owners, nr, first, below, low, false,
				 GFP_NOIO);
	mutex_unlock(&bk->alloc_lock);
	if (bk->ops->short_of_slots)
		bk->ops->short_of_slots(bk);
	return got;
}

int gs_backing_alloc_at(struct gs_backing *bk, const u64 *owners,
			unsigned int nr, u64 *first, bool nowait)
{
	int got;

	if (!nowait)
		mutex_lock(&bk->alloc_lock);
	else if (!mutex_trylock(&bk->alloc_lock))
		return -EAGAIN;
	got = __gs_backing_alloc(bk, owners, nr, first, U64_MAX, false, true,
				 nowait ? GFP_NOWAIT : GFP_NOIO);
	mutex_unlock(&bk->alloc_lock);
	/* Direct stores keep a backing directory's spare chunk too. */
	if (bk->ops->short_of_slots)
		bk->ops->short_of_slots(bk);
	return got;
}

/*
 * Slot @i of cluster @bc (index @ci) is free again; the lock is held.
 * Returns the cluster if it went empty and was erased: the caller frees
 * it (gs_bk_cluster_put()) once the lock is dropped.
 */
static struct gs_bk_cluster *gs_bk_slot_release(struct gs_backing *bk,
						struct gs_bk_cluster *bc,
						unsigned long ci,
						unsigned int i)
{
	bc->owner[i] = 0;
	bc->sum[i] = 0;
	bc->used--;
	bk->used--;
	if (bc->used)
		return NULL;
	__xa_erase(&bk->clusters, ci);
	return bc;
}

static void gs_bk_cluster_put(struct gs_backing *bk, struct gs_bk_cluster *bc)
{
	if (!bc)
		return;
	kmem_cache_free(gs_bk_cluster_cache, bc);
	atomic_long_sub(gs_bk_cluster_bytes(), &bk->meta_bytes);
}

void gs_backing_free(struct gs_backing *bk, u64 slot)
{
	unsigned long ci = slot >> GS_BK_CLUSTER_SHIFT;
	unsigned int i = slot & (GS_BK_CLUSTER_SLOTS - 1);
	struct gs_bk_cluster *bc;

	xa_lock(&bk->clusters);
	bc = xa_load(&bk->clusters, ci);
	if (WARN_ONCE(!bc || !bc->owner[i] ||
		      bc->owner[i] == GS_BK_DISCARDING,
		      "ghostswap: free of unused backing slot %llu\n", slot)) {
		xa_unlock(&bk->clusters);
		return;
	}
	if (bk->discard) {
		/* Stays taken until the worker discarded it. */
		bc->owner[i] = GS_BK_DISCARDING;
		bc->sum[i] = 0;
		bk->discarding++;
		xa_unlock(&bk->clusters);
		queue_delayed_work(gs_bk_wq, &bk->discard_work,
				   GS_BK_DISCARD_DELAY);
		return;
	}
	bc = gs_bk_slot_release(bk, bc, ci, i);
	xa_unlock(&bk->clusters);
	gs_bk_cluster_put(bk, bc);
}

/*
 * The runs of slots waiting for their discard in cluster @ci, up to
 * GS_BK_DISCARD_RUNS of them, discarded, then freed. Returns false if
 * the cluster may hold more (call again), true when it is done.
 */
static bool gs_bk_discard_cluster(struct gs_backing *bk, unsigned long ci)
{
	unsigned int start[GS_BK_DISCARD_RUNS], len[GS_BK_DISCARD_RUNS];
	u64 base = (u64)ci << GS_BK_CLUSTER_SHIFT;
	struct gs_bk_cluster *bc, *gone = NULL;
	unsigned int n = 0, i = 0, k, j;
	int err;

	xa_lock(&bk->clusters);
	bc = xa_load(&bk->clusters, ci);
	while (bc && i < GS_BK_CLUSTER_SLOTS && n < GS_BK_DISCARD_RUNS) {
		if (bc->owner[i] != GS_BK_DISCARDING) {
			i++;
			continue;
		}
		start[n] = i;
		while (i < GS_BK_CLUSTER_SLOTS &&
		       bc->owner[i] == GS_BK_DISCARDING)
			i++;
		len[n] = i - start[n];
		n++;
	}
	xa_unlock(&bk->clusters);

	/* The slots stay taken: nobody writes them meanwhile. */
	for (k = 0; k < n; k++) {
		err = bk->ops->discard(bk, base + start[k], len[k]);
		if (err) {
			atomic_long_inc(&bk->discard_errors);
			pr_err_ratelimited("cannot discard backing slots %llu-%llu: %d\n",
					   base + start[k],
					   base + start[k] + len[k] - 1, err);
		} else {
			atomic_long_add(len[k], &bk->discarded);
		}
	}

	/* Taken slots keep the cluster: @bc is still there. */
	xa_lock(&bk->clusters);
	for (k = 0; k < n; k++) {
		for (j = start[k]; j < start[k] + len[k]; j++) {
			bk->discarding--;
			gone = gs_bk_slot_release(bk, bc, ci, j);
		}
	}
	xa_unlock(&bk->clusters);
	gs_bk_cluster_put(bk, gone);
	return gone || n < GS_BK_DISCARD_RUNS;
}

/* One pass over the clusters: discard and free what waits for it. */
static void gs_backing_discard_work(struct work_struct *work)
{
	struct gs_backing *bk = container_of(to_delayed_work(work),
					     struct gs_backing, discard_work);
	unsigned long ci = 0;
	bool more;

	for (;;) {
		xa_lock(&bk->clusters);
		more = bk->discarding &&
		       xa_find(&bk->clusters, &ci, ULONG_MAX, XA_PRESENT);
		xa_unlock(&bk->clusters);
		if (!more)
			break;
		if (gs_bk_discard_cluster(bk, ci))
			ci++;
		cond_resched();
	}
}

int gs_backing_set_discard(struct gs_backing *bk, bool on)
{
	if (on && (!bk->ops->discard ||
		   (bk->ops->can_discard && !bk->ops->can_discard(bk))))
		return -EOPNOTSUPP;
	xa_lock(&bk->clusters);
	bk->discard = on;
	xa_unlock(&bk->clusters);
	if (!on)
		gs_backing_drain(bk);
	return 0;
}

void gs_backing_drain(struct gs_backing *bk)
{
	u64 pending;

	for (;;) {
		xa_lock(&bk->clusters);
		pending = bk->discarding;
		xa_unlock(&bk->clusters);
		if (!pending)
			break;
		mod_delayed_work(gs_bk_wq, &bk->discard_work, 0);
		flush_delayed_work(&bk->discard_work);
	}
}

u32 gs_backing_sum(const void *page, unsigned int len)
{
	return crc32c(~0U, page, len);
}

void gs_backing_set_sum(struct gs_backing *bk, u64 slot, u32 sum)
{
	struct gs_bk_cluster *bc;

	xa_lock(&bk->clusters);
	bc = xa_load(&bk->clusters, slot >> GS_BK_CLUSTER_SHIFT);
	if (!WARN_ON_ONCE(!bc || !bc->owner[slot & (GS_BK_CLUSTER_SLOTS - 1)]))
		bc->sum[slot & (GS_BK_CLUSTER_SLOTS - 1)] = sum;
	xa_unlock(&bk->clusters);
}

u32 gs_backing_sum_of(struct gs_backing *bk, u64 slot)
{
	struct gs_bk_cluster *bc;
	u32 sum = 0;

	xa_lock(&bk->clusters);
	bc = xa_load(&bk->clusters, slot >> GS_BK_CLUSTER_SHIFT);
	if (bc && bc->owner[slot & (GS_BK_CLUSTER_SLOTS - 1)])
		sum = bc->sum[slot & (GS_BK_CLUSTER_SLOTS - 1)];
	xa_unlock(&bk->clusters);
	return sum;
}

u64 gs_backing_owner(struct gs_backing *bk, u64 slot)
{
	struct gs_bk_cluster *bc;
	u64 owner = U64_MAX;

	xa_lock(&bk->clusters);
	bc = xa_load(&bk->clusters, slot >> GS_BK_CLUSTER_SHIFT);
	if (bc && bc->owner[slot & (GS_BK_CLUSTER_SLOTS - 1)] &&
	    bc->owner[slot & (GS_BK_CLUSTER_SLOTS - 1)] != GS_BK_DISCARDING)
		owner = bc->owner[slot & (GS_BK_CLUSTER_SLOTS - 1)] - 1;
	xa_unlock(&bk->clusters);
	return owner;
}

bool gs_backing_cluster_owners(struct gs_backing *bk, unsigned long ci,
			       u32 *owners)
{
	struct gs_bk_cluster *bc;

	xa_lock(&bk->clusters);
	bc = xa_load(&bk->clusters, ci);
	if (bc)
		memcpy(owners, bc->owner, sizeof(bc->owner));
	xa_unlock(&bk->clusters);
	return bc;
}

void gs_backing_write_start(struct gs_backing *bk, u64 slot,
			    void *const *bufs, unsigned int nr,
			    struct gs_bk_io *io)
{
	init_completion(&io->done);
	io->err = 0;
	io->end = NULL;
	if (bk->ops->write_start) {
		bk->ops->write_start(bk, slot, bufs, nr, io);
		return;
	}
	io->err = bk->ops->write(bk, slot, bufs, nr);
	complete(&io->done);
}

int gs_backing_write_wait(struct gs_bk_io *io)
{
	wait_for_completion_io(&io->done);
	return io->err;
}

int gs_backing_submit(struct gs_backing *bk, bool write, u64 slot,
		      struct page *const *pages, unsigned int nr,
		      struct gs_bk_io *io)
{
	if (!bk->ops->submit || WARN_ON_ONCE(!io->end))
		return -EAGAIN;
	io->err = 0;
	return bk->ops->submit(bk, write, slot, pages, nr, io);
}

int gs_backing_read_start(struct gs_backing *bk, u64 slot, struct page *page,
			  struct gs_bk_io *io)
{
	if (!bk->ops->read_start || WARN_ON_ONCE(!io->end))
		return -EAGAIN;
	io->err = 0;
	return bk->ops->read_start(bk, slot, page, io);
}

/*
 * From the top mark down: the cluster below it holds the last used slot,
 * unless it is gone (its last slot was freed), then the mark moves below
 * it. The mark only comes down by what was allocated above it before, so
 * a series of calls (backing compaction: one per page moved) costs the
 * pages moved plus the clusters skipped once, not a walk of every cluster
 * per page.
 */
u64 gs_backing_last_used(struct gs_backing *bk)
{
	struct gs_bk_cluster *bc;
	unsigned int skipped = 0;
	u64 slot = U64_MAX;
	unsigned long ci;
	int i;

	xa_lock(&bk->clusters);
	while (bk->used && bk->top) {
		ci = (bk->top - 1) >> GS_BK_CLUSTER_SHIFT;
		bc = xa_load(&bk->clusters, ci);
		for (i = (bk->top - 1) & (GS_BK_CLUSTER_SLOTS - 1); bc && i >= 0;
		     i--) {
			if (bc->owner[i]) {
				slot = ((u64)ci << GS_BK_CLUSTER_SHIFT) + i;
				break;
			}
		}
		if (slot != U64_MAX) {
			bk->top = slot + 1;
			break;
		}
		/* Nothing in use at or above this cluster's first slot. */
		bk->top = (u64)ci << GS_BK_CLUSTER_SHIFT;
		if (++skipped % GS_BK_SKIP_BATCH == 0) {
			/* Let frees (atomic context) in. */
			xa_unlock(&bk->clusters);
			cond_resched();
			xa_lock(&bk->clusters);
		}
	}
	if (!bk->used)
		bk->top = 0;
	xa_unlock(&bk->clusters);
	return slot;
}

bool gs_backing_full(struct gs_backing *bk)
{
	/* A hint read without the lock: the allocator decides under it. */
	if (data_race(READ_ONCE(bk->used)) < READ_ONCE(bk->limit))
		return false;
	if (bk->ops->short_of_slots)
		bk->ops->short_of_slots(bk);
	return true;
}

void gs_backing_sparse(struct gs_backing *bk)
{
	/* Pairs with its publication: bk->owner is set once it is seen. */
	void (*sparse)(struct gs_backing *bk) = smp_load_acquire(&bk->sparse);

	if (sparse)
		sparse(bk);
}

void gs_backing_stop(struct gs_backing *bk)
{
	if (bk->ops->stop)
		bk->ops->stop(bk);
}

void gs_backing_set_limit(struct gs_backing *bk, u64 limit)
{
	mutex_lock(&bk->alloc_lock);
	WRITE_ONCE(bk->limit, min(limit, bk->nr_slots));
	mutex_unlock(&bk->alloc_lock);
}

bool gs_backing_lower_limit(struct gs_backing *bk, u64 limit)
{
	u64 last;
	bool ok;

	mutex_lock(&bk->alloc_lock);
	last = gs_backing_last_used(bk);
	ok = last == U64_MAX || last < limit;
	if (ok)
		WRITE_ONCE(bk->limit, min(limit, bk->limit));
	mutex_unlock(&bk->alloc_lock);
	return ok;
}

u64 gs_backing_used(struct gs_backing *bk)
{
	u64 used;

	xa_lock(&bk->clusters);
	used = bk->used - bk->discarding;
	xa_unlock(&bk->clusters);
	return used;
}

int gs_backing_init(void)
{
	gs_bk_wq = alloc_workqueue("ghostswap-bk", WQ_UNBOUND | WQ_MEM_RECLAIM,
				   0);
	if (!gs_bk_wq)
		return -ENOMEM;
	gs_bk_cluster_cache = KMEM_CACHE(gs_bk_cluster, SLAB_NO_MERGE);
	if (!gs_bk_cluster_cache) {
		destroy_workqueue(gs_bk_wq);
		return -ENOMEM;
	}
	return 0;
}

void gs_backing_exit(void)
{
	kmem_cache_destroy(gs_bk_cluster_cache);
	destroy_workqueue(gs_bk_wq);
}
