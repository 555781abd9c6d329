// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswap chunk store: a directory as the backing store, which grows and
 * shrinks by chunk files.
 *
 * Each chunk is an unnamed file in the directory (O_TMPFILE: nothing is
 * left behind by a crash), 2^shift pages (the chunk_mib module parameter
 * when the directory is attached; 64 MiB by default), allocated in full
 * and mapped once through its filesystem's swap_activate (gs_chunk.c), so
 * that its pages go to the filesystem's disk as bios (gs_extent.c).
 * Backing slots [i << shift, (i + 1) << shift) are the pages of chunk i,
 * and the chunks in place are always a prefix: 0 to nr - 1. Slots are
 * handed out below nr << shift only (the backing store's limit).
 *
 * A worker keeps one chunk spare ahead of what the slots in use need,
 * none once nothing is in use: it adds a chunk when the store runs short
 * (an allocation tells it, and never waits for it: pages that find no
 * slot stay where they are), and releases the top chunk when the chunks
 * below hold all that is in use and a spare. A chunk is released by
 * lowering the limit below it, under the allocator's lock and only if no
 * slot in it is in use; then its map is taken out, the I/O that may
 * still have looked it up is waited for (gs_extents_remove()), and the
 * file is unmapped and closed, which gives its blocks back. Backing
 * compaction (moving slots down) empties the top chunks, so the store
 * shrinks to what it holds.
 *
 * What stops growth for a while (GS_CHUNK_RETRY): a full filesystem, a
 * frozen one (not waited for), any other error; the store keeps what it
 * has, and writeback takes no more pages than fit.
 */
#define pr_fmt(fmt) "ghostswap: " fmt

#include <linux/blkdev.h>
#include <linux/cred.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mount.h>
#include <linux/namei.h>
#include <linux/slab.h>
#include <linux/statfs.h>
#include <linux/workqueue.h>

#include "gs_backing.h"
#include "gs_chunk.h"
#include "gs_chunks.h"
#include "gs_compat.h"
#include "gs_extent.h"

#define GS_CHUNK_RETRY		(10 * HZ)
/* A spare chunk is kept this long after the last allocation. */
#define GS_CHUNK_IDLE		(5 * HZ)
/* How often the worker looks for a chunk to release, while there are any. */
#define GS_CHUNK_CHECK		HZ

struct gs_chunks {
	struct gs_extents ex;		/* a map per chunk in place */
	struct gs_backing *bk;
	struct path dir;
	const struct cred *cred;	/* of who attached the directory */
	/* Serialises adding and releasing chunks, and @nr. */
	struct mutex lock;
	unsigned long nr;		/* chunks in place */
	unsigned long max;		/* and at most */
	struct delayed_work work;
	unsigned long retry_at;		/* jiffies: no growth before */
	unsigned long active_at;	/* jiffies: last allocation */
	unsigned long compact_at;	/* jiffies: no compaction asked before */
	bool stopped;			/* by gs_chunks_stop(), under @lock */
};

/* Pages in a chunk of @cs. */
static u64 gs_chunk_pages(const struct gs_chunks *cs)
{
	return BIT_ULL(cs->ex.shift);
}

/*
 * Chunks to keep: what the slots in use need, and one spare while slots
 * are being handed out (any allocation within GS_CHUNK_IDLE).
 */
static unsigned long gs_chunks_wanted(struct gs_chunks *cs)
{
	/* A hint: the chunk to release is checked under the lock. */
	u64 used = data_race(READ_ONCE(cs->bk->used));
	unsigned long want = DIV_ROUND_UP_ULL(used, gs_chunk_pages(cs));

	if (time_before(jiffies, READ_ONCE(cs->active_at) + GS_CHUNK_IDLE))
		want++;
	return min(want, cs->max);
}

/* Add chunk cs->nr: 0, or why not. cs->lock held. */
static int gs_chunks_add(struct gs_chunks *cs)
{
	struct super_block *sb = cs->dir.mnt->mnt_sb;
	struct gs_extent_map *map;
	struct file *file;
	int ret;

	/*
	 * Frozen: try again later rather than wait for the thaw. (A freeze
	 * that starts right after this check is waited for.)
	 */
	if (READ_ONCE(sb->s_writers.frozen) != SB_UNFROZEN)
		return -EAGAIN;
	ret = mnt_want_write(cs->dir.mnt);
	if (ret)
		return ret;
	file = kernel_tmpfile_open(mnt_idmap(cs->dir.mnt), &cs->dir,
				   S_IFREG | 0600, O_RDWR | O_LARGEFILE,
				   cs->cred);
	mnt_drop_write(cs->dir.mnt);	/* the open file holds its own */
	if (IS_ERR(file))
		return PTR_ERR(file);
	ret = vfs_fallocate(file, 0, 0,
			    (loff_t)gs_chunk_pages(cs) << PAGE_SHIFT);
	if (ret)
		goto out_put;
	map = gs_chunk_map(file, gs_chunk_pages(cs));
	if (IS_ERR(map)) {
		ret = PTR_ERR(map);
		goto out_put;
	}
	/*
	 * Every page of a chunk whole on the disk, and every chunk on one
	 * device: the first one's (btrfs has no s_bdev to compare with).
	 */
	ret = -EINVAL;
	if (!cs->ex.bdev)
		cs->ex.bdev = map->bdev;
	if (map->nr_pages < gs_chunk_pages(cs) || map->bdev != cs->ex.bdev)
		goto out_unmap;
	ret = xa_err(xa_store(&cs->ex.maps, cs->nr, map, GFP_KERNEL));
	if (ret)
		goto out_unmap;
	cs->nr++;
	if (cs->bk) {	/* else gs_chunks_open() counts it */
		WRITE_ONCE(cs->bk->map_bytes, cs->bk->map_bytes +
			   gs_extent_map_bytes(map));
		gs_backing_set_limit(cs->bk, (u64)cs->nr << cs->ex.shift);
	}
	fput(file);
	return 0;

out_unmap:
	gs_chunk_unmap(map);
out_put:
	fput(file);
	return ret;
}

/* Release the top chunk if no slot in it is in use. cs->lock held. */
static bool gs_chunks_release_top(struct gs_chunks *cs)
{
	unsigned long i = cs->nr - 1;
	struct gs_extent_map *map;

	if (!gs_backing_lower_limit(cs->bk, (u64)i << cs->ex.shift))
		return false;
	cs->nr--;
	/* Once the I/O that looked the map up before is done with it. */
	map = gs_extents_remove(&cs->ex, i);
	WRITE_ONCE(cs->bk->map_bytes, cs->bk->map_bytes -
		   gs_extent_map_bytes(map));
	gs_chunk_unmap(map);
	return true;
}

static void gs_chunks_work(struct work_struct *work)
{
	struct gs_chunks *cs = container_of(to_delayed_work(work),
					    struct gs_chunks, work);
	unsigned long want;
	int ret;

	mutex_lock(&cs->lock);
	if (cs->stopped) {
		mutex_unlock(&cs->lock);
		return;
	}
	want = gs_chunks_wanted(cs);
	while (cs->nr < want && time_after_eq(jiffies, cs->retry_at)) {
		ret = gs_chunks_add(cs);
		if (!ret) {
			WRITE_ONCE(cs->bk->grow_err, 0);
			continue;
		}
		/* Logged once for each new reason (bk->grow_err: the last). */
		if (ret != cs->bk->grow_err)
			pr_warn("backing directory: cannot add a chunk: %d (%s); writeback takes no more pages than fit until it can\n",
				ret, ret == -ENOSPC ? "the filesystem is full" :
				ret == -EAGAIN ? "the filesystem is frozen" :
				"see the filesystem's messages");
		WRITE_ONCE(cs->bk->grow_err, ret);
		atomic_long_inc(&cs->bk->grow_errors);
		/* A frozen filesystem thaws soon: try again sooner. */
		cs->retry_at = jiffies + (ret == -EAGAIN ? GS_CHUNK_CHECK :
					  GS_CHUNK_RETRY);
	}
	while (cs->nr > want && gs_chunks_release_top(cs))
		;
	/*
	 * More chunks than wanted, the top one still in use: the slots in
	 * use are spread out. Backing compaction moves them down (asked for
	 * once a GS_CHUNK_RETRY at most), and the emptied chunks go on a
	 * later round.
	 */
	if (cs->nr > want && time_after_eq(jiffies, cs->compact_at)) {
		cs->compact_at = jiffies + GS_CHUNK_RETRY;
		gs_backing_sparse(cs->bk);
	}
	if (cs->nr || cs->nr < want)
		queue_delayed_work(system_dfl_wq, &cs->work,
				   cs->nr < want ?
				   max_t(long, cs->retry_at - jiffies, 1) :
				   GS_CHUNK_CHECK);
	mutex_unlock(&cs->lock);
}

/*
 * After an allocation: slots are in demand; if less than a chunk is left
 * below the limit, grow, without waiting.
 */
static void gs_chunks_short(struct gs_extents *ex)
{
	struct gs_chunks *cs = container_of(ex, struct gs_chunks, ex);
	struct gs_backing *bk = cs->bk;
	unsigned long now;

	if (!bk || READ_ONCE(cs->stopped))
		return;
	/* Written once a tick at most: no cache line bounced per call. */
	now = jiffies;
	if (READ_ONCE(cs->active_at) != now)
		WRITE_ONCE(cs->active_at, now);
	/* A hint: a spurious or missed wake-up costs a chunk's delay. */
	if (data_race(READ_ONCE(bk->used)) + gs_chunk_pages(cs) >
	    READ_ONCE(bk->limit))
		mod_delayed_work(system_dfl_wq, &cs->work, 0);
}

/* No growth, release or compaction from now on. */
static void gs_chunks_stop(struct gs_extents *ex)
{
	struct gs_chunks *cs = container_of(ex, struct gs_chunks, ex);

	mutex_lock(&cs->lock);
	WRITE_ONCE(cs->stopped, true);
	mutex_unlock(&cs->lock);
	/* A wake-up that read @stopped before still finds it set. */
	cancel_delayed_work_sync(&cs->work);
}

static void gs_chunks_release(struct gs_extents *ex)
{
	struct gs_chunks *cs = container_of(ex, struct gs_chunks, ex);

	cancel_delayed_work_sync(&cs->work);
	gs_extents_unmap_all(ex);
	path_put(&cs->dir);
	put_cred(cs->cred);
	kfree(cs);
}

struct gs_backing *gs_chunks_open(const char *path, unsigned int shift)
{
	struct gs_backing *bk;
	struct gs_chunks *cs;
	struct kstatfs st;
	int ret;

	cs = kzalloc_obj(*cs);
	if (!cs)
		return ERR_PTR(-ENOMEM);
	cs->ex.shift = shift;
	ret = kern_path(path, LOOKUP_FOLLOW | LOOKUP_DIRECTORY, &cs->dir);
	if (ret == -ENOTDIR)
		ret = -ENOTBLK;	/* neither a device, nor a file, nor this */
	if (ret)
		goto out_free;
	ret = -EOPNOTSUPP;
	if (!(cs->dir.mnt->mnt_sb->s_type->fs_flags & FS_REQUIRES_DEV))
		goto out_path;
	ret = vfs_statfs(&cs->dir, &st);
	if (ret)
		goto out_path;
	/* As many chunks as the filesystem could ever hold. */
	cs->max = div64_u64((u64)st.f_blocks * st.f_bsize,
			    (u64)gs_chunk_pages(cs) << PAGE_SHIFT);
	ret = -ENOSPC;
	if (!cs->max)
		goto out_path;
	cs->cred = get_current_cred();
	cs->active_at = jiffies;
	mutex_init(&cs->lock);
	INIT_DELAYED_WORK(&cs->work, gs_chunks_work);
	xa_init(&cs->ex.maps);
	cs->ex.dynamic = true;
	cs->ex.bdev = cs->dir.mnt->mnt_sb->s_bdev;
	cs->ex.release = gs_chunks_release;
	cs->ex.short_of_slots = gs_chunks_short;
	cs->ex.stop = gs_chunks_stop;

	/*
	 * The first chunk now, so that a directory that cannot hold one is
	 * refused at once. It is released again if nothing comes to it.
	 */
	mutex_lock(&cs->lock);
	ret = gs_chunks_add(cs);
	mutex_unlock(&cs->lock);
	if (ret) {
		pr_err("backing_dev: cannot add a chunk file in %s: %d\n",
		       path, ret);
		cs->ex.release(&cs->ex);
		return ERR_PTR(ret);
	}
	bk = gs_extents_backing(&cs->ex, (u64)cs->max << cs->ex.shift);
	if (IS_ERR(bk))
		return bk;
	cs->bk = bk;
	gs_backing_set_limit(bk, (u64)cs->nr << cs->ex.shift);
	bk->path = kstrdup(path, GFP_KERNEL);
	if (!bk->path) {
		gs_backing_destroy(bk);
		return ERR_PTR(-ENOMEM);
	}
	queue_delayed_work(system_dfl_wq, &cs->work, GS_CHUNK_CHECK);
	pr_info("backing directory %s: chunks of %lu MiB, at most %lu\n",
		path, (unsigned long)(gs_chunk_pages(cs) >> (20 - PAGE_SHIFT)),
		cs->max);
	return bk;

out_path:
	path_put(&cs->dir);
out_free:
	kfree(cs);
	return ERR_PTR(ret);
}
