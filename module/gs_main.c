// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswap: a ghost swap block device.
 *
 * /dev/ghostswap is a bio-based block device whose size is only a number:
 * its slots live in clusters that are allocated by the first write into
 * them and freed with their last slot (see gs_core.c). Meant for swapon;
 * it also works as a plain block device for testing.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/ctype.h>
#include <linux/debugfs.h>
#include <linux/highmem.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/overflow.h>
#include <linux/percpu.h>
#include <linux/rwsem.h>
#include <linux/seq_file.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/workqueue.h>
#include "gs_backing.h"
#include "gs_comp.h"
#include "gs_core.h"

#define GS_NAME			"ghostswap"
#define GS_SECTORS_PER_SLOT	(PAGE_SIZE >> SECTOR_SHIFT)

/*
 * Largest useful size: the swap header counts pages in 32 bits, so swapon
 * cannot use more than 2^32 - 1 slots of any device.
 */
#define GS_MAX_DISKSIZE		((u64)U32_MAX << PAGE_SHIFT)
#define GS_MIN_DISKSIZE		((u64)SZ_1M)
#define GS_DEFAULT_DISKSIZE	SZ_64G

/*
 * Bios that need backing device I/O cannot wait for it in the submit path
 * (the block layer holds bios submitted from there until it returns):
 * they are handed to a worker, per CPU, that does them in full.
 */
struct gs_punt {
	spinlock_t lock;	/* covers bios */
	struct bio_list bios;
	struct work_struct work;
	struct gs_dev *d;
};

struct gs_dev {
	struct gendisk *disk;
	struct gs_store *store;	/* replaced only while claimed */
	/* Write: configuration changes. Read: stats, writeback, compaction. */
	struct rw_semaphore conf_lock;
	bool claim;		/* reconfiguring: opens fail with -EBUSY */
	struct workqueue_struct *io_wq;
	struct gs_punt __percpu *punt;
	struct dentry *debugfs;
	unsigned long dump_cluster;	/* debugfs "table" shows this one */
};

static struct gs_dev *gs_dev;
static int gs_major;
static u64 gs_default_disksize = GS_DEFAULT_DISKSIZE;
static char gs_default_alg[64] = "lz4";

/*
 * Parse a size: decimal bytes with an optional K, M, G, T or P suffix
 * (powers of 1024) and an optional trailing newline. Rejects empty input,
 * signs, junk and overflow, then checks the allowed range.
 */
static int gs_parse_size(const char *buf, u64 *out)
{
	static const char suffixes[] = "KMGTP";
	char num[24], *s;
	unsigned int shift = 0;
	size_t len = strlen(buf);
	u64 val;
	int ret;

	if (len && buf[len - 1] == '\n')
		len--;
	if (!len || len >= sizeof(num))
		return -EINVAL;
	memcpy(num, buf, len);
	num[len] = '\0';
	s = strchr(suffixes, toupper(num[len - 1]));
	if (s && *s) {
		shift = 10 * (s - suffixes + 1);
		num[--len] = '\0';
	}
	if (!len || !isdigit(num[0]))
		return -EINVAL;
	ret = kstrtou64(num, 10, &val);
	if (ret)
		return ret == -ERANGE ? -EINVAL : ret;
	if (check_shl_overflow(val, shift, &val))
		return -EINVAL;
	val = round_up(val, PAGE_SIZE);
	if (val < GS_MIN_DISKSIZE || val > GS_MAX_DISKSIZE)
		return -EINVAL;
	*out = val;
	return 0;
}

static int gs_param_set_size(const char *val, const struct kernel_param *kp)
{
	int ret = gs_parse_size(val, kp->arg);

	if (ret)
		pr_err("invalid disksize '%s': want %llu..%llu bytes, suffix K M G T P\n",
		       val, GS_MIN_DISKSIZE, GS_MAX_DISKSIZE);
	return ret;
}

static int gs_param_get_size(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%llu\n", *(u64 *)kp->arg);
}

static const struct kernel_param_ops gs_size_param_ops = {
	.set = gs_param_set_size,
	.get = gs_param_get_size,
};

module_param_cb(disksize, &gs_size_param_ops, &gs_default_disksize, 0444);
MODULE_PARM_DESC(disksize,
		 "Size of /dev/ghostswap at load and after reset (default 64G, max 16T minus 4K)");

module_param_string(comp_algorithm, gs_default_alg, sizeof(gs_default_alg),
		    0444);
MODULE_PARM_DESC(comp_algorithm,
		 "Compression algorithm at load and after reset (default lz4)");

/* ---------------------------------------------------------------- I/O */

/*
 * Every failure is an I/O error: BLK_STS_RESOURCE asks blk-mq to retry a
 * request, which means nothing for a bio-based driver's bio.
 */
static blk_status_t gs_errno_to_blk(int err)
{
	return err ? BLK_STS_IOERR : BLK_STS_OK;
}

