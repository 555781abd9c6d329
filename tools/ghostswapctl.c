// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswapctl: set up, inspect and maintain /dev/ghostswap, the ghostswap
 * compressed swap device. Modelled on util-linux zramctl.
 *
 * Every sysfs and debugfs path is taken under $GHOSTSWAP_SYSFS (default
 * /sys) and /proc/swaps under $GHOSTSWAP_PROC (default /proc), so the tool
 * can run against a fake tree. Commands it runs (modprobe, udevadm,
 * mkswap, swapon, swapoff, mount) are only printed, not run, when
 * GHOSTSWAP_DRYRUN=1, and by default when GHOSTSWAP_SYSFS is set.
 * GHOSTSWAP_TRACE=FILE appends each sysfs write and each command to FILE.
 *
 * C11 and POSIX (XSI) libc only.
 */
#define _XOPEN_SOURCE 700

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef GS_VERSION
#define GS_VERSION "0.1.0"
#endif

#define DEV_PATH	"/dev/ghostswap"
#define DEV_SYS		"block/ghostswap"
#define DEBUG_DIR	"kernel/debug"
#define CHECK_FILE	"kernel/debug/ghostswap/check"
#define ZSWAP_ENABLED	"module/zswap/parameters/enabled"
#define PAGE_BYTES	4096ULL
#define MIN_SIZE	(1ULL << 20)
#define MAX_SIZE	(0xffffffffULL * PAGE_BYTES)	/* 16 TiB - 4 KiB */
#define DEFAULT_PRIO	100
#define DEFAULT_PRIO_S	"100"
#define PROG		"ghostswapctl"
#define DEBUGFS_MAGIC	0x64626720

/* Exit codes (documented in --help and ghostswapctl(8)). */
enum {
	RC_OK = 0,
	RC_FAIL = 1,		/* the operation failed */
	RC_USAGE = 2,		/* bad command line or configuration file */
	RC_NODEV = 3,		/* module, device or attribute not present */
	RC_BUSY = 4,		/* device busy */
};

static const char *prog = PROG;
static char sysroot[PATH_MAX] = "/sys";
static char procroot[PATH_MAX] = "/proc";
static bool sysfs_overridden;
static bool dryrun;
static const char *trace_path;

/* ------------------------------------------------------------ messages */

/*
 * snprintf() that may truncate: paths are bounded by PATH_MAX, texts by
 * their buffers, and a truncated one simply fails later.
 */
__attribute__((format(printf, 3, 4)))
static int bfmt(char *buf, size_t n, const char *format, ...)
{
	va_list ap;
	int ret;

	va_start(ap, format);
	ret = vsnprintf(buf, n, format, ap);
	va_end(ap);
	return ret;
}

static void vmsg(const char *prefix, const char *fmt, va_list ap)
{
	fflush(stdout);
	fprintf(stderr, "%s: %s", prog, prefix);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

/* Prints "ghostswapctl: MESSAGE" and returns @rc, for "return fail(...)". */
static int fail(int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
	return rc;
}

static void warning(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("warning: ", fmt, ap);
	va_end(ap);
}

static void trace(const char *fmt, ...)
{
	va_list ap;
	FILE *f;

	if (!trace_path)
		return;
	f = fopen(trace_path, "a");
	if (!f)
		return;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fclose(f);
}

/* --------------------------------------------------------------- paths */

static void sys_path(char *buf, size_t n, const char *rel)
{
	bfmt(buf, n, "%s/%s", sysroot, rel);
}

static void attr_rel(char *buf, size_t n, const char *attr)
{
	bfmt(buf, n, DEV_SYS "/%s", attr);
}

static bool sys_exists(const char *rel)
{
	char p[PATH_MAX];
	struct stat st;

	sys_path(p, sizeof(p), rel);
	return stat(p, &st) == 0;
}

static bool attr_exists(const char *attr)
{
	char rel[PATH_MAX];

	attr_rel(rel, sizeof(rel), attr);
	return sys_exists(rel);
}

static bool dev_present(void)
{
	char p[PATH_MAX];
	struct stat st;

	sys_path(p, sizeof(p), DEV_SYS);
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* ------------------------------------------------------- reading files */

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
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

static int read_sys(const char *rel, char *buf, size_t n)
{
	char p[PATH_MAX];

	sys_path(p, sizeof(p), rel);
	return read_path(p, buf, n);
}

static int read_attr(const char *attr, char *buf, size_t n)
{
	char rel[PATH_MAX];

	attr_rel(rel, sizeof(rel), attr);
	return read_sys(rel, buf, n);
}

/* The failures many places report; each returns its exit code. */
static int fail_not_loaded(void)
{
	return fail(RC_NODEV, "ghostswap module not loaded (no %s/%s)",
		    sysroot, DEV_SYS);
}

static int fail_no_attribute(const char *attr)
{
	return fail(RC_NODEV, "this ghostswap module has no '%s' attribute (an older version?)",
		    attr);
}

static int fail_in_use(void)
{
	return fail(RC_BUSY, "device is in use: swapoff and reset first ('%s reset')",
		    prog);
}

/* Explains a failed read of a device attribute; returns the exit code. */
static int read_failed(const char *attr, int err)
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

/* ------------------------------------------------------- writing sysfs */

/* One write() of "@val\n" to @rel under the sysfs root. 0 or -errno. */
static int write_sys(const char *rel, const char *val)
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

static int write_attr(const char *attr, const char *val)
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
static int write_failed(const char *attr, const char *val, int err)
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
		return fail(RC_FAIL, "%s: the module refused '%s' (invalid argument)",
			    attr, val);
	case -ENOTBLK:
		return fail(RC_FAIL, "'%s' is not a block device", val);
	case -ENODEV:
		if (!strcmp(attr, "backing_dev"))
			return fail(RC_FAIL, "no such device '%s'", val);
		return fail(RC_FAIL, "no backing device: set one first ('%s setup --backing-dev DEV')",
			    prog);
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
static int write_attr_checked(const char *attr, const char *val)
{
	int ret = write_attr(attr, val);

	return ret ? write_failed(attr, val, ret) : RC_OK;
}

/* ------------------------------------------------------------ commands */

/* Full path of @cmd in $PATH (plus the sbin directories), or false. */
static bool find_program(const char *cmd, char *out, size_t n)
{
	const char *env = getenv("PATH");
	char path[PATH_MAX * 2], *dir, *save = NULL;

	bfmt(path, sizeof(path), "%s:/usr/sbin:/sbin:/usr/bin:/bin",
		 env && *env ? env : "");
	for (dir = strtok_r(path, ":", &save); dir;
	     dir = strtok_r(NULL, ":", &save)) {
		if (!*dir)
			continue;
		bfmt(out, n, "%s/%s", dir, cmd);
		if (access(out, X_OK) == 0)
			return true;
	}
	return false;
}

static void join_argv(char *const argv[], char *buf, size_t n)
{
	size_t used = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; argv[i] && used < n; i++)
		used += (size_t)bfmt(buf + used, n - used, "%s%s",
					 i ? " " : "", argv[i]);
}

/*
 * Runs argv (NULL terminated), stdout to /dev/null if @quiet. Returns
 * its exit status, 127 if it could not be run. Dry run: prints it.
 */
static int run_program(bool quiet, char *const argv[])
{
	char line[1024], path[PATH_MAX];
	int status, fd;
	pid_t pid;

	join_argv(argv, line, sizeof(line));
	trace("run %s", line);
	if (dryrun) {
		printf("dry run: %s\n", line);
		return 0;
	}
	if (!find_program(argv[0], path, sizeof(path))) {
		fail(RC_FAIL, "%s: command not found", argv[0]);
		return 127;
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		fail(RC_FAIL, "fork: %s", strerror(errno));
		return 127;
	}
	if (pid == 0) {
		if (quiet) {
			fd = open("/dev/null", O_WRONLY);
			if (fd >= 0)
				dup2(fd, STDOUT_FILENO);
		}
		execv(path, argv);
		fprintf(stderr, "%s: cannot run %s: %s\n", prog, path,
			strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 127;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

#define RUN(quiet, ...) run_program(quiet, (char *const[]){ __VA_ARGS__, NULL })

/* Waits for udev to finish with the device (its probe holds it open). */
static void udev_settle(void)
{
	char path[PATH_MAX];

	if (dryrun || find_program("udevadm", path, sizeof(path)))
		RUN(false, "udevadm", "settle");
}

/* ----------------------------------------------------------- /proc/swaps */

/* /proc/swaps escapes blanks and backslashes as \ooo. */
static void unescape(char *s)
{
	char *d = s;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 +
				      (s[3] - '0'));
			s += 4;
		} else {
			*d++ = *s++;
		}
	}
	*d = '\0';
}

/* Is @file our device: by name, or by device number. */
static bool is_our_dev(const char *file)
{
	char buf[64];
	unsigned int maj, min;
	struct stat st;

	if (!strcmp(file, DEV_PATH))
		return true;
	if (stat(file, &st) || !S_ISBLK(st.st_mode))
		return false;
	if (read_attr("dev", buf, sizeof(buf)) ||
	    sscanf(buf, "%u:%u", &maj, &min) != 2)
		return false;
	return major(st.st_rdev) == maj && minor(st.st_rdev) == min;
}

/* Whether the device is swapped on; its priority in *@prio. */
static bool swapped_on(long *prio)
{
	char p[PATH_MAX], *line = NULL, file[PATH_MAX];
	size_t cap = 0;
	bool found = false;
	long pr;
	FILE *f;

	bfmt(p, sizeof(p), "%s/swaps", procroot);
	f = fopen(p, "r");
	if (!f)
		return false;
	while (!found && getline(&line, &cap, f) > 0) {
		if (sscanf(line, "%4095s %*s %*s %*s %ld", file, &pr) != 2)
			continue;
		unescape(file);
		if (is_our_dev(file)) {
			found = true;
			if (prio)
				*prio = pr;
		}
	}
	free(line);
	fclose(f);
	return found;
}

/* --------------------------------------------------------------- parsing */

/*
 * The module's size syntax: decimal bytes with an optional suffix K M G
 * T P (either case, powers of 1024). *@out gets the bytes.
 */
static bool parse_bytes(const char *s, uint64_t *out)
{
	static const char suffixes[] = "KMGTP";
	char num[24], *end;
	unsigned int shift = 0;
	const char *suf;
	size_t len = strlen(s), i;
	unsigned long long v;

	if (!len || len >= sizeof(num))
		return false;
	memcpy(num, s, len + 1);
	suf = strchr(suffixes, toupper((unsigned char)num[len - 1]));
	if (suf) {
		shift = 10 * (unsigned int)(suf - suffixes + 1);
		num[--len] = '\0';
	}
	if (!len)
		return false;
	for (i = 0; i < len; i++)
		if (!isdigit((unsigned char)num[i]))
			return false;
	errno = 0;
	v = strtoull(num, &end, 10);
	if (errno || *end)
		return false;
	if (shift && v > (UINT64_MAX >> shift))
		return false;
	*out = (uint64_t)v << shift;
	return true;
}

/* A device or pool size: as the module takes it, rounded up to 4 KiB. */
static bool parse_size(const char *s, uint64_t *out)
{
	uint64_t v;

	if (!parse_bytes(s, &v) || v > UINT64_MAX - PAGE_BYTES)
		return false;
	v = (v + PAGE_BYTES - 1) & ~(PAGE_BYTES - 1);
	if (v < MIN_SIZE || v > MAX_SIZE)
		return false;
	*out = v;
	return true;
}

/* mem_limit: "0" or "none" (no limit), or a size. */
static bool parse_limit(const char *s, uint64_t *out)
{
	if (!strcmp(s, "0") || !strcasecmp(s, "none")) {
		*out = 0;
		return true;
	}
	return parse_size(s, out);
}

#define SIZE_SYNTAX "want 1M to 16T-4K: decimal bytes, optional suffix K M G T P"

/* A plain decimal count (pages, seconds). */
static bool parse_count(const char *s, uint64_t *out, uint64_t min)
{
	unsigned long long v;
	const char *c;
	char *end;

	if (!*s)
		return false;
	for (c = s; *c; c++)
		if (!isdigit((unsigned char)*c))
			return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min)
		return false;
	*out = v;
	return true;
}

