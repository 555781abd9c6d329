// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswap sysfs: the attributes of /sys/block/ghostswap/, in two groups,
 * one per tier: the device and its store (size, algorithm, pool limit,
 * statistics), and the writeback tier (backing device, writeback, idle
 * marks, budget, policies, backing compaction, its statistics). The same
 * names, modes and formats as zram where zram has them.
 *
 * Reading and most changes hold the device's conf_lock for reading;
 * changes that replace or reshape the store need an idle device: they
 * hold it for writing and claim the device (gs_reconfigure()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blkdev.h>
#include <linux/ctype.h>
#include <linux/delay.h>
#include <linux/device.h>
#include <linux/kernel.h>
#include <linux/log2.h>
#include <linux/mutex.h>
#include <linux/rwsem.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/workqueue.h>
#include "gs_backing.h"
#include "gs_chunk.h"
#include "gs_chunks.h"
#include "gs_comp.h"
#include "gs_dev.h"
#include "gs_extent.h"
#include "gs_store.h"

/*
 * How long a reconfiguration waits for openers to go: udev's probe
 * (blkid) opens the device for a moment after it appears or is reset,
 * and zram's users write their settings once and do not retry
 * (zram-generator). An exclusive holder (swap, mkswap) is not waited for.
 */
#define GS_CLAIM_WAIT_MS	1000
#define GS_CLAIM_POLL_MS	10

/*
 * Try to take the device for reconfiguration: -EBUSY if anybody has it
 * open, with *@held whether one holds it exclusively.
 */
static int gs_try_claim(struct gs_dev *d, bool *held)
{
	int ret = 0;

	mutex_lock(&d->disk->open_mutex);
	*held = READ_ONCE(d->disk->part0->bd_holder);
	if (disk_openers(d->disk) || d->claim)
		ret = -EBUSY;
	else
		d->claim = true;
	mutex_unlock(&d->disk->open_mutex);
	return ret;
}

/*
 * Take the device for reconfiguration: fails if anybody has it open, once
 * a passing opener has had GS_CLAIM_WAIT_MS to go.
 */
static int gs_claim(struct gs_dev *d)
{
	unsigned int waited = 0;
	bool held;
	int ret;

	while ((ret = gs_try_claim(d, &held)) == -EBUSY && !held &&
	       waited < GS_CLAIM_WAIT_MS) {
		if (msleep_interruptible(GS_CLAIM_POLL_MS))
			break;
		waited += GS_CLAIM_POLL_MS;
	}
	if (ret)
		pr_info_ratelimited("busy: open %u times%s%s, after %u ms\n",
				    disk_openers(d->disk),
				    held ? ", held exclusively" : "",
				    d->claim ? ", being reconfigured" : "",
				    waited);
	return ret;
}

static void gs_unclaim(struct gs_dev *d)
{
	mutex_lock(&d->disk->open_mutex);
	d->claim = false;
	mutex_unlock(&d->disk->open_mutex);
}

static int gs_set_size(struct gs_dev *d, u64 bytes)
{
	int ret = gs_store_set_size(d->store, bytes >> PAGE_SHIFT);

	if (!ret)
		set_capacity_and_notify(d->disk, bytes >> SECTOR_SHIFT);
	return ret;
}

struct gs_dev *dev_to_gs(struct device *dev)
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
int gs_reconfigure(struct gs_dev *d, bool empty,
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
	if (empty && gs_stat_read(&d->store->stats, GS_STAT_SLOTS_USED)) {
		pr_info_ratelimited("busy: holds data, reset it first\n");
		ret = -EBUSY;
	} else {
		ret = fn(d, arg);
	}
	gs_unclaim(d);
	return ret;
}

static int gs_do_set_size(struct gs_dev *d, const void *arg)
{
	return gs_set_size(d, *(const u64 *)arg);
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

/*
 * zram's: 1 once the device has a size and serves I/O. A ghost device
 * always has one (the module's default until set, and again after a
 * reset), so it is always 1.
 */
static ssize_t initstate_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "1\n");
}
static DEVICE_ATTR_RO(initstate);

