// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswapctl: settings (struct settings), from the command line, from
 * one ghostswap.conf(5) file, or from the system's configuration: its
 * main file and drop-ins (conffiles.c), read in order, later keys
 * overriding earlier ones. Where each key came from is kept for
 * "ghostswapctl config".
 */
#include "ghostswapctl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define SIZE_SYNTAX "want 1M to 16T-8K: decimal bytes, optional suffix K M G T P; or an expression of ram in MiB"

/* The keys of ghostswap.conf(5), in the order "config" prints them. */
const char *const config_keys[N_CONFIG_KEYS] = {
	"mode", "size", "algorithm", "algorithm_params",
	"compression_algorithm", "multi_page", "mem_limit", "backing_dev",
	"backing_size", "backing_discard", "writeback_limit",
	"writeback_direct", "writeback_shrinker", "writeback_checksum",
	"writeback_encrypt", "writeback_batch_size", "idle_writeback",
	"metrics_dir", "priority", "disable_zswap", "swapon",
};

/*
 * A size key's value that is not a plain size: an expression of ram
 * (expr.c), in MiB, turned into bytes rounded up to 4 KiB. @zero_ok: 0
 * is a value (mem_limit's "no limit").
 */
static bool eval_size(const char *key, const char *val, bool zero_ok,
		      uint64_t *out, char *err, size_t errlen)
{
	uint64_t ram = mem_total(), v;
	double mib, bytes;
	char why[256];

	if (!eval_mib_expr(val, ram ? (double)ram / (1 << 20) : -1, &mib,
			   why, sizeof(why))) {
		bfmt(err, errlen, "bad size '%s' for %s: %s (want bytes with an optional suffix K M G T P, or an expression of ram in MiB)",
		     val, key, why);
		return false;
	}
	bytes = mib * (1 << 20);
	if (zero_ok && bytes == 0) {
		*out = 0;
		return true;
	}
	if (bytes < MIN_SIZE || bytes > MAX_SIZE) {
		bfmt(err, errlen, "bad size '%s' for %s: it is %.0f bytes here (ram = %.0f MiB); want 1M to 16T-8K%s",
		     val, key, bytes, (double)ram / (1 << 20),
		     zero_ok ? ", or 0" : "");
		return false;
	}
	v = (uint64_t)bytes;
	if ((double)v < bytes)
		v++;
	*out = (v + PAGE_BYTES - 1) & ~(PAGE_BYTES - 1);
	return true;
}

/*
 * A size key's value: a plain size (1M..16T-8K; with @zero_ok also 0 or
 * none), or an expression of ram. 0; 1 for a plain size out of range;
 * -1 with the expression's error in @err.
 */
static int size_value(const char *key, const char *val, bool zero_ok,
		      uint64_t *out, char *err, size_t errlen)
{
	uint64_t v;

	if (parse_bytes(val, &v) || (zero_ok && !strcasecmp(val, "none")))
		return (zero_ok ? parse_limit(val, out) : parse_size(val, out)) ? 0 : 1;
	return eval_size(key, val, zero_ok, out, err, errlen) ? 0 : -1;
}

/*
 * zram-generator's compression-algorithm: "ALG[(P,P)] [ALG2[(P)] ...]":
 * the primary algorithm and its parameters, then the secondary ones for
 * recompression, priority 1, 2, 3 in that order. Parameters are
 * algorithm_params' (level=, dict=, deflate.winbits=), commas for
 * blanks. zram-generator also passes a secondary's parameters, or a list
 * without an algorithm, to "recompress": here recompression runs by
 * itself (recompress_auto), so recompress's own keys (type=,
 * threshold=, max_pages=) are refused with that said.
 */
