// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD shim for the ghostswapctl unit tests: makes write(2) to
 * chosen files of a fake sysfs tree fail with a chosen errno, as the real
 * module's files do (root ignores file modes, so they cannot be made to
 * fail otherwise).
 *
 * GS_FAULT="NAME=ERRNO[:COUNT],..."  a write to a file whose path ends in
 *     /NAME fails with ERRNO (EBUSY, EINVAL, ...) the first COUNT times
 *     (default: always). Such a file is never truncated at open, so a
 *     failed write leaves it as it was, as sysfs does.
 * GS_SIDE="NAME>FILE=TEXT"  after a successful write to .../NAME, FILE
 *     in the same directory gets TEXT: a counter that moved.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct {
	const char *name;
	int err;
} errnos[] = {
	{ "EBUSY", EBUSY }, { "EINVAL", EINVAL }, { "ENODEV", ENODEV },
	{ "ENOSPC", ENOSPC }, { "EIO", EIO }, { "EACCES", EACCES },
	{ "EPERM", EPERM }, { "ENOENT", ENOENT }, { "ENOTBLK", ENOTBLK },
	{ "ENOMEM", ENOMEM }, { "EOPNOTSUPP", EOPNOTSUPP },
};

static int used[64];

static int fd_path(int fd, char *buf, size_t n)
{
	char link[64];
	ssize_t len;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	len = readlink(link, buf, n - 1);
	if (len <= 0)
		return -1;
	buf[len] = '\0';
	return 0;
}

static int ends_with(const char *path, const char *name, size_t len)
{
	size_t pl = strlen(path);

	return pl > len && path[pl - len - 1] == '/' &&
	       !strncmp(path + pl - len, name, len);
}

/* The errno to fail a write to @path with, or 0; @peek: do not count. */
static int fault_for(const char *path, int peek)
{
	const char *spec = getenv("GS_FAULT"), *p, *e, *eq, *colon;
	int idx = 0;
	size_t i;

	for (p = spec; p && *p; p = *e ? e + 1 : e, idx++) {
		e = strchr(p, ',');
		if (!e)
			e = p + strlen(p);
		eq = memchr(p, '=', (size_t)(e - p));
		if (!eq || !ends_with(path, p, (size_t)(eq - p)))
			continue;
		colon = memchr(eq, ':', (size_t)(e - eq));
		if (colon && idx < 64 && used[idx] >= atoi(colon + 1))
			continue;
		if (idx < 64 && !peek)
			used[idx]++;
		for (i = 0; i < sizeof(errnos) / sizeof(errnos[0]); i++)
			if (!strncmp(eq + 1, errnos[i].name,
				     (size_t)((colon ? colon : e) - eq - 1)) &&
			    strlen(errnos[i].name) ==
				    (size_t)((colon ? colon : e) - eq - 1))
				return errnos[i].err;
	}
	return 0;
}

static void side_effect(const char *path)
{
	const char *spec = getenv("GS_SIDE"), *gt, *eq;
	char file[4096];
	const char *slash;
	FILE *f;

	if (!spec)
		return;
	gt = strchr(spec, '>');
	eq = gt ? strchr(gt, '=') : NULL;
	if (!eq || !ends_with(path, spec, (size_t)(gt - spec)))
		return;
	slash = strrchr(path, '/');
	snprintf(file, sizeof(file), "%.*s/%.*s", (int)(slash - path), path,
		 (int)(eq - gt - 1), gt + 1);
	f = fopen(file, "w");
	if (f) {
		fprintf(f, "%s\n", eq + 1);
		fclose(f);
	}
}

ssize_t write(int fd, const void *buf, size_t n)
{
	static ssize_t (*real)(int, const void *, size_t);
	char path[4096];
	ssize_t ret;
	int err;

	if (!real)
		real = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
	if (fd <= 2 || fd_path(fd, path, sizeof(path)))
		return real(fd, buf, n);
	err = fault_for(path, 0);
	if (err) {
		errno = err;
		return -1;
	}
	ret = real(fd, buf, n);
	if (ret > 0)
		side_effect(path);
	return ret;
}

/* Opens for writing a faulty file do not truncate it. */
static int no_trunc(const char *path, int flags)
{
	char abs[4096];

	if (!(flags & O_TRUNC) || !getenv("GS_FAULT"))
		return flags;
	if (path[0] != '/') {
		if (!getcwd(abs, sizeof(abs) - strlen(path) - 2))
			return flags;
		strcat(abs, "/");
		strcat(abs, path);
		path = abs;
	}
	return fault_for(path, 1) ? flags & ~O_TRUNC : flags;
}

int open(const char *path, int flags, ...)
{
	static int (*real)(const char *, int, ...);
	mode_t mode = 0;
	va_list ap;

	if (!real)
		real = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
	if (flags & (O_CREAT | O_TMPFILE)) {
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	return real(path, no_trunc(path, flags), mode);
}

int open64(const char *path, int flags, ...)
{
	static int (*real)(const char *, int, ...);
	mode_t mode = 0;
	va_list ap;

	if (!real)
		real = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open64");
	if (flags & (O_CREAT | O_TMPFILE)) {
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	return real(path, no_trunc(path, flags), mode);
}
