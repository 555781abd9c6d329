// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswapctl: set up, inspect and maintain /dev/ghostswap, the ghostswap
 * compressed swap device. Modelled on util-linux zramctl.
 *
 * This file: main(), the environment (GHOSTSWAP_*) and the command
 * table. What each other file holds: ghostswapctl.h.
 */
#include "ghostswapctl.h"

#include <stdlib.h>
#include <string.h>

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

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
	v = getenv("GHOSTSWAP_CONFROOT");
	if (v && *v)
		bfmt(confroot, sizeof(confroot), "%s", v);
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
		{ "dict", cmd_dict },
		{ "config", cmd_config },
		{ "doctor", cmd_doctor },
		{ "metrics", cmd_metrics },
		{ "generator", cmd_generator },
	};
	static char status_name[] = "status";
	size_t i;

	setup_env();
	opterr = 0;
	/* systemd runs the generator: ghostswap-generator DIR [DIR DIR]. */
	if (!strcmp(base_name(argv[0]), "ghostswap-generator"))
		return cmd_generator(argc, argv);
	/* No command: status, or zramctl's options, or zramctl's DEVICE. */
	if (argc < 2 || argv[1][0] == '-' || argv[1][0] == '/' ||
	    !strcmp(argv[1], "ghostswap")) {
		if (argc >= 2 && (!strcmp(argv[1], "-h") ||
				  !strcmp(argv[1], "--help"))) {
			usage(stdout);
			return RC_OK;
		}
		if (argc >= 2 && (!strcmp(argv[1], "-V") ||
				  !strcmp(argv[1], "--version"))) {
			printf("%s %s\n", PROG, GS_VERSION);
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
