// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswapctl writeback and idle: write stored pages to the backing
 * device; mark pages idle.
 */
#include "ghostswapctl.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>

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

/*
 * A directory as the backing store grows by a chunk at a time, and the
 * module's writeback never waits for it: a write of writeback stops
 * with ENOSPC at the top of the chunks in place while the next one is
 * being added. Whether it is worth going on: the backing store is a
 * directory, it could add chunks so far (no grow_error), and within
 * GROW_WAIT_MS its capacity rises above what it holds.
 */
#define GROW_WAIT_MS	10000
#define GROW_POLL_MS	50

static bool backing_grew(void)
{
	char path[PATH_MAX];
	uint64_t bd[BD_STAT_COLS];
	struct stat st;
	int ms;

	if (read_attr("backing_dev", path, sizeof(path)) ||
	    stat(path, &st) || !S_ISDIR(st.st_mode))
		return false;
	for (ms = 0; ms <= GROW_WAIT_MS; ms += GROW_POLL_MS) {
		if (read_bd_stat(bd) || bd[BD_GROW_ERR])
			return false;
		if (bd[BD_CAPACITY] > bd[BD_COUNT])
			return true;
		sleep_ms(GROW_POLL_MS);
	}
	return false;
}

static int write_back(const char *val)
{
	int64_t before, after, last;
	int ret, stalled = 0;
	char what[64];

	if (!dev_present())
		return fail_not_loaded();
	if (!attr_exists("writeback"))
		return fail(RC_NODEV, "this ghostswap module has no writeback (no %s/%s/writeback)",
			    sysroot, DEV_SYS);
	before = backing_pages();
	after = before;
	/* Again while a directory grows and the writes move pages. */
	do {
		last = after;
		ret = write_attr("writeback", val);
		after = backing_pages();
		stalled += after <= last;
	} while (ret == -ENOSPC && stalled < 2 && backing_grew());
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

int cmd_writeback(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "system-config", no_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const modes[] = {
		"idle", "huge", "huge_idle", "incompressible", "all", NULL,
	};
	struct settings s = { 0 };
	const char *config = NULL;
	bool system_config = false, off;
	char val[64], secs[32];
	int c, rc = RC_OK, i, nargs;
	uint64_t n;

	while ((c = next_opt(argc, argv, ":c:Ch", opts, &rc)) != -1) {
		switch (c) {
		case 'c': config = optarg; break;
		case 'C': system_config = true; break;
		case 'h': usage(stdout); return RC_OK;
		default: return rc;
		}
	}
	nargs = argc - optind;
	if (config || system_config) {
		if (nargs)
			return fail(RC_USAGE, "writeback: --config and --system-config take no mode");
		rc = load_config(config, system_config, &s, &off);
		if (rc || off)
			return rc;
		if (!s.has_idle_writeback)
			return fail(RC_USAGE, "%s: no idle_writeback set: nothing to write back",
				    config ? config : "the system's configuration");
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

int cmd_idle(int argc, char **argv)
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