static int gs_slot_rw(struct gs_store *s, u64 slot, void *p, bool write,
		      bool nowait)
{
	if (write)
		return nowait ? gs_store_write_nowait(s, slot, p, GFP_NOIO) :
				gs_store_write(s, slot, p, GFP_NOIO);
	return nowait ? gs_store_read_nowait(s, slot, p) :
			gs_store_read(s, slot, p);
}

/*
 * Reads and writes. Whole-page segments go straight to the store; a slot
 * split over several segments goes through a bounce page. With @nowait,
 * returns -EAGAIN where backing device I/O is needed: the caller does the
 * whole bio again from a worker (reads and writes of whole slots can be
 * repeated). Else returns 0 or the errno the bio fails with.
 */
static int gs_rw(struct gs_dev *d, struct bio *bio, bool nowait)
{
	bool write = op_is_write(bio_op(bio));
	u64 slot = bio->bi_iter.bi_sector / GS_SECTORS_PER_SLOT;
	struct gs_store *s = d->store;
	unsigned int off = 0, done, n;
	struct bvec_iter iter;
	struct bio_vec bv;
	void *bounce = NULL, *p;
	int err = 0;

	if (!IS_ALIGNED(bio->bi_iter.bi_sector, GS_SECTORS_PER_SLOT) ||
	    !IS_ALIGNED(bio->bi_iter.bi_size, PAGE_SIZE)) {
		atomic_long_inc(&s->stats.invalid_io);
		return -EINVAL;
	}

	bio_for_each_segment(bv, bio, iter) {
		for (done = 0; done < bv.bv_len; done += n) {
			n = min_t(unsigned int, bv.bv_len - done, PAGE_SIZE - off);
			if (n == PAGE_SIZE) {
				p = bvec_kmap_local(&bv);
				err = gs_slot_rw(s, slot, p, write, nowait);
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
							 nowait);
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
							 nowait);
			}
			if (err)
				break;
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
	/* The one place that counts failed bios (the store counts none). */
	if (err && err != -EAGAIN)
		atomic_long_inc(write ? &s->stats.failed_writes :
				&s->stats.failed_reads);
	return err;
}

/* DISCARD and WRITE_ZEROES: an empty slot reads as zeroes. */
static blk_status_t gs_discard(struct gs_dev *d, struct bio *bio)
{
	sector_t start = bio->bi_iter.bi_sector;
	sector_t end = bio_end_sector(bio);

	if (!IS_ALIGNED(start, GS_SECTORS_PER_SLOT) ||
	    !IS_ALIGNED(end, GS_SECTORS_PER_SLOT)) {
		atomic_long_inc(&d->store->stats.invalid_io);
		return BLK_STS_IOERR;
	}
	gs_store_free_range(d->store, start / GS_SECTORS_PER_SLOT,
			    (end - start) / GS_SECTORS_PER_SLOT);
	return BLK_STS_OK;
}

/*
 * I/O accounting of a punted bio was started in gs_submit_bio(); it ends
 * here, timed from when the worker took it (its queueing time is lost).
 */