/*
 * What swapon of the device at its disksize costs the kernel's swap core
 * (none of it is the module's): see gs_swapon_cost().
 */
static ssize_t swapon_cost_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	struct gs_dev *d = dev_to_gs(dev);

	guard(rwsem_read)(&d->conf_lock);
	return sysfs_emit(buf, "%llu\n",
			  gs_swapon_cost(d->store->nr_slots << PAGE_SHIFT));
}
static DEVICE_ATTR_RO(swapon_cost);

/* Back to the module defaults: size, algorithm, no limit, no data. */
static int gs_do_reset(struct gs_dev *d, const void *arg)
{
	struct gs_store *s;

	s = gs_store_create(gs_default_alg, gs_default_disksize >> PAGE_SHIFT);
	if (IS_ERR(s))
		return PTR_ERR(s);
	gs_store_destroy(d->store);
	d->store = s;
	/* The size it was made with: nothing to fail. */
	return gs_set_size(d, gs_default_disksize);
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
	stored = gs_stat_read(st, GS_STAT_SAME_PAGES) +
		 gs_stat_read(st, GS_STAT_COMP_PAGES) +
		 gs_stat_read(st, GS_STAT_HUGE_PAGES) +
		 gs_stat_read(st, GS_STAT_WB_PAGES) +
		 gs_stat_read(st, GS_STAT_UNIT_PAGES);
	return sysfs_emit(buf, "%8llu %8ld %8llu %8llu %8llu %8ld %8lu %8ld %8ld\n",
			  stored << PAGE_SHIFT,
			  gs_stat_read(st, GS_STAT_COMPR_BYTES),
			  (u64)gs_store_pool_pages(d->store) << PAGE_SHIFT,
			  (u64)READ_ONCE(d->store->limit_pages) << PAGE_SHIFT,
			  (u64)atomic_long_read(&st->max_used_pages) << PAGE_SHIFT,
			  gs_stat_read(st, GS_STAT_SAME_PAGES),
			  gs_store_pages_compacted(d->store),
			  gs_stat_read(st, GS_STAT_HUGE_PAGES),
			  gs_stat_read(st, GS_STAT_HUGE_PAGES_SINCE));
}
static DEVICE_ATTR_RO(mm_stat);

/*
 * clusters, peak clusters, used slots, metadata bytes (cluster headers and
 * tables, the cluster index's nodes), metadata bytes per used slot (two
 * decimals), stream bytes, bytes of the clusters held in reserve, bytes
 * of the spare nodes the cluster index holds for them.
 */
static ssize_t cluster_stat_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	struct gs_dev *d = dev_to_gs(dev);
	struct gs_stats *st;
	unsigned long used, meta, per = 0;

	guard(rwsem_read)(&d->conf_lock);
	st = &d->store->stats;
	used = gs_stat_read(st, GS_STAT_SLOTS_USED);
	meta = atomic_long_read(&st->meta_bytes);
	if (used)
		per = DIV_ROUND_CLOSEST(meta * 100, used);
	return sysfs_emit(buf, "%8ld %8ld %8lu %8lu %5lu.%02lu %8zu %8zu %8zu\n",
			  atomic_long_read(&st->clusters),
			  atomic_long_read(&st->clusters_peak), used, meta,
			  per / 100, per % 100,
			  gs_comp_bytes(d->store->comp),
			  gs_store_reserve_bytes(d->store),
			  gs_store_index_reserve_bytes(d->store));
}
static DEVICE_ATTR_RO(cluster_stat);

static ssize_t io_stat_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	struct gs_dev *d = dev_to_gs(dev);
	struct gs_stats *st;

	guard(rwsem_read)(&d->conf_lock);
	st = &d->store->stats;
	return sysfs_emit(buf, "%8ld %8ld %8ld %8ld %8ld\n",
			  atomic_long_read(&st->failed_reads),
			  atomic_long_read(&st->failed_writes),
			  atomic_long_read(&st->invalid_io),
			  gs_stat_read(st, GS_STAT_NOTIFY_FREE),
			  atomic_long_read(&st->discard_free));
}
static DEVICE_ATTR_RO(io_stat);

