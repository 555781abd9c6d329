// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswap bio path: the bios of /dev/ghostswap to and from the store.
 *
 * gs_submit_bio() splits a bio into slots and does what it can without
 * waiting: pages in memory at once, reads of written-back pages and runs
 * of direct writes started and ended on their own. The rest of a bio
 * that needs to wait for backing device I/O goes to a worker
 * (gs_punt()). The device and the module (gs_main.c) create and destroy
 * the workers with the device.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/highmem.h>
#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/mempool.h>
#include <linux/mm.h>
#include <linux/percpu.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/workqueue.h>
#include "gs_bio_watch.h"
#include "gs_compat.h"
#include "gs_dev.h"
#include "gs_store.h"

#define GS_SECTORS_PER_SLOT	(PAGE_SIZE >> SECTOR_SHIFT)

/*
 * Bios that need backing device I/O cannot wait for it in the submit path
 * (the block layer holds bios submitted from there until it returns):
 * the rest of such a bio, from the slot that needed it on, is handed to a
 * worker, per CPU, that does it in full. Reads and writes have lists of
 * their own: a read never waits behind a write that makes room in the
 * pool. Reads of written-back pages do not need it: they are started
 * from the submit path and end on their own (gs_store_read_start()).
 */
struct gs_punt {
	spinlock_t lock;	/* covers bios */
	struct list_head bios;	/* of struct gs_punted */
	struct work_struct work;
	struct gs_dev *d;
};

/* A bio handed to a worker, and where it goes on. */
struct gs_punted {
	struct list_head node;
	struct bio *bio;
	struct bvec_iter iter;	/* the first segment of a slot */
	u64 direct;		/* a slot to store as it is, U64_MAX: none */
	unsigned long start;	/* I/O accounting */
};

/* Punted bios that can always be taken: the workers give them back. */
#define GS_PUNT_RESERVE		16

/* ---------------------------------------------------------------- I/O */

/*
 * Every failure is an I/O error: BLK_STS_RESOURCE asks blk-mq to retry a
 * request, which means nothing for a bio-based driver's bio.
 */
static blk_status_t gs_errno_to_blk(int err)
{
	return err ? BLK_STS_IOERR : BLK_STS_OK;
}

/*
 * A whole slot. @direct: the slot whose page the submit path found must
 * go to the backing device as it is (GS_WRITE_DIRECT), U64_MAX if none:
 * stored there without being compressed again.
 */
static int gs_slot_rw(struct gs_store *s, u64 slot, void *p, bool write,
		      bool nowait, u64 direct)
{
	if (write && nowait)
		return gs_store_write_nowait(s, slot, p, GFP_NOIO);
	if (write)
		return slot == direct ?
		       gs_store_write_direct(s, slot, p, GFP_NOIO) :
		       gs_store_write(s, slot, p, GFP_NOIO);
	return nowait ? gs_store_read_nowait(s, slot, p) :
			gs_store_read(s, slot, p);
}

/*
 * Part of @bio failed with @err. The one place that counts failed bios
 * (the store counts none): a bio counts once, however many of its parts
 * fail and wherever they end (the submit path, a punt worker, the end
 * of a read or write started without waiting), so only the part that
 * sets its status first counts it.
 */
static void gs_bio_fail(struct gs_store *s, struct bio *bio, int err)
{
	/* As a byte: arm64's cmpxchg() casts to and from the bitwise type. */
	if (!cmpxchg((__force u8 *)&bio->bi_status, (__force u8)BLK_STS_OK,
		     (__force u8)gs_errno_to_blk(err)))
		atomic_long_inc(op_is_write(bio_op(bio)) ?
				&s->stats.failed_writes :
				&s->stats.failed_reads);
}

/*
 * A read or write started without waiting (gs_store_read_start(),
 * gs_store_write_start()) has ended: one less for the bio to wait for.
 */
static void gs_io_end(void *arg, int err)
{
	struct bio *bio = arg;

	if (err) {
		struct gs_dev *d = bio->bi_bdev->bd_disk->private_data;

		gs_bio_fail(d->store, bio, err);
	}
	gs_bio_watch_part_end(bio);
	bio_endio(bio);
}