static bool set_compression(struct settings *s, const char *val, char *err,
			    size_t errlen)
{
	char buf[1024], *tok, *save = NULL, *paren, *p;
	int n = 0;

	if (bfmt(buf, sizeof(buf), "%s", val) >= (int)sizeof(buf)) {
		bfmt(err, errlen, "compression_algorithm too long");
		return false;
	}
	s->n_recomp = 0;
	for (tok = strtok_r(buf, " \t", &save); tok;
	     tok = strtok_r(NULL, " \t", &save), n++) {
		char *name = tok, *params = "";

		paren = strchr(tok, '(');
		if (paren) {
			*paren = '\0';
			params = paren + 1;
			p = strchr(params, ')');
			if (!p || p[1]) {
				bfmt(err, errlen, "compression_algorithm: '%s(%s': want ALG(PARAMS) without blanks",
				     name, params);
				return false;
			}
			*p = '\0';
			for (p = params; *p; p++)
				if (*p == ',')
					*p = ' ';
			if (strstr(params, "type=") || strstr(params, "threshold=") ||
			    strstr(params, "max_pages=")) {
				bfmt(err, errlen, "compression_algorithm: '%s' are recompress parameters: ghostswap recompresses idle pages by itself (recompress_auto, see ghostswap(4))",
				     params);
				return false;
			}
		}
		if (!*name) {
			bfmt(err, errlen, "compression_algorithm: parameters '%s' without an algorithm",
			     params);
			return false;
		}
		if (n > MAX_RECOMP) {
			bfmt(err, errlen, "compression_algorithm: at most %d secondary algorithms",
			     MAX_RECOMP);
			return false;
		}
		if (!n) {
			bfmt(s->algorithm, sizeof(s->algorithm), "%s", name);
			s->has_algorithm = true;
			s->has_algorithm_params = *params;
			bfmt(s->algorithm_params, sizeof(s->algorithm_params),
			     "%s", params);
		} else {
			bfmt(s->recomp[n - 1], sizeof(s->recomp[0]), "%s", name);
			bfmt(s->recomp_params[n - 1], sizeof(s->recomp_params[0]),
			     "%s", params);
			s->n_recomp = n;
		}
	}
	if (!n) {
		bfmt(err, errlen, "compression_algorithm: no algorithm");
		return false;
	}
	return true;
}

