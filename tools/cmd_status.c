// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswapctl status: the device as a table (the default command), and
 * zramctl's other forms of that command line, as zramctl does them:
 *   ghostswapctl [-o COLS ...] [DEVICE]             the table
 *   ghostswapctl -s SIZE [-a ALG] [-p PARAMS] [-t N] DEVICE | -f
 *                    reset, then configure (no mkswap, no swapon)
 *   ghostswapctl -f                                 the device, if free
 *   ghostswapctl -r DEVICE                          reset
 */
#include "ghostswapctl.h"

#include <inttypes.h>
#include <string.h>

/* zramctl's "find": the device, unless it is swapped on or holds data. */
static int find_free(void)
{
	uint64_t mm[MM_STAT_COLS];
	int rc = load_module();

	if (rc)
		return rc;
	if (swapped_on(NULL))
		return fail(RC_BUSY, "no free ghostswap device: %s is swapped on",
			    DEV_PATH);
	rc = read_mm_stat(mm);
	if (rc)
		return stat_failed("mm_stat", rc);
	if (mm[MM_ORIG])
		return fail(RC_BUSY, "no free ghostswap device: %s holds data",
			    DEV_PATH);
	return RC_OK;
}

/*
 * zramctl -r: reset a device that is not in use. Unlike "ghostswapctl
 * reset", no swapoff: an active swap device is refused, as zramctl's is.
 */
static int zram_reset(void)
{
	int rc = need_root_and_device("-r");

	if (rc)
		return rc;
	if (swapped_on(NULL))
		return fail(RC_BUSY, "%s is swapped on: swapoff first, or use 'ghostswapctl reset'",
			    DEV_PATH);
	rc = wait_node_unlocked();
	return rc ? rc : write_attr_retrying("reset", "1");
}

/* zramctl -s: reset, algorithm, params, size; streams are per CPU here. */
static int zram_create(const struct settings *s, bool streams, bool find)
{
	char val[32];
	int rc = need_root("-s");

	if (rc)
		return rc;
	rc = find ? find_free() : load_module();
	if (rc)
		return rc;
	if (swapped_on(NULL))
		return fail_in_use();
	rc = wait_node_unlocked();
	if (rc)
		return rc;
	if (streams)
		warning("--streams ignored: ghostswap has one compression stream per online CPU");
	rc = write_attr_retrying("reset", "1");
	if (!rc && s->has_algorithm)
		rc = write_attr_retrying("comp_algorithm", s->algorithm);
	if (!rc && s->has_algorithm_params)
		rc = write_attr_retrying("algorithm_params", s->algorithm_params);
	bfmt(val, sizeof(val), "%" PRIu64, s->size);
	if (!rc)
		rc = write_attr_retrying("disksize", val);
	if (!rc && find)
		printf("%s\n", DEV_PATH);
	return rc;
}

/*
 * Swap is not on /dev/ghostswap: one line on why, when the boot setup
 * says: it failed (its last journal line), or the kernel command line
 * turned it off.
 */
static void explain_no_swap(void)
{
	char why[1024];

	if (setup_failed(why, sizeof(why)))
		warning("the boot setup failed: " SETUP_UNIT ": %s (fix it, then 'systemctl restart " SETUP_UNIT "'; 'ghostswapctl doctor' checks the rest)",
			why);
	else if (cmdline_switch() == 0)
		warning("no swap on %s: %s", DEV_PATH, SWITCH_OFF_MSG);
}

int cmd_status(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "bytes", no_argument, NULL, 'b' },
		{ "output", required_argument, NULL, 'o' },
		{ "output-all", no_argument, NULL, 'A' },
		{ "json", no_argument, NULL, 'J' },
		{ "raw", no_argument, NULL, 'R' },
		{ "noheadings", no_argument, NULL, 'n' },
		{ "reset", no_argument, NULL, 'r' },
		{ "find", no_argument, NULL, 'f' },
		{ "size", required_argument, NULL, 's' },
		{ "algorithm", required_argument, NULL, 'a' },
		{ "algorithm-params", required_argument, NULL, 'p' },
		{ "streams", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool bytes = false, json = false, raw = false, headings = true;
	bool reset = false, find = false, streams = false;
	int cols[MAX_COLUMNS], ncols, c, rc = RC_OK;
	char err[PATH_MAX + 128];
	struct settings s = { 0 };
	struct dev_info d;
	uint64_t n;

	ncols = default_columns(cols);
	while ((c = next_opt(argc, argv, ":bo:Jnrfs:a:p:t:h", opts, &rc)) != -1) {
		switch (c) {
		case 'b': bytes = true; break;
		case 'o':
			rc = parse_columns(optarg, cols, &ncols);
			if (rc)
				return rc;
			break;
		case 'A': ncols = all_columns(cols); break;
		case 'J': json = true; break;
		case 'R': raw = true; break;
		case 'n': headings = false; break;
		case 'r': reset = true; break;
		case 'f': find = true; break;
		case 's':
			if (!set_setting(&s, "size", optarg, err, sizeof(err)))
				return fail(RC_USAGE, "%s", err);
			break;
		case 'a':
			if (!set_setting(&s, "algorithm", optarg, err, sizeof(err)))
				return fail(RC_USAGE, "%s", err);
			break;
		case 'p':
			if (!set_setting(&s, "algorithm_params", optarg, err,
					 sizeof(err)))
				return fail(RC_USAGE, "%s", err);
			break;
		case 't':
			if (!parse_count(optarg, &n, 1))
				return fail(RC_USAGE, "bad --streams '%s' (want a number)",
					    optarg);
			streams = true;
			break;
		case 'h': usage(stdout); return RC_OK;
		default: return rc;
		}
	}
	if (argc - optind > 1)
		return fail(RC_USAGE, "%s: unexpected argument '%s'", argv[0],
			    argv[optind + 1]);
	if (optind < argc) {
		rc = check_device_arg(argv[optind]);
		if (rc)
			return rc;
	}
	if (reset) {
		/* -r was --raw here before it meant zramctl's --reset. */
		if (optind == argc)
			return fail(RC_USAGE, "-r is --reset, as in zramctl, and needs the device: '%s -r %s' (raw output is --raw)",
				    PROG, DEV_PATH);
		if (find || s.has_size)
			return fail(RC_USAGE, "--reset excludes --find and --size");
		rc = zram_reset();
		return rc ? rc : (printf("%s: reset\n", DEV_PATH), RC_OK);
	}
	if (find && optind < argc)
		return fail(RC_USAGE, "--find excludes a device argument");
	if ((s.has_algorithm || s.has_algorithm_params || streams) && !s.has_size)
		return fail(RC_USAGE, "--algorithm, --algorithm-params and --streams go with --size");
	if (s.has_size) {
		if (!find && optind == argc)
			return fail(RC_USAGE, "--size needs the device, or --find");
		return zram_create(&s, streams, find);
	}
	if (find) {
		rc = find_free();
		return rc ? rc : (printf("%s\n", DEV_PATH), RC_OK);
	}
	if (json && raw)
		return fail(RC_USAGE, "--json and --raw exclude each other");
	if (!dev_present()) {
		explain_no_swap();
		return fail_not_loaded();
	}
	rc = read_dev_info(&d);
	if (rc)
		return rc;
	if (!d.swap)
		explain_no_swap();
	zswap_warning();
	if (json) {
		print_json(&d, cols, ncols);
	} else {
		print_table(&d, cols, ncols, bytes, raw, headings);
		if (!raw)
			zswap_front_status();
	}
	return RC_OK;
}