/*
 * A whole page on the backing device, read in the submit path: started
 * and left to end on its own (the bio waits for it: a remaining count of
 * its own), or, if it is no longer there, read at once. Returns 0,
 * -EAGAIN if it cannot be started without waiting, or an errno.
 */
static int gs_read_page_start(struct gs_store *s, struct bio *bio, u64 slot,
			      struct page *page)
{
	int err;

	bio_inc_remaining(bio);
	gs_bio_watch_part(bio);
	err = gs_store_read_start(s, slot, page, gs_io_end, bio);
	if (err == GS_READ_STARTED)
		return 0;
	gs_bio_watch_part_end(bio);
	bio_endio(bio);	/* not started: the count goes back */
	if (!err)
		flush_dcache_page(page);
	return err;
}

/*
 * Whole pages of a bio, on consecutive slots, that need the backing
 * device: pages to store there as they are (GS_WRITE_DIRECT), or pages
 * to read from there. Started together: a write (up to 32 pages) or a
 * read of those whose backing slots follow each other at a time.
 */
#define GS_RUN_PAGES	32

struct gs_run {
	u64 slot;		/* the first one */
	unsigned int nr;
	struct bvec_iter at;	/* its segment */
	struct page *pages[GS_RUN_PAGES];
};

/*
 * Start the run; the bio waits for each part started. Returns 0, an
 * errno the bio fails with, or -EAGAIN with *@at (and for a write
 * *@direct) at its first page not started: the caller has a worker go on
 * from there.
 */
static int gs_run_start(struct gs_store *s, struct bio *bio, bool write,
			struct gs_run *run, struct bvec_iter *at, u64 *direct)
{
	unsigned int done = 0;
	int n, err = 0;

	while (done < run->nr) {
		bio_inc_remaining(bio);
		gs_bio_watch_part(bio);
		n = write ? gs_store_write_start(s, run->slot + done,
						 run->pages + done,
						 run->nr - done, gs_io_end, bio) :
			    gs_store_read_run_start(s, run->slot + done,
						    run->pages + done,
						    run->nr - done, gs_io_end,
						    bio);
		if (n > 0) {
			done += n;
			continue;
		}
		gs_bio_watch_part_end(bio);
		bio_endio(bio);	/* not started: the count goes back */
		err = -EAGAIN;
		if (write)
			break;
		/* Not in a run of reads: on its own. */
		err = gs_read_page_start(s, bio, run->slot + done,
					 run->pages[done]);
		if (err)
			break;
		done++;
	}
	if (err == -EAGAIN) {
		*at = run->at;
		bio_advance_iter(bio, at, (size_t)done << PAGE_SHIFT);
		if (write)
			*direct = run->slot + done;
	}
	run->nr = 0;
	return err;
}

/*
 * The whole page @bv to or from the store, without waiting. Returns what
 * gs_store_write_nowait() or gs_store_read_nowait() return. The segment
 * by value: no caller's variable has its address taken.
 */
static __always_inline int gs_page_nowait(struct gs_store *s, u64 slot,
					  struct bio_vec bv, bool write)
{
	void *p = bvec_kmap_local(&bv);
	int err;

	err = write ? gs_store_write_nowait(s, slot, p, GFP_NOIO) :
		      gs_store_read_nowait(s, slot, p);
	kunmap_local(p);
	if (!write && !err)
		flush_dcache_page(bv.bv_page);
	return err;
}

/* Whether that page needs the backing device: it joins a run. */
static bool gs_page_joins(int err, bool write)
{
	return err == (write ? GS_WRITE_DIRECT : -EAGAIN);
}

/*
 * The page of a one-page bio needs the backing device: a run of one,
 * started as gs_rw_segments() would start it. Out of line: the run's
 * array stays out of the fast path's stack frame.
 */
static noinline int gs_page_run(struct gs_store *s, struct bio *bio,
				bool write, struct bvec_iter *iter,
				struct page *page, u64 *direct)
{
	/* Only the first page is filled: no need to clear 256 bytes. */
	struct gs_run run __uninitialized;

