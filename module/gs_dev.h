/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ghostswap device: /dev/ghostswap and what configures it. The device and
 * module init (gs_main.c), the bio path (gs_bio.c), the defaults
 * (gs_defaults.c), sysfs (gs_sysfs.c) and debugfs (gs_debug.c) share it;
 * the store below knows nothing of it.
 */
#ifndef _GS_DEV_H
#define _GS_DEV_H

#include <linux/jump_label.h>
#include <linux/mempool.h>
#include <linux/rwsem.h>
#include <linux/sizes.h>
#include <linux/types.h>

#define GS_NAME			"ghostswap"

/*
 * Largest size: 2^32 - 2 pages. The swap header counts pages in 32 bits,
 * so swapon cannot use more than 2^32 - 1 slots of any device; one less,
 * because the writeback tier's reverse map keeps a ghost slot plus one in
 * 32 bits and keeps U32_MAX for a slot that waits for its discard
 * (GS_BK_MAX_OWNER, gs_backing.h): the last slot is U32_MAX - 2.
 */
#define GS_MAX_DISKSIZE		((u64)(U32_MAX - 1) << PAGE_SHIFT)
#define GS_MIN_DISKSIZE		((u64)SZ_1M)

#define GS_ALG_NAME_LEN		64

struct attribute_group;
struct bio;
struct dentry;
struct gendisk;
struct gs_punt;
struct gs_store;
struct workqueue_struct;

struct gs_dev {
	struct gendisk *disk;
	struct gs_store *store;	/* replaced only while claimed */
	/* Write: configuration changes. Read: stats, writeback, compaction. */
	struct rw_semaphore conf_lock;
	bool claim;		/* reconfiguring: opens fail with -EBUSY */
	/* Bios a worker finishes (gs_bio.c): reads, writes, the reserve. */
	struct workqueue_struct *io_wq;
	struct gs_punt __percpu *punt_read;
	struct gs_punt __percpu *punt_write;
	mempool_t *punt_pool;
	struct dentry *debugfs;
	unsigned long dump_cluster;	/* debugfs "table" shows this one */
};

/*
 * gs_bio.c: the bio path (the device's submit_bio), and the workers that
 * finish the bios that must wait for backing device I/O: created with
 * the device, destroyed after its disk.
 */
void gs_submit_bio(struct bio *bio);
int gs_punt_create(struct gs_dev *d);
void gs_punt_destroy(struct gs_dev *d);

/*
 * gs_defaults.c: the module parameters, size and algorithm at load and
 * after reset, settled by gs_defaults_init() for this kernel.
 */
extern u64 gs_default_disksize;
extern char gs_default_alg[GS_ALG_NAME_LEN];
extern unsigned int gs_default_chunk_mib;
int gs_defaults_init(void);

/* What swapon of a device of @size bytes costs the kernel's swap core. */
u64 gs_swapon_cost(u64 size);

/* The size syntax of the disksize parameter and attribute. */
int gs_parse_size(const char *buf, u64 *out);

/* gs_sysfs.c: the attributes of the device and its store, and the tier's. */
extern const struct attribute_group gs_dev_attr_group;
extern const struct attribute_group gs_wb_attr_group;
/* For the attribute groups: their device, and reconfiguring it. */
struct device;
struct gs_dev *dev_to_gs(struct device *dev);
/*
 * Changes that need an idle device: nobody has it open and, if @empty,
 * it holds no data. Runs @fn with the device claimed.
 */
int gs_reconfigure(struct gs_dev *d, bool empty,
		   int (*fn)(struct gs_dev *d, const void *arg),
		   const void *arg);
/* gs_sysfs_comp.c: the compression attributes. */
extern const struct attribute_group gs_comp_attr_group;

/*
 * gs_hibernate.c: while the system hibernates, whether @bio is the
 * hibernation image (a write that is not the swap core's), refused.
 * Inline: outside a hibernation a write costs a jump patched out of its
 * way, not a call.
 */
struct bio;
DECLARE_STATIC_KEY_FALSE(gs_hibernating);
bool __gs_hibernation_refuses(struct bio *bio);

static inline bool gs_hibernation_refuses(struct bio *bio)
{
	return static_branch_unlikely(&gs_hibernating) &&
	       __gs_hibernation_refuses(bio);
}

int gs_hibernate_init(void);
void gs_hibernate_exit(void);

/* gs_debug.c: the debugfs directory of the device. */
void gs_debugfs_create(struct gs_dev *d);
void gs_debugfs_remove(struct gs_dev *d);

#endif /* _GS_DEV_H */