/* Sets one setting from text; NULL or an error message in @err. */
bool set_setting(struct settings *s, const char *key, const char *val,
		      char *err, size_t errlen)
{
	uint64_t n;
	int ret = 0;
	bool b;

	if (!strcmp(key, "size")) {
		ret = size_value(key, val, false, &s->size, err, errlen);
		if (ret)
			goto size_error;
		s->has_size = true;
	} else if (!strcmp(key, "algorithm")) {
		if (strlen(val) >= sizeof(s->algorithm) || strpbrk(val, " \t"))
			goto bad;
		bfmt(s->algorithm, sizeof(s->algorithm), "%s", val);
		s->has_algorithm = true;
	} else if (!strcmp(key, "algorithm_params")) {
		if (strlen(val) >= sizeof(s->algorithm_params))
			goto bad;
		bfmt(s->algorithm_params, sizeof(s->algorithm_params), "%s",
		     val);
		s->has_algorithm_params = true;
	} else if (!strcmp(key, "compression_algorithm")) {
		if (!set_compression(s, val, err, errlen))
			return false;
	} else if (!strcmp(key, "multi_page")) {
		if (!parse_count(val, &n, 0) ||
		    (n != 0 && n != 4 && n != 8 && n != 16)) {
			bfmt(err, errlen, "bad multi_page '%s' (want 0 (off), 4, 8 or 16)", val);
			return false;
		}
		s->multi_page = (unsigned int)n;
		s->has_multi_page = true;
	} else if (!strcmp(key, "backing_size")) {
		ret = size_value(key, val, false, &s->backing_size, err, errlen);
		if (ret)
			goto size_error;
		s->has_backing_size = true;
	} else if (!strcmp(key, "mem_limit")) {
		ret = size_value(key, val, true, &s->mem_limit, err, errlen);
		if (ret)
			goto size_error;
		s->has_mem_limit = true;
	} else if (!strcmp(key, "backing_dev")) {
		if (strlen(val) >= sizeof(s->backing_dev))
			goto bad;
		bfmt(s->backing_dev, sizeof(s->backing_dev), "%s", val);
		s->has_backing_dev = true;
	} else if (!strcmp(key, "priority")) {
		if (!parse_prio(val, &s->priority)) {
			bfmt(err, errlen, "bad priority '%s' (want -1..32767)", val);
			return false;
		}
		s->has_priority = true;
	} else if (!strcmp(key, "disable_zswap")) {
		if (!parse_bool(val, &b))
			goto bad_bool;
		s->disable_zswap = b;
		s->has_disable_zswap = true;
	} else if (!strcmp(key, "swapon")) {
		if (!parse_bool(val, &b))
			goto bad_bool;
		s->swapon = b;
		s->has_swapon = true;
	} else if (!strcmp(key, "writeback_limit")) {
		s->writeback_limit_none = !strcasecmp(val, "none");
		if (!s->writeback_limit_none &&
		    !parse_count(val, &s->writeback_limit, 0)) {
			bfmt(err, errlen, "bad writeback_limit '%s' (want a number of pages, or none)", val);
			return false;
		}
		s->has_writeback_limit = true;
	} else if (!strcmp(key, "writeback_direct")) {
		if (strcmp(val, "none") && strcmp(val, "huge") &&
		    strcmp(val, "incompressible") && strcmp(val, "all")) {
			bfmt(err, errlen, "bad writeback_direct '%s' (want none, huge, incompressible or all)", val);
			return false;
		}
		bfmt(s->writeback_direct, sizeof(s->writeback_direct), "%s",
		     val);
		s->has_writeback_direct = true;
	} else if (!strcmp(key, "writeback_shrinker")) {
		if (!parse_bool(val, &b))
			goto bad_bool;
		s->writeback_shrinker = b;
		s->has_writeback_shrinker = true;
	} else if (!strcmp(key, "writeback_checksum")) {
		if (!parse_bool(val, &b))
			goto bad_bool;
		s->writeback_checksum = b;
		s->has_writeback_checksum = true;
	} else if (!strcmp(key, "writeback_encrypt")) {
		if (!parse_bool(val, &b))
			goto bad_bool;
		s->writeback_encrypt = b;
		s->has_writeback_encrypt = true;
	} else if (!strcmp(key, "backing_discard")) {
		if (!parse_bool(val, &b))
			goto bad_bool;
		s->backing_discard = b;
		s->has_backing_discard = true;
	} else if (!strcmp(key, "mode")) {
		if (strcmp(val, "standalone") && strcmp(val, "zswap")) {
			bfmt(err, errlen, "bad mode '%s' (want standalone or zswap)", val);
			return false;
		}
		s->mode_zswap = !strcmp(val, "zswap");
		s->has_mode = true;
	} else if (!strcmp(key, "writeback_batch_size")) {
		if (!parse_count(val, &s->writeback_batch_size, 1) ||
		    s->writeback_batch_size > 256) {
			bfmt(err, errlen, "bad writeback_batch_size '%s' (want 1..256 pages)", val);
			return false;
		}
		s->has_writeback_batch_size = true;
	} else if (!strcmp(key, "idle_writeback")) {
		if (!parse_count(val, &s->idle_writeback, 1)) {
			bfmt(err, errlen, "bad idle_writeback '%s' (want seconds, at least 1)", val);
			return false;
		}
		s->has_idle_writeback = true;
	} else if (!strcmp(key, "metrics_dir")) {
		/* Room for the temporary file's name beside ours. */
		if (val[0] != '/' ||
		    strlen(val) + sizeof("/." METRICS_FILE ".XXXXXX") > sizeof(s->metrics_dir)) {
			bfmt(err, errlen, "bad metrics_dir '%s' (want an absolute path)", val);
			return false;
		}
		bfmt(s->metrics_dir, sizeof(s->metrics_dir), "%s", val);
		s->has_metrics_dir = true;
	} else {
		bfmt(err, errlen, "unknown key '%s'", key);
		return false;
	}
	return true;
size_error:
	if (ret < 0)
		return false;	/* the expression's error is in @err */
	bfmt(err, errlen, "bad size '%s' for %s (" SIZE_SYNTAX "%s)", val,
		 key, strcmp(key, "mem_limit") ? "" : "; or 0");
	return false;
bad_bool:
	bfmt(err, errlen, "bad value '%s' for %s (want yes or no)", val, key);
	return false;
bad:
	bfmt(err, errlen, "bad value '%s' for %s", val, key);
	return false;
}

static int key_index(const char *key)
{
	int i;

	for (i = 0; i < N_CONFIG_KEYS; i++)
		if (!strcmp(config_keys[i], key))
			return i;
	return -1;
}

/*
 * Reads a ghostswap.conf(5) file into @s; when @origins is not NULL,
 * records there where each key was set (indexed as config_keys). Errors
 * name FILE:LINE.
 */
int read_config(const char *file, struct settings *s,
		struct key_origin *origins)
{
	char *line = NULL, *p, *key, *val, *eq, err[PATH_MAX + 128];
	size_t cap = 0;
	int lineno = 0, rc = RC_OK, k;
	FILE *f;

	f = fopen(file, "r");
	if (!f)
		return fail(RC_USAGE, "cannot read %s: %s", file, strerror(errno));
	while (getline(&line, &cap, f) > 0) {
		lineno++;
		p = strchr(line, '#');
		if (p)
			*p = '\0';
		p = trim(line);
		if (!*p)
			continue;
		eq = strchr(p, '=');
		if (!eq || eq == p) {
			rc = fail(RC_USAGE, "%s:%d: expected 'key = value'",
				  file, lineno);
			break;
		}
		*eq = '\0';
		key = trim(p);
		val = trim(eq + 1);
		if (!*val) {
			rc = fail(RC_USAGE, "%s:%d: no value for '%s'", file,
				  lineno, key);
			break;
		}
		if (!set_setting(s, key, val, err, sizeof(err))) {
			rc = fail(RC_USAGE, "%s:%d: %s", file, lineno, err);
			break;
		}
		k = key_index(key);
		if (origins && k >= 0) {
			bfmt(origins[k].file, sizeof(origins[k].file), "%s",
			     file);
			bfmt(origins[k].value, sizeof(origins[k].value), "%s",
			     val);
			origins[k].line = lineno;
		}
	}
	if (!rc && ferror(f))
		rc = fail(RC_USAGE, "cannot read %s: %s", file, strerror(errno));
	free(line);
	fclose(f);
	return rc;
}

