// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswap writeback tier: its life. The tier's state in a new store
 * (struct gs_wb), attaching a backing store to it with what comes with
 * one (the workqueues, the shrinker, a round's batches, the reserves of
 * the reads and writes started from a submit path), changing the batch
 * size, stopping what runs on its own, detaching the backing store, and
 * the cipher. It calls pool limit reclaim and the shrinker
 * (gs_wb_reclaim.c: the work and the callbacks it sets up), backing
 * compaction (gs_wb_compact.c: likewise), the reserve that units are
 * read back into (gs_wb_read.c: its bytes), the core (gs_core.h), the
 * backing store (gs_backing.c) and the cipher (gs_crypt.c).
 */
#include <linux/atomic.h>
#include <linux/err.h>
#include <linux/mempool.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/shrinker.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/wait_bit.h>
#include <linux/workqueue.h>
#include "gs_backing.h"
#include "gs_crypt.h"
#include "gs_store.h"
#include "gs_wb_internal.h"
#include "gs_writeback.h"

/* Reads of written-back pages that can always be started: a swap read's. */
#define GS_WB_RB_RESERVE	32
/*
 * Direct writes started from a submit path that can always be started:
 * a few swap writes' worth.
 */
#define GS_WB_WR_RESERVE	4
/* Runs of reads started from a submit path that can always be started. */
#define GS_WB_RR_RESERVE	4

void gs_wb_init(struct gs_store *s)
{
	mutex_init(&s->wb.lock);
	spin_lock_init(&s->wb.limit_lock);
	INIT_WORK(&s->wb.work, gs_wb_reclaim_work);
	INIT_WORK(&s->wb.compact_work, gs_wb_compact_work);
	s->wb.use_shrinker = true;
	s->wb.checksum = true;
	s->wb.batch_size = GS_WB_BATCH_SIZE_DEFAULT;
}

/* Bytes of the batches for @size pages, counted in wb_buffer_bytes. */
static size_t gs_wb_batches_bytes(struct gs_wb_batch *batches,
				  unsigned int size)
{
	return batches ? ksize(batches) + (size_t)size * PAGE_SIZE : 0;
}

static void gs_wb_batches_free(struct gs_wb_batch *batches, unsigned int nr)
{
	unsigned int i, k;

	if (!batches)
		return;
	for (k = 0; k < nr; k++)
		for (i = 0; i < batches[k].cap; i++)
			free_page((unsigned long)batches[k].bufs[i]);
	kfree(batches);
}

/*
 * Batches for @size pages in flight: two of half of it (one is collected
 * while the other is written), more if that is over GS_WB_BATCH each.
 */
static struct gs_wb_batch *gs_wb_batches_alloc(unsigned int size,
					       unsigned int *nr)
{
	unsigned int per = min_t(unsigned int, GS_WB_BATCH,
				 DIV_ROUND_UP(size, 2));
	struct gs_wb_batch *batches;
	unsigned int i, k;

	*nr = DIV_ROUND_UP(size, per);
	batches = kcalloc(*nr, sizeof(*batches), GFP_KERNEL);
	if (!batches)
		return NULL;
	for (k = 0; k < *nr; k++) {
		unsigned int cap = min(per, size - k * per);

		for (i = 0; i < cap; i++) {
			void *buf = (void *)__get_free_page(GFP_KERNEL);

			if (!buf) {
				gs_wb_batches_free(batches, k + 1);
				return NULL;
			}
			batches[k].bufs[i] = buf;
			batches[k].cap = i + 1;
		}
	}
	return batches;
}

/* The reserves of the requests of reads and writes started from a submit path. */
static size_t gs_wb_rb_pool_bytes(struct gs_store *s)
{
	return GS_WB_RB_RESERVE * kmalloc_size_roundup(sizeof(struct gs_wb_rb)) +
	       GS_WB_WR_RESERVE * kmalloc_size_roundup(sizeof(struct gs_wb_wr)) +
	       GS_WB_RR_RESERVE * kmalloc_size_roundup(sizeof(struct gs_wb_rr)) +
	       (s->wb.ub_pool ? gs_wb_ub_bytes() : 0);
}

static void gs_wb_batch_free(struct gs_store *s)
{
	mempool_destroy(s->wb.rb_pool);
	s->wb.rb_pool = NULL;
	mempool_destroy(s->wb.wr_pool);
	s->wb.wr_pool = NULL;
	mempool_destroy(s->wb.rr_pool);
	s->wb.rr_pool = NULL;
	mempool_destroy(s->wb.ub_pool);
	s->wb.ub_pool = NULL;
	gs_wb_batches_free(s->wb.batches, s->wb.nr_batches);
	s->wb.batches = NULL;
	s->wb.nr_batches = 0;
	atomic_long_set(&s->stats.wb_buffer_bytes, 0);
}

static int gs_wb_batch_alloc(struct gs_store *s)
{
	s->wb.rb_pool = mempool_create_kmalloc_pool(GS_WB_RB_RESERVE,
						    sizeof(struct gs_wb_rb));
	s->wb.wr_pool = mempool_create_kmalloc_pool(GS_WB_WR_RESERVE,
						    sizeof(struct gs_wb_wr));
	s->wb.rr_pool = mempool_create_kmalloc_pool(GS_WB_RR_RESERVE,
						    sizeof(struct gs_wb_rr));
	if (!s->wb.rb_pool || !s->wb.wr_pool || !s->wb.rr_pool) {
		gs_wb_batch_free(s);
		return -ENOMEM;
	}
	s->wb.batches = gs_wb_batches_alloc(s->wb.batch_size,
					    &s->wb.nr_batches);
	if (!s->wb.batches) {
		gs_wb_batch_free(s);
		return -ENOMEM;
	}
	atomic_long_set(&s->stats.wb_buffer_bytes,
			gs_wb_batches_bytes(s->wb.batches, s->wb.batch_size) +
			gs_wb_rb_pool_bytes(s));
	return 0;
}

