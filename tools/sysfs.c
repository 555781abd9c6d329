// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswapctl: sysfs access. Every sysfs and debugfs path is taken under
 * the root in sysroot ($GHOSTSWAP_SYSFS, default /sys). Reads and writes
 * of files and of the device's attributes, the stat files, and the one-line
 * explanation of a failed read or write with its exit code.
 */
#include "ghostswapctl.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char sysroot[PATH_MAX] = "/sys";
bool sysfs_overridden;

void sys_path(char *buf, size_t n, const char *rel)
{
	bfmt(buf, n, "%s/%s", sysroot, rel);
}

static void attr_rel(char *buf, size_t n, const char *attr)
{
	bfmt(buf, n, DEV_SYS "/%s", attr);
}

bool sys_exists(const char *rel)
{
	char p[PATH_MAX];
	struct stat st;

	sys_path(p, sizeof(p), rel);
	return stat(p, &st) == 0;
}

bool attr_exists(const char *attr)
{
	char rel[PATH_MAX];

	attr_rel(rel, sizeof(rel), attr);
	return sys_exists(rel);
}

bool dev_present(void)
{
	char p[PATH_MAX];
	struct stat st;

	sys_path(p, sizeof(p), DEV_SYS);
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Reads a whole (small) file into @buf, trimmed. 0 or -errno. */
static int read_path(const char *path, char *buf, size_t n)
{
	size_t got = 0;
	ssize_t r;
	char *t;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (got < n - 1) {
		r = read(fd, buf + got, n - 1 - got);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			close(fd);
			return (int)r;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	buf[got] = '\0';
	t = trim(buf);
	memmove(buf, t, strlen(t) + 1);
	return 0;
}

int read_sys(const char *rel, char *buf, size_t n)
{
	char p[PATH_MAX];

	sys_path(p, sizeof(p), rel);
	return read_path(p, buf, n);
}

int read_attr(const char *attr, char *buf, size_t n)
{
	char rel[PATH_MAX];

	attr_rel(rel, sizeof(rel), attr);
	return read_sys(rel, buf, n);
}

/* The failures many places report; each returns its exit code. */
int fail_not_loaded(void)
{
	return fail(RC_NODEV, "ghostswap module not loaded (no %s/%s)",
		    sysroot, DEV_SYS);
}

static int fail_no_attribute(const char *attr)
{
	return fail(RC_NODEV, "this ghostswap module has no '%s' attribute (an older version?)",
		    attr);
}

int fail_in_use(void)
{
	return fail(RC_BUSY, "device is in use: swapoff and reset first ('%s reset')",
		    PROG);
}

/* Explains a failed read of a device attribute; returns the exit code. */
int read_failed(const char *attr, int err)
{
	if (err == -ENOENT && !dev_present())
		return fail_not_loaded();
	if (err == -ENOENT)
		return fail_no_attribute(attr);
	if (err == -EACCES || err == -EPERM)
		return fail(RC_FAIL, "permission denied reading %s/%s/%s (run as root)",
			    sysroot, DEV_SYS, attr);
	return fail(RC_FAIL, "cannot read %s/%s/%s: %s", sysroot, DEV_SYS,
		    attr, strerror(-err));
}

/* One write() of "@val\n" to @rel under the sysfs root. 0 or -errno. */
int write_sys(const char *rel, const char *val)
{
	char p[PATH_MAX], *buf;
	size_t len = strlen(val);
	ssize_t r;
	int fd, ret = 0;

	trace("write %s %s", rel, val);
	sys_path(p, sizeof(p), rel);
	fd = open(p, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	buf = malloc(len + 2);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	memcpy(buf, val, len);
	buf[len] = '\n';
	do {
		r = write(fd, buf, len + 1);
	} while (r < 0 && errno == EINTR);
	if (r < 0)
		ret = -errno;
	else if ((size_t)r != len + 1)
		ret = -EIO;
	free(buf);
	if (close(fd) && !ret)
		ret = -errno;
	return ret;
}

int write_attr(const char *attr, const char *val)
{
	char rel[PATH_MAX];

	attr_rel(rel, sizeof(rel), attr);
	return write_sys(rel, val);
}

/* The algorithms comp_algorithm offers, without the brackets. */
static void available_algorithms(char *buf, size_t n)
{
	char *p, *q;

	if (read_attr("comp_algorithm", buf, n)) {
		bfmt(buf, n, "(unknown)");
		return;
	}
	for (p = q = buf; *p; p++)
		if (*p != '[' && *p != ']')
			*q++ = *p;
	*q = '\0';
}

/*
 * Explains a failed write of @val to device attribute @attr, in one line;
 * returns the exit code.
 */
int write_failed(const char *attr, const char *val, int err)
{
	char algs[512];

	switch (err) {
	case -ENOENT:
		if (!dev_present())
			return fail_not_loaded();
		if (!attr_exists(attr))
			return fail_no_attribute(attr);
		if (!strcmp(attr, "backing_dev"))
			return fail(RC_FAIL, "no such device '%s'", val);
		return fail(RC_FAIL, "cannot write '%s' to %s/%s/%s: %s", val,
			    sysroot, DEV_SYS, attr, strerror(-err));
	case -EACCES:
	case -EPERM:
		return fail(RC_FAIL, "permission denied writing %s/%s/%s (run as root)",
			    sysroot, DEV_SYS, attr);
	case -EBUSY:
		if (!strcmp(attr, "reset"))
			return fail(RC_BUSY, "device is in use: another process holds %s open",
				    DEV_PATH);
		if (!strcmp(attr, "backing_dev"))
			return fail(RC_BUSY, "cannot set backing device '%s': busy (the device must be unused and empty: swapoff and reset first; '%s' must not be mounted or in use)",
				    val, val);
		if (!strcmp(attr, "multi_page"))
			return fail(RC_BUSY, "cannot set multi_page to %s: the device must hold no data and not be open (swapoff and reset first: '%s reset')",
				    val, PROG);
		return fail_in_use();
	case -EINVAL:
		if (!strcmp(attr, "comp_algorithm")) {
			available_algorithms(algs, sizeof(algs));
			return fail(RC_FAIL, "no such algorithm '%s' (available: %s)",
				    val, algs);
		}
		if (!strcmp(attr, "disksize") || !strcmp(attr, "mem_limit"))
			return fail(RC_FAIL, "bad size '%s' for %s (the module refused it)",
				    val, attr);
		if (!strcmp(attr, "backing_dev"))
			return fail(RC_FAIL, "'%s' cannot be a backing device (empty, smaller than a page, or ghostswap itself)",
				    val);
		if (!strcmp(attr, "multi_page"))
			return fail(RC_FAIL, "multi_page: the module refused '%s' (want 0, 4, 8 or 16)",
				    val);
		return fail(RC_FAIL, "%s: the module refused '%s' (invalid argument)",
			    attr, val);
	case -ENOTBLK:
		return fail(RC_FAIL, "'%s' is neither a block device, a regular file nor a directory", val);
	case -EOPNOTSUPP:
		if (!strcmp(attr, "backing_dev"))
			return fail(RC_FAIL, "'%s': its filesystem cannot map it as it maps a swap file (no block device under it, as NFS or tmpfs, or no swap support); with backing_discard on it goes on a loop device instead",
				    val);
		return fail(RC_FAIL, "cannot write '%s' to %s/%s/%s: %s", val,
			    sysroot, DEV_SYS, attr, strerror(-err));
	case -ENODEV:
		if (!strcmp(attr, "backing_dev"))
			return fail(RC_FAIL, "no such device '%s'", val);
		return fail(RC_FAIL, "no backing device: set one first ('%s setup --backing-dev DEV')",
			    PROG);
	case -ENOSPC:
		return fail(RC_FAIL, "backing device full: no free slot left for writeback");
	case -EIO:
		if (!strncmp(attr, "writeback", 9))
			return fail(RC_FAIL, "writeback stopped: write errors on the backing device or writeback limit reached (see bd_stat, writeback_limit, dmesg)");
		return fail(RC_FAIL, "%s: I/O error", attr);
	case -ENOMEM:
		return fail(RC_FAIL, "%s: out of memory", attr);
	case -EISDIR:
		return fail(RC_FAIL, "cannot write %s/%s/%s: is a directory",
			    sysroot, DEV_SYS, attr);
	default:
		return fail(RC_FAIL, "cannot write '%s' to %s/%s/%s: %s", val,
			    sysroot, DEV_SYS, attr, strerror(-err));
	}
}

/* write_attr() with a failure explained: the exit code. */
int write_attr_checked(const char *attr, const char *val)
{
	int ret = write_attr(attr, val);

	return ret ? write_failed(attr, val, ret) : RC_OK;
}

/*
 * Reads at least @min numbers of a stat file into @v (at most @max; extra
 * columns are ignored, missing ones are 0). Column @text (or -1) is kept
 * as text in @txt instead. 0, -errno, or -EPROTO on a malformed file.
 */
int read_stat(const char *attr, uint64_t *v, int min, int max,
		     int text, char *txt, size_t txtlen)
{
	char buf[1024], *tok, *save = NULL, *end;
	int i, ret;

	ret = read_attr(attr, buf, sizeof(buf));
	if (ret)
		return ret;
	memset(v, 0, sizeof(*v) * (size_t)max);
	for (i = 0, tok = strtok_r(buf, " \t\n", &save); tok && i < max;
	     i++, tok = strtok_r(NULL, " \t\n", &save)) {
		if (i == text) {
			bfmt(txt, txtlen, "%s", tok);
			continue;
		}
		errno = 0;
		v[i] = strtoull(tok, &end, 10);
		if (errno || *end || !isdigit((unsigned char)*tok))
			return -EPROTO;
	}
	return i < min ? -EPROTO : 0;
}

/* mm_stat: every column. */
int read_mm_stat(uint64_t mm[MM_STAT_COLS])
{
	return read_stat("mm_stat", mm, MM_STAT_COLS, MM_STAT_COLS, -1, NULL, 0);
}

/* bd_stat: one column at least; the missing ones read as 0. */
int read_bd_stat(uint64_t bd[BD_STAT_COLS])
{
	return read_stat("bd_stat", bd, 1, BD_STAT_COLS, -1, NULL, 0);
}

int stat_failed(const char *attr, int err)
{
	if (err == -EPROTO)
		return fail(RC_FAIL, "unexpected contents in %s/%s/%s",
			    sysroot, DEV_SYS, attr);
	return read_failed(attr, err);
}