static bool parse_prio(const char *s, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (!*s || errno || *end || v < -1 || v > 32767)
		return false;
	*out = v;
	return true;
}

static bool parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = { "yes", "true", "on", "1", NULL };
	static const char *const no[] = { "no", "false", "off", "0", NULL };
	int i;

	for (i = 0; yes[i]; i++)
		if (!strcasecmp(s, yes[i]))
			return *out = true, true;
	for (i = 0; no[i]; i++)
		if (!strcasecmp(s, no[i]))
			return *out = false, true;
	return false;
}

/* ---------------------------------------------------------------- sizes */

/* Human size as util-linux prints it: 1023B, 1.5K, 12.3M, 1T. */
static void human_size(uint64_t bytes, char *buf, size_t n)
{
	static const char letters[] = "BKMGTPE";
	unsigned int exp = 0, dec;
	uint64_t frac = 0;
	int len;

	while (exp < 60 && bytes >= (1ULL << (exp + 10)))
		exp += 10;
	dec = exp ? (unsigned int)(bytes >> exp) : (unsigned int)bytes;
	if (exp) {
		frac = bytes & ((1ULL << exp) - 1);
		/* Three digits after the point, rounded to one. */
		if (frac >= UINT64_MAX / 1000)
			frac = ((frac / 1024) * 1000) >> (exp - 10);
		else
			frac = (frac * 1000) >> exp;
		frac = ((frac + 50) / 100) * 10;
		if (frac == 100) {
			dec++;
			frac = 0;
		}
	}
	if (frac) {
		len = bfmt(buf, n, "%u.%02" PRIu64, dec, frac);
		if (len > 0 && (size_t)len < n && buf[len - 1] == '0')
			buf[--len] = '\0';
		bfmt(buf + len, n - (size_t)len, "%c", letters[exp / 10]);
	} else {
		bfmt(buf, n, "%u%c", dec, letters[exp / 10]);
	}
}

/* ---------------------------------------------------------- device state */

/* The columns of the stat files, and how many there are. */
enum { MM_ORIG, MM_COMPR, MM_USED, MM_LIMIT, MM_MAX, MM_SAME, MM_COMPACTED,
	MM_HUGE, MM_HUGE_SINCE, MM_STAT_COLS };
enum { CL_CLUSTERS, CL_PEAK, CL_SLOTS, CL_META, CL_META_PER_SLOT, CL_STREAM,
	CL_STAT_COLS };
enum { IO_FAILED_READS, IO_FAILED_WRITES, IO_INVALID, IO_NOTIFY_FREE,
	IO_STAT_COLS };
enum { BD_COUNT, BD_READS, BD_WRITES, BD_CLUSTERS, BD_META, BD_WERR, BD_RERR,
	BD_RELOCATED, BD_STAT_COLS };

struct dev_info {
	uint64_t disksize;
	char alg[64];
	uint64_t mm[MM_STAT_COLS];	/* mm_stat, zram's columns */
	uint64_t cl[CL_STAT_COLS];	/* cluster_stat; [4] is not a count */
	char meta_per_slot[32];
	uint64_t io[IO_STAT_COLS];	/* io_stat */
	bool has_bd;
	uint64_t bd[BD_STAT_COLS];	/* bd_stat; 0 for missing columns */
	char backing[PATH_MAX];
	bool swap;
	long prio;
};

/*
 * Reads at least @min numbers of a stat file into @v (at most @max; extra
 * columns are ignored, missing ones are 0). Column @text (or -1) is kept
 * as text in @txt instead. 0, -errno, or -EPROTO on a malformed file.
 */
