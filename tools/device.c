// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswapctl: the state of the device. Whether it is swapped on
 * (/proc/swaps under $GHOSTSWAP_PROC), what status shows of it
 * (struct dev_info), whether zswap is in its way; the machine's memory;
 * waiting for the device node's lock before a change.
 */
#include "ghostswapctl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

char procroot[PATH_MAX] = "/proc";

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

bool our_devno(unsigned int *maj, unsigned int *min)
{
	char buf[64];

	return !read_attr("dev", buf, sizeof(buf)) &&
	       sscanf(buf, "%u:%u", maj, min) == 2;
}

bool path_is_ours(const char *file)
{
	unsigned int maj, min;
	struct stat st;

	if (!strcmp(file, DEV_PATH))
		return true;
	return file[0] == '/' && !stat(file, &st) && S_ISBLK(st.st_mode) &&
	       our_devno(&maj, &min) &&
	       major(st.st_rdev) == maj && minor(st.st_rdev) == min;
}

/*
 * Calls @fn for each line of /proc/swaps until @fn returns true; returns
 * what the last call returned, false if none or no /proc/swaps.
 */
bool each_swap(bool (*fn)(const struct swap_line *sw, void *arg), void *arg)
{
	char p[PATH_MAX], *line = NULL, file[PATH_MAX];
	struct swap_line sw = { .file = file };
	size_t cap = 0;
	bool stop = false;
	FILE *f;

	bfmt(p, sizeof(p), "%s/swaps", procroot);
	f = fopen(p, "r");
	if (!f)
		return false;
	while (!stop && getline(&line, &cap, f) > 0) {
		if (sscanf(line, "%4095s %*s %*s %ld %ld", file, &sw.used_kib,
			   &sw.prio) != 3)
			continue;
		unescape(file);
		sw.ours = path_is_ours(file);
		stop = fn(&sw, arg);
	}
	free(line);
	fclose(f);
	return stop;
}

/* Our line of /proc/swaps into *@arg (its file name not kept). */
static bool find_ours(const struct swap_line *sw, void *arg)
{
	struct swap_line *mine = arg;

	if (sw->ours) {
		*mine = *sw;
		mine->file = NULL;
	}
	return sw->ours;
}

long swap_used_kib(void)
{
	struct swap_line mine = { .used_kib = -1 };

	each_swap(find_ours, &mine);
	return mine.used_kib;
}

/* Whether the device is swapped on; its priority in *@prio. */
bool swapped_on(long *prio)
{
	struct swap_line mine;

	if (!each_swap(find_ours, &mine))
		return false;
	if (prio)
		*prio = mine.prio;
	return true;
}

/* The current algorithm: the bracketed one, or the only one. */
void current_alg(const char *list, char *out, size_t n)
{
	const char *a = strchr(list, '['), *b;

	if (a && (b = strchr(a, ']'))) {
		bfmt(out, n, "%.*s", (int)(b - a - 1), a + 1);
		return;
	}
	bfmt(out, n, "%s", list);
}

/*
 * The compression streams: one per online CPU (as zram's max_comp_streams
 * reads now), counted from devices/system/cpu/online ("0-3,8"); -1 if
 * that cannot be read.
 */
static long online_cpus(void)
{
	char buf[256], *p = buf, *end;
	long n = 0, lo, hi;

	if (read_sys("devices/system/cpu/online", buf, sizeof(buf)))
		return -1;
	while (*p) {
		lo = strtol(p, &end, 10);
		if (end == p || lo < 0)
			return -1;
		hi = lo;
		if (*end == '-') {
			p = end + 1;
			hi = strtol(p, &end, 10);
			if (end == p || hi < lo)
				return -1;
		}
		n += hi - lo + 1;
		p = end;
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return -1;
		else
			break;
	}
	return n ? n : -1;
}

int read_dev_info(struct dev_info *d)
{
	char buf[PATH_MAX];
	uint64_t n;
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
	if (read_stat("io_stat", d->io, IO_DISCARD_FREE, IO_STAT_COLS, -1, NULL, 0))
		memset(d->io, 0, sizeof(d->io));
	/* bd_stat and backing_dev: only modules with a writeback tier. */
	ret = read_bd_stat(d->bd);
	if (ret && ret != -ENOENT)
		return stat_failed("bd_stat", ret);
	d->has_bd = !ret;
	if (read_attr("backing_dev", d->backing, sizeof(d->backing)) ||
	    !d->backing[0])
		bfmt(d->backing, sizeof(d->backing), "none");
	/* multi_page: only newer modules; without it, every page alone. */
	if (!read_attr("multi_page", buf, sizeof(buf)) &&
	    parse_count(buf, &n, 0))
		d->multi_page = (unsigned int)n;
	d->prio = 0;
	d->swap = swapped_on(&d->prio);
	d->streams = online_cpus();
	return RC_OK;
}

/* zswap compresses pages before any swap device sees them. */
bool zswap_enabled(void)
{
	char buf[16];

	return !read_sys(ZSWAP_ENABLED, buf, sizeof(buf)) &&
	       (buf[0] == 'Y' || buf[0] == 'y' || buf[0] == '1');
}