/* The device and its store: size, algorithm, pool, statistics. */
static struct attribute *gs_dev_attrs[] = {
	&dev_attr_disksize.attr,
	&dev_attr_initstate.attr,
	&dev_attr_swapon_cost.attr,
	&dev_attr_reset.attr,
	&dev_attr_mem_limit.attr,
	&dev_attr_mem_used_max.attr,
	&dev_attr_compact.attr,
	&dev_attr_mm_stat.attr,
	&dev_attr_cluster_stat.attr,
	&dev_attr_io_stat.attr,
	NULL,
};

const struct attribute_group gs_dev_attr_group = {
	.attrs = gs_dev_attrs,
};

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
	if (bk == ERR_PTR(-ENOTBLK))
		bk = gs_chunk_backing_open(path);	/* a regular file */
	if (bk == ERR_PTR(-ENOTBLK))
		bk = gs_chunks_open(path, ilog2(READ_ONCE(gs_default_chunk_mib)) +
				    20 - PAGE_SHIFT);	/* a directory */
	if (IS_ERR(bk)) {
		pr_err("backing_dev: cannot use %s: %ld\n", path, PTR_ERR(bk));
		return PTR_ERR(bk);
	}
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

/* What a write to `writeback` asks for. */
struct gs_wb_request {
	enum gs_wb_mode mode;	/* GS_WB_COLD: none named */
	u64 max;		/* pages at most, U64_MAX: no limit */
	unsigned int nr, cap;	/* ranges (slots lo..hi - 1), room */
	struct { u64 lo, hi; } *ranges;
};

/* "N" or "LO-HI" (both inclusive) into the next range of @req. */
static int gs_parse_wb_range(struct gs_wb_request *req, char *val,
			     bool pair, u64 nr_slots)
{
	char *hi = pair ? strchr(val, '-') : NULL;
	u64 lo, last;

	if ((pair && !hi) || req->nr == req->cap)
		return -EINVAL;
	if (hi)
		*hi++ = 0;
	if (kstrtou64(val, 10, &lo) || (hi && kstrtou64(hi, 10, &last)))
		return -EINVAL;
	if (!hi)
		last = lo;
	if (lo > last || last >= nr_slots)
		return -ERANGE;
	req->ranges[req->nr].lo = lo;
	req->ranges[req->nr++].hi = last + 1;
	return 0;
}

/*
 * Words, separated by blanks: a mode ("MODE" or zram's "type=MODE"; MODE
 * is idle huge huge_idle incompressible all), ranges ("page_index=N",
 * "page_indexes=LO-HI", as many as wanted) and a number of pages at
 * most. Ranges without a mode take every page in them; a mode with
 * ranges takes its pages in them; neither takes the coldest pages.
 */
static int gs_parse_writeback(char *buf, struct gs_wb_request *req,
			      u64 nr_slots)
{
	bool counted = false;
	char *word, *val;
	int i, ret;

	req->mode = GS_WB_COLD;
	req->max = U64_MAX;
	while ((word = strsep(&buf, " \t\n"))) {
		if (!*word)
			continue;
		val = strchr(word, '=');
		if (val)
			*val++ = 0;
		if (!val && isdigit(*word)) {
			if (counted || kstrtou64(word, 10, &req->max) ||
			    !req->max)
				return -EINVAL;
			counted = true;
		} else if (!val || !strcmp(word, "type")) {
			i = match_string(gs_wb_modes, ARRAY_SIZE(gs_wb_modes),
					 val ?: word);
			if (i <= GS_WB_COLD || req->mode != GS_WB_COLD)
				return -EINVAL;
			req->mode = i;
		} else if (!strcmp(word, "page_index")) {
			ret = gs_parse_wb_range(req, val, false, nr_slots);
			if (ret)
				return ret;
		} else if (!strcmp(word, "page_indexes")) {
			ret = gs_parse_wb_range(req, val, true, nr_slots);
			if (ret)
				return ret;
		} else {
			return -EINVAL;
		}
	}
	if (req->nr && req->mode == GS_WB_COLD)
		req->mode = GS_WB_ALL;
	return req->mode == GS_WB_COLD && !counted ? -EINVAL : 0;
}

