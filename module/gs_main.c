// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswap: a ghost swap block device.
 *
 * /dev/ghostswap is a bio-based block device whose size is only a number:
 * its slots live in clusters that are allocated by the first write into
 * them and freed with their last slot (see gs_core.c). Meant for swapon;
 * it also works as a plain block device for testing.
 *
 * This file is the device (its operations, the synchronous flag) and the
 * module; the bios go through gs_bio.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blkdev.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/rwsem.h>
#include <linux/slab.h>
#include <linux/string.h>
#include "gs_compat.h"
#include "gs_dev.h"
#include "gs_store.h"

static struct gs_dev *gs_dev;
static int gs_major;

/*
 * The disk's files (gs_sysfs.c, gs_sysfs_comp.c): unnamed groups, so
 * every attribute sits in the disk's directory.
 */
static const struct attribute_group *gs_attr_groups[] = {
	&gs_dev_attr_group,
	&gs_comp_attr_group,
	&gs_wb_attr_group,
	NULL,
};

/*
 * The swap core's free hook, where the kernel has it (module/probe/).
 * Without it, or with free_notify=0, which stands in for such a kernel,
 * a slot swap lets go of keeps its data until swap discards it:
 * swapon --discard=pages (ghostswapctl passes it then) discards a
 * cluster of swap slots once its last one is freed, and gs_bio.c frees
 * them (io_stat's discard_free).
 */
#ifdef GS_HAVE_SWAP_SLOT_FREE_NOTIFY
static const bool gs_free_hook = true;
static bool gs_free_notify = true;

/* Called by the swap core under its cluster spinlock: must not sleep. */
static void gs_slot_free_notify(struct block_device *bdev,
				unsigned long offset)
{
	struct gs_dev *d = bdev->bd_disk->private_data;

	if (!READ_ONCE(gs_free_notify))
		return;
	gs_stat_inc(&d->store->stats, GS_STAT_NOTIFY_FREE);
	gs_store_free(d->store, offset);
}
#else
static const bool gs_free_hook;
static bool gs_free_notify;
#endif

static int gs_free_notify_set(const char *val, const struct kernel_param *kp)
{
	bool on;
	int ret;

	ret = kstrtobool(val, &on);
	if (ret)
		return ret;
	if (on && !gs_free_hook) {
		pr_err("free_notify: this kernel has no swap_slot_free_notify\n");
		return -EOPNOTSUPP;
	}
	WRITE_ONCE(*(bool *)kp->arg, on);
	return 0;
}

static const struct kernel_param_ops gs_free_notify_ops = {
	.set = gs_free_notify_set,
	.get = param_get_bool,
};
module_param_cb(free_notify, &gs_free_notify_ops, &gs_free_notify, 0644);
MODULE_PARM_DESC(free_notify,
		 "free a slot when swap frees it (Y where the kernel has the hook; N: only swap's discards free slots)");

/*
 * The swap core reads a synchronous device's pages with one bio each
 * that it waits for, without readahead, and waits for each folio it
 * writes (SWP_SYNCHRONOUS_IO, from the flag at swapon): right for a
 * device that answers from memory. With writeback_direct=all every page
 * but same-filled ones goes to the backing device: then the device says
 * it is not synchronous, and swap batches its writes and reads ahead, as
 * for a disk. Changed only when the device is opened by nobody else, so
 * that no I/O is in flight.
 */
static void gs_set_synchronous(struct gs_dev *d)
{
	struct request_queue *q = d->disk->queue;
	bool sync = READ_ONCE(d->store->wb.direct) != GS_DIRECT_ALL;
	struct queue_limits lim;

	if (!!(q->limits.features & BLK_FEAT_SYNCHRONOUS) == sync)
		return;
	lim = queue_limits_start_update(q);
	if (sync)
		lim.features |= BLK_FEAT_SYNCHRONOUS;
	else
		lim.features &= ~BLK_FEAT_SYNCHRONOUS;
	if (queue_limits_commit_update(q, &lim))
		pr_warn_ratelimited("cannot change the device's synchronous flag\n");
}

static int gs_open(struct gendisk *disk, blk_mode_t mode)
{
	struct gs_dev *d = disk->private_data;

	lockdep_assert_held(&disk->open_mutex);
	if (d->claim)
		return -EBUSY;
	if (!disk_openers(disk))
		gs_set_synchronous(d);
	return 0;
}

static const struct block_device_operations gs_fops = {
	.owner = THIS_MODULE,
	.open = gs_open,
	.submit_bio = gs_submit_bio,
#ifdef GS_HAVE_SWAP_SLOT_FREE_NOTIFY
	.swap_slot_free_notify = gs_slot_free_notify,
#endif
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
	gs_debugfs_remove(d);
	del_gendisk(d->disk);
	put_disk(d->disk);
	gs_punt_destroy(d);
	gs_store_destroy(d->store);
	kfree(d);
}

static int __init gs_init(void)
{
	int ret;

	ret = gs_core_init();
	if (ret)
		return ret;
	ret = gs_defaults_init();
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
	ret = gs_hibernate_init();
	if (ret)
		goto out_dev;
	pr_info("/dev/%s ready, %llu bytes, %s\n", GS_NAME, gs_default_disksize,
		gs_default_alg);
	return 0;

out_dev:
	gs_dev_destroy(gs_dev);
out_blkdev:
	unregister_blkdev(gs_major, GS_NAME);
out_core:
	gs_core_exit();
	return ret;
}

static void __exit gs_exit(void)
{
	gs_hibernate_exit();
	gs_dev_destroy(gs_dev);
	unregister_blkdev(gs_major, GS_NAME);
	gs_core_exit();
}

module_init(gs_init);
module_exit(gs_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Ghost swap: compressed swap device with on-demand clusters");
MODULE_VERSION(GS_VERSION);	/* dkms.conf's PACKAGE_VERSION (Kbuild) */
