// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswapctl setup and reset: configure the device (loading the module
 * if need be), mkswap and swapon; swapoff and reset it.
 */
#include "ghostswapctl.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * swapon makes the kernel's swap core allocate memory for the whole
 * device, used or not (swapon_cost): 48 bytes per 512 slots on 7.x
 * kernels, but ~3.2 bytes per 4 KiB slot on 6.12 ones, 816 MiB for 1 TiB.
 * Warn when that is more than this share of RAM, in percent.
 */
#define SWAPON_COST_WARN_PCT	2

/* Whether page 0 of the device holds a swap header (mkswap's signature). */
static bool swap_header_at_0(void)
{
	static const char sig[] = "SWAPSPACE2";
	long page = sysconf(_SC_PAGESIZE);
	char got[sizeof(sig) - 1];
	int fd = open(DEV_PATH, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	n = pread(fd, got, sizeof(got), page - (long)sizeof(got));
	close(fd);
	return n == (ssize_t)sizeof(got) && !memcmp(got, sig, sizeof(got));
}

/*
 * mkswap writes page 0: a device that holds data is refused, unless all
 * it holds is one page with a swap header, what swapoff leaves behind.
 */
static int refuse_data(void)
{
	uint64_t mm[MM_STAT_COLS];
	char sz[32];
	int rc = read_mm_stat(mm);

	if (rc)
		return stat_failed("mm_stat", rc);
	if (!mm[MM_ORIG] ||
	    (mm[MM_ORIG] == (uint64_t)sysconf(_SC_PAGESIZE) && swap_header_at_0()))
		return RC_OK;
	human_size(mm[MM_ORIG], sz, sizeof(sz));
	return fail(RC_BUSY, "%s holds %s of data, which mkswap would overwrite: reset it first ('%s reset')",
		    DEV_PATH, sz, PROG);
}

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

/*
 * Warns when swapon at the device's size costs the swap core more than
 * SWAPON_COST_WARN_PCT of RAM, naming the module's default size when it
 * is smaller (on such kernels, one that costs little). Quiet without
 * swapon_cost (an older module) or MemTotal.
 */
static void swapon_cost_warning(void)
{
	char buf[64], size_s[32], cost_s[32], def_s[32], hint[96] = "";
	uint64_t cost, disksize, ram, def;

	if (read_attr("swapon_cost", buf, sizeof(buf)) ||
	    !parse_count(buf, &cost, 0) ||
	    read_attr("disksize", buf, sizeof(buf)) ||
	    !parse_count(buf, &disksize, 0))
		return;
	ram = mem_total();
	if (!ram || cost * 100 <= ram * SWAPON_COST_WARN_PCT)
		return;
	if (!read_sys("module/ghostswap/parameters/disksize", buf, sizeof(buf)) &&
	    parse_count(buf, &def, 0) && def < disksize) {
		human_size(def, def_s, sizeof(def_s));
		bfmt(hint, sizeof(hint), " (the module's default here is %s)",
		     def_s);
	}
	human_size(disksize, size_s, sizeof(size_s));
	human_size(cost, cost_s, sizeof(cost_s));
	warning("swapon of %s at %s makes this kernel's swap core allocate %s (%" PRIu64 "%% of RAM), used or not: a smaller size costs less%s",
		DEV_PATH, size_s, cost_s, cost * 100 / ram, hint);
}

/*
 * mode = zswap: zswap stays on in front and compresses; ghostswap keeps
 * what reaches it as it is (writeback_direct all) and, with a backing
 * device, discards slots as they are freed, on a backing file created
 * sparse. It overrides disable_zswap; another writeback_direct is
 * refused.
 */
/*
 * Named as the device hibernation resumes from: an image written into
 * RAM is gone at power-off. Refused before anything changes.
 */
static int refuse_resume(void)
{
	char why[PATH_MAX + 64];

	if (!resume_is_ours(why, sizeof(why)))
		return RC_OK;
	return fail(RC_USAGE, "%s names %s as the device hibernation resumes from, but its pages live in RAM: a hibernation image written there is gone at power-off. Name a disk swap partition or file in resume= (ghostswap(4), HIBERNATION)",
		    why, DEV_PATH);
}

static int zswap_mode(struct settings *s)
{
	if (!s->mode_zswap)
		return RC_OK;
	/* The example configuration says disable_zswap = yes: mode wins. */
	if (s->has_disable_zswap && s->disable_zswap) {
		printf("mode zswap keeps zswap on: disable_zswap is ignored\n");
		s->disable_zswap = false;
	}
	if (s->has_writeback_direct && strcmp(s->writeback_direct, "all"))
		return fail(RC_USAGE, "mode zswap stores pages as they are: writeback_direct must be all, not %s",
			    s->writeback_direct);
	s->has_writeback_direct = true;
	bfmt(s->writeback_direct, sizeof(s->writeback_direct), "all");
	if (s->has_backing_dev && strcmp(s->backing_dev, "none") &&
	    !s->has_backing_discard)
		s->has_backing_discard = s->backing_discard = true;
	return RC_OK;
}

/*
 * The backing device: a block device as it is; a directory as it is,
 * for the module to keep chunk files in; a regular file (or a
 * path to create one at backing_size) as it is, for the module to map
 * (on a loop device of its own if its filesystem cannot be mapped), or
 * with backing_discard (a sparse file) on a loop device of its own
 * (loopdev.c). Left alone when already in place.
 */
static int set_backing(const struct settings *s)
{
	uint64_t size = s->has_backing_size ? s->backing_size : 0;
	char loop[PATH_MAX], cur[PATH_MAX];
	const char *dev = s->backing_dev;
	int loopfd = -1, rc = RC_OK, ret;
	bool map = false;
	struct stat st;

	if (strcmp(dev, "none") && !stat(dev, &st) && S_ISDIR(st.st_mode)) {
		/* A directory: the module adds chunk files as it needs. */
		if (s->has_backing_size)
			return fail(RC_USAGE, "backing_dev %s is a directory: it grows by chunk files as writeback needs, backing_size does not apply",
				    dev);
		if (!read_attr("backing_dev", cur, sizeof(cur)) &&
		    !strcmp(cur, dev))
			return RC_OK;
		if (!no_backing())
			rc = write_attr_retrying("backing_dev", "none");
		return rc ? rc : write_attr_retrying("backing_dev", dev);
	}
	if (strcmp(dev, "none") && strncmp(dev, "/dev/", 5) &&
	    !is_block_device(dev)) {
		if (!stat(dev, &st) && !S_ISREG(st.st_mode))
			return fail(RC_USAGE, "backing_dev %s: neither a block device, a regular file nor a directory",
				    dev);
		if (!read_attr("backing_dev", cur, sizeof(cur)) &&
		    ((!s->backing_discard && !strcmp(cur, dev)) ||
		     loop_backs_file(cur, dev)))
			return RC_OK;
		if (!s->backing_discard) {
			/* Allocated: the module maps it, no loop device. */
			rc = prepare_backing_file(dev, size);
			map = true;
		} else {
			rc = attach_backing_file(dev, size, true, loop,
						 sizeof(loop), &loopfd);
			dev = loop;
		}
		if (rc)
			return rc;
	} else if (same_backing(dev)) {
		return RC_OK;
	}
	/* The module takes a new backing device only after "none". */
	if (strcmp(dev, "none") && !no_backing())
		rc = write_attr_retrying("backing_dev", "none");
	if (!rc && map) {
		ret = write_attr("backing_dev", dev);
		if (ret == -EBUSY)
			return write_attr_retrying("backing_dev", dev);
		if (ret != -EOPNOTSUPP)
			return ret ? write_failed("backing_dev", dev, ret) : RC_OK;
		printf("%s: its filesystem cannot map it as it maps a swap file: on a loop device instead\n",
		       dev);
		rc = attach_backing_file(dev, 0, false, loop, sizeof(loop),
					 &loopfd);
		if (rc)
			return rc;
		dev = loop;
	}
	if (!rc)
		rc = write_attr_retrying("backing_dev", dev);
	/* The module holds the loop device now, or it goes (autoclear). */
	if (loopfd >= 0)
		close(loopfd);
	return rc;
}

/*
 * multi_page, written while the device holds no data and is not open:
 * first, before the backing device and disksize. A backing device may sit
 * beside units: writeback splits a unit and writes its pages back one by
 * one.
 */
static int set_multi_page(const struct settings *s)
{
	char val[16];

	if (!s->has_multi_page)
		return RC_OK;
	bfmt(val, sizeof(val), "%u", s->multi_page);
	return write_attr_retrying("multi_page", val);
}

/*
 * swapon of the device at @prio (-1: the kernel's choice). Without the
 * free hook (free_notify off) swap's discards are what frees the slots
 * swap lets go of: --discard=pages.
 */
static int swap_on(long prio)
{
	char p[24], *sw[6];
	int n = 0;

	sw[n++] = "swapon";
	if (prio >= 0) {
		bfmt(p, sizeof(p), "%ld", prio);
		sw[n++] = "-p";
		sw[n++] = p;
	}
	if (!free_notify_on()) {
		sw[n++] = "--discard=pages";
		printf("%s: free_notify is off: swapon --discard=pages (slots are freed a swap cluster at a time)\n",
		       DEV_PATH);
	}
	sw[n++] = DEV_PATH;
	sw[n] = NULL;
	return run_program(false, sw);
}

int cmd_setup(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "size", required_argument, NULL, 's' },
		{ "algorithm", required_argument, NULL, 'a' },
		{ "mem-limit", required_argument, NULL, 'm' },
		{ "backing-dev", required_argument, NULL, 'B' },
		{ "backing-size", required_argument, NULL, 'b' },
		{ "writeback-limit", required_argument, NULL, 'w' },
		{ "writeback-direct", required_argument, NULL, 'D' },
		{ "writeback-shrinker", required_argument, NULL, 'S' },
		{ "writeback-checksum", required_argument, NULL, 'K' },
		{ "writeback-encrypt", required_argument, NULL, 'E' },
		{ "writeback-batch-size", required_argument, NULL, 'Q' },
		{ "algorithm-params", required_argument, NULL, 'p' },
		{ "priority", required_argument, NULL, 'P' },
		{ "disable-zswap", no_argument, NULL, 'Z' },
		{ "mode", required_argument, NULL, 'M' },
		{ "backing-discard", required_argument, NULL, 'G' },
		{ "multi-page", required_argument, NULL, 'U' },
		{ "no-swapon", no_argument, NULL, 'N' },
		{ "config", required_argument, NULL, 'c' },
		{ "system-config", no_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const keys[] = {
		['s'] = "size", ['a'] = "algorithm", ['m'] = "mem_limit",
		['B'] = "backing_dev", ['w'] = "writeback_limit",
		['D'] = "writeback_direct", ['S'] = "writeback_shrinker",
		['K'] = "writeback_checksum", ['Q'] = "writeback_batch_size",
		['E'] = "writeback_encrypt",
		['p'] = "algorithm_params", ['P'] = "priority",
		['b'] = "backing_size", ['M'] = "mode",
		['G'] = "backing_discard", ['U'] = "multi_page",
	};
	struct settings cli = { 0 }, s = { 0 };
	char err[PATH_MAX + 128], val[96], sz[32], params[300];
	const char *config = NULL;
	bool system_config = false, off;
	int c, rc = RC_OK, ret, i;
	long prio;

	while ((c = next_opt(argc, argv, ":s:a:m:B:w:p:Zc:Ch", opts, &rc)) != -1) {
		switch (c) {
		case 'p':
			if (parse_prio(optarg, &prio))
				return fail(RC_USAGE, "setup: -p is --algorithm-params, as in zramctl; for the swap priority use --priority %s",
					    optarg);
			/* fall through */
		case 's': case 'a': case 'm': case 'B': case 'w': case 'P':
		case 'b':
		case 'D': case 'S': case 'K': case 'Q': case 'E':
		case 'M': case 'G': case 'U':
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
		case 'C': system_config = true; break;
		case 'h': usage(stdout); return RC_OK;
		default: return rc;
		}
	}
	if (optind < argc)
		return fail(RC_USAGE, "setup: unexpected argument '%s'",
			    argv[optind]);
	rc = load_config(config, system_config, &s, &off);
	if (rc || off)
		return rc;
	merge_settings(&s, &cli);
	rc = zswap_mode(&s);
	if (rc)
		return rc;
	rc = need_root("setup");
	if (rc)
		return rc;

	rc = load_module();
	if (rc)
		return rc;
	if (swapped_on(NULL))
		return fail_in_use();
	rc = refuse_resume();
	if (rc)
		return rc;
	rc = wait_node_unlocked();
	if (rc)
		return rc;
	rc = refuse_data();
	if (rc)
		return rc;

	if (s.mode_zswap) {
		ret = zswap_enabled() ? 0 : write_sys(ZSWAP_ENABLED, "Y");
		if (ret == -ENOENT)
			return fail(RC_FAIL, "mode zswap: zswap is not in this kernel");
		else if (ret)
			return fail(RC_FAIL, "mode zswap: cannot enable zswap: %s/%s: %s",
				    sysroot, ZSWAP_ENABLED, strerror(-ret));
	} else if (s.has_disable_zswap && s.disable_zswap) {
		ret = write_sys(ZSWAP_ENABLED, "N");
		if (ret == -ENOENT)
			printf("zswap is not in this kernel: nothing to disable\n");
		else if (ret)
			return fail(RC_FAIL, "cannot disable zswap: %s/%s: %s",
				    sysroot, ZSWAP_ENABLED, strerror(-ret));
	} else {
		zswap_warning();
	}
	rc = set_multi_page(&s);
	if (rc)
		return rc;
	if (s.has_backing_dev) {
		rc = set_backing(&s);
		if (rc)
			return rc;
	}
	if (s.has_algorithm) {
		rc = write_attr_retrying("comp_algorithm", s.algorithm);
		if (rc)
			return rc;
	}
	if (s.has_algorithm_params) {
		rc = write_attr_retrying("algorithm_params", s.algorithm_params);
		if (rc)
			return rc;
	}
	for (i = 0; i < s.n_recomp; i++) {
		bfmt(val, sizeof(val), "algo=%s priority=%d", s.recomp[i], i + 1);
		rc = write_attr_retrying("recomp_algorithm", val);
		if (rc)
			return rc;
		if (!s.recomp_params[i][0])
			continue;
		bfmt(params, sizeof(params), "priority=%d %s", i + 1,
		     s.recomp_params[i]);
		rc = write_attr_retrying("algorithm_params", params);
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
	if (s.has_writeback_checksum) {
		rc = write_attr_checked("writeback_checksum",
					s.writeback_checksum ? "1" : "0");
		if (rc)
			return rc;
	}
	if (s.has_writeback_encrypt) {
		rc = write_attr_checked("writeback_encrypt",
					s.writeback_encrypt ? "1" : "0");
		if (rc)
			return rc;
	}
	if (s.has_writeback_batch_size) {
		bfmt(val, sizeof(val), "%" PRIu64, s.writeback_batch_size);
		rc = write_attr_checked("writeback_batch_size", val);
		if (rc)
			return rc;
	}
	if (s.has_backing_discard) {
		rc = write_attr_checked("backing_discard",
					s.backing_discard ? "1" : "0");
		if (rc)
			return rc;
	}

	if (read_attr("disksize", val, sizeof(val)) ||
	    !parse_count(val, &s.size, 0))
		s.size = 0;
	human_size(s.size, sz, sizeof(sz));
	swapon_cost_warning();
	prio = s.has_priority ? s.priority : DEFAULT_PRIO;
	ret = RUN(true, "mkswap", DEV_PATH);
	if (ret)
		return fail(RC_FAIL, "mkswap %s failed (exit %d)", DEV_PATH, ret);
	if (s.has_swapon && !s.swapon) {
		printf("%s: %s, ready for swapon (swap not turned on)\n",
		       DEV_PATH, sz);
		return RC_OK;
	}
	ret = swap_on(prio);
	if (ret)
		return fail(RC_FAIL, "swapon %s failed (exit %d)", DEV_PATH, ret);
	swapped_on(&prio);		/* the kernel's choice for -1 */
	printf("%s: %s, swap on, priority %ld\n", DEV_PATH, sz, prio);
	return RC_OK;
}

/*
 * Our swapoff failed and /proc/swaps may still list the device: another
 * swapoff of it can be running (at shutdown or soft-reboot systemd's
 * swap unit swaps it off beside this service's stop, and the kernel
 * refuses a second swapoff while the first takes the pages back). Wait
 * for it as long as it takes pages back (the device's Used falls within
 * each SWAPOFF_STEP_MS); true once the device is off.
 */
#define SWAPOFF_STEP_MS	2000
#define SWAPOFF_POLL_MS	100

static bool swapped_off_elsewhere(void)
{
	long used = swap_used_kib(), now;
	int ms = 0;

	while (used >= 0) {
		sleep_ms(SWAPOFF_POLL_MS);
		now = swap_used_kib();
		if (now < 0)
			return true;
		ms += SWAPOFF_POLL_MS;
		if (now < used) {
			used = now;
			ms = 0;
		} else if (ms >= SWAPOFF_STEP_MS) {
			return false;
		}
	}
	return true;
}

int cmd_reset(int argc, char **argv)
{
	int rc = parse_help_only(argc, argv, 0), ret;

	if (rc)
		return rc < 0 ? RC_OK : rc;
	rc = need_root_and_device("reset");
	if (rc)
		return rc;
	if (swapped_on(NULL)) {
		ret = RUN(false, "swapoff", DEV_PATH);
		if (ret && !swapped_off_elsewhere())
			return fail(RC_FAIL, "swapoff %s failed (exit %d): not enough memory to take the swapped pages back?",
				    DEV_PATH, ret);
	}
	rc = wait_node_unlocked();
	if (!rc)
		rc = write_attr_retrying("reset", "1");
	if (rc)
		return rc;
	printf("%s: reset\n", DEV_PATH);
	return RC_OK;
}