static void gs_punt_work(struct work_struct *work)
{
	struct gs_punt *p = container_of(work, struct gs_punt, work);
	unsigned int noio = memalloc_noio_save();
	unsigned long start;
	struct bio *bio;

	for (;;) {
		spin_lock(&p->lock);
		bio = bio_list_pop(&p->bios);
		spin_unlock(&p->lock);
		if (!bio)
			break;
		start = jiffies;
		bio->bi_status = gs_errno_to_blk(gs_rw(p->d, bio, false));
		bio_end_io_acct(bio, start);
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
 * local_lock and correct on both kinds of kernel.
 */
static void gs_punt(struct gs_dev *d, struct bio *bio)
{
	struct gs_punt *p = per_cpu_ptr(d->punt, raw_smp_processor_id());

	spin_lock(&p->lock);
	bio_list_add(&p->bios, bio);
	spin_unlock(&p->lock);
	queue_work(d->io_wq, &p->work);
}

static void gs_submit_bio(struct bio *bio)
{
	struct gs_dev *d = bio->bi_bdev->bd_disk->private_data;
	unsigned long start = bio_start_io_acct(bio);
	blk_status_t status;
	int err;

	switch (bio_op(bio)) {
	case REQ_OP_READ:
	case REQ_OP_WRITE:
		err = gs_rw(d, bio, true);
		if (err == -EAGAIN) {
			gs_punt(d, bio);
			return;
		}
		status = gs_errno_to_blk(err);
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
		atomic_long_inc(&d->store->stats.invalid_io);
		status = BLK_STS_NOTSUPP;
		break;
	}
	bio_end_io_acct(bio, start);
	bio->bi_status = status;
	bio_endio(bio);
}

/* Called by the swap core under its cluster spinlock: must not sleep. */
static void gs_slot_free_notify(struct block_device *bdev,
				unsigned long offset)
{
	struct gs_dev *d = bdev->bd_disk->private_data;

	atomic_long_inc(&d->store->stats.notify_free);
	gs_store_free(d->store, offset);
}

static int gs_open(struct gendisk *disk, blk_mode_t mode)
{
	struct gs_dev *d = disk->private_data;

	lockdep_assert_held(&disk->open_mutex);
	return d->claim ? -EBUSY : 0;
}

static const struct block_device_operations gs_fops = {
	.owner = THIS_MODULE,
	.open = gs_open,
	.submit_bio = gs_submit_bio,
	.swap_slot_free_notify = gs_slot_free_notify,
};

/* -------------------------------------------------------------- sysfs */

/* Take the device for reconfiguration: fails if anybody has it open. */
static int gs_claim(struct gs_dev *d)
{
	int ret = 0;

	mutex_lock(&d->disk->open_mutex);
	if (disk_openers(d->disk) || d->claim)
		ret = -EBUSY;
	else
		d->claim = true;
	mutex_unlock(&d->disk->open_mutex);
	return ret;
}

static void gs_unclaim(struct gs_dev *d)
{
	mutex_lock(&d->disk->open_mutex);
	d->claim = false;
	mutex_unlock(&d->disk->open_mutex);
}

static void gs_set_size(struct gs_dev *d, u64 bytes)
{
	d->store->nr_slots = bytes >> PAGE_SHIFT;
	set_capacity_and_notify(d->disk, bytes >> SECTOR_SHIFT);
}

static struct gs_dev *dev_to_gs(struct device *dev)
{
	return dev_to_disk(dev)->private_data;
}

static ssize_t disksize_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	struct gs_dev *d = dev_to_gs(dev);

	guard(rwsem_read)(&d->conf_lock);
	return sysfs_emit(buf, "%llu\n", d->store->nr_slots << PAGE_SHIFT);
}

/*
 * Changes that need an idle device: nobody has it open and, if @empty,
 * it holds no data. Runs @fn with the device claimed.
 */
static int gs_reconfigure(struct gs_dev *d, bool empty,
			  int (*fn)(struct gs_dev *d, const void *arg),
			  const void *arg)
{
	int ret;

	guard(rwsem_write)(&d->conf_lock);
	ret = gs_claim(d);
	if (ret)
		return ret;
	/* Bios of the last opener may still be with the workers. */
	flush_workqueue(d->io_wq);
	if (empty && atomic_long_read(&d->store->stats.slots_used))
		ret = -EBUSY;	/* holds data: reset first */
	else
		ret = fn(d, arg);
	gs_unclaim(d);
	return ret;
}

static int gs_do_set_size(struct gs_dev *d, const void *arg)
{
	gs_set_size(d, *(const u64 *)arg);
	return 0;
}

static ssize_t disksize_store(struct device *dev, struct device_attribute *attr,
			      const char *buf, size_t len)
{
	u64 size;
	int ret;

	ret = gs_parse_size(buf, &size);
	if (ret)
		return ret;
	ret = gs_reconfigure(dev_to_gs(dev), true, gs_do_set_size, &size);
	return ret ? ret : len;
}
static DEVICE_ATTR_RW(disksize);

/* Back to the module defaults: size, algorithm, no limit, no data. */
static int gs_do_reset(struct gs_dev *d, const void *arg)
{
	struct gs_store *s;

	s = gs_store_create(gs_default_alg, gs_default_disksize >> PAGE_SHIFT);
	if (IS_ERR(s))
		return PTR_ERR(s);
	gs_store_destroy(d->store);
	d->store = s;
	gs_set_size(d, gs_default_disksize);
	return 0;
}

static ssize_t reset_store(struct device *dev, struct device_attribute *attr,
			   const char *buf, size_t len)
{
	bool do_reset;
	int ret;

	ret = kstrtobool(buf, &do_reset);
	if (ret)
		return ret;
	if (!do_reset)
		return -EINVAL;
	ret = gs_reconfigure(dev_to_gs(dev), false, gs_do_reset, NULL);
	return ret ? ret : len;
}
static DEVICE_ATTR_WO(reset);

static ssize_t comp_algorithm_show(struct device *dev,
				   struct device_attribute *attr, char *buf)
{
	struct gs_dev *d = dev_to_gs(dev);
	const char *cur, *const *alg;
	bool listed = false;
	ssize_t n = 0;

	guard(rwsem_read)(&d->conf_lock);
	cur = gs_store_algorithm(d->store);
	for (alg = gs_comp_known; *alg; alg++) {
		if (!strcmp(*alg, cur)) {
			n += sysfs_emit_at(buf, n, "[%s] ", cur);
			listed = true;
		} else if (gs_comp_available(*alg)) {
			n += sysfs_emit_at(buf, n, "%s ", *alg);
		}
	}
	if (!listed)
		n += sysfs_emit_at(buf, n, "[%s] ", cur);
	buf[n - 1] = '\n';
	return n;
}

static int gs_do_set_alg(struct gs_dev *d, const void *arg)
{
	return gs_store_set_algorithm(d->store, arg);
}

static ssize_t comp_algorithm_store(struct device *dev,
				    struct device_attribute *attr,
				    const char *buf, size_t len)
{
	char name[64], *alg;
	int ret;

	if (len >= sizeof(name))
		return -EINVAL;
	strscpy(name, buf, sizeof(name));
	alg = strim(name);
	if (!*alg)
		return -EINVAL;
	ret = gs_reconfigure(dev_to_gs(dev), true, gs_do_set_alg, alg);
	if (ret == -ENOENT)
		return -EINVAL;	/* like zram: no such algorithm */
	return ret ? ret : len;
}
static DEVICE_ATTR_RW(comp_algorithm);

static ssize_t mem_limit_store(struct device *dev,
			       struct device_attribute *attr, const char *buf,
			       size_t len)
{
	struct gs_dev *d = dev_to_gs(dev);
	u64 limit;
	int ret;

	/* "0" lifts the limit; otherwise a size as for disksize. */
	if (sysfs_streq(buf, "0")) {
		limit = 0;
	} else {
		ret = gs_parse_size(buf, &limit);
		if (ret)
			return ret;
	}
	guard(rwsem_read)(&d->conf_lock);
	WRITE_ONCE(d->store->limit_pages, limit >> PAGE_SHIFT);
	return len;
}

static ssize_t mem_limit_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	struct gs_dev *d = dev_to_gs(dev);

	guard(rwsem_read)(&d->conf_lock);
	return sysfs_emit(buf, "%llu\n",
			  (u64)READ_ONCE(d->store->limit_pages) << PAGE_SHIFT);
}
static DEVICE_ATTR_RW(mem_limit);

