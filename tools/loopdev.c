// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswapctl: a regular file as the backing device. setup creates it
 * (backing_size, allocated with posix_fallocate() so that writeback
 * never meets a full filesystem; or sparse, for backing_discard, so that
 * it takes only the blocks of what is written back). An allocated file
 * goes to the module as it is: the module maps it once, as swapon maps a
 * swap file, and writes to its disk (prepare_backing_file()). A sparse
 * one, or one on a filesystem that cannot be mapped so (NFS), is
 * attached to a free loop device
 * with direct I/O (no second copy in the page cache) and autoclear: the
 * kernel detaches the loop device by itself when its last user closes
 * it, which is the module letting go of its backing device at reset.
 * So nothing needs tearing down by hand, and nothing is left attached
 * after a failed setup. The file stays, for the next boot.
 */
#include "ghostswapctl.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <linux/loop.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

/* Whether @path is a block device (following links). */
bool is_block_device(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISBLK(st.st_mode);
}

/*
 * A file the module is to map must not be copy-on-write where its
 * filesystem would make it so (btrfs: as a swap file there). The flag
 * takes only while the file is empty; a filesystem without it (ext4,
 * xfs) refuses it, which is as good.
 */
static void set_nocow(int fd)
{
	int flags;

	if (ioctl(fd, FS_IOC_GETFLAGS, &flags))
		return;
	flags |= FS_NOCOW_FL;
	if (ioctl(fd, FS_IOC_SETFLAGS, &flags))
		trace("no copy-on-write flag here: %s", strerror(errno));
}

/*
 * The file, created at @size bytes if missing (0: it must exist):
 * allocated, or @sparse.
 */
static int open_backing_file(const char *path, uint64_t size, bool sparse)
{
	struct stat st;
	int fd, ret;

	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
			close(fd);
			return -fail(RC_USAGE, "backing_dev %s: neither a block device, a regular file nor a directory",
				     path);
		}
		return fd;
	}
	if (errno != ENOENT)
		return -fail(RC_FAIL, "backing_dev %s: %s", path, strerror(errno));
	if (!size)
		return -fail(RC_USAGE, "backing_dev %s does not exist: set backing_size to create it",
			     path);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -fail(RC_FAIL, "cannot create %s: %s", path, strerror(errno));
	if (sparse) {
		ret = ftruncate(fd, (off_t)size) ? errno : 0;
	} else {
		set_nocow(fd);
		ret = posix_fallocate(fd, 0, (off_t)size);
	}
	if (ret) {
		close(fd);
		unlink(path);
		return -fail(RC_FAIL, "cannot allocate %" PRIu64 " bytes for %s: %s",
			     size, path, strerror(ret));
	}
	printf("%s: created, %" PRIu64 " bytes%s\n", path, size,
	       sparse ? ", sparse" : "");
	return fd;
}

/*
 * The file for the module to map itself (backing_discard off): created
 * at @size, allocated, if missing. Returns an exit code.
 */
int prepare_backing_file(const char *path, uint64_t size)
{
	int fd;

	trace("run use %s as it is, mapped by the module", path);
	if (dryrun) {
		printf("dry run: %s mapped by the module (created at %" PRIu64 " bytes if missing)\n",
		       path, size);
		return RC_OK;
	}
	fd = open_backing_file(path, size, false);
	if (fd < 0)
		return -fd;
	close(fd);
	return RC_OK;
}

/*
 * Attaches @path (created at @size if missing, allocated or @sparse) to a
 * free loop device:
 * its path in @loop, and an open descriptor of it in *@loopfd that the
 * caller keeps until the module holds the device (autoclear would
 * detach it at the last close). Returns an exit code.
 */
int attach_backing_file(const char *path, uint64_t size, bool sparse,
			char *loop, size_t n, int *loopfd)
{
	struct loop_config cfg;
	int ctl, nr, fd, lfd, tries;

	trace("run attach %s to a loop device (direct I/O, autoclear)", path);
	if (dryrun) {
		printf("dry run: attach %s to a loop device (direct I/O, autoclear)\n",
		       path);
		bfmt(loop, n, "/dev/loop-of-%s", path);
		*loopfd = -1;
		return RC_OK;
	}
	fd = open_backing_file(path, size, sparse);
	if (fd < 0)
		return -fd;
	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0) {
		close(fd);
		return fail(RC_FAIL, "/dev/loop-control: %s (is the loop module loaded?)",
			    strerror(errno));
	}
	/* Another process may take the free device first: take the next. */
	for (tries = 0; tries < 16; tries++) {
		nr = ioctl(ctl, LOOP_CTL_GET_FREE);
		if (nr < 0)
			break;
		bfmt(loop, n, "/dev/loop%d", nr);
		lfd = open(loop, O_RDWR | O_CLOEXEC);
		if (lfd < 0)
			break;
		memset(&cfg, 0, sizeof(cfg));
		cfg.fd = (uint32_t)fd;
		cfg.block_size = (uint32_t)PAGE_BYTES;
		cfg.info.lo_flags = LO_FLAGS_AUTOCLEAR | LO_FLAGS_DIRECT_IO;
		bfmt((char *)cfg.info.lo_file_name, sizeof(cfg.info.lo_file_name),
		     "%s", path);
		if (!ioctl(lfd, LOOP_CONFIGURE, &cfg)) {
			close(ctl);
			close(fd);
			*loopfd = lfd;
			return RC_OK;
		}
		close(lfd);
		if (errno != EBUSY)
			break;
	}
	fail(RC_FAIL, "cannot attach %s to a loop device: %s", path,
	     strerror(errno));
	close(ctl);
	close(fd);
	return RC_FAIL;
}

/*
 * Whether the loop device @dev is attached to the file @path (its
 * backing_file in sysfs), so that setup leaves it in place.
 */
bool loop_backs_file(const char *dev, const char *path)
{
	char rel[PATH_MAX], cur[PATH_MAX], *real;
	const char *name = strrchr(dev, '/');
	bool same;

	if (!name || strncmp(name + 1, "loop", 4))
		return false;
	bfmt(rel, sizeof(rel), "block/%s/loop/backing_file", name + 1);
	if (read_sys(rel, cur, sizeof(cur)))
		return false;
	real = realpath(path, NULL);
	same = real && !strcmp(real, cur);
	free(real);
	return same;
}
