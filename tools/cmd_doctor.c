// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswapctl doctor: checks the chain from package to swap, one line
 * per check: "ok", "warn" or "FAIL", what was found and what to do.
 * DKMS build for this kernel, the module loaded and its version against
 * the tool's, the udev rule, the unit enabled and not failed, the
 * configuration, zswap (and the large-folio swap-in trap), swap on and
 * its priority among the swap devices, the backing device, and where
 * hibernation would write its image. Queries only:
 * it changes nothing. Exit 1 when a check fails, 0 otherwise.
 */
#include "ghostswapctl.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#define UNIT	SETUP_UNIT
#define RULE	"60-ghostswap.rules"

static int failures;

__attribute__((format(printf, 2, 3)))
static void report(const char *level, const char *fmt, ...)
{
	va_list ap;

	if (!strcmp(level, "FAIL"))
		failures++;
	printf("%-5s ", level);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* The first line of @s, trimmed, in place. */
static char *first_line(char *s)
{
	s[strcspn(s, "\n")] = '\0';
	return trim(s);
}

static void check_dkms(void)
{
	char out[1024];
	struct utsname u;
	int ret;

	if (uname(&u))
		return;
	ret = QUERY(out, sizeof(out), "dkms", "status", "-m", "ghostswap",
		    "-k", u.release);
	if (ret == 127) {
		report("warn", "dkms: no dkms program: the module is not rebuilt for new kernels");
		return;
	}
	if (strstr(out, "installed"))
		report("ok", "dkms: %s", first_line(out));
	else
		report("FAIL", "dkms: no ghostswap build installed for kernel %s: 'dkms autoinstall -k %s'",
		       u.release, u.release);
}

/* Module loaded, and the same version as the tool. */
static bool check_module(void)
{
	char ver[64];

	if (!dev_present()) {
		report("FAIL", "module: not loaded (no %s/%s): 'modprobe ghostswap', or 'systemctl start " UNIT "'",
		       sysroot, DEV_SYS);
		return false;
	}
	if (read_sys("module/ghostswap/version", ver, sizeof(ver)))
		report("warn", "module: loaded, its version unknown (tools %s)",
		       GS_VERSION);
	else if (strcmp(ver, GS_VERSION))
		report("warn", "module: version %s loaded, tools %s: reload the module ('ghostswapctl reset; rmmod ghostswap; modprobe ghostswap') or install matching tools",
		       ver, GS_VERSION);
	else
		report("ok", "module: version %s loaded, as the tools", ver);
	if (!free_notify_on())
		report("warn", "module: free_notify is off (this kernel has no free hook, or it was set so): a slot swap frees keeps its data until swap discards its swap cluster; swap must be on with --discard=pages ('ghostswapctl setup' does it), else such slots stay until a reset");
	return true;
}

static void check_udev_rule(void)
{
	static const char *const dirs[] = {
		"/etc/udev/rules.d", "/run/udev/rules.d",
		"/usr/local/lib/udev/rules.d", "/usr/lib/udev/rules.d",
		"/lib/udev/rules.d",
	};
	char path[PATH_MAX];
	struct stat st;
	size_t i;

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		bfmt(path, sizeof(path), "%s%s/" RULE, confroot, dirs[i]);
		if (!stat(path, &st)) {
			report("ok", "udev: %s/" RULE, dirs[i]);
			return;
		}
	}
	report("warn", "udev: no " RULE " in /etc, /run, /usr/lib or /lib udev/rules.d: the device appearing does not start " UNIT " ('make install' puts it there)");
}

static void check_unit(void)
{
	char out[256], log[1024];
	int ret;

	ret = QUERY(out, sizeof(out), "systemctl", "is-enabled", UNIT);
	if (ret == 127) {
		report("warn", "systemd: no systemctl: nothing sets the device up at boot");
		return;
	}
	first_line(out);
	if (!strcmp(out, "enabled"))
		report("ok", "systemd: " UNIT " enabled");
	else if (!out[0])
		report("warn", "systemd: no " UNIT " ('make install' puts it in place)");
	else
		report("warn", "systemd: " UNIT " is %s: 'systemctl enable " UNIT "' to set the device up at boot (or the udev rule with modules-load.d)",
		       out);
	if (setup_failed(log, sizeof(log)))
		report("FAIL", "systemd: " UNIT " failed: %s; fix it, then 'systemctl restart " UNIT "'",
		       log);
}

static void check_config(void)
{
	struct settings s = { 0 };
	size_t n = 0;
	int rc;

	rc = read_system_config(&s, NULL, &n);
	if (rc)
		report("FAIL", "configuration: the error above stops the boot setup ('ghostswapctl config' lists the files)");
	else if (!n)
		report("warn", "configuration: no " CONF_NAME " nor drop-in: " UNIT " does not run at boot");
	else
		report("ok", "configuration: %zu file%s, valid ('ghostswapctl config' shows them)",
		       n, n == 1 ? "" : "s");
	if (cmdline_switch() == 0)
		report("warn", "kernel command line: " CMDLINE_KEY "=0: the boot setup is off for this boot");
}

/*
 * zswap on compresses pages before ghostswap sees them; and once zswap
 * has been enabled in a boot, the kernel turns large-folio (mTHP)
 * swap-in off until the next boot, whatever is done at run time.
 */