	run.slot = iter->bi_sector / GS_SECTORS_PER_SLOT;
	run.nr = 1;
	run.at = *iter;
	run.pages[0] = page;
	return gs_run_start(s, bio, write, &run, iter, direct);
}

/*
 * The unit (gs_unit.h) that can start at @slot, at the start of a page
 * of @bio at @it: the pages from there on, up to the store's unit size
 * @units, aligned, contiguous and of one folio (a large folio's, or a
 * huge page's), are read or written as one. Pages of small folios that
 * share a segment (direct I/O merges pages that lie side by side in
 * memory; swap writes a bio per folio) are not. Returns the pages done
 * that way, or 0: none, do them one by one. Without @nowait (the
 * worker), reads only: a unit on the backing device is read back whole.
 */
static unsigned int gs_unit_rw(struct gs_store *s, struct bio *bio, bool write,
			       struct bvec_iter it, u64 slot,
			       unsigned int units, bool nowait)
{
	/* The rest of the multi-page segment, physically contiguous. */
	struct bio_vec mp = mp_bvec_iter_bvec(bio->bi_io_vec, it);
	unsigned int m = units, k, in_folio;
	struct folio *folio;
	struct page *first;
	void *p;

	/* The cheap tests first: most segments of a swap-out are a page. */
	if (mp.bv_len < GS_UNIT_MIN_PAGES * PAGE_SIZE ||
	    !IS_ALIGNED(slot, GS_UNIT_MIN_PAGES))
		return 0;
	p = page_address(mp.bv_page) + mp.bv_offset;
	first = virt_to_page(p);
	folio = page_folio(first);
	in_folio = folio_nr_pages(folio) - folio_page_idx(folio, first);
	while (m >= GS_UNIT_MIN_PAGES &&
	       (!IS_ALIGNED(slot, m) || mp.bv_len < m * PAGE_SIZE ||
		m > in_folio))
		m /= 2;
	if (m < GS_UNIT_MIN_PAGES)
		return 0;
	if (write)
		return gs_store_write_unit_nowait(s, slot, p, m, GFP_NOIO) ? 0 : m;
	if (nowait ? gs_store_read_unit_nowait(s, slot, p, m) :
		     gs_store_read_unit(s, slot, p, m))
		return 0;
	for (k = 0; k < m; k++)
		flush_dcache_page(virt_to_page(p + k * PAGE_SIZE));
	return m;
}

/*
 * Reads and writes, from *@iter on, as gs_rw() says. Runs of whole
 * pages may go to the store as a unit; other whole-page segments go
 * straight to the store; a slot split over several segments goes
 * through a bounce page.
 */
static int gs_rw_segments(struct gs_store *s, struct bio *bio, bool write,
			  struct bvec_iter *iter, u64 *direct, bool nowait)
{
	u64 slot = iter->bi_sector / GS_SECTORS_PER_SLOT;
	unsigned int units = gs_store_unit(s);
	unsigned int off = 0, done, n, m;
	struct bvec_iter it, at = *iter;
	/* Filled as it grows: no need to clear its 256 bytes of pages. */
	struct gs_run run __uninitialized;
	bool runnable, joins;
	int ret;
	struct bio_vec bv;
	void *bounce = NULL, *p;
	int err = 0;

	run.nr = 0;