static ssize_t mem_used_max_store(struct device *dev,
				  struct device_attribute *attr,
				  const char *buf, size_t len)
{
	struct gs_dev *d = dev_to_gs(dev);

	/* zram semantics: only "0", which restarts the high water mark. */
	if (!sysfs_streq(buf, "0"))
		return -EINVAL;
	guard(rwsem_read)(&d->conf_lock);
	atomic_long_set(&d->store->stats.max_used_pages,
			gs_store_pool_pages(d->store));
	return len;
}
static DEVICE_ATTR_WO(mem_used_max);

static ssize_t compact_store(struct device *dev, struct device_attribute *attr,
			     const char *buf, size_t len)
{
	struct gs_dev *d = dev_to_gs(dev);

	guard(rwsem_read)(&d->conf_lock);
	gs_store_compact(d->store);
	return len;
}
static DEVICE_ATTR_WO(compact);

/* zram's mm_stat: the same nine columns with the same meanings. */
static ssize_t mm_stat_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	struct gs_dev *d = dev_to_gs(dev);
	struct gs_stats *st;
	u64 stored;

	guard(rwsem_read)(&d->conf_lock);
	st = &d->store->stats;
	/* Written-back pages are stored data too (as in zram). */
	stored = atomic_long_read(&st->same_pages) +
		 atomic_long_read(&st->comp_pages) +
		 atomic_long_read(&st->huge_pages) +
		 atomic_long_read(&st->wb_pages);
	return sysfs_emit(buf, "%8llu %8ld %8llu %8llu %8llu %8ld %8lu %8ld %8ld\n",
			  stored << PAGE_SHIFT,
			  atomic_long_read(&st->compr_bytes),
			  (u64)gs_store_pool_pages(d->store) << PAGE_SHIFT,
			  (u64)READ_ONCE(d->store->limit_pages) << PAGE_SHIFT,
			  (u64)atomic_long_read(&st->max_used_pages) << PAGE_SHIFT,
			  atomic_long_read(&st->same_pages),
			  gs_store_pages_compacted(d->store),
			  atomic_long_read(&st->huge_pages),
			  atomic_long_read(&st->huge_pages_since));
}
static DEVICE_ATTR_RO(mm_stat);

/*
 * clusters, peak clusters, used slots, metadata bytes (cluster headers and
 * tables), metadata bytes per used slot (two decimals), stream bytes,
 * bytes of the clusters held in reserve.
 */
static ssize_t cluster_stat_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	struct gs_dev *d = dev_to_gs(dev);
	struct gs_stats *st;
	unsigned long used, meta, per = 0;

	guard(rwsem_read)(&d->conf_lock);
	st = &d->store->stats;
	used = atomic_long_read(&st->slots_used);
	meta = atomic_long_read(&st->meta_bytes);
	if (used)
		per = DIV_ROUND_CLOSEST(meta * 100, used);
	return sysfs_emit(buf, "%8ld %8ld %8lu %8lu %5lu.%02lu %8zu %8zu\n",
			  atomic_long_read(&st->clusters),
			  atomic_long_read(&st->clusters_peak), used, meta,
			  per / 100, per % 100,
			  gs_comp_bytes(d->store->comp),
			  gs_store_reserve_bytes(d->store));
}
static DEVICE_ATTR_RO(cluster_stat);

