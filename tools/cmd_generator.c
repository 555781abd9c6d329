// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswap-generator (ghostswapctl, run by systemd under that name, or
 * "ghostswapctl generator DIR"): orders ghostswap.service after what its
 * configuration needs, so that a boot does not race it. With a
 * backing_dev under /dev, a drop-in in DIR/ghostswap.service.d/ makes
 * the service require that device's unit and start after it: the setup
 * waits for a disk that appears late, and when it never appears the
 * service fails once systemd's device timeout (DefaultDeviceTimeoutSec,
 * 90 s) ends, with "Dependency failed" naming the device. Requires=, not
 * BindsTo=: a link that goes away later (a by-label link, once
 * writeback overwrites the filesystem it named) must not make systemd
 * stop the service, which would swap off. Any other path:
 * RequiresMountsFor= on it. Nothing when the configuration has no
 * backing device, is broken (the service says why when it runs), or
 * systemd.ghostswap=0 is on the kernel command line.
 * See systemd.generator(7).
 */
#include "ghostswapctl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define DROPIN_NAME	"50-ghostswap-backing.conf"

/*
 * @path as systemd names its unit (systemd-escape --path): slashes
 * trimmed and turned into "-", every byte but [A-Za-z0-9:_.] as \xNN, a
 * leading "." too.
 */
void unit_path_escape(const char *path, const char *suffix, char *out,
		      size_t n)
{
	static const char ok[] =
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:_.";
	size_t used = 0;
	const char *p = path, *end = path + strlen(path);
	bool slash = false;

	while (*p == '/')
		p++;
	while (end > p && end[-1] == '/')
		end--;
	if (p == end)
		used = (size_t)bfmt(out, n, "-");
	for (; p < end && used < n; p++) {
		unsigned char c = (unsigned char)*p;

		if (c == '/') {
			slash = true;	/* runs of slashes count once */
			continue;
		}
		if (slash) {
			used += (size_t)bfmt(out + used, n - used, "-");
			slash = false;
		}
		if (used >= n)
			break;
		if (strchr(ok, c) && c && !(c == '.' && used == 0))
			used += (size_t)bfmt(out + used, n - used, "%c", c);
		else
			used += (size_t)bfmt(out + used, n - used, "\\x%02x", c);
	}
	if (used < n)
		bfmt(out + used, n - used, "%s", suffix);
}

static int write_dropin(const char *dir, const char *body)
{
	char path[PATH_MAX];
	FILE *f;

	bfmt(path, sizeof(path), "%s/" SETUP_UNIT ".d", dir);
	if (mkdir(path, 0755) && errno != EEXIST)
		return fail(RC_FAIL, "cannot create %s: %s", path, strerror(errno));
	bfmt(path, sizeof(path), "%s/" SETUP_UNIT ".d/" DROPIN_NAME, dir);
	f = fopen(path, "w");
	if (!f)
		return fail(RC_FAIL, "cannot write %s: %s", path, strerror(errno));
	fputs("# Written by ghostswap-generator from ghostswap.conf(5)'s backing_dev.\n[Unit]\n",
	      f);
	fputs(body, f);
	if (fclose(f))
		return fail(RC_FAIL, "cannot write %s: %s", path, strerror(errno));
	return RC_OK;
}

/* argv[1]: the directory for normal units (early and late ones unused). */
int cmd_generator(int argc, char **argv)
{
	char unit[PATH_MAX * 4], body[PATH_MAX * 9];
	struct settings s = { 0 };
	size_t n;

	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		return RC_OK;
	}
	if (argc >= 2 && argv[1][0] == '-')
		return fail(RC_USAGE, "generator: unknown option '%s'", argv[1]);
	if (argc < 2 || argc > 4)
		return fail(RC_USAGE, "generator: want the normal units' directory (and the early and late ones)");
	if (cmdline_switch() == 0)
		return RC_OK;
	/* A broken configuration: the service fails with the reason. */
	if (read_system_config(&s, NULL, &n))
		return RC_OK;
	if (!s.has_backing_dev || !strcmp(s.backing_dev, "none"))
		return RC_OK;
	if (!strncmp(s.backing_dev, "/dev/", 5)) {
		unit_path_escape(s.backing_dev, ".device", unit, sizeof(unit));
		bfmt(body, sizeof(body), "Requires=%s\nAfter=%s\n", unit, unit);
		/* Names read from the device's content vanish once written. */
		if (!strncmp(s.backing_dev, "/dev/disk/by-label/", 19) ||
		    !strncmp(s.backing_dev, "/dev/disk/by-uuid/", 18))
			warning("backing_dev %s names the filesystem on the device, which writeback overwrites: the link will be gone at the next boot; use /dev/disk/by-partlabel/, by-partuuid/ or by-id/",
				s.backing_dev);
	} else {
		bfmt(body, sizeof(body), "RequiresMountsFor=%s\n",
		     s.backing_dev);
	}
	return write_dropin(argv[1], body);
}