/*
 * Whether the module frees a slot the moment swap frees it (the swap
 * core's free hook). Without it (a kernel without the hook, or
 * free_notify=0) only swap's discards free slots: swapon --discard=pages.
 * A module without the parameter always has the hook.
 */
bool free_notify_on(void)
{
	char buf[16];

	return read_sys(FREE_NOTIFY, buf, sizeof(buf)) || buf[0] != 'N';
}

/* The device set up behind zswap (mode zswap: writeback_direct all). */
bool zswap_mode_on(void)
{
	char buf[96];

	return !read_attr("writeback_direct", buf, sizeof(buf)) &&
	       strstr(buf, "[all]");
}

/*
 * In mode zswap, zswap's pool beside ours: what its debugfs says, if it
 * can be read.
 */
void zswap_front_status(void)
{
	char size[32], pages[32], h[16];
	uint64_t bytes;

	if (!zswap_mode_on())
		return;
	if (!zswap_enabled()) {
		warning("mode zswap, but zswap is off: every page reaches %s uncompressed ('echo Y > /sys/module/zswap/parameters/enabled')",
			DEV_PATH);
		return;
	}
	if (read_sys(ZSWAP_DEBUG "/pool_total_size", size, sizeof(size)) ||
	    read_sys(ZSWAP_DEBUG "/stored_pages", pages, sizeof(pages)) ||
	    !parse_count(size, &bytes, 0)) {
		printf("zswap in front: on (its pool: mount debugfs and run as root to see it)\n");
		return;
	}
	human_size(bytes, h, sizeof(h));
	printf("zswap in front: pool %s, %s pages stored\n", h, pages);
}

void zswap_warning(void)
{
	if (zswap_enabled() && !zswap_mode_on())
		warning("zswap is enabled: it compresses pages before they reach %s (turn it off: '%s setup --disable-zswap' or 'echo N > /sys/module/zswap/parameters/enabled')",
		     DEV_PATH, PROG);
}

/*
 * Whether ghostswap.service failed (systemctl is-active says so); @why
 * gets the last line of its journal this boot, or a pointer to it.
 */
bool setup_failed(char *why, size_t n)
{
	char out[64];

	if (QUERY(out, sizeof(out), "systemctl", "is-active", SETUP_UNIT) == 127 ||
	    strncmp(out, "failed", 6))
		return false;
	QUERY(why, n, "journalctl", "-b", "-u", SETUP_UNIT, "-n", "1", "-o",
	      "cat", "--no-pager");
	why[strcspn(why, "\n")] = '\0';
	if (!why[0])
		bfmt(why, n, "see 'journalctl -b -u " SETUP_UNIT "'");
	return true;
}

/* MemTotal (/proc/meminfo under $GHOSTSWAP_PROC) in bytes; 0: unknown. */
uint64_t mem_total(void)
{
	char p[PATH_MAX], *line = NULL;
	unsigned long long kib = 0;
	size_t cap = 0;
	FILE *f;

	bfmt(p, sizeof(p), "%s/meminfo", procroot);
	f = fopen(p, "r");
	if (!f)
		return 0;
	while (getline(&line, &cap, f) > 0)
		if (sscanf(line, "MemTotal: %llu kB", &kib) == 1)
			break;
	free(line);
	fclose(f);
	return (uint64_t)kib * 1024;
}

/* How long a change waits for the node's lock before giving up. */
#define NODE_LOCK_WAIT_MS	10000
#define NODE_LOCK_POLL_MS	20

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void sleep_ms(unsigned int ms)
{
	nanosleep(&(struct timespec){ .tv_sec = ms / 1000,
				      .tv_nsec = (ms % 1000) * 1000000L },
		  NULL);
}

/*
 * Waits until nobody holds the device node's flock(2). udev holds a
 * shared one while it probes a block device, and tools that change a
 * device take an exclusive one (zramctl does, and so does this tool), so
 * taking it exclusively means no probe runs and no other such tool is
 * between its steps. The lock is dropped again before returning, as
 * zramctl drops it: the module refuses a change while the node is open,
 * by us too. The short window until the sysfs write is covered by
 * write_attr_retrying(). The open also fails with EBUSY while another
 * process is in the middle of a change: that is waited for the same way.
 * Nothing to do in a dry run or without a node (no devtmpfs, no udev).
 */
int wait_node_unlocked(void)
{
	long long deadline = now_ms() + NODE_LOCK_WAIT_MS;
	int fd, err;

	if (dryrun)
		return RC_OK;
	for (;;) {
		fd = open(DEV_PATH, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
		if (fd < 0) {
			err = errno;
		} else {
			err = flock(fd, LOCK_EX | LOCK_NB) ? errno : 0;
			close(fd);
		}
		if (!err || err == ENOENT || err == ENXIO)
			return RC_OK;
		if (err != EWOULDBLOCK && err != EBUSY)
			return fail(RC_FAIL, "%s: %s", DEV_PATH, strerror(err));
		if (now_ms() >= deadline)
			return fail(RC_BUSY, "%s: %s for %d s (by udev's probe, zramctl-like tool or another ghostswapctl; 'fuser -v %s' shows who): try again",
				    DEV_PATH, err == EBUSY ? "being changed by another process" : "locked",
				    NODE_LOCK_WAIT_MS / 1000, DEV_PATH);
		sleep_ms(NODE_LOCK_POLL_MS);
	}
}