static ssize_t io_stat_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	struct gs_dev *d = dev_to_gs(dev);
	struct gs_stats *st;

	guard(rwsem_read)(&d->conf_lock);
	st = &d->store->stats;
	return sysfs_emit(buf, "%8ld %8ld %8ld %8ld\n",
			  atomic_long_read(&st->failed_reads),
			  atomic_long_read(&st->failed_writes),
			  atomic_long_read(&st->invalid_io),
			  atomic_long_read(&st->notify_free));
}
static DEVICE_ATTR_RO(io_stat);

/* ---------------------------------------------------------- writeback */

static int gs_do_set_backing(struct gs_dev *d, const void *arg)
{
	const char *path = arg;
	struct gs_backing *bk;
	dev_t devt;

	if (!strcmp(path, "none"))
		return gs_store_clear_backing(d->store);
	if (d->store->bk)
		return -EBUSY;	/* detach ("none") first */
	if (!lookup_bdev(path, &devt) && devt == disk_devt(d->disk)) {
		pr_err("backing_dev: %s is ghostswap itself\n", path);
		return -EINVAL;
	}
	bk = gs_backing_open(path, d);
	if (IS_ERR(bk)) {
		pr_err("backing_dev: cannot use %s: %ld\n", path, PTR_ERR(bk));
		return PTR_ERR(bk);
	}
	pr_info("backing device %s, %llu pages\n", path, bk->nr_slots);
	return gs_store_set_backing(d->store, bk);
}

static ssize_t backing_dev_store(struct device *dev,
				 struct device_attribute *attr,
				 const char *buf, size_t len)
{
	char *copy, *path;
	int ret;

	copy = kstrndup(buf, len, GFP_KERNEL);
	if (!copy)
		return -ENOMEM;
	path = strim(copy);
	ret = *path ? gs_reconfigure(dev_to_gs(dev), true, gs_do_set_backing,
				     path) : -EINVAL;
	kfree(copy);
	return ret ? ret : len;
}

static ssize_t backing_dev_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	struct gs_dev *d = dev_to_gs(dev);
	struct gs_backing *bk;

	guard(rwsem_read)(&d->conf_lock);
	bk = d->store->bk;
	return sysfs_emit(buf, "%s\n", bk && bk->path ? bk->path : "none");
}
static DEVICE_ATTR_RW(backing_dev);

static const char *const gs_wb_modes[] = {
	[GS_WB_COLD] = "cold",
	[GS_WB_IDLE] = "idle",
	[GS_WB_HUGE] = "huge",
	[GS_WB_HUGE_IDLE] = "huge_idle",
	[GS_WB_INCOMP] = "incompressible",
	[GS_WB_ALL] = "all",
};

/*
 * "MODE [PAGES]", "type=MODE [PAGES]" (zram's newer form) or "PAGES" (the
 * coldest ones). MODE: idle huge huge_idle incompressible all.
 */
static int gs_parse_writeback(char *buf, enum gs_wb_mode *mode, u64 *max)
{
	char *word, *count;
	int i;

	buf = strim(buf);
	word = strsep(&buf, " \t");
	count = buf ? strim(buf) : NULL;
	*mode = GS_WB_COLD;
	*max = U64_MAX;
	if (!word || !*word)
		return -EINVAL;
	if (isdigit(*word)) {
		if (count)
			return -EINVAL;
		count = word;
	} else {
		if (!strncmp(word, "type=", 5))
			word += 5;
		i = match_string(gs_wb_modes, ARRAY_SIZE(gs_wb_modes), word);
		if (i <= GS_WB_COLD)
			return -EINVAL;
		*mode = i;
	}
	if (count && (kstrtou64(count, 10, max) || !*max))
		return -EINVAL;
	return 0;
}

static ssize_t writeback_store(struct device *dev,
			       struct device_attribute *attr, const char *buf,
			       size_t len)
{
	struct gs_dev *d = dev_to_gs(dev);
	enum gs_wb_mode mode;
	char *copy;
	u64 max, done;
	int ret;

	copy = kstrndup(buf, len, GFP_KERNEL);
	if (!copy)
		return -ENOMEM;
	ret = gs_parse_writeback(copy, &mode, &max);
	kfree(copy);
	if (ret)
		return ret;
	guard(rwsem_read)(&d->conf_lock);
	ret = gs_store_writeback(d->store, mode, max, &done);
	pr_debug("writeback %s: %llu pages, %d\n", gs_wb_modes[mode], done,
		 ret);
	return ret ? ret : len;
}
static DEVICE_ATTR_WO(writeback);

/* "all", or an age in seconds: entries stored at least that long ago. */
static ssize_t idle_store(struct device *dev, struct device_attribute *attr,
			  const char *buf, size_t len)
{
	struct gs_dev *d = dev_to_gs(dev);
	u64 age = 0;

	if (!sysfs_streq(buf, "all") &&
	    (kstrtou64(buf, 10, &age) || !age))
		return -EINVAL;
	guard(rwsem_read)(&d->conf_lock);
	gs_store_mark_idle(d->store, age);
	return len;
}
static DEVICE_ATTR_WO(idle);

