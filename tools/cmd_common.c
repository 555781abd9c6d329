// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswapctl: what the commands share. --help, the option parsing with
 * its one-line errors, and the checks before a command changes the device.
 */
#include "ghostswapctl.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

void usage(FILE *out)
{
	fputs(
"Usage:\n"
" " PROG " [status] [-b] [-o COLS] [-J | --raw] [-n] [DEVICE]\n"
" " PROG " -s SIZE [-a ALG] [-p PARAMS] [-t N] DEVICE | -f   (zramctl's)\n"
" " PROG " -r DEVICE | -f                                   (zramctl's)\n"
" " PROG " setup [-s SIZE] [-a ALG] [-p PARAMS] [-m SIZE] [-B DEV] [-w PAGES]\n"
"              [--priority N] [--disable-zswap] [--no-swapon] [-c FILE | -C]\n"
" " PROG " reset\n"
" " PROG " writeback idle|huge|huge_idle|incompressible|all [PAGES]\n"
" " PROG " writeback PAGES | writeback --config FILE | writeback -C\n"
" " PROG " idle all|SECONDS\n"
" " PROG " compact [--backing]\n"
" " PROG " check\n"
" " PROG " dict [--pages N] [--size SIZE] FILE\n"
" " PROG " config [-c FILE]\n"
" " PROG " doctor\n"
" " PROG " metrics [-d DIR | -c FILE | -C]\n"
" " PROG " generator DIR   (systemd runs it as ghostswap-generator)\n"
"\n"
"Set up, inspect and maintain the ghostswap compressed swap device,\n"
"" DEV_PATH ". See ghostswapctl(8), ghostswap(4), ghostswap.conf(5).\n"
"\n"
"Commands:\n"
" status            show the device as a table (the default); DEVICE is\n"
"                   /dev/ghostswap (or ghostswap), as zramctl takes one\n"
" setup             load the module, configure the device, mkswap, swapon\n"
" reset             swapoff, then reset the device (its data is dropped)\n"
" writeback         write stored pages to the backing device: MODE, or\n"
"                   the PAGES coldest pages, or the config's idle_writeback\n"
" idle              mark pages idle: all, or those not accessed for SECONDS\n"
" compact           compact the memory pool (--backing: the backing device)\n"
" check             compare the table with the backing device's reverse map\n"
" dict              train a zstd dictionary (for algorithm_params) from a\n"
"                   sample of the system's anonymous memory, with zstd(1):\n"
"                   --pages N sampled (default 2000), --size of the\n"
"                   dictionary (default 64K)\n"
" config            print the system's configuration (or FILE's): each\n"
"                   key, the file and line that set it, what a size\n"
"                   expression comes to here\n"
" doctor            check the chain: DKMS build, module version, udev rule,\n"
"                   unit, configuration, zswap, swap priority, backing\n"
"                   device; one line each, exit 1 if one fails\n"
" metrics           print the device's figures for Prometheus (text format\n"
"                   0.0.4), or write them whole into node_exporter's\n"
"                   textfile directory: -d, --textfile-dir DIR; -c FILE or\n"
"                   -C: the configuration's metrics_dir (default\n"
"                   " METRICS_DIR ")\n"
" generator         write DIR/ghostswap.service.d/ ordering the service\n"
"                   after the configured backing device\n"
"\n"
"Status options:\n"
" -b, --bytes            sizes in bytes\n"
" -o, --output COLS      columns to print, comma separated; +COLS adds to\n"
"                        the default ones\n"
"     --output-all       all columns\n"
" -J, --json             JSON (sizes in bytes, numbers as numbers)\n"
"     --raw              raw output: one space between fields, no alignment\n"
" -n, --noheadings       no header line\n"
"\n"
"zramctl's options (without a command):\n"
" -s, --size SIZE        reset the device, then set its size (and -a, -p);\n"
"                        no mkswap, no swapon: what zramctl does\n"
" -a, --algorithm ALG    with -s: compression algorithm\n"
" -p, --algorithm-params PARAMS\n"
"                        with -s: algorithm_params, e.g. 'level=8'\n"
" -t, --streams N        with -s: accepted and ignored (one stream per CPU)\n"
" -f, --find             print the device if it is free (not swapped on, no\n"
"                        data); with -s, set it up and print it\n"
" -r, --reset DEVICE     reset the device; refused while it is swapped on\n"
"\n", out);
	fputs(
"Setup options (each overrides the configuration file):\n"
" -s, --size SIZE        device size: bytes, suffix K M G T P (1M..16T-8K),\n"
"                        or an expression of ram in MiB: 'min(ram * 4, 64G)'\n"
" -a, --algorithm ALG    compression algorithm\n"
" -p, --algorithm-params PARAMS\n"
"                        algorithm_params: 'level=8', 'dict=/etc/zstd.dict'\n"
"     --multi-page 0|4|8|16\n"
"                        compress a large folio's pages as one unit, up to\n"
"                        that many (0: each page alone)\n"
" -m, --mem-limit SIZE   pool memory limit (a size or expression); 0: none\n"
" -B, --backing-dev DEV  backing device for writeback: a block device, a\n"
"                        file (on a loop device with direct I/O), or none\n"
"     --backing-size SIZE  create the backing file at SIZE if missing\n"
"     --backing-discard yes|no\n"
"                        discard backing slots as they are freed\n"
" -w, --writeback-limit PAGES|none\n"
"                        pages writeback may write (until set again), or none\n"
"     --writeback-direct none|huge|incompressible|all\n"
"                        pages that skip memory for the backing device\n"
"     --writeback-shrinker yes|no\n"
"                        write back under memory pressure\n"
"     --writeback-checksum yes|no\n"
"                        check written-back pages on every read\n"
"     --writeback-encrypt yes|no\n"
"                        encrypt what goes to the backing device\n"
"     --writeback-batch-size PAGES\n"
"                        pages a writeback has in flight, 1..256\n"
"     --priority N       swap priority, -1..32767 (default " DEFAULT_PRIO_S "; -1: kernel's)\n"
" -Z, --disable-zswap    turn zswap off\n"
"     --mode standalone|zswap\n"
"                        zswap: zswap on in front, ghostswap behind it\n"
"                        storing pages as they are (writeback_direct all),\n"
"                        a backing file created sparse, backing_discard on\n"
"     --no-swapon        configure and mkswap, but do not swapon\n"
" -c, --config FILE      read settings from FILE (ghostswap.conf(5))\n"
" -C, --system-config    read the system's configuration: " CONF_NAME " and\n"
"                        " DROPIN_DIR "/*.conf in /etc, /run,\n"
"                        /usr/local/lib, /usr/lib; nothing is done when the\n"
"                        kernel command line has " CMDLINE_KEY "=0\n"
"\n"
" -h, --help             this help\n"
" -V, --version          version\n"
"\n"
"Columns (default: NAME ALGORITHM DISKSIZE DATA COMPR TOTAL RATIO WRITTEN\n"
"CLUSTERS MOUNTPOINT):\n", out);
	print_column_help(out);
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
" GHOSTSWAP_PROC    root of /proc/swaps, /proc/meminfo, /proc/cmdline and\n"
"                   the processes dict samples (default /proc)\n"
" GHOSTSWAP_CONFROOT  prefix of the configuration's directories (default\n"
"                   none: /etc, /run, /usr/local/lib, /usr/lib)\n"
" GHOSTSWAP_DRYRUN  1: print the commands instead of running them (the\n"
"                   default when GHOSTSWAP_SYSFS is set); 0: run them\n"
" GHOSTSWAP_TRACE   FILE: append each sysfs write and command to FILE\n",
	      out);
}