static int gs_writeback(struct gs_store *s, struct gs_wb_request *req,
			u64 *done)
{
	unsigned int k;
	int ret = 0;
	u64 n;

	if (!req->nr)
		return gs_store_writeback(s, req->mode, req->max, done);
	*done = 0;
	for (k = 0; k < req->nr && !ret && *done < req->max; k++) {
		ret = gs_store_writeback_range(s, req->mode, req->ranges[k].lo,
					       req->ranges[k].hi,
					       req->max - *done, &n);
		*done += n;
	}
	return ret;
}

static ssize_t writeback_store(struct device *dev,
			       struct device_attribute *attr, const char *buf,
			       size_t len)
{
	struct gs_dev *d = dev_to_gs(dev);
	struct gs_wb_request req = {};
	char *copy;
	u64 done;
	int ret;

	copy = kstrndup(buf, len, GFP_KERNEL);
	/* The shortest range is "page_index=N ": 13 bytes. */
	req.cap = len / 13 + 1;
	req.ranges = kmalloc_array(req.cap, sizeof(*req.ranges), GFP_KERNEL);
	ret = -ENOMEM;
	if (copy && req.ranges) {
		down_read(&d->conf_lock);
		ret = gs_parse_writeback(copy, &req, d->store->nr_slots);
		if (!ret)
			ret = gs_writeback(d->store, &req, &done);
		up_read(&d->conf_lock);
		pr_debug("writeback %s, %u ranges: %d\n",
			 gs_wb_modes[req.mode], req.nr, ret);
	}
	kfree(req.ranges);
	kfree(copy);
	return ret ? ret : len;
}
static DEVICE_ATTR_WO(writeback);

/* "all", or an age in seconds: entries not stored or read for that long. */
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
	return sysfs_emit(buf, "%d\n", READ_ONCE(d->store->wb.limit_enable));
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
	return sysfs_emit(buf, "%ld\n", atomic_long_read(&d->store->wb.budget));
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
	WRITE_ONCE(d->store->wb.use_shrinker, on);
	return len;
}

static ssize_t writeback_shrinker_show(struct device *dev,
				       struct device_attribute *attr,
				       char *buf)
{
	struct gs_dev *d = dev_to_gs(dev);

	guard(rwsem_read)(&d->conf_lock);
	return sysfs_emit(buf, "%d\n", READ_ONCE(d->store->wb.use_shrinker));
}
static DEVICE_ATTR_RW(writeback_shrinker);

/*
 * A switch of the device that may only change while it is empty: @buf is
 * anything kstrtobool() takes (-EINVAL otherwise), @fn gets a bool.
 */
static int gs_switch_store(struct device *dev, const char *buf,
			   int (*fn)(struct gs_dev *d, const void *arg))
{
	bool on;

	if (kstrtobool(buf, &on))
		return -EINVAL;
	return gs_reconfigure(dev_to_gs(dev), true, fn, &on);
}

static int gs_do_set_checksum(struct gs_dev *d, const void *arg)
{
	d->store->wb.checksum = *(const bool *)arg;
	return 0;
}

/* Checksums of written-back pages: on or off while the device is empty. */
static ssize_t writeback_checksum_store(struct device *dev,
					struct device_attribute *attr,
					const char *buf, size_t len)
{
	int ret = gs_switch_store(dev, buf, gs_do_set_checksum);

	return ret ? ret : len;
}

static ssize_t writeback_checksum_show(struct device *dev,
				       struct device_attribute *attr,
				       char *buf)
{
	struct gs_dev *d = dev_to_gs(dev);

	guard(rwsem_read)(&d->conf_lock);
	return sysfs_emit(buf, "%d\n", d->store->wb.checksum);
}
static DEVICE_ATTR_RW(writeback_checksum);