static int read_stat(const char *attr, uint64_t *v, int min, int max,
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
static int read_mm_stat(uint64_t mm[MM_STAT_COLS])
{
	return read_stat("mm_stat", mm, MM_STAT_COLS, MM_STAT_COLS, -1, NULL, 0);
}

/* bd_stat: one column at least; the missing ones read as 0. */
static int read_bd_stat(uint64_t bd[BD_STAT_COLS])
{
	return read_stat("bd_stat", bd, 1, BD_STAT_COLS, -1, NULL, 0);
}

static int stat_failed(const char *attr, int err)
{
	if (err == -EPROTO)
		return fail(RC_FAIL, "unexpected contents in %s/%s/%s",
			    sysroot, DEV_SYS, attr);
	return read_failed(attr, err);
}

/* The current algorithm: the bracketed one, or the only one. */
static void current_alg(const char *list, char *out, size_t n)
{
	const char *a = strchr(list, '['), *b;

	if (a && (b = strchr(a, ']'))) {
		bfmt(out, n, "%.*s", (int)(b - a - 1), a + 1);
		return;
	}
	bfmt(out, n, "%s", list);
}

static int read_dev_info(struct dev_info *d)
{
	char buf[PATH_MAX];
	int ret;

	memset(d, 0, sizeof(*d));
	if (!dev_present())
		return fail_not_loaded();
	ret = read_attr("disksize", buf, sizeof(buf));
	if (ret)
		return read_failed("disksize", ret);
	if (!parse_count(buf, &d->disksize, 0))
		return stat_failed("disksize", -EPROTO);
	ret = read_attr("comp_algorithm", buf, sizeof(buf));
	if (ret)
		return read_failed("comp_algorithm", ret);
	current_alg(buf, d->alg, sizeof(d->alg));
	ret = read_mm_stat(d->mm);
	if (ret)
		return stat_failed("mm_stat", ret);
	ret = read_stat("cluster_stat", d->cl, CL_STAT_COLS, CL_STAT_COLS,
			CL_META_PER_SLOT, d->meta_per_slot,
			sizeof(d->meta_per_slot));
	if (ret)
		return stat_failed("cluster_stat", ret);
	/* io_stat is informative only; an unreadable one reads as zeroes. */
	if (read_stat("io_stat", d->io, IO_STAT_COLS, IO_STAT_COLS, -1, NULL, 0))
		memset(d->io, 0, sizeof(d->io));
	/* bd_stat and backing_dev: only modules with a writeback tier. */
	ret = read_bd_stat(d->bd);
	if (ret && ret != -ENOENT)
		return stat_failed("bd_stat", ret);
	d->has_bd = !ret;
	if (read_attr("backing_dev", d->backing, sizeof(d->backing)) ||
	    !d->backing[0])
		bfmt(d->backing, sizeof(d->backing), "none");
	d->prio = 0;
	d->swap = swapped_on(&d->prio);
	return RC_OK;
}

/* zswap compresses pages before any swap device sees them. */
static bool zswap_enabled(void)
{
	char buf[16];

	return !read_sys(ZSWAP_ENABLED, buf, sizeof(buf)) &&
	       (buf[0] == 'Y' || buf[0] == 'y' || buf[0] == '1');
}

static void zswap_warning(void)
{
	if (zswap_enabled())
		warning("zswap is enabled: it compresses pages before they reach %s (turn it off: '%s setup --disable-zswap' or 'echo N > /sys/module/zswap/parameters/enabled')",
		     DEV_PATH, prog);
}

/* --------------------------------------------------------------- status */

enum col_type {
	CT_STR,		/* text */
	CT_SIZE,	/* bytes: human unless --bytes; JSON number */
	CT_NUM,		/* a count */
	CT_RATIO,	/* two decimals; "-" / null without data */
	CT_PRIO,	/* swap priority; empty / null when not swap */
};

struct column {
	const char *name;
	enum col_type type;
	const char *help;
};

enum {
	COL_NAME, COL_ALGORITHM, COL_DISKSIZE, COL_DATA, COL_COMPR, COL_TOTAL,
	COL_RATIO, COL_WRITTEN, COL_CLUSTERS, COL_MOUNTPOINT,
	COL_MEM_LIMIT, COL_MEM_USED, COL_MEM_PEAK, COL_META, COL_SAME,
	COL_HUGE, COL_COMPACTED, COL_SLOTS, COL_PEAK_CLUSTERS, COL_STREAMS,
	COL_PRIORITY, COL_BACKING, COL_BD_READS, COL_BD_WRITES, COL_BD_META,
	COL_FAILED_READS, COL_FAILED_WRITES,
	NCOLS
};

static const struct column columns[NCOLS] = {
	[COL_NAME] = { "NAME", CT_STR, "device name" },
	[COL_ALGORITHM] = { "ALGORITHM", CT_STR, "compression algorithm" },
	[COL_DISKSIZE] = { "DISKSIZE", CT_SIZE, "size of the device" },
	[COL_DATA] = { "DATA", CT_SIZE, "uncompressed size of the stored data" },
	[COL_COMPR] = { "COMPR", CT_SIZE, "compressed size of the stored data" },
	[COL_TOTAL] = { "TOTAL", CT_SIZE, "all memory used: pool plus metadata" },
	[COL_RATIO] = { "RATIO", CT_RATIO, "compression ratio, DATA/COMPR" },
	[COL_WRITTEN] = { "WRITTEN", CT_SIZE, "data held on the backing device" },
	[COL_CLUSTERS] = { "CLUSTERS", CT_NUM, "clusters of 512 slots allocated" },
	[COL_MOUNTPOINT] = { "MOUNTPOINT", CT_STR, "[SWAP] if swap is on" },
	[COL_MEM_LIMIT] = { "MEM-LIMIT", CT_SIZE, "pool memory limit (0: none)" },
	[COL_MEM_USED] = { "MEM-USED", CT_SIZE, "pool memory in use" },
	[COL_MEM_PEAK] = { "MEM-PEAK", CT_SIZE, "most pool memory used" },
	[COL_META] = { "META", CT_SIZE, "metadata memory (clusters)" },
	[COL_SAME] = { "SAME-PAGES", CT_NUM, "same-filled pages (no pool memory)" },
	[COL_HUGE] = { "HUGE-PAGES", CT_NUM, "incompressible pages stored raw" },
	[COL_COMPACTED] = { "COMPACTED", CT_NUM, "pages freed by compaction" },
	[COL_SLOTS] = { "SLOTS", CT_NUM, "slots holding data" },
	[COL_PEAK_CLUSTERS] = { "PEAK-CLUSTERS", CT_NUM, "most clusters allocated" },
	[COL_STREAMS] = { "STREAMS", CT_SIZE, "memory of the compression streams" },
	[COL_PRIORITY] = { "PRIORITY", CT_PRIO, "swap priority" },
	[COL_BACKING] = { "BACKING", CT_STR, "backing device, or none" },
	[COL_BD_READS] = { "BD-READS", CT_NUM, "pages read from the backing device" },
	[COL_BD_WRITES] = { "BD-WRITES", CT_NUM, "pages written to the backing device" },
	[COL_BD_META] = { "BD-META", CT_SIZE, "memory of the backing device's reverse map" },
	[COL_FAILED_READS] = { "FAILED-READS", CT_NUM, "failed reads" },
	[COL_FAILED_WRITES] = { "FAILED-WRITES", CT_NUM, "failed writes" },
};

static const int default_cols[] = {
	COL_NAME, COL_ALGORITHM, COL_DISKSIZE, COL_DATA, COL_COMPR, COL_TOTAL,
	COL_RATIO, COL_WRITTEN, COL_CLUSTERS, COL_MOUNTPOINT,
};

/* One cell: a number or a text, or nothing (empty / null). */
struct cell {
	bool null;
	bool is_num;
	uint64_t num;
	long snum;		/* CT_PRIO */
	double ratio;		/* CT_RATIO */
	char text[PATH_MAX];
};

static void cell_value(int col, const struct dev_info *d, struct cell *c)
{
	memset(c, 0, sizeof(*c));
	c->is_num = true;
	switch (col) {
	case COL_NAME:
		c->is_num = false;
		bfmt(c->text, sizeof(c->text), "%s", DEV_PATH);
		break;
	case COL_ALGORITHM:
		c->is_num = false;
		bfmt(c->text, sizeof(c->text), "%s", d->alg);
		break;
	case COL_MOUNTPOINT:
		c->is_num = false;
		c->null = !d->swap;
		bfmt(c->text, sizeof(c->text), "%s", d->swap ? "[SWAP]" : "");
		break;
	case COL_BACKING:
		c->is_num = false;
		bfmt(c->text, sizeof(c->text), "%s", d->backing);
		break;
	case COL_DISKSIZE: c->num = d->disksize; break;
	case COL_DATA: c->num = d->mm[MM_ORIG]; break;
	case COL_COMPR: c->num = d->mm[MM_COMPR]; break;
	case COL_TOTAL: c->num = d->mm[MM_USED] + d->cl[CL_META]; break;
	case COL_RATIO:
		c->null = !d->mm[MM_COMPR];
		if (!c->null)
			c->ratio = (double)d->mm[MM_ORIG] / (double)d->mm[MM_COMPR];
		break;
	case COL_WRITTEN: c->num = d->bd[BD_COUNT] * PAGE_BYTES; break;
	case COL_CLUSTERS: c->num = d->cl[CL_CLUSTERS]; break;
	case COL_MEM_LIMIT: c->num = d->mm[MM_LIMIT]; break;
	case COL_MEM_USED: c->num = d->mm[MM_USED]; break;
	case COL_MEM_PEAK: c->num = d->mm[MM_MAX]; break;
	case COL_META: c->num = d->cl[CL_META]; break;
	case COL_SAME: c->num = d->mm[MM_SAME]; break;
	case COL_HUGE: c->num = d->mm[MM_HUGE]; break;
	case COL_COMPACTED: c->num = d->mm[MM_COMPACTED]; break;
	case COL_SLOTS: c->num = d->cl[CL_SLOTS]; break;
	case COL_PEAK_CLUSTERS: c->num = d->cl[CL_PEAK]; break;
	case COL_STREAMS: c->num = d->cl[CL_STREAM]; break;
	case COL_PRIORITY:
		c->null = !d->swap;
		c->snum = d->prio;
		break;
	case COL_BD_READS: c->num = d->bd[BD_READS]; break;
	case COL_BD_WRITES: c->num = d->bd[BD_WRITES]; break;
	case COL_BD_META: c->num = d->bd[BD_META]; break;
	case COL_FAILED_READS: c->num = d->io[IO_FAILED_READS]; break;
	case COL_FAILED_WRITES: c->num = d->io[IO_FAILED_WRITES]; break;
	}
}

/* The cell as table or raw text. */
static void cell_text(int col, const struct cell *c, bool bytes, char *buf,
		      size_t n)
{
	switch (columns[col].type) {
	case CT_STR:
		bfmt(buf, n, "%s", c->text);
		break;
	case CT_SIZE:
		if (bytes)
			bfmt(buf, n, "%" PRIu64, c->num);
		else
			human_size(c->num, buf, n);
		break;
	case CT_NUM:
		bfmt(buf, n, "%" PRIu64, c->num);
		break;
	case CT_RATIO:
		if (c->null)
			bfmt(buf, n, "-");
		else
			bfmt(buf, n, "%.2f", c->ratio);
		break;
	case CT_PRIO:
		if (c->null)
			buf[0] = '\0';
		else
			bfmt(buf, n, "%ld", c->snum);
		break;
	}
}

static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

static void json_key(const char *name)
{
	char key[64];
	size_t i;

	for (i = 0; name[i] && i < sizeof(key) - 1; i++)
		key[i] = (char)tolower((unsigned char)name[i]);
	key[i] = '\0';
	json_string(key);
	printf(": ");
}

static void print_json(const struct dev_info *d, const int *cols, int ncols)
{
	struct cell c;
	int i;

	printf("{\n   \"devices\": [\n      {\n");
	for (i = 0; i < ncols; i++) {
		cell_value(cols[i], d, &c);
		printf("         ");
		json_key(columns[cols[i]].name);
		if (c.null)
			printf("null");
		else if (columns[cols[i]].type == CT_RATIO)
			printf("%.2f", c.ratio);
		else if (columns[cols[i]].type == CT_PRIO)
			printf("%ld", c.snum);
		else if (c.is_num)
			printf("%" PRIu64, c.num);
		else
			json_string(c.text);
		printf("%s\n", i + 1 < ncols ? "," : "");
	}
	printf("      }\n   ]\n}\n");
}

/* Raw output escapes what would split a field, like libsmartcols. */
static void raw_field(const char *s)
{
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch <= ' ' || ch == '\\' || ch == 0x7f)
			printf("\\x%02x", ch);
		else
			putchar(ch);
	}
}

