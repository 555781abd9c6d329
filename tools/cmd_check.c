// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswapctl check: the module's debugfs consistency check of the table
 * against the backing device's reverse map (debugfs mounted if need be).
 */
#include "ghostswapctl.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>

static bool is_debugfs(const char *rel)
{
	char p[PATH_MAX];
	struct statfs sfs;

	sys_path(p, sizeof(p), rel);
	return !statfs(p, &sfs) && (unsigned long)sfs.f_type == DEBUGFS_MAGIC;
}

int cmd_check(int argc, char **argv)
{
	char p[PATH_MAX], buf[65536], *nl, *end;
	unsigned long long bad;
	int rc = parse_help_only(argc, argv, 0), ret;

	if (rc)
		return rc < 0 ? RC_OK : rc;
	rc = need_root_and_device("check");
	if (rc)
		return rc;
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