int gs_store_set_wb_batch_size(struct gs_store *s, unsigned int size)
{
	struct gs_wb_batch *batches = NULL, *old;
	unsigned int nr = 0, old_nr;

	if (!size || size > GS_WB_BATCH_SIZE_MAX)
		return -EINVAL;
	mutex_lock(&s->wb.lock);
	if (s->bk) {
		batches = gs_wb_batches_alloc(size, &nr);
		if (!batches) {
			mutex_unlock(&s->wb.lock);
			return -ENOMEM;
		}
	}
	old = s->wb.batches;
	old_nr = s->wb.nr_batches;
	if (s->bk) {
		s->wb.batches = batches;
		s->wb.nr_batches = nr;
		atomic_long_set(&s->stats.wb_buffer_bytes,
				gs_wb_batches_bytes(batches, size) +
				gs_wb_rb_pool_bytes(s));
	}
	WRITE_ONCE(s->wb.batch_size, size);
	mutex_unlock(&s->wb.lock);
	if (batches)
		gs_wb_batches_free(old, old_nr);
	return 0;
}

void gs_wb_stop(struct gs_store *s)
{
	/*
	 * Nothing asks for compaction any more; one under way ends at its
	 * next page.
	 */
	WRITE_ONCE(s->wb.stopping, true);
	if (s->bk)
		gs_backing_stop(s->bk);
	cancel_work_sync(&s->wb.compact_work);
	if (s->wb.shrinker) {
		shrinker_free(s->wb.shrinker);
		s->wb.shrinker = NULL;
	}
	cancel_work_sync(&s->wb.work);
	/*
	 * Reads and writes started from a submit path end on their own:
	 * wait for them.
	 */
	wait_var_event(&s->wb.inflight, !atomic_read(&s->wb.inflight));
}

int gs_store_set_backing(struct gs_store *s, struct gs_backing *bk)
{
	struct gs_wb *wb = &s->wb;
	int ret = -EBUSY;

	if (s->bk || gs_stat_read(&s->stats, GS_STAT_SLOTS_USED))
		goto out_bk;
	/* The reverse map holds ghost slots up to GS_BK_MAX_OWNER. */
	ret = -EFBIG;
	if (s->nr_slots > GS_BK_MAX_OWNER + 1)
		goto out_bk;
	/* An entry holds a backing slot in 48 bits: 1 EiB, none past it. */
	bk->nr_slots = min_t(u64, bk->nr_slots, GS_VALUE_MAX + 1);
	ret = gs_wb_batch_alloc(s);
	if (ret)
		goto out_bk;
	ret = -ENOMEM;
	wb->wq = alloc_workqueue("ghostswap-wb", WQ_UNBOUND | WQ_MEM_RECLAIM, 1);
	if (!wb->wq)
		goto out_batch;
	/*
	 * Page faults wait on these reads, reclaim on these writes: high
	 * priority.
	 */
	wb->end_wq = alloc_workqueue("ghostswap-rb", WQ_UNBOUND | WQ_HIGHPRI |
				      WQ_MEM_RECLAIM, 0);
	if (!wb->end_wq)
		goto out_wq;
	wb->shrinker = shrinker_alloc(0, "ghostswap");
	if (!wb->shrinker)
		goto out_read_wq;
	wb->shrinker->count_objects = gs_shrink_count;
	wb->shrinker->scan_objects = gs_shrink_scan;
	wb->shrinker->seeks = DEFAULT_SEEKS;
	wb->shrinker->private_data = s;
	wb->stopping = false;
	bk->owner = s;
	/* The chunk worker may call it now: @owner before it. */
	smp_store_release(&bk->sparse, gs_wb_sparse);
	s->bk = bk;
	wb->hand = 0;
	shrinker_register(wb->shrinker);
	return 0;

out_read_wq:
	destroy_workqueue(wb->end_wq);
	wb->end_wq = NULL;
out_wq:
	destroy_workqueue(wb->wq);
	wb->wq = NULL;
out_batch:
	gs_wb_batch_free(s);
out_bk:
	gs_backing_destroy(bk);
	return ret;
}

int gs_store_set_wb_encrypt(struct gs_store *s, bool on)
{
	struct crypto_sync_skcipher *tfm = NULL;

	if (on == !!s->wb.cipher)
		return 0;
	if (on) {
		tfm = gs_crypt_create();
		if (IS_ERR(tfm))
			return PTR_ERR(tfm);
	}
	gs_crypt_destroy(s->wb.cipher);
	s->wb.cipher = tfm;
	return 0;
}

void gs_wb_destroy(struct gs_store *s)
{
	gs_crypt_destroy(s->wb.cipher);
	s->wb.cipher = NULL;
}

void gs_wb_detach(struct gs_store *s)
{
	if (!s->bk)
		return;
	/* Waits for a running shrinker scan and the background writeback. */
	gs_wb_stop(s);
	destroy_workqueue(s->wb.end_wq);
	s->wb.end_wq = NULL;
	destroy_workqueue(s->wb.wq);
	s->wb.wq = NULL;
	gs_wb_batch_free(s);
	gs_backing_destroy(s->bk);
	s->bk = NULL;
}

int gs_store_clear_backing(struct gs_store *s)
{
	if (!s->bk)
		return 0;
	if (gs_stat_read(&s->stats, GS_STAT_SLOTS_USED))
		return -EBUSY;
	gs_wb_detach(s);
	return 0;
}