static void print_table(const struct dev_info *d, const int *cols, int ncols,
			bool bytes, bool raw, bool headings)
{
	static char text[64][PATH_MAX], line[64 * PATH_MAX];
	static size_t width[64];
	struct cell c;
	bool right;
	int i;

	for (i = 0; i < ncols; i++) {
		cell_value(cols[i], d, &c);
		cell_text(cols[i], &c, bytes, text[i], sizeof(text[i]));
		/* As libsmartcols: the header counts, shown or not. */
		width[i] = strlen(text[i]);
		if (strlen(columns[cols[i]].name) > width[i])
			width[i] = strlen(columns[cols[i]].name);
	}
	if (raw) {
		for (i = 0; headings && i < ncols; i++)
			printf("%s%s", i ? " " : "", columns[cols[i]].name);
		if (headings)
			putchar('\n');
		for (i = 0; i < ncols; i++) {
			if (i)
				putchar(' ');
			raw_field(text[i]);
		}
		putchar('\n');
		return;
	}
	for (int row = headings ? 0 : 1; row < 2; row++) {
		size_t len = 0;

		for (i = 0; i < ncols; i++) {
			const char *s = row ? text[i] : columns[cols[i]].name;

			right = columns[cols[i]].type != CT_STR;
			len += (size_t)bfmt(line + len, sizeof(line) - len,
					    right ? "%s%*s" : "%s%-*s",
					    i ? " " : "", (int)width[i], s);
			if (len >= sizeof(line))
				len = sizeof(line) - 1;
		}
		/* No trailing blanks (an empty last column). */
		while (len && line[len - 1] == ' ')
			line[--len] = '\0';
		puts(line);
	}
}

static int find_column(const char *name, size_t len)
{
	int i;

	for (i = 0; i < NCOLS; i++)
		if (strlen(columns[i].name) == len &&
		    !strncasecmp(columns[i].name, name, len))
			return i;
	return -1;
}

/* --output: "COL,COL" or "+COL,COL" (added to the default columns). */
static int parse_columns(const char *spec, int *cols, int *ncols)
{
	const char *p = spec, *e;
	int c;

	if (*p == '+')
		p++;
	else
		*ncols = 0;
	if (!*p)
		return fail(RC_USAGE, "--output: no columns given");
	for (; *p; p = *e ? e + 1 : e) {
		e = strchr(p, ',');
		if (!e)
			e = p + strlen(p);
		c = find_column(p, (size_t)(e - p));
		if (c < 0)
			return fail(RC_USAGE, "unknown column: '%.*s' (see --help)",
				    (int)(e - p), p);
		if (*ncols >= 64)
			return fail(RC_USAGE, "--output: too many columns");
		cols[(*ncols)++] = c;
	}
	return RC_OK;
}

/* ----------------------------------------------------------- usage */

