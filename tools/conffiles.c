// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswapctl: which files make the system's configuration, and the
 * kernel command line's switch for the boot setup.
 *
 * As systemd reads its own configuration (systemd.syntax(7)): one main
 * file, ghostswap.conf, the first found in /etc, /run, /usr/local/lib,
 * /usr/lib; then every *.conf of the drop-in directories ghostswap.conf.d
 * in those four, sorted by file name whichever directory holds them. Of
 * two drop-ins with one name, the one in the directory earlier in that
 * list hides the other; one that is a link to /dev/null (or empty) hides
 * the vendor's without adding anything. Files read later override
 * earlier ones key by key.
 */
#include "ghostswapctl.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

char confroot[PATH_MAX];

/* Highest precedence first. */
static const char *const conf_dirs[] = {
	"/etc", "/run", "/usr/local/lib", "/usr/lib",
};
#define N_CONF_DIRS	(sizeof(conf_dirs) / sizeof(conf_dirs[0]))

struct dropin {
	char *name;		/* the file name: the sort and hiding key */
	char *path;
};

static int cmp_dropin(const void *a, const void *b)
{
	return strcmp(((const struct dropin *)a)->name,
		      ((const struct dropin *)b)->name);
}

/* A file that is a link to /dev/null masks: it exists, reads as nothing. */
static bool is_masked(const char *path)
{
	char *real = realpath(path, NULL);
	bool masked = real && !strcmp(real, "/dev/null");

	free(real);
	return masked;
}

/* Adds the *.conf of @dir not hidden by one already in @d[0..*n). */
static int scan_dropins(const char *dir, struct dropin **d, size_t *n,
			size_t *cap)
{
	struct dirent *de;
	size_t len, i;
	DIR *dp;
	char path[PATH_MAX];

	dp = opendir(dir);
	if (!dp)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
	while ((de = readdir(dp))) {
		len = strlen(de->d_name);
		if (de->d_name[0] == '.' || len < 6 ||
		    strcmp(de->d_name + len - 5, ".conf"))
			continue;
		for (i = 0; i < *n && strcmp((*d)[i].name, de->d_name); i++)
			;
		if (i < *n)
			continue;	/* hidden by a higher directory's */
		if (bfmt(path, sizeof(path), "%s/%s", dir, de->d_name) >=
		    (int)sizeof(path))
			continue;
		if (*n == *cap) {
			struct dropin *nd;

			*cap = *cap ? *cap * 2 : 16;
			nd = realloc(*d, *cap * sizeof(**d));
			if (!nd)
				goto nomem;
			*d = nd;
		}
		(*d)[*n].name = strdup(de->d_name);
		(*d)[*n].path = strdup(path);
		if (!(*d)[*n].name || !(*d)[*n].path) {
			free((*d)[*n].name);
			free((*d)[*n].path);
			goto nomem;
		}
		(*n)++;
	}
	closedir(dp);
	return 0;
nomem:
	closedir(dp);
	return -ENOMEM;
}

static int add_file(struct config_files *cf, const char *path)
{
	char **nf = realloc(cf->path, (cf->n + 1) * sizeof(*nf));

	if (!nf)
		return -ENOMEM;
	cf->path = nf;
	cf->path[cf->n] = strdup(path);
	if (!cf->path[cf->n])
		return -ENOMEM;
	cf->n++;
	return 0;
}

/*
 * Fills @cf with the files of the system's configuration under $confroot,
 * in reading order (masked ones left out). 0 or -errno (with a message).
 */
int find_config_files(struct config_files *cf)
{
	struct dropin *d = NULL;
	size_t n = 0, cap = 0, i;
	char path[PATH_MAX];
	struct stat st;
	int ret = 0;

	memset(cf, 0, sizeof(*cf));
	for (i = 0; i < N_CONF_DIRS; i++) {
		bfmt(path, sizeof(path), "%s%s/" CONF_NAME, confroot,
		     conf_dirs[i]);
		if (lstat(path, &st) == 0) {
			if (!is_masked(path))
				ret = add_file(cf, path);
			break;
		}
	}
	for (i = 0; !ret && i < N_CONF_DIRS; i++) {
		bfmt(path, sizeof(path), "%s%s/" DROPIN_DIR, confroot,
		     conf_dirs[i]);
		ret = scan_dropins(path, &d, &n, &cap);
		if (ret && ret != -ENOMEM)
			fail(RC_USAGE, "cannot read %s: %s", path,
			     strerror(-ret));
	}
	if (!ret)
		qsort(d, n, sizeof(*d), cmp_dropin);
	for (i = 0; i < n; i++) {
		if (!ret && !is_masked(d[i].path))
			ret = add_file(cf, d[i].path);
		free(d[i].name);
		free(d[i].path);
	}
	free(d);
	if (ret == -ENOMEM)
		fail(RC_FAIL, "out of memory");
	if (ret)
		free_config_files(cf);
	return ret;
}

void free_config_files(struct config_files *cf)
{
	size_t i;

	for (i = 0; i < cf->n; i++)
		free(cf->path[i]);
	free(cf->path);
	memset(cf, 0, sizeof(*cf));
}

/* The kernel command line ($procroot/cmdline) into @buf; false if unread. */
bool read_cmdline(char *buf, size_t n)
{
	size_t len;
	FILE *f;

	bfmt(buf, n, "%s/cmdline", procroot);
	f = fopen(buf, "r");
	if (!f)
		return false;
	len = fread(buf, 1, n - 1, f);
	fclose(f);
	buf[len] = '\0';
	return true;
}

/*
 * systemd.ghostswap on the kernel command line ($procroot/cmdline): 1 for
 * "systemd.ghostswap", "=1", "=yes", ...; 0 for "=0", "=no", ...; -1
 * when absent (or unreadable). The last one given counts; a value that
 * is not a boolean is warned about and ignored.
 */
int cmdline_switch(void)
{
	char buf[4096], *tok, *save = NULL, *val;
	int ret = -1;
	bool b;

	if (!read_cmdline(buf, sizeof(buf)))
		return -1;
	for (tok = strtok_r(buf, " \t\n", &save); tok;
	     tok = strtok_r(NULL, " \t\n", &save)) {
		if (strncmp(tok, CMDLINE_KEY, strlen(CMDLINE_KEY)))
			continue;
		val = tok + strlen(CMDLINE_KEY);
		if (!*val) {
			ret = 1;
		} else if (*val == '=' && parse_bool(val + 1, &b)) {
			ret = b;
		} else if (*val == '=') {
			warning("kernel command line: ignoring '%s' (want " CMDLINE_KEY "=0 or =1)",
				tok);
		}
	}
	return ret;
}