	__bio_for_each_segment(bv, bio, it, *iter) {
		for (done = 0; done < bv.bv_len; done += n) {
			n = min_t(unsigned int, bv.bv_len - done, PAGE_SIZE - off);
			if (!off) {
				/* A slot starts here: where to go on from. */
				at = it;
				bio_advance_iter_single(bio, &at, done);
			}
			runnable = n == PAGE_SIZE && nowait;
			/*
			 * Nothing waits to start before it: the pages in
			 * order. The worker reads units back from the device.
			 */
			if (units && !run.nr && n == PAGE_SIZE &&
			    (nowait || !write)) {
				m = gs_unit_rw(s, bio, write, it, slot, units,
					       nowait);
				if (m) {
					/* The loop passes the last of them. */
					bio_advance_iter_single(bio, &it,
								(m - 1) * PAGE_SIZE);
					slot += m - 1;
					goto next;
				}
			}
			/* A run is only ever the pages just before this one. */
			if (run.nr && (!runnable || run.nr == GS_RUN_PAGES)) {
				err = gs_run_start(s, bio, write, &run, &at,
						   direct);
				if (err)
					break;
			}
			if (runnable) {
				err = gs_page_nowait(s, slot, bv, write);
				joins = gs_page_joins(err, write);
				if (run.nr && !joins) {
					ret = gs_run_start(s, bio, write, &run,
							   &at, direct);
					if (ret) {
						err = ret;
						break;
					}
				}
				if (joins) {
					if (!run.nr) {
						run.slot = slot;
						run.at = at;
					}
					run.pages[run.nr++] = bv.bv_page;
					err = 0;
				}
			} else if (n == PAGE_SIZE) {
				p = bvec_kmap_local(&bv);
				err = gs_slot_rw(s, slot, p, write, nowait,
						 *direct);
				kunmap_local(p);
				if (!write)
					flush_dcache_page(bv.bv_page);
			} else {
				if (!bounce) {
					bounce = kmalloc(PAGE_SIZE, GFP_NOIO |
							 __GFP_NOWARN);
					if (!bounce) {
						err = -ENOMEM;
						break;
					}
				}
				if (!write && !off)
					err = gs_slot_rw(s, slot, bounce, false,
							 nowait, *direct);
				if (err)
					break;
				if (write)
					memcpy_from_page(bounce + off, bv.bv_page,
							 bv.bv_offset + done, n);
				else
					memcpy_to_page(bv.bv_page,
						       bv.bv_offset + done,
						       bounce + off, n);
				if (write && off + n == PAGE_SIZE)
					err = gs_slot_rw(s, slot, bounce, true,
							 nowait, *direct);
			}
			if (err == GS_WRITE_DIRECT) {
				*direct = slot;
				err = -EAGAIN;
			}
			if (err)
				break;
next:
			off += n;
			if (off == PAGE_SIZE) {
				off = 0;
				slot++;
			}
		}
		if (err)
			break;
	}
	kfree(bounce);
	/* The bio ended in a run (nothing after it failed): start it. */
	if (run.nr && !err)
		err = gs_run_start(s, bio, write, &run, &at, direct);
	if (err == -EAGAIN)
		*iter = at;
	return err;
}

/*
 * Reads and writes, from *@iter on. With @nowait, returns -EAGAIN where
 * backing device I/O is needed, *@iter at the first segment of that slot
 * (and *@direct that slot if its page is to be stored on the backing
 * device as it is): the caller has a worker go on from there (a slot can
 * be read or written again from its start). Else returns 0 or the errno
 * the bio fails with. A bio of one whole page in the submit path does not
 * come here (gs_submit_bio()).
 */
static int gs_rw(struct gs_dev *d, struct bio *bio, struct bvec_iter *iter,
		 u64 *direct, bool nowait)
{
	bool write = op_is_write(bio_op(bio));
	struct gs_store *s = d->store;
	int err;

	if (!IS_ALIGNED(iter->bi_sector, GS_SECTORS_PER_SLOT) ||
	    !IS_ALIGNED(iter->bi_size, PAGE_SIZE)) {
		atomic_long_inc(&s->stats.invalid_io);
		return -EINVAL;
	}
	err = gs_rw_segments(s, bio, write, iter, direct, nowait);
	if (err && err != -EAGAIN)
		gs_bio_fail(s, bio, err);
	return err;
}

/*
 * DISCARD and WRITE_ZEROES: an empty slot reads as zeroes. Swap's own
 * discards (swapon --discard=pages) come here too: a cluster of swap
 * slots at a time, once swap freed its last one.
 */