static void usage(FILE *out)
{
	int i;

	fputs(
"Usage:\n"
" " PROG " [status] [-b] [-o COLS] [-J] [-r] [-n]\n"
" " PROG " setup [-s SIZE] [-a ALG] [-m SIZE] [-B DEV] [-w PAGES]\n"
"              [-p N] [--disable-zswap] [--no-swapon] [-c FILE]\n"
" " PROG " reset\n"
" " PROG " writeback idle|huge|huge_idle|incompressible|all [PAGES]\n"
" " PROG " writeback PAGES | writeback --config FILE\n"
" " PROG " idle all|SECONDS\n"
" " PROG " compact [--backing]\n"
" " PROG " check\n"
"\n"
"Set up, inspect and maintain the ghostswap compressed swap device,\n"
"" DEV_PATH ". See ghostswapctl(8), ghostswap(4), ghostswap.conf(5).\n"
"\n"
"Commands:\n"
" status            show the device as a table (the default)\n"
" setup             load the module, configure the device, mkswap, swapon\n"
" reset             swapoff, then reset the device (its data is dropped)\n"
" writeback         write stored pages to the backing device: MODE, or\n"
"                   the PAGES coldest pages, or the config's idle_writeback\n"
" idle              mark pages idle: all, or those stored >= SECONDS ago\n"
" compact           compact the memory pool (--backing: the backing device)\n"
" check             compare the table with the backing device's reverse map\n"
"\n"
"Status options:\n"
" -b, --bytes            sizes in bytes\n"
" -o, --output COLS      columns to print, comma separated; +COLS adds to\n"
"                        the default ones\n"
"     --output-all       all columns\n"
" -J, --json             JSON (sizes in bytes, numbers as numbers)\n"
" -r, --raw              raw output: one space between fields, no alignment\n"
" -n, --noheadings       no header line\n"
"\n"
"Setup options (each overrides the configuration file):\n"
" -s, --size SIZE        device size: bytes, suffix K M G T P (1M..16T-4K)\n"
" -a, --algorithm ALG    compression algorithm\n"
" -m, --mem-limit SIZE   pool memory limit; 0: none\n"
" -B, --backing-dev DEV  backing block device for writeback, or none\n"
" -w, --writeback-limit PAGES|none\n"
"                        pages writeback may write (until set again), or none\n"
"     --writeback-direct none|huge|incompressible\n"
"                        pages that skip memory for the backing device\n"
"     --writeback-shrinker yes|no\n"
"                        write back under memory pressure\n"
" -p, --priority N       swap priority, -1..32767 (default " DEFAULT_PRIO_S "; -1: kernel's)\n"
" -Z, --disable-zswap    turn zswap off\n"
"     --no-swapon        configure and mkswap, but do not swapon\n"
" -c, --config FILE      read settings from FILE (ghostswap.conf(5))\n"
"\n"
" -h, --help             this help\n"
" -V, --version          version\n"
"\n"
"Columns (default: NAME ALGORITHM DISKSIZE DATA COMPR TOTAL RATIO WRITTEN\n"
"CLUSTERS MOUNTPOINT):\n", out);
	for (i = 0; i < NCOLS; i++)
		fprintf(out, " %-13s  %s\n", columns[i].name, columns[i].help);
	fputs(
"\n"
"Exit status:\n"
" 0  success\n"
" 1  the operation failed (or check found mismatches)\n"
" 2  usage error, or an error in the configuration file\n"
" 3  the module, the device or one of its attributes is not present\n"
" 4  the device is busy (in use, or holds data)\n"
"\n"
"Environment:\n"
" GHOSTSWAP_SYSFS   root of the sysfs and debugfs paths (default /sys)\n"
" GHOSTSWAP_PROC    root of /proc/swaps (default /proc)\n"
" GHOSTSWAP_DRYRUN  1: print the commands instead of running them (the\n"
"                   default when GHOSTSWAP_SYSFS is set); 0: run them\n"
" GHOSTSWAP_TRACE   FILE: append each sysfs write and command to FILE\n",
	      out);
}

/* Options parsing shared by every command: returns the option or -1. */
static int next_opt(int argc, char **argv, const char *shortopts,
		    const struct option *longopts, int *rc)
{
	int c = getopt_long(argc, argv, shortopts, longopts, NULL);

	if (c == '?') {
		if (optopt)
			*rc = fail(RC_USAGE, "%s: invalid option -- '%c' (see --help)",
				   argv[0], optopt);
		else
			*rc = fail(RC_USAGE, "%s: unknown option '%s' (see --help)",
				   argv[0], argv[optind - 1]);
	} else if (c == ':') {
		*rc = fail(RC_USAGE, "%s: option '%s' needs an argument",
			   argv[0], argv[optind - 1]);
	}
	return c;
}

static int cmd_status(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "bytes", no_argument, NULL, 'b' },
		{ "output", required_argument, NULL, 'o' },
		{ "output-all", no_argument, NULL, 'A' },
		{ "json", no_argument, NULL, 'J' },
		{ "raw", no_argument, NULL, 'r' },
		{ "noheadings", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool bytes = false, json = false, raw = false, headings = true;
	int cols[64], ncols, c, rc = RC_OK, i;
	struct dev_info d;

	ncols = (int)(sizeof(default_cols) / sizeof(default_cols[0]));
	memcpy(cols, default_cols, sizeof(default_cols));
	while ((c = next_opt(argc, argv, ":bo:Jrnh", opts, &rc)) != -1) {
		switch (c) {
		case 'b': bytes = true; break;
		case 'o':
			rc = parse_columns(optarg, cols, &ncols);
			if (rc)
				return rc;
			break;
		case 'A':
			for (i = 0, ncols = 0; i < NCOLS; i++)
				cols[ncols++] = i;
			break;
		case 'J': json = true; break;
		case 'r': raw = true; break;
		case 'n': headings = false; break;
		case 'h': usage(stdout); return RC_OK;
		default: return rc;
		}
	}
	if (optind < argc)
		return fail(RC_USAGE, "status: unexpected argument '%s'",
			    argv[optind]);
	if (json && raw)
		return fail(RC_USAGE, "--json and --raw exclude each other");
	rc = read_dev_info(&d);
	if (rc)
		return rc;
	zswap_warning();
	if (json)
		print_json(&d, cols, ncols);
	else
		print_table(&d, cols, ncols, bytes, raw, headings);
	return RC_OK;
}

/* ----------------------------------------------------------- settings */

/*
 * What setup does: one field for each key of ghostswap.conf(5), named as
 * the key; the has_ flags tell what was given.
 */
struct settings {
	bool has_size, has_algorithm, has_mem_limit, has_backing_dev;
	bool has_priority, has_writeback_limit, has_disable_zswap, has_swapon;
	bool has_idle_writeback, has_writeback_direct, has_writeback_shrinker;
	uint64_t size, mem_limit, writeback_limit, idle_writeback;
	bool writeback_limit_none, writeback_shrinker;
	char writeback_direct[16];
	char algorithm[64];
	char backing_dev[PATH_MAX];
	long priority;
	bool disable_zswap, swapon;
};

/* Sets one setting from text; NULL or an error message in @err. */
static bool set_setting(struct settings *s, const char *key, const char *val,
		      char *err, size_t errlen)
{
	bool b;

	if (!strcmp(key, "size")) {
		if (!parse_size(val, &s->size))
			goto bad_size;
		s->has_size = true;
	} else if (!strcmp(key, "algorithm")) {
		if (strlen(val) >= sizeof(s->algorithm) || strpbrk(val, " \t"))
			goto bad;
		bfmt(s->algorithm, sizeof(s->algorithm), "%s", val);
		s->has_algorithm = true;
	} else if (!strcmp(key, "mem_limit")) {
		if (!parse_limit(val, &s->mem_limit))
			goto bad_size;
		s->has_mem_limit = true;
	} else if (!strcmp(key, "backing_dev")) {
		if (strlen(val) >= sizeof(s->backing_dev))
			goto bad;
		bfmt(s->backing_dev, sizeof(s->backing_dev), "%s", val);
		s->has_backing_dev = true;
	} else if (!strcmp(key, "priority")) {
		if (!parse_prio(val, &s->priority)) {
			bfmt(err, errlen, "bad priority '%s' (want -1..32767)", val);
			return false;
		}
		s->has_priority = true;
	} else if (!strcmp(key, "disable_zswap")) {
		if (!parse_bool(val, &b))
			goto bad_bool;
		s->disable_zswap = b;
		s->has_disable_zswap = true;
	} else if (!strcmp(key, "swapon")) {
		if (!parse_bool(val, &b))
			goto bad_bool;
		s->swapon = b;
		s->has_swapon = true;
	} else if (!strcmp(key, "writeback_limit")) {
		s->writeback_limit_none = !strcasecmp(val, "none");
		if (!s->writeback_limit_none &&
		    !parse_count(val, &s->writeback_limit, 0)) {
			bfmt(err, errlen, "bad writeback_limit '%s' (want a number of pages, or none)", val);
			return false;
		}
		s->has_writeback_limit = true;
	} else if (!strcmp(key, "writeback_direct")) {
		if (strcmp(val, "none") && strcmp(val, "huge") &&
		    strcmp(val, "incompressible")) {
			bfmt(err, errlen, "bad writeback_direct '%s' (want none, huge or incompressible)", val);
			return false;
		}
		bfmt(s->writeback_direct, sizeof(s->writeback_direct), "%s",
		     val);
		s->has_writeback_direct = true;
	} else if (!strcmp(key, "writeback_shrinker")) {
		if (!parse_bool(val, &b))
			goto bad_bool;
		s->writeback_shrinker = b;
		s->has_writeback_shrinker = true;
	} else if (!strcmp(key, "idle_writeback")) {
		if (!parse_count(val, &s->idle_writeback, 1)) {
			bfmt(err, errlen, "bad idle_writeback '%s' (want seconds, at least 1)", val);
			return false;
		}
		s->has_idle_writeback = true;
	} else {
		bfmt(err, errlen, "unknown key '%s'", key);
		return false;
	}
	return true;
bad_size:
	bfmt(err, errlen, "bad size '%s' for %s (" SIZE_SYNTAX "%s)", val,
		 key, strcmp(key, "mem_limit") ? "" : "; or 0");
	return false;
bad_bool:
	bfmt(err, errlen, "bad value '%s' for %s (want yes or no)", val, key);
	return false;
bad:
	bfmt(err, errlen, "bad value '%s' for %s", val, key);
	return false;
}