static ssize_t writeback_limit_enable_store(struct device *dev,
					    struct device_attribute *attr,
					    const char *buf, size_t len)
{
	struct gs_dev *d = dev_to_gs(dev);
	bool on;

	if (kstrtobool(buf, &on))
		return -EINVAL;
	guard(rwsem_read)(&d->conf_lock);
	gs_store_set_wb_limit_enable(d->store, on);
	return len;
}

static ssize_t writeback_limit_enable_show(struct device *dev,
					   struct device_attribute *attr,
					   char *buf)
{
	struct gs_dev *d = dev_to_gs(dev);

	guard(rwsem_read)(&d->conf_lock);
	return sysfs_emit(buf, "%d\n", READ_ONCE(d->store->wb_limit_enable));
}
static DEVICE_ATTR_RW(writeback_limit_enable);

static ssize_t writeback_limit_store(struct device *dev,
				     struct device_attribute *attr,
				     const char *buf, size_t len)
{
	struct gs_dev *d = dev_to_gs(dev);
	u64 pages;

	if (kstrtou64(buf, 10, &pages) || pages > LONG_MAX)
		return -EINVAL;
	guard(rwsem_read)(&d->conf_lock);
	gs_store_set_wb_budget(d->store, pages);
	return len;
}

static ssize_t writeback_limit_show(struct device *dev,
				    struct device_attribute *attr, char *buf)
{
	struct gs_dev *d = dev_to_gs(dev);

	guard(rwsem_read)(&d->conf_lock);
	return sysfs_emit(buf, "%ld\n", atomic_long_read(&d->store->wb_budget));
}
static DEVICE_ATTR_RW(writeback_limit);

static ssize_t writeback_shrinker_store(struct device *dev,
					struct device_attribute *attr,
					const char *buf, size_t len)
{
	struct gs_dev *d = dev_to_gs(dev);
	bool on;

	if (kstrtobool(buf, &on))
		return -EINVAL;
	guard(rwsem_read)(&d->conf_lock);
	WRITE_ONCE(d->store->wb_shrinker, on);
	return len;
}

static ssize_t writeback_shrinker_show(struct device *dev,
				       struct device_attribute *attr,
				       char *buf)
{
	struct gs_dev *d = dev_to_gs(dev);

	guard(rwsem_read)(&d->conf_lock);
	return sysfs_emit(buf, "%d\n", READ_ONCE(d->store->wb_shrinker));
}
static DEVICE_ATTR_RW(writeback_shrinker);

static const char *const gs_direct_names[] = {
	[GS_DIRECT_NONE] = "none",
	[GS_DIRECT_HUGE] = "huge",
	[GS_DIRECT_INCOMP] = "incompressible",
};

static ssize_t writeback_direct_store(struct device *dev,
				      struct device_attribute *attr,
				      const char *buf, size_t len)
{
	struct gs_dev *d = dev_to_gs(dev);
	int i = sysfs_match_string(gs_direct_names, buf);

	if (i < 0)
		return -EINVAL;
	guard(rwsem_read)(&d->conf_lock);
	WRITE_ONCE(d->store->direct, i);
	return len;
}

static ssize_t writeback_direct_show(struct device *dev,
				     struct device_attribute *attr, char *buf)
{
	struct gs_dev *d = dev_to_gs(dev);
	unsigned int i, cur;
	ssize_t n = 0;

	guard(rwsem_read)(&d->conf_lock);
	cur = READ_ONCE(d->store->direct);
	for (i = 0; i < ARRAY_SIZE(gs_direct_names); i++)
		n += sysfs_emit_at(buf, n, i == cur ? "[%s] " : "%s ",
				   gs_direct_names[i]);
	buf[n - 1] = '\n';
	return n;
}
static DEVICE_ATTR_RW(writeback_direct);

static ssize_t backing_compact_store(struct device *dev,
				     struct device_attribute *attr,
				     const char *buf, size_t len)
{
	struct gs_dev *d = dev_to_gs(dev);
	u64 moved;
	int ret;

	guard(rwsem_read)(&d->conf_lock);
	ret = gs_store_backing_compact(d->store, &moved);
	pr_debug("backing compaction moved %llu pages: %d\n", moved, ret);
	return ret ? ret : len;
}
static DEVICE_ATTR_WO(backing_compact);

/*
 * zram's three columns (pages on the backing device, pages read, pages
 * written), then: reverse map clusters, bytes of the tier's metadata and
 * buffers, pages that failed to write, to read, pages relocated, and the
 * pages backing compaction read and wrote (not in zram's columns).
 */