/* Options parsing shared by every command: returns the option or -1. */
int next_opt(int argc, char **argv, const char *shortopts,
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

/* Commands without options still take --help. */
int parse_help_only(int argc, char **argv, int max_args)
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

/*
 * A write that needs the device unused: on EBUSY while swap is off, the
 * holder may be udev probing the device (or a process that closed the
 * node has not finished releasing it); settle, wait for the node's lock
 * and try once more.
 */
int write_attr_retrying(const char *attr, const char *val)
{
	int ret = write_attr(attr, val), rc;

	if (ret == -EBUSY && !swapped_on(NULL)) {
		udev_settle();
		rc = wait_node_unlocked();
		if (rc)
			return rc;
		ret = write_attr(attr, val);
	}
	return ret ? write_failed(attr, val, ret) : RC_OK;
}

/* The module loaded (modprobe if need be), udev settled on the device. */
int load_module(void)
{
	int ret;

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
	return dev_present() ? RC_OK : fail_not_loaded();
}

/*
 * A device named on the command line, as zramctl takes one: the node or
 * the kernel name; there is one ghostswap device.
 */
int check_device_arg(const char *arg)
{
	if (!strcmp(arg, DEV_PATH) || !strcmp(arg, "ghostswap"))
		return RC_OK;
	return fail(RC_USAGE, "%s: not a ghostswap device (there is one: %s)",
		    arg, DEV_PATH);
}

/* Commands that change the device need root (unless on a fake tree). */
int need_root(const char *cmd)
{
	if (geteuid() != 0 && !sysfs_overridden)
		return fail(RC_FAIL, "permission denied: '%s %s' must be run as root",
			    PROG, cmd);
	return RC_OK;
}

/* need_root(), then the module loaded: what most commands check first. */
int need_root_and_device(const char *cmd)
{
	int rc = need_root(cmd);

	if (rc)
		return rc;
	return dev_present() ? RC_OK : fail_not_loaded();
}