/*
 * zram's compressed_writeback (7.0; writeback_compressed before): 1
 * writes a page back as the pool holds it, compressed, and decompresses
 * it when it is read back; 0 decompresses it before the write. This
 * device always does the first (the page's checksum and encryption are
 * of what it stores): 1 is taken, 0 is not supported.
 */
static ssize_t compressed_writeback_store(struct device *dev,
					  struct device_attribute *attr,
					  const char *buf, size_t len)
{
	bool on;

	if (kstrtobool(buf, &on))
		return -EINVAL;
	if (!on) {
		pr_err("compressed_writeback: pages are written back compressed, as stored; 0 is not supported\n");
		return -EOPNOTSUPP;
	}
	return len;
}

static ssize_t compressed_writeback_show(struct device *dev,
					 struct device_attribute *attr,
					 char *buf)
{
	return sysfs_emit(buf, "1\n");
}
static DEVICE_ATTR_RW(compressed_writeback);

static int gs_do_set_encrypt(struct gs_dev *d, const void *arg)
{
	return gs_store_set_wb_encrypt(d->store, *(const bool *)arg);
}

/*
 * Encryption of what goes to the backing device: on (a new random key)
 * or off while the device is empty.
 */
static ssize_t writeback_encrypt_store(struct device *dev,
				       struct device_attribute *attr,
				       const char *buf, size_t len)
{
	int ret = gs_switch_store(dev, buf, gs_do_set_encrypt);

	if (ret == -ENOENT)
		pr_err("writeback_encrypt: the kernel offers no xts(aes) cipher\n");
	else if (ret == -EOPNOTSUPP)
		pr_err("writeback_encrypt: the kernel is built without the skcipher API (CONFIG_CRYPTO_SKCIPHER)\n");
	return ret ? ret : len;
}

static ssize_t writeback_encrypt_show(struct device *dev,
				      struct device_attribute *attr,
				      char *buf)
{
	struct gs_dev *d = dev_to_gs(dev);

	guard(rwsem_read)(&d->conf_lock);
	return sysfs_emit(buf, "%d\n", !!d->store->wb.cipher);
}
static DEVICE_ATTR_RW(writeback_encrypt);

/* Pages a writeback has in flight at once (zram's knob, its default). */
static ssize_t writeback_batch_size_store(struct device *dev,
					  struct device_attribute *attr,
					  const char *buf, size_t len)
{
	struct gs_dev *d = dev_to_gs(dev);
	unsigned int size;
	int ret;

	if (kstrtouint(buf, 10, &size))
		return -EINVAL;
	guard(rwsem_read)(&d->conf_lock);
	ret = gs_store_set_wb_batch_size(d->store, size);
	return ret ? ret : len;
}

static ssize_t writeback_batch_size_show(struct device *dev,
					 struct device_attribute *attr,
					 char *buf)
{
	struct gs_dev *d = dev_to_gs(dev);

	guard(rwsem_read)(&d->conf_lock);
	return sysfs_emit(buf, "%u\n", READ_ONCE(d->store->wb.batch_size));
}
static DEVICE_ATTR_RW(writeback_batch_size);

static const char *const gs_direct_names[] = {
	[GS_DIRECT_NONE] = "none",
	[GS_DIRECT_HUGE] = "huge",
	[GS_DIRECT_INCOMP] = "incompressible",
	[GS_DIRECT_ALL] = "all",
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
	WRITE_ONCE(d->store->wb.direct, i);
	return len;
}

static ssize_t writeback_direct_show(struct device *dev,
				     struct device_attribute *attr, char *buf)
{
	struct gs_dev *d = dev_to_gs(dev);
	unsigned int i, cur;
	ssize_t n = 0;