static ssize_t bd_stat_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	struct gs_dev *d = dev_to_gs(dev);
	struct gs_backing *bk;
	struct gs_stats *st;
	u64 used = 0, meta = 0;

	guard(rwsem_read)(&d->conf_lock);
	st = &d->store->stats;
	bk = d->store->bk;
	if (bk) {
		used = gs_backing_used(bk);
		meta = atomic_long_read(&bk->meta_bytes);
	}
	return sysfs_emit(buf, "%8llu %8ld %8ld %8llu %8llu %8ld %8ld %8ld %8ld %8ld\n",
			  used, atomic_long_read(&st->bd_reads),
			  atomic_long_read(&st->bd_writes),
			  meta / gs_bk_cluster_bytes(),
			  meta + atomic_long_read(&st->wb_buffer_bytes),
			  atomic_long_read(&st->bd_write_errors),
			  atomic_long_read(&st->bd_read_errors),
			  atomic_long_read(&st->bd_relocated),
			  atomic_long_read(&st->bd_compact_reads),
			  atomic_long_read(&st->bd_compact_writes));
}
static DEVICE_ATTR_RO(bd_stat);

static struct attribute *gs_attrs[] = {
	&dev_attr_disksize.attr,
	&dev_attr_reset.attr,
	&dev_attr_comp_algorithm.attr,
	&dev_attr_mem_limit.attr,
	&dev_attr_mem_used_max.attr,
	&dev_attr_compact.attr,
	&dev_attr_mm_stat.attr,
	&dev_attr_cluster_stat.attr,
	&dev_attr_io_stat.attr,
	&dev_attr_backing_dev.attr,
	&dev_attr_writeback.attr,
	&dev_attr_idle.attr,
	&dev_attr_writeback_limit.attr,
	&dev_attr_writeback_limit_enable.attr,
	&dev_attr_writeback_shrinker.attr,
	&dev_attr_writeback_direct.attr,
	&dev_attr_backing_compact.attr,
	&dev_attr_bd_stat.attr,
	NULL,
};

static const struct attribute_group gs_attr_group = {
	.attrs = gs_attrs,
};

static const struct attribute_group *gs_attr_groups[] = {
	&gs_attr_group,
	NULL,
};

/* ------------------------------------------------------------ debugfs */

