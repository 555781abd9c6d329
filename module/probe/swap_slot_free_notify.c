// SPDX-License-Identifier: GPL-2.0
/*
 * The swap core's free hook: swap_range_free() calls it for each slot of a
 * block device that swap lets go of. The swap_ops work may take it out of
 * block_device_operations (Documentation/design.md).
 */
#include <linux/blkdev.h>

static void gs_probe_free(struct block_device *bdev, unsigned long offset)
{
}

const struct block_device_operations gs_probe_fops;

const struct block_device_operations gs_probe_fops = {
	.swap_slot_free_notify = gs_probe_free,
};
