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
#include <linux/highmem.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/overflow.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>
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

struct gs_dev {
	struct gendisk *disk;
	struct gs_store *store;	/* replaced only while claimed */
	struct mutex conf_lock;	/* serialises configuration and stats */
	bool claim;		/* reconfiguring: opens fail with -EBUSY */
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

static blk_status_t gs_errno_to_blk(int err)
{
	return err == -ENOMEM ? BLK_STS_RESOURCE : BLK_STS_IOERR;
}

/*
 * Reads and writes. Whole-page segments go straight to the store; a slot
 * split over several segments goes through a bounce page.
 */
static blk_status_t gs_rw(struct gs_dev *d, struct bio *bio)
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
		return BLK_STS_IOERR;
	}

	bio_for_each_segment(bv, bio, iter) {
		for (done = 0; done < bv.bv_len; done += n) {
			n = min_t(unsigned int, bv.bv_len - done, PAGE_SIZE - off);
			if (n == PAGE_SIZE) {
				p = bvec_kmap_local(&bv);
				if (write)
					err = gs_store_write(s, slot, p, GFP_NOIO);
				else
					err = gs_store_read(s, slot, p);
				kunmap_local(p);
				if (!write)
					flush_dcache_page(bv.bv_page);
			} else {
				if (!bounce) {
					bounce = kmalloc(PAGE_SIZE, GFP_NOIO);
					if (!bounce) {
						err = -ENOMEM;
						break;
					}
				}
				if (!write && !off)
					err = gs_store_read(s, slot, bounce);
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
					err = gs_store_write(s, slot, bounce,
							     GFP_NOIO);
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
	if (err) {
		atomic_long_inc(write ? &s->stats.failed_writes :
				&s->stats.failed_reads);
		return gs_errno_to_blk(err);
	}
	return BLK_STS_OK;
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

static void gs_submit_bio(struct bio *bio)
{
	struct gs_dev *d = bio->bi_bdev->bd_disk->private_data;
	unsigned long start = bio_start_io_acct(bio);
	blk_status_t status;

	switch (bio_op(bio)) {
	case REQ_OP_READ:
	case REQ_OP_WRITE:
		status = gs_rw(d, bio);
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

	guard(mutex)(&d->conf_lock);
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

	guard(mutex)(&d->conf_lock);
	ret = gs_claim(d);
	if (ret)
		return ret;
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

	guard(mutex)(&d->conf_lock);
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
	char alg[64];
	int ret;

	if (len >= sizeof(alg))
		return -EINVAL;
	strscpy(alg, buf, sizeof(alg));
	strim(alg);
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
	guard(mutex)(&d->conf_lock);
	WRITE_ONCE(d->store->limit_pages, limit >> PAGE_SHIFT);
	return len;
}

static ssize_t mem_limit_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	struct gs_dev *d = dev_to_gs(dev);

	guard(mutex)(&d->conf_lock);
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
	guard(mutex)(&d->conf_lock);
	atomic_long_set(&d->store->stats.max_used_pages,
			gs_store_pool_pages(d->store));
	return len;
}
static DEVICE_ATTR_WO(mem_used_max);

static ssize_t compact_store(struct device *dev, struct device_attribute *attr,
			     const char *buf, size_t len)
{
	struct gs_dev *d = dev_to_gs(dev);

	guard(mutex)(&d->conf_lock);
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

	guard(mutex)(&d->conf_lock);
	st = &d->store->stats;
	stored = atomic_long_read(&st->same_pages) +
		 atomic_long_read(&st->comp_pages) +
		 atomic_long_read(&st->huge_pages);
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
 * tables), metadata bytes per used slot (two decimals), stream bytes.
 */
static ssize_t cluster_stat_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	struct gs_dev *d = dev_to_gs(dev);
	struct gs_stats *st;
	unsigned long used, meta, per = 0;

	guard(mutex)(&d->conf_lock);
	st = &d->store->stats;
	used = atomic_long_read(&st->slots_used);
	meta = atomic_long_read(&st->meta_bytes);
	if (used)
		per = DIV_ROUND_CLOSEST(meta * 100, used);
	return sysfs_emit(buf, "%8ld %8ld %8lu %8lu %5lu.%02lu %8zu\n",
			  atomic_long_read(&st->clusters),
			  atomic_long_read(&st->clusters_peak), used, meta,
			  per / 100, per % 100,
			  gs_comp_bytes(d->store->comp));
}
static DEVICE_ATTR_RO(cluster_stat);

static ssize_t io_stat_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	struct gs_dev *d = dev_to_gs(dev);
	struct gs_stats *st;

	guard(mutex)(&d->conf_lock);
	st = &d->store->stats;
	return sysfs_emit(buf, "%8ld %8ld %8ld %8ld\n",
			  atomic_long_read(&st->failed_reads),
			  atomic_long_read(&st->failed_writes),
			  atomic_long_read(&st->invalid_io),
			  atomic_long_read(&st->notify_free));
}
static DEVICE_ATTR_RO(io_stat);

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
	NULL,
};

static const struct attribute_group gs_attr_group = {
	.attrs = gs_attrs,
};

static const struct attribute_group *gs_attr_groups[] = {
	&gs_attr_group,
	NULL,
};

/* ------------------------------------------------------------- module */

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
	mutex_init(&d->conf_lock);
	d->store = gs_store_create(gs_default_alg,
				   gs_default_disksize >> PAGE_SHIFT);
	if (IS_ERR(d->store)) {
		ret = PTR_ERR(d->store);
		goto out_free;
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
	gs_dev = d;
	return 0;

out_put:
	put_disk(d->disk);
out_store:
	gs_store_destroy(d->store);
out_free:
	kfree(d);
	return ret;
}

static void gs_dev_destroy(struct gs_dev *d)
{
	del_gendisk(d->disk);
	put_disk(d->disk);
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