/* Reads a ghostswap.conf(5) file into @s. Errors name FILE:LINE. */
static int read_config(const char *file, struct settings *s)
{
	char *line = NULL, *p, *key, *val, *eq, err[PATH_MAX + 128];
	size_t cap = 0;
	int lineno = 0, rc = RC_OK;
	FILE *f;

	f = fopen(file, "r");
	if (!f)
		return fail(RC_USAGE, "cannot read %s: %s", file, strerror(errno));
	while (getline(&line, &cap, f) > 0) {
		lineno++;
		p = strchr(line, '#');
		if (p)
			*p = '\0';
		p = trim(line);
		if (!*p)
			continue;
		eq = strchr(p, '=');
		if (!eq || eq == p) {
			rc = fail(RC_USAGE, "%s:%d: expected 'key = value'",
				  file, lineno);
			break;
		}
		*eq = '\0';
		key = trim(p);
		val = trim(eq + 1);
		if (!*val) {
			rc = fail(RC_USAGE, "%s:%d: no value for '%s'", file,
				  lineno, key);
			break;
		}
		if (!set_setting(s, key, val, err, sizeof(err))) {
			rc = fail(RC_USAGE, "%s:%d: %s", file, lineno, err);
			break;
		}
	}
	if (!rc && ferror(f))
		rc = fail(RC_USAGE, "cannot read %s: %s", file, strerror(errno));
	free(line);
	fclose(f);
	return rc;
}

/* Command line settings win over the file's. */
static void merge_settings(struct settings *dst, const struct settings *cli)
{
	if (cli->has_size)
		dst->has_size = true, dst->size = cli->size;
	if (cli->has_algorithm)
		dst->has_algorithm = true,
		memcpy(dst->algorithm, cli->algorithm, sizeof(dst->algorithm));
	if (cli->has_mem_limit)
		dst->has_mem_limit = true, dst->mem_limit = cli->mem_limit;
	if (cli->has_backing_dev)
		dst->has_backing_dev = true,
		memcpy(dst->backing_dev, cli->backing_dev,
		       sizeof(dst->backing_dev));
	if (cli->has_priority)
		dst->has_priority = true, dst->priority = cli->priority;
	if (cli->has_writeback_limit)
		dst->has_writeback_limit = true,
		dst->writeback_limit = cli->writeback_limit,
		dst->writeback_limit_none = cli->writeback_limit_none;
	if (cli->has_writeback_direct)
		dst->has_writeback_direct = true,
		memcpy(dst->writeback_direct, cli->writeback_direct,
		       sizeof(dst->writeback_direct));
	if (cli->has_writeback_shrinker)
		dst->has_writeback_shrinker = true,
		dst->writeback_shrinker = cli->writeback_shrinker;
	if (cli->has_disable_zswap)
		dst->has_disable_zswap = true,
		dst->disable_zswap = cli->disable_zswap;
	if (cli->has_swapon)
		dst->has_swapon = true, dst->swapon = cli->swapon;
}

/* Commands that change the device need root (unless on a fake tree). */
static int need_root(const char *cmd)
{
	if (geteuid() != 0 && !sysfs_overridden)
		return fail(RC_FAIL, "permission denied: '%s %s' must be run as root",
			    prog, cmd);
	return RC_OK;
}

/*
 * A write that needs the device unused: on EBUSY while swap is off, the
 * holder may be udev probing the device; settle and try once more.
 */
static int write_attr_retrying(const char *attr, const char *val)
{
	int ret = write_attr(attr, val);

	if (ret == -EBUSY && !swapped_on(NULL)) {
		udev_settle();
		ret = write_attr(attr, val);
	}
	return ret ? write_failed(attr, val, ret) : RC_OK;
}

/* ---------------------------------------------------------------- setup */

/* Whether the device has no backing device (or cannot have one). */
static bool no_backing(void)
{
	char cur[PATH_MAX];

	return read_attr("backing_dev", cur, sizeof(cur)) || !cur[0] ||
	       !strcmp(cur, "none");
}

/*
 * Whether the device already has @want as its backing device (the same
 * path, or one resolving to the same file): then setup leaves it alone,
 * as the module refuses a second one.
 */
static bool same_backing(const char *want)
{
	char cur[PATH_MAX], *a, *b;
	bool same;

	if (read_attr("backing_dev", cur, sizeof(cur)) || !cur[0])
		return false;
	if (!strcmp(cur, want))
		return true;
	if (!strcmp(cur, "none") || !strcmp(want, "none"))
		return false;
	a = realpath(cur, NULL);
	b = realpath(want, NULL);
	same = a && b && !strcmp(a, b);
	free(a);
	free(b);
	return same;
}