	guard(rwsem_read)(&d->conf_lock);
	cur = READ_ONCE(d->store->wb.direct);
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
 * buffers, pages that failed to write, to read, pages relocated, the
 * pages backing compaction read and wrote, pages whose checksum did not
 * match, backing slots discarded, discards that failed, slots in place
 * (a directory's grow and shrink with its chunks), times a directory
 * could not add a chunk and the errno of the last time, 0 once it could
 * (not in zram's columns).
 */
static ssize_t bd_stat_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	struct gs_dev *d = dev_to_gs(dev);
	struct gs_backing *bk;
	struct gs_stats *st;
	u64 used = 0, meta = 0, map = 0, cap = 0;

	guard(rwsem_read)(&d->conf_lock);
	st = &d->store->stats;
	bk = d->store->bk;
	if (bk) {
		used = gs_backing_used(bk);
		meta = atomic_long_read(&bk->meta_bytes);
		map = READ_ONCE(bk->map_bytes);	/* a chunk store moves it */
		cap = READ_ONCE(bk->limit);	/* and this */
	}
	return sysfs_emit(buf,
			  "%8llu %8ld %8ld %8llu %8llu %8ld %8ld %8ld %8ld %8ld %8ld %8ld %8ld %8llu %8ld %8d\n",
			  used, atomic_long_read(&st->bd_reads),
			  atomic_long_read(&st->bd_writes),
			  meta / gs_bk_cluster_bytes(),
			  meta + map + atomic_long_read(&st->wb_buffer_bytes),
			  atomic_long_read(&st->bd_write_errors),
			  atomic_long_read(&st->bd_read_errors),
			  atomic_long_read(&st->bd_relocated),
			  atomic_long_read(&st->bd_compact_reads),
			  atomic_long_read(&st->bd_compact_writes),
			  atomic_long_read(&st->bd_sum_errors),
			  bk ? atomic_long_read(&bk->discarded) : 0L,
			  bk ? atomic_long_read(&bk->discard_errors) : 0L,
			  cap, bk ? atomic_long_read(&bk->grow_errors) : 0L,
			  bk ? -READ_ONCE(bk->grow_err) : 0);
}
static DEVICE_ATTR_RO(bd_stat);

/*
 * Discard backing slots as they are freed (a sparse file behind a loop
 * device gives the space back): needs a backing device that can discard;
 * reset and detaching the device turn it off.
 */
static ssize_t backing_discard_store(struct device *dev,
				     struct device_attribute *attr,
				     const char *buf, size_t len)
{
	struct gs_dev *d = dev_to_gs(dev);
	bool on;
	int ret;

	if (kstrtobool(buf, &on))
		return -EINVAL;
	guard(rwsem_read)(&d->conf_lock);
	if (!d->store->bk)
		return -ENODEV;
	ret = gs_backing_set_discard(d->store->bk, on);
	if (ret == -EOPNOTSUPP)
		pr_err("backing_discard: %s cannot discard\n",
		       d->store->bk->path ?: "the backing device");
	return ret ? ret : len;
}

static ssize_t backing_discard_show(struct device *dev,
				    struct device_attribute *attr, char *buf)
{
	struct gs_dev *d = dev_to_gs(dev);

	guard(rwsem_read)(&d->conf_lock);
	return sysfs_emit(buf, "%d\n",
			  d->store->bk ? READ_ONCE(d->store->bk->discard) : 0);
}
static DEVICE_ATTR_RW(backing_discard);

/* The writeback tier: attach a backing device, write back, and its stats. */
static struct attribute *gs_wb_attrs[] = {
	&dev_attr_backing_dev.attr,
	&dev_attr_writeback.attr,
	&dev_attr_idle.attr,
	&dev_attr_writeback_limit.attr,
	&dev_attr_writeback_limit_enable.attr,
	&dev_attr_writeback_shrinker.attr,
	&dev_attr_writeback_direct.attr,
	&dev_attr_backing_discard.attr,
	&dev_attr_writeback_checksum.attr,
	&dev_attr_compressed_writeback.attr,
	&dev_attr_writeback_encrypt.attr,
	&dev_attr_writeback_batch_size.attr,
	&dev_attr_backing_compact.attr,
	&dev_attr_bd_stat.attr,
	NULL,
};

const struct attribute_group gs_wb_attr_group = {
	.attrs = gs_wb_attrs,
};