static blk_status_t gs_discard(struct gs_dev *d, struct bio *bio)
{
	sector_t start = bio->bi_iter.bi_sector;
	sector_t end = bio_end_sector(bio);
	u64 freed;

	if (!IS_ALIGNED(start, GS_SECTORS_PER_SLOT) ||
	    !IS_ALIGNED(end, GS_SECTORS_PER_SLOT)) {
		atomic_long_inc(&d->store->stats.invalid_io);
		return BLK_STS_IOERR;
	}
	freed = gs_store_free_range(d->store, start / GS_SECTORS_PER_SLOT,
				    (end - start) / GS_SECTORS_PER_SLOT);
	atomic_long_add(freed, &d->store->stats.discard_free);
	return BLK_STS_OK;
}

/* A punted bio goes on where the submit path stopped, and ends here. */
static void gs_punt_work(struct work_struct *work)
{
	struct gs_punt *p = container_of(work, struct gs_punt, work);
	unsigned int noio = memalloc_noio_save();
	struct gs_punted *pb;
	struct bio *bio;

	for (;;) {
		spin_lock(&p->lock);
		pb = list_first_entry_or_null(&p->bios, struct gs_punted, node);
		if (pb)
			list_del(&pb->node);
		spin_unlock(&p->lock);
		if (!pb)
			break;
		bio = pb->bio;
		/* A failure sets the bio's status (gs_bio_fail()). */
		gs_rw(p->d, bio, &pb->iter, &pb->direct, false);
		bio_end_io_acct(bio, pb->start);
		mempool_free(pb, p->d->punt_pool);
		bio_endio(bio);
		cond_resched();
	}
	memalloc_noio_restore(noio);
}

/*
 * The list of the CPU we happen to run on, chosen without disabling
 * preemption: its spinlock_t is a sleeping lock on PREEMPT_RT, which must
 * not be taken inside get_cpu_ptr()'s preempt-disabled section. The list
 * is per CPU only to spread the work; its lock covers it from any CPU, so
 * being moved to another CPU after choosing one is harmless (the bio
 * waits on that CPU's list, whose worker drains it). Simpler than a
 * local_lock and correct on both kinds of kernel. The reserve makes the
 * allocation wait only for the workers, which need nothing of ours.
 */
static void gs_punt(struct gs_dev *d, struct bio *bio, struct bvec_iter iter,
		    u64 direct, unsigned long start)
{
	struct gs_punt __percpu *list = op_is_write(bio_op(bio)) ?
		d->punt_write : d->punt_read;
	struct gs_punt *p = per_cpu_ptr(list, raw_smp_processor_id());
	struct gs_punted *pb = mempool_alloc(d->punt_pool, GFP_NOIO);

	pb->bio = bio;
	pb->iter = iter;
	pb->direct = direct;
	pb->start = start;
	spin_lock(&p->lock);
	list_add_tail(&pb->node, &p->bios);
	spin_unlock(&p->lock);
	queue_work(d->io_wq, &p->work);
}

/*
 * What a read or write bio needs besides the fast path of gs_submit_bio():
 * the one page of a one-page bio that joins a run (@page: it needs the
 * backing device), or the whole bio (@page NULL). Ends the bio or hands
 * the rest of it to a worker. Out of line: the iterator and the slot of a
 * direct write, whose addresses it passes on, stay out of the fast path's
 * frame, and so does a stack canary.
 */
static noinline void gs_submit_rest(struct gs_dev *d, struct bio *bio,
				    unsigned long start, struct page *page)
{
	struct bvec_iter iter = bio->bi_iter;
	u64 direct = U64_MAX;
	int err;

	if (page) {
		err = gs_page_run(d->store, bio, op_is_write(bio_op(bio)),
				  &iter, page, &direct);
		if (err && err != -EAGAIN)
			gs_bio_fail(d->store, bio, err);
	} else {
		err = gs_rw(d, bio, &iter, &direct, true);
	}
	if (err == -EAGAIN) {
		gs_punt(d, bio, iter, direct, start);
		return;
	}
	/* A failure set the bio's status (gs_bio_fail()). */
	bio_end_io_acct(bio, start);
	bio_endio(bio);
}

/*
 * A bio of one whole page in one segment, at a slot: swap's and
 * O_DIRECT's usual 4 KiB, which gs_submit_bio() does itself (*@bv: that
 * segment). Anything else, and a page that needs the backing device, goes
 * to gs_submit_rest(). Inline: @bv stays in registers.
 */
