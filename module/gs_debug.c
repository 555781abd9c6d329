// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswap debugging: the consistency check of the table against the
 * backing store's reverse map, the dump of a cluster's entries, and the
 * debugfs directory /sys/kernel/debug/ghostswap/ that shows them:
 *
 *  check       the number of mismatches between the table and the backing
 *              store's reverse map, then the first ones in detail
 *  table       the entries of one cluster; write a cluster index to choose
 *  fail_alloc  fault injection: make the next N allocations of the store
 *              fail
 *  warn        a write makes the module print a kernel warning (WARN):
 *              for the tests that prove a kernel log's reports are seen
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/mutex.h>
#include <linux/rwsem.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include "gs_backing.h"
#include "gs_bio_watch.h"
#include "gs_core.h"
#include "gs_dev.h"
#include "gs_store.h"
#include "gs_unit.h"

#define GS_CHECK_DETAILS	20

static void gs_check_report(struct seq_file *m, long *bad, const char *what,
			    u64 slot, u64 b, u64 other)
{
	if (m && *bad < GS_CHECK_DETAILS)
		seq_printf(m, "%s: slot %llu backing %llu (%llu)\n", what, slot,
			   b, other);
	(*bad)++;
}

/*
 * Unit @u, at its first live slot @slot: counted if marked for
 * splitting; on the device, each of its backing slots owned by its run.
 */
static void gs_check_unit(struct gs_store *s, struct seq_file *m, long *bad,
			  unsigned int *marked, u64 *fwd, u64 slot,
			  const struct gs_unit *u)
{
	u64 first = slot & ~(u64)(u->pages - 1);
	unsigned int j;

	if (u->split == GS_UNIT_SPLIT_MARKED)
		(*marked)++;
	if (!u->backed)
		return;
	for (j = 0; j < gs_unit_nobj(u); j++) {
		(*fwd)++;
		if (!s->bk || u->obj[j] >= s->bk->nr_slots)
			gs_check_report(m, bad, "no such backing slot", slot,
					u->obj[j], 0);
		else if (gs_backing_owner(s->bk, u->obj[j]) != first)
			gs_check_report(m, bad, "reverse map differs", slot,
					u->obj[j],
					gs_backing_owner(s->bk, u->obj[j]));
	}
}

long gs_store_check(struct gs_store *s, struct seq_file *m)
{
	struct gs_backing *bk = s->bk;
	u64 fwd = 0, rev = 0, units = 0, b, slot;
	unsigned long ci = 0, e;
	struct gs_unit *u;
	struct gs_cluster *cl;
	u32 *owners = NULL;
	unsigned int i, marked;
	long bad = 0;

	if (bk) {
		owners = kmalloc_array(GS_BK_CLUSTER_SLOTS, sizeof(*owners),
				       GFP_KERNEL);
		if (!owners)
			return -ENOMEM;
	}
	mutex_lock(&s->wb.lock);

	/*
	 * Forward: every WRITTEN_BACK entry is its backing slot's owner,
	 * every UNIT entry one of its unit's live slots; a cluster counts
	 * the units of it marked for splitting.
	 */
	for (; (cl = gs_cluster_next(s, &ci, ULONG_MAX)); ci++) {
		marked = 0;
		for (i = 0; i < GS_CLUSTER_SLOTS; i++) {
			e = atomic_long_read(&cl->table[i]);
			if (gs_entry_kind(e) == GS_KIND_UNIT) {
				u = gs_entry_unit(e);
				units++;
				if (!(u->live & u->held & BIT(i & (u->pages - 1))))
					gs_check_report(m, &bad, "unit does not hold its slot",
							((u64)ci << GS_CLUSTER_SHIFT) + i,
							u->held, u->live);
				else if (__ffs(u->live) == (i & (u->pages - 1)))
					gs_check_unit(s, m, &bad, &marked, &fwd,
						      ((u64)ci << GS_CLUSTER_SHIFT) + i,
						      u);
				continue;
			}
			if (gs_entry_kind(e) != GS_KIND_WRITTEN_BACK)
				continue;
			fwd++;
			slot = ((u64)ci << GS_CLUSTER_SHIFT) + i;
			b = gs_entry_value(e);
			if (!bk || b >= bk->nr_slots)
				gs_check_report(m, &bad, "no such backing slot",
						slot, b, 0);
			else if (gs_backing_owner(bk, b) != slot)
				gs_check_report(m, &bad, "reverse map differs",
						slot, b, gs_backing_owner(bk, b));
		}
		if (marked != cl->units_marked)
			gs_check_report(m, &bad, "counts differ: units marked for splitting",
					(u64)ci << GS_CLUSTER_SHIFT, marked,
					cl->units_marked);
		gs_cluster_unlock(cl);
		cond_resched();
	}

	/* Reverse: every used backing slot's owner points back at it. */
	for (ci = 0; bk && ci <= (bk->nr_slots - 1) >> GS_BK_CLUSTER_SHIFT;
	     ci++) {
		if (!gs_backing_cluster_owners(bk, ci, owners))
			continue;
		for (i = 0; i < GS_BK_CLUSTER_SLOTS; i++) {
			/* Freed, waiting for its discard: nobody's. */
			if (!owners[i] || owners[i] == GS_BK_DISCARDING)
				continue;
			rev++;
			b = ((u64)ci << GS_BK_CLUSTER_SHIFT) + i;
			slot = owners[i] - 1;
			e = slot < s->nr_slots ? gs_store_entry(s, slot) : 0;
			if ((gs_entry_kind(e) != GS_KIND_WRITTEN_BACK ||
			     gs_entry_value(e) != b) &&
			    !(slot < s->nr_slots && gs_unit_bk_holds(s, slot, b)))
				gs_check_report(m, &bad, "orphan backing slot",
						slot, b, e);
		}
		cond_resched();
	}

	/* And the counters. */
	if (units != gs_stat_read(&s->stats, GS_STAT_UNIT_PAGES))
		gs_check_report(m, &bad, "counts differ: unit entries, unit pages",
				units, gs_stat_read(&s->stats, GS_STAT_UNIT_PAGES), 0);
	if (fwd != rev || fwd != gs_stat_read(&s->stats, GS_STAT_WB_PAGES) +
	    atomic_long_read(&s->stats.unit_bk_slots) ||
	    (bk && rev != gs_backing_used(bk)))
		gs_check_report(m, &bad, "counts differ: entries, reverse map",
				fwd, rev, gs_stat_read(&s->stats, GS_STAT_WB_PAGES));
	mutex_unlock(&s->wb.lock);
	kfree(owners);
	return bad;
}

