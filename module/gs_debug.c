// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswap debugging: the debugfs directory /sys/kernel/debug/ghostswap/.
 *
 *  check       the number of mismatches between the table and the backing
 *              store's reverse map, then the first ones in detail
 *  table       the entries of one cluster; write a cluster index to choose
 *  fail_alloc  fault injection: make the next N allocations of the store
 *              fail
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/rwsem.h>
#include <linux/seq_file.h>
#include <linux/uaccess.h>
#include "gs_core.h"
#include "gs_dev.h"

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
DEFINE_SHOW_STORE_ATTRIBUTE(gs_table);

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
DEFINE_SHOW_STORE_ATTRIBUTE(gs_fail_alloc);

void gs_debugfs_create(struct gs_dev *d)
{
	d->debugfs = debugfs_create_dir(GS_NAME, NULL);
	debugfs_create_file("check", 0400, d->debugfs, d, &gs_check_fops);
	debugfs_create_file("table", 0600, d->debugfs, d, &gs_table_fops);
	debugfs_create_file("fail_alloc", 0600, d->debugfs, d,
			    &gs_fail_alloc_fops);
}

void gs_debugfs_remove(struct gs_dev *d)
{
	debugfs_remove_recursive(d->debugfs);
}