/* First line: mismatches between table and reverse map; then details. */
static int gs_check_show(struct seq_file *m, void *v)
{
	struct gs_dev *d = m->private;
	long bad;

	guard(rwsem_read)(&d->conf_lock);
	bad = gs_store_check(d->store, NULL);
	seq_printf(m, "%ld\n", bad);
	if (bad > 0)
		gs_store_check(d->store, m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(gs_check);

static int gs_table_show(struct seq_file *m, void *v)
{
	struct gs_dev *d = m->private;

	guard(rwsem_read)(&d->conf_lock);
	gs_store_dump_cluster(d->store, READ_ONCE(d->dump_cluster), m);
	return 0;
}

/* Write a cluster index (slot / 512) to choose what "table" shows. */
static ssize_t gs_table_write(struct file *file, const char __user *ubuf,
			      size_t len, loff_t *ppos)
{
	struct gs_dev *d = file_inode(file)->i_private;
	unsigned long ci;
	int ret;

	ret = kstrtoul_from_user(ubuf, len, 10, &ci);
	if (ret)
		return ret;
	WRITE_ONCE(d->dump_cluster, ci);
	return len;
}

static int gs_table_open(struct inode *inode, struct file *file)
{
	return single_open(file, gs_table_show, inode->i_private);
}

static const struct file_operations gs_table_fops = {
	.owner = THIS_MODULE,
	.open = gs_table_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.write = gs_table_write,
	.release = single_release,
};

/*
 * Fault injection: write N to make the next N allocations of the store
 * (pool objects, clusters) fail; read: how many are left to fail, and how
 * many were made to fail since the last reset.
 */
static int gs_fail_alloc_show(struct seq_file *m, void *v)
{
	struct gs_dev *d = m->private;

	guard(rwsem_read)(&d->conf_lock);
	seq_printf(m, "%d %ld\n", atomic_read(&d->store->fail_alloc),
		   atomic_long_read(&d->store->stats.injected));
	return 0;
}

static ssize_t gs_fail_alloc_write(struct file *file, const char __user *ubuf,
				   size_t len, loff_t *ppos)
{
	struct gs_dev *d = file_inode(file)->i_private;
	unsigned int n;
	int ret;

	ret = kstrtouint_from_user(ubuf, len, 10, &n);
	if (ret)
		return ret;
	if (n > INT_MAX)
		return -EINVAL;
	guard(rwsem_read)(&d->conf_lock);
	atomic_set(&d->store->fail_alloc, n);
	return len;
}

static int gs_fail_alloc_open(struct inode *inode, struct file *file)
{
	return single_open(file, gs_fail_alloc_show, inode->i_private);
}

static const struct file_operations gs_fail_alloc_fops = {
	.owner = THIS_MODULE,
	.open = gs_fail_alloc_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.write = gs_fail_alloc_write,
	.release = single_release,
};

static void gs_debugfs_create(struct gs_dev *d)
{
	d->debugfs = debugfs_create_dir(GS_NAME, NULL);
	debugfs_create_file("check", 0400, d->debugfs, d, &gs_check_fops);
	debugfs_create_file("table", 0600, d->debugfs, d, &gs_table_fops);
	debugfs_create_file("fail_alloc", 0600, d->debugfs, d,
			    &gs_fail_alloc_fops);
}

/* ------------------------------------------------------------- module */

static int gs_punt_create(struct gs_dev *d)
{
	unsigned int cpu;

	/* Reclaim may wait on these bios: they need a rescuer. */
	d->io_wq = alloc_workqueue("ghostswap-io", WQ_UNBOUND | WQ_MEM_RECLAIM,
				   0);
	if (!d->io_wq)
		return -ENOMEM;
	d->punt = alloc_percpu(struct gs_punt);
	if (!d->punt) {
		destroy_workqueue(d->io_wq);
		return -ENOMEM;
	}
	for_each_possible_cpu(cpu) {
		struct gs_punt *p = per_cpu_ptr(d->punt, cpu);

		spin_lock_init(&p->lock);
		bio_list_init(&p->bios);
		INIT_WORK(&p->work, gs_punt_work);
		p->d = d;
	}
	return 0;
}

static void gs_punt_destroy(struct gs_dev *d)
{
	destroy_workqueue(d->io_wq);
	free_percpu(d->punt);
}

static int gs_dev_create(void)
{
	struct queue_limits lim = {
		.logical_block_size = PAGE_SIZE,
		.physical_block_size = PAGE_SIZE,
		.io_min = PAGE_SIZE,
		.io_opt = PAGE_SIZE,
		.max_hw_discard_sectors = UINT_MAX,
		.discard_granularity = PAGE_SIZE,
		.max_write_zeroes_sectors = UINT_MAX,
		.features = BLK_FEAT_SYNCHRONOUS | BLK_FEAT_STABLE_WRITES,
	};
	struct gs_dev *d;
	int ret;

	d = kzalloc_obj(*d);
	if (!d)
		return -ENOMEM;
	init_rwsem(&d->conf_lock);
	ret = gs_punt_create(d);
	if (ret)
		goto out_free;
	d->store = gs_store_create(gs_default_alg,
				   gs_default_disksize >> PAGE_SHIFT);
	if (IS_ERR(d->store)) {
		ret = PTR_ERR(d->store);
		goto out_punt;
	}

	d->disk = blk_alloc_disk(&lim, NUMA_NO_NODE);
	if (IS_ERR(d->disk)) {
		ret = PTR_ERR(d->disk);
		goto out_store;
	}
	d->disk->major = gs_major;
	d->disk->first_minor = 0;
	d->disk->minors = 1;
	d->disk->flags |= GENHD_FL_NO_PART;
	d->disk->fops = &gs_fops;
	d->disk->private_data = d;
	strscpy(d->disk->disk_name, GS_NAME, DISK_NAME_LEN);
	set_capacity(d->disk, gs_default_disksize >> SECTOR_SHIFT);

	ret = device_add_disk(NULL, d->disk, gs_attr_groups);
	if (ret)
		goto out_put;
	gs_debugfs_create(d);
	gs_dev = d;
	return 0;

out_put:
	put_disk(d->disk);
out_store:
	gs_store_destroy(d->store);
out_punt:
	gs_punt_destroy(d);
out_free:
	kfree(d);
	return ret;
}

static void gs_dev_destroy(struct gs_dev *d)
{
	debugfs_remove_recursive(d->debugfs);
	del_gendisk(d->disk);
	put_disk(d->disk);
	gs_punt_destroy(d);
	gs_store_destroy(d->store);
	kfree(d);
}

/* The comp_algorithm parameter, or the first known one the kernel has. */
static int __init gs_pick_algorithm(void)
{
	const char *const *alg;

	if (gs_comp_available(gs_default_alg))
		return 0;
	for (alg = gs_comp_known; *alg; alg++) {
		if (gs_comp_available(*alg)) {
			pr_warn("no algorithm '%s', using %s\n", gs_default_alg,
				*alg);
			strscpy(gs_default_alg, *alg, sizeof(gs_default_alg));
			return 0;
		}
	}
	pr_err("the kernel offers no compression algorithm (crypto acomp)\n");
	return -ENOENT;
}

static int __init gs_init(void)
{
	int ret;

	ret = gs_core_init();
	if (ret)
		return ret;
	ret = gs_pick_algorithm();
	if (ret)
		goto out_core;
	gs_major = register_blkdev(0, GS_NAME);
	if (gs_major < 0) {
		ret = gs_major;
		goto out_core;
	}
	ret = gs_dev_create();
	if (ret)
		goto out_blkdev;
	pr_info("/dev/%s ready, %llu bytes, %s\n", GS_NAME, gs_default_disksize,
		gs_default_alg);
	return 0;

out_blkdev:
	unregister_blkdev(gs_major, GS_NAME);
out_core:
	gs_core_exit();
	return ret;
}

static void __exit gs_exit(void)
{
	gs_dev_destroy(gs_dev);
	unregister_blkdev(gs_major, GS_NAME);
	gs_core_exit();
}

module_init(gs_init);
module_exit(gs_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Ghost swap: compressed swap device with on-demand clusters");
MODULE_VERSION("0.1.0");