void gs_store_dump_cluster(struct gs_store *s, unsigned long ci,
			   struct seq_file *m)
{
	static const char *const kinds[] = {
		"empty", "same", "compressed", "raw", "written_back", "unit",
	};
	struct gs_cluster *cl;
	unsigned long e;
	unsigned int i;

	cl = gs_cluster_get(s, ci, 0);
	if (!cl) {
		seq_printf(m, "cluster %lu: none\n", ci);
		return;
	}
	seq_printf(m, "cluster %lu: %u used, age base %u, unit %u s\n", ci,
		   cl->used, cl->age_base, 1U << cl->age_shift);
	for (i = 0; i < GS_CLUSTER_SLOTS; i++) {
		e = atomic_long_read(&cl->table[i]);
		if (!e)
			continue;
		if (gs_entry_kind(e) == GS_KIND_SAME) {
			seq_printf(m, "%llu same%s fill %lx age %u\n",
				   ((u64)ci << GS_CLUSTER_SHIFT) + i,
				   cl->age[i] & GS_AGE_IDLE ? " idle" : "",
				   gs_same_word(e, gs_aux_hi_get(cl->aux_hi,
								 i)),
				   (u32)(cl->age[i] & GS_AGE_UNIT));
			continue;
		}
		seq_printf(m, "%llu %s%s%s%s%s%s value %lx aux %u age %u\n",
			   ((u64)ci << GS_CLUSTER_SHIFT) + i,
			   gs_entry_kind(e) < ARRAY_SIZE(kinds) ?
			   kinds[gs_entry_kind(e)] : "bad",
			   cl->age[i] & GS_AGE_IDLE ? " idle" : "",
			   e & GS_FLAG_COLD ? " cold" : "",
			   e & GS_FLAG_WB ?
			   (gs_entry_kind(e) == GS_KIND_WRITTEN_BACK ?
			    " reading" : " writeback") : "",
			   e & GS_FLAG_INCOMP ? " incompressible" : "",
			   e & GS_FLAG_PINNED ? " pinned" : "",
			   gs_entry_value(e), gs_slot_aux(cl, i, e),
			   (u32)(cl->age[i] & GS_AGE_UNIT));
	}
	gs_cluster_unlock(cl);
}

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
DEFINE_SHOW_STORE_ATTRIBUTE(gs_table);

/*
 * Fault injection: write N to make the next N allocations of the store
 * (pool objects, clusters, the nodes of new ranges of the cluster index,
 * which then come from its reserve) fail; read: how many are left to
 * fail, and how many were made to fail since the last reset.
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

/* A warning on demand, with its stack, as any WARN() prints one. */
static ssize_t gs_warn_write(struct file *file, const char __user *ubuf,
			     size_t len, loff_t *ppos)
{
	WARN(1, "ghostswap: a warning asked for through debugfs\n");
	return len;
}

static const struct file_operations gs_warn_fops = {
	.owner = THIS_MODULE,
	.write = gs_warn_write,
};

void gs_debugfs_create(struct gs_dev *d)
{
	d->debugfs = debugfs_create_dir(GS_NAME, NULL);
	debugfs_create_file("check", 0400, d->debugfs, d, &gs_check_fops);
	debugfs_create_file("table", 0600, d->debugfs, d, &gs_table_fops);
	debugfs_create_file("fail_alloc", 0600, d->debugfs, d,
			    &gs_fail_alloc_fops);
	debugfs_create_file("warn", 0200, d->debugfs, d, &gs_warn_fops);
	gs_bio_watch_debugfs(d->debugfs);
}

void gs_debugfs_remove(struct gs_dev *d)
{
	debugfs_remove_recursive(d->debugfs);
}