static void check_zswap(void)
{
	char cmdline[4096];
	bool on, at_boot;

	if (!sys_exists(ZSWAP_ENABLED)) {
		report("ok", "zswap: not in this kernel");
		return;
	}
	on = zswap_enabled();
	if (!read_cmdline(cmdline, sizeof(cmdline)))
		cmdline[0] = '\0';
	at_boot = strstr(cmdline, "zswap.enabled=1") ||
		  strstr(cmdline, "zswap.enabled=Y") ||
		  strstr(cmdline, "zswap.enabled=y");
	if (on)
		report("warn", "zswap: enabled: it compresses pages before they reach " DEV_PATH " ('disable_zswap = yes'; and boot with zswap.enabled=0, see below)");
	if (on || at_boot)
		report("warn", "zswap: enabled in this boot: large-folio (mTHP) swap-in stays off until a boot with zswap.enabled=0 on the kernel command line");
	else
		report("ok", "zswap: off");
}

/* Whether a boot can read a hibernation image back (hibernation.c). */
static void check_hibernation(void)
{
	static const char *const level[] = { "ok", "warn", "FAIL" };
	char msg[2 * PATH_MAX + 512];

	report(level[hibernation_check(msg, sizeof(msg))], "hibernation: %s",
	       msg);
}

/* Another swap device the kernel uses before ours (*@arg: our priority). */
static bool warn_before(const struct swap_line *sw, void *arg)
{
	long mine = *(long *)arg;

	if (!sw->ours && sw->prio >= mine)
		report("warn", "swap: %s has priority %ld, not below %s's %ld: the kernel uses it first ('priority =' above %ld)",
		       sw->file, sw->prio, DEV_PATH, mine, sw->prio);
	return false;
}

static bool is_before(const struct swap_line *sw, void *arg)
{
	return !sw->ours && sw->prio >= *(long *)arg;
}

/* Swap on, and no other swap device before it. */
static void check_swap(void)
{
	long ours;

	if (!swapped_on(&ours)) {
		report("warn", "swap: %s is not swapped on: 'systemctl start " UNIT "' or 'ghostswapctl setup'",
		       DEV_PATH);
		return;
	}
	if (each_swap(is_before, &ours))
		each_swap(warn_before, &ours);
	else
		report("ok", "swap: %s on, priority %ld, used first", DEV_PATH,
		       ours);
}

/* A backing directory: its chunks in place, and whether it can grow. */
static void check_chunks(const char *dev, const uint64_t *bd)
{
	uint64_t mib = bd[BD_CAPACITY] * 4096 >> 20;
	int err = (int)bd[BD_GROW_ERR];

	if (!err) {
		report("ok", "backing directory: %" PRIu64 " MiB of chunk files in place, %" PRIu64 " MiB used",
		       mib, bd[BD_COUNT] * 4096 >> 20);
		return;
	}
	report("warn", "backing directory: %s cannot take a new chunk file (%s; %" PRIu64 " times so far): writeback takes no more pages than the %" PRIu64 " MiB in place hold, the rest stay in memory",
	       dev, err == ENOSPC ? "its filesystem is full" :
	       err == EAGAIN ? "its filesystem is frozen" : strerror(err),
	       bd[BD_GROW_ERRORS], mib);
}

static void check_backing(void)
{
	uint64_t bd[BD_STAT_COLS];
	char dev[PATH_MAX], how[PATH_MAX + 64];
	struct stat st;

	if (read_attr("backing_dev", dev, sizeof(dev)) || !dev[0] ||
	    !strcmp(dev, "none")) {
		report("ok", "backing device: none (no writeback tier in use)");
		return;
	}
	if (stat(dev, &st) || (!S_ISBLK(st.st_mode) && !S_ISREG(st.st_mode) &&
			       !S_ISDIR(st.st_mode))) {
		report("FAIL", "backing device: %s is gone or neither a block device, a file nor a directory", dev);
		return;
	}
	/*
	 * Which path the pages take: chunk files or a file mapped by the
	 * module, a loop device, a disk.
	 */
	if (S_ISDIR(st.st_mode))
		bfmt(how, sizeof(how), "%s (a directory of chunk files the module adds and maps: block I/O on its filesystem's disk)",
		     dev);
	else if (S_ISREG(st.st_mode))
		bfmt(how, sizeof(how), "%s (a file the module maps: block I/O on its filesystem's disk)",
		     dev);
	else if (!strncmp(dev, "/dev/loop", 9))
		bfmt(how, sizeof(how), "%s (a loop device)", dev);
	else
		bfmt(how, sizeof(how), "%s", dev);
	if (read_bd_stat(bd))
		memset(bd, 0, sizeof(bd));
	if (bd[BD_SUM_ERRORS])
		report("FAIL", "backing device: %s returned other data than was written for %" PRIu64 " pages (checksum mismatches in bd_stat; the reads failed, nothing wrong reached memory): replace the disk",
		       dev, bd[BD_SUM_ERRORS]);
	else if (bd[BD_WERR] || bd[BD_RERR])
		report("warn", "backing device: %s: %" PRIu64 " write and %" PRIu64 " read errors (bd_stat): check the disk",
		       dev, bd[BD_WERR], bd[BD_RERR]);
	else if (bd[BD_DISCARD_ERRORS])
		report("warn", "backing device: %s failed %" PRIu64 " discards (bd_stat): the space of freed pages was not given back; turn backing_discard off if it cannot discard",
		       dev, bd[BD_DISCARD_ERRORS]);
	else
		report("ok", "backing device: %s, no I/O errors", how);
	if (S_ISDIR(st.st_mode))
		check_chunks(dev, bd);
}

int cmd_doctor(int argc, char **argv)
{
	int rc = parse_help_only(argc, argv, 0);

	if (rc)
		return rc < 0 ? RC_OK : rc;
	failures = 0;
	check_dkms();
	if (check_module()) {
		check_swap();
		check_backing();
	}
	check_udev_rule();
	check_unit();
	check_config();
	check_zswap();
	check_hibernation();
	return failures ? RC_FAIL : RC_OK;
}