static int cmd_setup(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "size", required_argument, NULL, 's' },
		{ "algorithm", required_argument, NULL, 'a' },
		{ "mem-limit", required_argument, NULL, 'm' },
		{ "backing-dev", required_argument, NULL, 'B' },
		{ "writeback-limit", required_argument, NULL, 'w' },
		{ "writeback-direct", required_argument, NULL, 'D' },
		{ "writeback-shrinker", required_argument, NULL, 'S' },
		{ "priority", required_argument, NULL, 'p' },
		{ "disable-zswap", no_argument, NULL, 'Z' },
		{ "no-swapon", no_argument, NULL, 'N' },
		{ "config", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const keys[] = {
		['s'] = "size", ['a'] = "algorithm", ['m'] = "mem_limit",
		['B'] = "backing_dev", ['w'] = "writeback_limit",
		['D'] = "writeback_direct", ['S'] = "writeback_shrinker",
		['p'] = "priority",
	};
	struct settings cli = { 0 }, s = { 0 };
	char err[PATH_MAX + 128], val[32], sz[32];
	const char *config = NULL;
	int c, rc = RC_OK, ret;
	long prio;

	while ((c = next_opt(argc, argv, ":s:a:m:B:w:p:Zc:h", opts, &rc)) != -1) {
		switch (c) {
		case 's': case 'a': case 'm': case 'B': case 'w': case 'p':
		case 'D': case 'S':
			if (!set_setting(&cli, keys[c], optarg, err, sizeof(err)))
				return fail(RC_USAGE, "%s", err);
			break;
		case 'Z':
			cli.has_disable_zswap = true;
			cli.disable_zswap = true;
			break;
		case 'N':
			cli.has_swapon = true;
			cli.swapon = false;
			break;
		case 'c': config = optarg; break;
		case 'h': usage(stdout); return RC_OK;
		default: return rc;
		}
	}
	if (optind < argc)
		return fail(RC_USAGE, "setup: unexpected argument '%s'",
			    argv[optind]);
	if (config) {
		rc = read_config(config, &s);
		if (rc)
			return rc;
	}
	merge_settings(&s, &cli);
	rc = need_root("setup");
	if (rc)
		return rc;

	if (!dev_present()) {
		ret = RUN(false, "modprobe", "ghostswap");
		if (ret)
			return fail(RC_NODEV, "ghostswap module not loaded and 'modprobe ghostswap' failed (exit %d)",
				    ret);
		if (!dev_present() && !dryrun)
			return fail(RC_NODEV, "modprobe ghostswap did not create %s/%s",
				    sysroot, DEV_SYS);
	}
	udev_settle();
	if (!dev_present())
		return fail_not_loaded();
	if (swapped_on(NULL))
		return fail_in_use();

	if (s.has_disable_zswap && s.disable_zswap) {
		ret = write_sys(ZSWAP_ENABLED, "N");
		if (ret == -ENOENT)
			printf("zswap is not in this kernel: nothing to disable\n");
		else if (ret)
			return fail(RC_FAIL, "cannot disable zswap: %s/%s: %s",
				    sysroot, ZSWAP_ENABLED, strerror(-ret));
	} else {
		zswap_warning();
	}
	if (s.has_backing_dev && !same_backing(s.backing_dev)) {
		/* The module takes a new backing device only after "none". */
		if (strcmp(s.backing_dev, "none") && !no_backing()) {
			rc = write_attr_retrying("backing_dev", "none");
			if (rc)
				return rc;
		}
		rc = write_attr_retrying("backing_dev", s.backing_dev);
		if (rc)
			return rc;
	}
	if (s.has_algorithm) {
		rc = write_attr_retrying("comp_algorithm", s.algorithm);
		if (rc)
			return rc;
	}
	if (s.has_size) {
		bfmt(val, sizeof(val), "%" PRIu64, s.size);
		rc = write_attr_retrying("disksize", val);
		if (rc)
			return rc;
	}
	if (s.has_mem_limit) {
		bfmt(val, sizeof(val), "%" PRIu64, s.mem_limit);
		rc = write_attr_checked("mem_limit", val);
		if (rc)
			return rc;
	}
	if (s.has_writeback_limit) {
		rc = write_attr_checked("writeback_limit_enable",
					s.writeback_limit_none ? "0" : "1");
		if (rc)
			return rc;
		if (!s.writeback_limit_none) {
			bfmt(val, sizeof(val), "%" PRIu64, s.writeback_limit);
			rc = write_attr_checked("writeback_limit", val);
			if (rc)
				return rc;
		}
	}
	if (s.has_writeback_direct) {
		rc = write_attr_checked("writeback_direct", s.writeback_direct);
		if (rc)
			return rc;
	}
	if (s.has_writeback_shrinker) {
		rc = write_attr_checked("writeback_shrinker",
					s.writeback_shrinker ? "1" : "0");
		if (rc)
			return rc;
	}

	if (read_attr("disksize", val, sizeof(val)) ||
	    !parse_count(val, &s.size, 0))
		s.size = 0;
	human_size(s.size, sz, sizeof(sz));
	prio = s.has_priority ? s.priority : DEFAULT_PRIO;
	ret = RUN(true, "mkswap", DEV_PATH);
	if (ret)
		return fail(RC_FAIL, "mkswap %s failed (exit %d)", DEV_PATH, ret);
	if (s.has_swapon && !s.swapon) {
		printf("%s: %s, ready for swapon (swap not turned on)\n",
		       DEV_PATH, sz);
		return RC_OK;
	}
	if (prio >= 0) {
		bfmt(val, sizeof(val), "%ld", prio);
		ret = RUN(false, "swapon", "-p", val, DEV_PATH);
	} else {
		ret = RUN(false, "swapon", DEV_PATH);
	}
	if (ret)
		return fail(RC_FAIL, "swapon %s failed (exit %d)", DEV_PATH, ret);
	swapped_on(&prio);		/* the kernel's choice for -1 */
	printf("%s: %s, swap on, priority %ld\n", DEV_PATH, sz, prio);
	return RC_OK;
}

/* ---------------------------------------------------------------- reset */

/* Commands without options still take --help. */
static int parse_help_only(int argc, char **argv, int max_args)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, rc = RC_OK;

	while ((c = next_opt(argc, argv, ":h", opts, &rc)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return -1;
		}
		return rc;
	}
	if (argc - optind > max_args)
		return fail(RC_USAGE, "%s: unexpected argument '%s'", argv[0],
			    argv[optind + max_args]);
	return RC_OK;
}

static int cmd_reset(int argc, char **argv)
{
	int rc = parse_help_only(argc, argv, 0), ret;

	if (rc)
		return rc < 0 ? RC_OK : rc;
	rc = need_root("reset");
	if (rc)
		return rc;
	if (!dev_present())
		return fail_not_loaded();
	if (swapped_on(NULL)) {
		ret = RUN(false, "swapoff", DEV_PATH);
		if (ret)
			return fail(RC_FAIL, "swapoff %s failed (exit %d): not enough memory to take the swapped pages back?",
				    DEV_PATH, ret);
	}
	rc = write_attr_retrying("reset", "1");
	if (rc)
		return rc;
	printf("%s: reset\n", DEV_PATH);
	return RC_OK;
}

/* ------------------------------------------------------------ writeback */

/* Pages on the backing device now, or -1 without bd_stat. */
static int64_t backing_pages(void)
{
	uint64_t bd[BD_STAT_COLS];

	if (read_bd_stat(bd))
		return -1;
	return (int64_t)bd[BD_COUNT];
}

static void report_pages(const char *what, int64_t before, int64_t after)
{
	char h1[32], h2[32];
	int64_t delta;

	if (before < 0 || after < 0) {
		printf("%s: done (no bd_stat to count pages)\n", what);
		return;
	}
	delta = after - before;
	human_size((uint64_t)(delta < 0 ? -delta : delta) * PAGE_BYTES, h1,
		   sizeof(h1));
	human_size((uint64_t)after * PAGE_BYTES, h2, sizeof(h2));
	printf("%s: %s%" PRId64 " pages (%s); backing device holds %" PRId64 " pages (%s)\n",
	       what, delta < 0 ? "-" : "+", delta < 0 ? -delta : delta, h1,
	       after, h2);
}

static int write_back(const char *val)
{
	int64_t before, after;
	char what[64];
	int ret;

	if (!dev_present())
		return fail_not_loaded();
	if (!attr_exists("writeback"))
		return fail(RC_NODEV, "this ghostswap module has no writeback (no %s/%s/writeback)",
			    sysroot, DEV_SYS);
	before = backing_pages();
	ret = write_attr("writeback", val);
	after = backing_pages();
	bfmt(what, sizeof(what), "writeback %s", val);
	if (ret) {
		int rc = write_failed("writeback", val, ret);

		if (after > before && before >= 0)
			report_pages(what, before, after);
		return rc;
	}
	report_pages(what, before, after);
	return RC_OK;
}

static int mark_idle(const char *val)
{
	if (!dev_present())
		return fail_not_loaded();
	return write_attr_checked("idle", val);
}