/*
 * The system's configuration (conffiles.c): every file in order into @s
 * (and @origins, as read_config()). *@nfiles gets how many were read.
 */
int read_system_config(struct settings *s, struct key_origin *origins,
		       size_t *nfiles)
{
	struct config_files cf;
	int rc = RC_OK;
	size_t i;

	if (find_config_files(&cf))
		return RC_USAGE;
	for (i = 0; i < cf.n && !rc; i++)
		rc = read_config(cf.path[i], s, origins);
	*nfiles = cf.n;
	free_config_files(&cf);
	return rc;
}

/*
 * The settings a command starts from: @file's, or with @system the
 * system's configuration, unless the kernel command line turned the boot
 * setup off (then *@off, nothing read, and that said on stdout);
 * neither: none.
 */
int load_config(const char *file, bool system, struct settings *s,
		bool *off)
{
	size_t n;

	*off = false;
	if (file && system)
		return fail(RC_USAGE, "--config and --system-config exclude each other");
	if (file)
		return read_config(file, s, NULL);
	if (!system)
		return RC_OK;
	if (cmdline_switch() == 0) {
		printf("%s\n", SWITCH_OFF_MSG);
		*off = true;
		return RC_OK;
	}
	return read_system_config(s, NULL, &n);
}

/* Command line settings win over the file's. */
void merge_settings(struct settings *dst, const struct settings *cli)
{
	if (cli->has_size)
		dst->has_size = true, dst->size = cli->size;
	if (cli->has_algorithm)
		dst->has_algorithm = true,
		memcpy(dst->algorithm, cli->algorithm, sizeof(dst->algorithm));
	if (cli->has_algorithm_params)
		dst->has_algorithm_params = true,
		memcpy(dst->algorithm_params, cli->algorithm_params,
		       sizeof(dst->algorithm_params));
	if (cli->has_mem_limit)
		dst->has_mem_limit = true, dst->mem_limit = cli->mem_limit;
	if (cli->has_backing_dev)
		dst->has_backing_dev = true,
		memcpy(dst->backing_dev, cli->backing_dev,
		       sizeof(dst->backing_dev));
	if (cli->has_backing_size)
		dst->has_backing_size = true,
		dst->backing_size = cli->backing_size;
	if (cli->has_priority)
		dst->has_priority = true, dst->priority = cli->priority;
	if (cli->has_writeback_limit)
		dst->has_writeback_limit = true,
		dst->writeback_limit = cli->writeback_limit,
		dst->writeback_limit_none = cli->writeback_limit_none;
	if (cli->has_writeback_direct)
		dst->has_writeback_direct = true,
		memcpy(dst->writeback_direct, cli->writeback_direct,
		       sizeof(dst->writeback_direct));
	if (cli->has_writeback_shrinker)
		dst->has_writeback_shrinker = true,
		dst->writeback_shrinker = cli->writeback_shrinker;
	if (cli->has_writeback_checksum)
		dst->has_writeback_checksum = true,
		dst->writeback_checksum = cli->writeback_checksum;
	if (cli->has_writeback_encrypt)
		dst->has_writeback_encrypt = true,
		dst->writeback_encrypt = cli->writeback_encrypt;
	if (cli->has_writeback_batch_size)
		dst->has_writeback_batch_size = true,
		dst->writeback_batch_size = cli->writeback_batch_size;
	if (cli->has_backing_discard)
		dst->has_backing_discard = true,
		dst->backing_discard = cli->backing_discard;
	if (cli->has_mode)
		dst->has_mode = true, dst->mode_zswap = cli->mode_zswap;
	if (cli->has_multi_page)
		dst->has_multi_page = true, dst->multi_page = cli->multi_page;
	if (cli->has_disable_zswap)
		dst->has_disable_zswap = true,
		dst->disable_zswap = cli->disable_zswap;
	if (cli->has_swapon)
		dst->has_swapon = true, dst->swapon = cli->swapon;
}