static __always_inline bool gs_bio_one_page(struct bio *bio,
					    struct bio_vec *bv)
{
	if (bio->bi_iter.bi_size != PAGE_SIZE ||
	    !IS_ALIGNED(bio->bi_iter.bi_sector, GS_SECTORS_PER_SLOT))
		return false;
	*bv = bio_iter_iovec(bio, bio->bi_iter);
	return bv->bv_len == PAGE_SIZE;
}

void gs_submit_bio(struct bio *bio)
{
	struct gs_dev *d = bio->bi_bdev->bd_disk->private_data;
	unsigned long start = bio_start_io_acct(bio);
	struct gs_store *s = d->store;
	blk_status_t status;
	struct bio_vec bv;
	bool write;
	int err;

	switch (bio_op(bio)) {
	case REQ_OP_WRITE:
		if (unlikely(gs_hibernation_refuses(bio))) {
			status = BLK_STS_IOERR;
			break;
		}
		fallthrough;
	case REQ_OP_READ:
		gs_bio_watch_begin(bio);
		if (!gs_bio_one_page(bio, &bv)) {
			gs_submit_rest(d, bio, start, NULL);
			return;
		}
		write = op_is_write(bio_op(bio));
		err = gs_page_nowait(s, bio->bi_iter.bi_sector /
				     GS_SECTORS_PER_SLOT, bv, write);
		if (unlikely(gs_page_joins(err, write))) {
			gs_submit_rest(d, bio, start, bv.bv_page);
			return;
		}
		/* A write that must wait for room: a worker does it all. */
		if (unlikely(err == -EAGAIN)) {
			gs_punt(d, bio, bio->bi_iter, U64_MAX, start);
			return;
		}
		if (err)
			gs_bio_fail(s, bio, err);
		/* A failure set the bio's status (gs_bio_fail()). */
		status = BLK_STS_OK;
		break;
	case REQ_OP_DISCARD:
	case REQ_OP_WRITE_ZEROES:
		status = gs_discard(d, bio);
		break;
	case REQ_OP_FLUSH:
		/* Nothing is cached on the way to the store. */
		status = BLK_STS_OK;
		break;
	default:
		atomic_long_inc(&s->stats.invalid_io);
		status = BLK_STS_NOTSUPP;
		break;
	}
	bio_end_io_acct(bio, start);
	/* A part started here may have failed already: keep its status. */
	if (status)
		bio->bi_status = status;
	bio_endio(bio);
}

/* ------------------------------------------------------ the workers */

static struct gs_punt __percpu *gs_punt_lists(struct gs_dev *d)
{
	struct gs_punt __percpu *list = alloc_percpu(struct gs_punt);
	unsigned int cpu;

	if (!list)
		return NULL;
	for_each_possible_cpu(cpu) {
		struct gs_punt *p = per_cpu_ptr(list, cpu);

		spin_lock_init(&p->lock);
		INIT_LIST_HEAD(&p->bios);
		INIT_WORK(&p->work, gs_punt_work);
		p->d = d;
	}
	return list;
}

void gs_punt_destroy(struct gs_dev *d)
{
	if (d->io_wq)
		destroy_workqueue(d->io_wq);
	free_percpu(d->punt_read);
	free_percpu(d->punt_write);
	mempool_destroy(d->punt_pool);
}

int gs_punt_create(struct gs_dev *d)
{
	/* Reclaim may wait on these bios: they need a rescuer. */
	d->io_wq = alloc_workqueue("ghostswap-io", WQ_UNBOUND | WQ_MEM_RECLAIM,
				   0);
	d->punt_read = gs_punt_lists(d);
	d->punt_write = gs_punt_lists(d);
	d->punt_pool = mempool_create_kmalloc_pool(GS_PUNT_RESERVE,
						   sizeof(struct gs_punted));
	if (!d->io_wq || !d->punt_read || !d->punt_write || !d->punt_pool) {
		gs_punt_destroy(d);
		return -ENOMEM;
	}
	return 0;
}