static int cmd_writeback(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const modes[] = {
		"idle", "huge", "huge_idle", "incompressible", "all", NULL,
	};
	struct settings s = { 0 };
	const char *config = NULL;
	char val[64], secs[32];
	int c, rc = RC_OK, i, nargs;
	uint64_t n;

	while ((c = next_opt(argc, argv, ":c:h", opts, &rc)) != -1) {
		switch (c) {
		case 'c': config = optarg; break;
		case 'h': usage(stdout); return RC_OK;
		default: return rc;
		}
	}
	nargs = argc - optind;
	if (config) {
		if (nargs)
			return fail(RC_USAGE, "writeback: --config takes no mode");
		rc = read_config(config, &s);
		if (rc)
			return rc;
		if (!s.has_idle_writeback)
			return fail(RC_USAGE, "%s: no idle_writeback set: nothing to write back",
				    config);
		rc = need_root("writeback");
		if (rc)
			return rc;
		bfmt(secs, sizeof(secs), "%" PRIu64, s.idle_writeback);
		rc = mark_idle(secs);
		return rc ? rc : write_back("idle");
	}
	if (nargs < 1 || nargs > 2)
		return fail(RC_USAGE, "writeback: want MODE [PAGES] or PAGES (see --help)");
	if (parse_count(argv[optind], &n, 1)) {
		if (nargs != 1)
			return fail(RC_USAGE, "writeback: unexpected argument '%s'",
				    argv[optind + 1]);
		bfmt(val, sizeof(val), "%" PRIu64, n);
	} else {
		for (i = 0; modes[i] && strcmp(modes[i], argv[optind]); i++)
			;
		if (!modes[i])
			return fail(RC_USAGE, "writeback: unknown mode '%s' (want idle, huge, huge_idle, incompressible, all or a page count)",
				    argv[optind]);
		if (nargs == 2) {
			if (!parse_count(argv[optind + 1], &n, 1))
				return fail(RC_USAGE, "writeback: bad page count '%s'",
					    argv[optind + 1]);
			bfmt(val, sizeof(val), "%s %" PRIu64, modes[i], n);
		} else {
			bfmt(val, sizeof(val), "%s", modes[i]);
		}
	}
	rc = need_root("writeback");
	return rc ? rc : write_back(val);
}

static int cmd_idle(int argc, char **argv)
{
	int rc = parse_help_only(argc, argv, 1);
	char val[32];
	uint64_t n;

	if (rc)
		return rc < 0 ? RC_OK : rc;
	if (argc - optind != 1)
		return fail(RC_USAGE, "idle: want 'all' or SECONDS");
	if (!strcmp(argv[optind], "all"))
		bfmt(val, sizeof(val), "all");
	else if (parse_count(argv[optind], &n, 1))
		bfmt(val, sizeof(val), "%" PRIu64, n);
	else
		return fail(RC_USAGE, "idle: bad age '%s' (want 'all' or seconds)",
			    argv[optind]);
	rc = need_root("idle");
	return rc ? rc : mark_idle(val);
}

/* -------------------------------------------------------------- compact */

static int cmd_compact(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "backing", no_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *attr = "compact";
	uint64_t before[MM_STAT_COLS], after[MM_STAT_COLS];
	uint64_t bd0[BD_STAT_COLS], bd1[BD_STAT_COLS];
	int c, rc = RC_OK;
	char h[32];

	while ((c = next_opt(argc, argv, ":bh", opts, &rc)) != -1) {
		switch (c) {
		case 'b': attr = "backing_compact"; break;
		case 'h': usage(stdout); return RC_OK;
		default: return rc;
		}
	}
	if (optind < argc)
		return fail(RC_USAGE, "compact: unexpected argument '%s'",
			    argv[optind]);
	rc = need_root("compact");
	if (rc)
		return rc;
	if (!dev_present())
		return fail_not_loaded();
	if (strcmp(attr, "compact")) {
		if (!attr_exists(attr))
			return fail(RC_NODEV, "this ghostswap module has no backing compaction (no %s)",
				    attr);
		if (read_bd_stat(bd0))
			memset(bd0, 0, sizeof(bd0));
		rc = write_attr_checked(attr, "1");
		if (rc)
			return rc;
		if (read_bd_stat(bd1))
			memcpy(bd1, bd0, sizeof(bd1));
		printf("backing compaction: %" PRIu64 " pages moved\n",
		       bd1[BD_RELOCATED] - bd0[BD_RELOCATED]);
		return RC_OK;
	}
	if (read_mm_stat(before))
		memset(before, 0, sizeof(before));
	rc = write_attr_checked(attr, "1");
	if (rc)
		return rc;
	if (read_mm_stat(after))
		memcpy(after, before, sizeof(after));
	human_size(after[MM_USED], h, sizeof(h));
	printf("compaction: %" PRIu64 " pages freed; pool now %s\n",
	       after[MM_COMPACTED] - before[MM_COMPACTED], h);
	return RC_OK;
}

/* ---------------------------------------------------------------- check */

static bool is_debugfs(const char *rel)
{
	char p[PATH_MAX];
	struct statfs sfs;

	sys_path(p, sizeof(p), rel);
	return !statfs(p, &sfs) && (unsigned long)sfs.f_type == DEBUGFS_MAGIC;
}

static int cmd_check(int argc, char **argv)
{
	char p[PATH_MAX], buf[65536], *nl, *end;
	unsigned long long bad;
	int rc = parse_help_only(argc, argv, 0), ret;

	if (rc)
		return rc < 0 ? RC_OK : rc;
	rc = need_root("check");
	if (rc)
		return rc;
	if (!dev_present())
		return fail_not_loaded();
	if (!sys_exists(CHECK_FILE) && !is_debugfs(DEBUG_DIR)) {
		sys_path(p, sizeof(p), DEBUG_DIR);
		ret = RUN(false, "mount", "-t", "debugfs", "debugfs", p);
		if (ret)
			return fail(RC_FAIL, "cannot mount debugfs at %s (exit %d)",
				    p, ret);
	}
	ret = read_sys(CHECK_FILE, buf, sizeof(buf));
	if (ret == -ENOENT)
		return fail(RC_NODEV, "this ghostswap module has no check (no %s/%s)",
			    sysroot, CHECK_FILE);
	if (ret == -EACCES || ret == -EPERM)
		return fail(RC_FAIL, "permission denied reading %s/%s (run as root)",
			    sysroot, CHECK_FILE);
	if (ret)
		return fail(RC_FAIL, "cannot read %s/%s: %s", sysroot,
			    CHECK_FILE, strerror(-ret));
	nl = strchr(buf, '\n');
	if (nl)
		*nl++ = '\0';
	errno = 0;
	bad = strtoull(buf, &end, 10);
	if (errno || end == buf || !isdigit((unsigned char)buf[0]))
		return fail(RC_FAIL, "unexpected contents in %s/%s: '%s'",
			    sysroot, CHECK_FILE, buf);
	if (!bad) {
		printf("check: ok, 0 mismatches between the table and the reverse map\n");
		return RC_OK;
	}
	printf("check: %llu mismatches between the table and the reverse map\n",
	       bad);
	if (nl && *nl)
		printf("%s\n", nl);
	return RC_FAIL;
}

/* ----------------------------------------------------------------- main */

static void setup_env(void)
{
	const char *v;

	v = getenv("GHOSTSWAP_SYSFS");
	if (v && *v) {
		bfmt(sysroot, sizeof(sysroot), "%s", v);
		sysfs_overridden = true;
	}
	v = getenv("GHOSTSWAP_PROC");
	if (v && *v)
		bfmt(procroot, sizeof(procroot), "%s", v);
	v = getenv("GHOSTSWAP_DRYRUN");
	if (v && *v)
		dryrun = strcmp(v, "0") != 0;
	else
		dryrun = sysfs_overridden;
	v = getenv("GHOSTSWAP_TRACE");
	if (v && *v)
		trace_path = v;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int argc, char **argv);
	} cmds[] = {
		{ "status", cmd_status },
		{ "setup", cmd_setup },
		{ "reset", cmd_reset },
		{ "writeback", cmd_writeback },
		{ "idle", cmd_idle },
		{ "compact", cmd_compact },
		{ "check", cmd_check },
	};
	static char status_name[] = "status";
	size_t i;

	setup_env();
	opterr = 0;
	if (argc < 2 || argv[1][0] == '-') {
		if (argc >= 2 && (!strcmp(argv[1], "-h") ||
				  !strcmp(argv[1], "--help"))) {
			usage(stdout);
			return RC_OK;
		}
		if (argc >= 2 && (!strcmp(argv[1], "-V") ||
				  !strcmp(argv[1], "--version"))) {
			printf("%s %s\n", prog, GS_VERSION);
			return RC_OK;
		}
		argv[0] = status_name;
		return cmd_status(argc, argv);
	}
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	fail(RC_USAGE, "unknown command '%s' (see --help)", argv[1]);
	return RC_USAGE;
}
