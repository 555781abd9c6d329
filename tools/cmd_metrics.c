// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswapctl metrics: every figure of the device's stat files, and of
 * its writeback limit, in the Prometheus text exposition format (0.0.4),
 * on standard output or written whole into node_exporter's textfile
 * collector directory (--textfile-dir, or metrics_dir of the
 * configuration).
 *
 * One family per figure, named ghostswap_ and the column's name as
 * ghostswap(4) gives it (bd_stat's with bd_ before it where the name
 * lacks it), with _bytes or _pages where the column counts bytes or
 * 4 KiB pages and its name does not say so, and _total for a counter.
 * Values are the module's, unconverted. Every sample has the label
 * device="ghostswap". A stat file or a column the module does not have
 * (an older module) gives no family: nothing is invented.
 * ghostswap_up is 1, or 0 with nothing else when the module is not
 * loaded (exit 3).
 *
 * The names below are the ones ghostswapctl(8) and the admin guide list;
 * the tools tests check that both list every one of them.
 */
#include "ghostswapctl.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* One figure: its name, whether it only grows (until a reset), its help. */
struct metric {
	const char *name;
	bool counter;
	const char *help;	/* no backslash, no newline */
};

#define GAUGE	false
#define COUNTER	true

static const struct metric mm_metrics[] = {
	{ "ghostswap_orig_data_size_bytes", GAUGE,
	  "Bytes of pages stored, same-filled and written-back ones included (mm_stat orig_data_size)." },
	{ "ghostswap_compr_data_size_bytes", GAUGE,
	  "Bytes of compressed objects in the pool; a page stored raw counts 4096 (mm_stat compr_data_size)." },
	{ "ghostswap_mem_used_total_bytes", GAUGE,
	  "Bytes of memory the pool holds (mm_stat mem_used_total)." },
	{ "ghostswap_mem_limit_bytes", GAUGE,
	  "Most memory the pool may use, 0 for no limit (mm_stat mem_limit)." },
	{ "ghostswap_mem_used_max_bytes", GAUGE,
	  "High water mark of the pool's memory (mm_stat mem_used_max)." },
	{ "ghostswap_same_pages", GAUGE,
	  "Pages stored as one repeated word, without pool memory (mm_stat same_pages)." },
	{ "ghostswap_pages_compacted_total", COUNTER,
	  "Pages freed by compaction of the pool (mm_stat pages_compacted)." },
	{ "ghostswap_huge_pages", GAUGE,
	  "Pages stored raw, not compressed below the pool's huge class size (mm_stat huge_pages)." },
	{ "ghostswap_huge_pages_since_total", COUNTER,
	  "Pages ever stored raw (mm_stat huge_pages_since)." },
};

static const struct metric io_metrics[] = {
	{ "ghostswap_failed_reads_total", COUNTER,
	  "Reads that failed (io_stat failed_reads)." },
	{ "ghostswap_failed_writes_total", COUNTER,
	  "Writes that failed: swap kept the page in memory (io_stat failed_writes)." },
	{ "ghostswap_invalid_io_total", COUNTER,
	  "Requests failed as misaligned or unsupported (io_stat invalid_io)." },
	{ "ghostswap_notify_free_total", COUNTER,
	  "Slots freed by the swap core's free hook (io_stat notify_free)." },
	{ "ghostswap_discard_free_total", COUNTER,
	  "Slots freed by discard and write-zeroes requests (io_stat discard_free)." },
};

/* meta_per_slot, the 5th column, has two decimals. */
#define CL_FRACTION	4

static const struct metric cluster_metrics[] = {
	{ "ghostswap_clusters", GAUGE,
	  "Clusters of 512 slots allocated (cluster_stat clusters)." },
	{ "ghostswap_peak_clusters", GAUGE,
	  "Most clusters ever allocated at once (cluster_stat peak_clusters)." },
	{ "ghostswap_slots_used", GAUGE,
	  "Slots holding data (cluster_stat slots_used)." },
	{ "ghostswap_meta_bytes", GAUGE,
	  "Bytes of cluster headers, table pages and cluster index nodes (cluster_stat meta_bytes)." },
	{ "ghostswap_meta_per_slot_bytes", GAUGE,
	  "Metadata bytes per used slot (cluster_stat meta_per_slot)." },
	{ "ghostswap_stream_bytes", GAUGE,
	  "Bytes of the per-CPU compression streams (cluster_stat stream_bytes)." },
	{ "ghostswap_reserve_bytes", GAUGE,
	  "Bytes of the clusters held in reserve (cluster_stat reserve_bytes)." },
	{ "ghostswap_index_reserve_bytes", GAUGE,
	  "Bytes of the spare cluster index nodes held for the reserve (cluster_stat index_reserve_bytes)." },
};

static const struct metric comp_metrics[] = {
	{ "ghostswap_compressions_total", COUNTER,
	  "Compressions when storing (comp_stat, 1st column)." },
	{ "ghostswap_stored_pages_total", COUNTER,
	  "Pages stored, same-filled ones not included (comp_stat, 2nd column)." },
	{ "ghostswap_incompressible_pages_total", COUNTER,
	  "Pages stored as they are because incompressible_check found them incompressible (comp_stat, 3rd column)." },
	{ "ghostswap_recompressed_pages_total", COUNTER,
	  "Pages recompressed (comp_stat, 4th column)." },
	{ "ghostswap_recompress_no_gain_total", COUNTER,
	  "Recompressions that did not gain (comp_stat, 5th column)." },
	{ "ghostswap_recompress_auto_pages_total", COUNTER,
	  "Pages recompressed by the background sweep, recompress_auto (comp_stat, 6th column)." },
	{ "ghostswap_units", GAUGE,
	  "Units of pages compressed together, multi_page, stored now (comp_stat, 7th column)." },
	{ "ghostswap_unit_pages", GAUGE,
	  "Pages in units now (comp_stat, 8th column)." },
	{ "ghostswap_units_stored_total", COUNTER,
	  "Units ever stored (comp_stat, 9th column)." },
	{ "ghostswap_units_refused_total", COUNTER,
	  "Runs of pages refused as units: they did not take a page less (comp_stat, 10th column)." },
	{ "ghostswap_unit_reads_total", COUNTER,
	  "Units read whole (comp_stat, 11th column)." },
	{ "ghostswap_unit_part_reads_total", COUNTER,
	  "Pages read out of a unit alone (comp_stat, 12th column)." },
	{ "ghostswap_unit_part_cached_total", COUNTER,
	  "Pages read out of a unit alone that were copied from a CPU's decompressed copy of it (comp_stat, 13th column)." },
	{ "ghostswap_unit_splits_total", COUNTER,
	  "Units split into single pages (comp_stat, 14th column)." },
	{ "ghostswap_units_backed", GAUGE,
	  "Units on the backing device now (comp_stat, 15th column)." },
	{ "ghostswap_units_written_total", COUNTER,
	  "Units ever written back whole (comp_stat, 16th column)." },
};

static const struct metric bd_metrics[] = {
	{ "ghostswap_bd_count_pages", GAUGE,
	  "Pages on the backing device (bd_stat bd_count)." },
	{ "ghostswap_bd_reads_pages_total", COUNTER,
	  "Pages read from the backing device (bd_stat bd_reads)." },
	{ "ghostswap_bd_writes_pages_total", COUNTER,
	  "Pages written to the backing device (bd_stat bd_writes)." },
	{ "ghostswap_bd_clusters", GAUGE,
	  "Reverse map clusters of the backing device (bd_stat bd_clusters)." },
	{ "ghostswap_bd_meta_bytes", GAUGE,
	  "Bytes of memory of the writeback tier (bd_stat bd_meta_bytes)." },
	{ "ghostswap_bd_write_errors_total", COUNTER,
	  "Pages whose write to the backing device failed (bd_stat write_errors)." },
	{ "ghostswap_bd_read_errors_total", COUNTER,
	  "Pages whose read from the backing device failed (bd_stat read_errors)." },
	{ "ghostswap_bd_relocated_pages_total", COUNTER,
	  "Pages moved by backing compaction (bd_stat relocated)." },
	{ "ghostswap_bd_compact_reads_pages_total", COUNTER,
	  "Pages backing compaction read (bd_stat compact_reads)." },
	{ "ghostswap_bd_compact_writes_pages_total", COUNTER,
	  "Pages backing compaction wrote (bd_stat compact_writes)." },
	{ "ghostswap_bd_checksum_errors_total", COUNTER,
	  "Reads of pages whose data did not match what was written (bd_stat checksum_errors)." },
	{ "ghostswap_bd_discarded_pages_total", COUNTER,
	  "Backing slots discarded (bd_stat discarded)." },
	{ "ghostswap_bd_discard_errors_total", COUNTER,
	  "Discard requests the backing device failed (bd_stat discard_errors)." },
	{ "ghostswap_bd_capacity_pages", GAUGE,
	  "Backing slots in place (bd_stat capacity)." },
	{ "ghostswap_bd_grow_errors_total", COUNTER,
	  "Times a backing directory could not add a chunk file (bd_stat grow_errors)." },
	{ "ghostswap_bd_grow_error", GAUGE,
	  "The errno of the last time a backing directory could not add a chunk file, 0 once it could (bd_stat grow_error)." },
};

/* The stat files, in the order they are printed. */
static const struct {
	const char *attr;
	const struct metric *m;
	int n;
	int fraction;		/* the column with decimals, or -1 */
} stat_files[] = {
	{ "mm_stat", mm_metrics, (int)(sizeof(mm_metrics) / sizeof(mm_metrics[0])), -1 },
	{ "io_stat", io_metrics, (int)(sizeof(io_metrics) / sizeof(io_metrics[0])), -1 },
	{ "cluster_stat", cluster_metrics,
	  (int)(sizeof(cluster_metrics) / sizeof(cluster_metrics[0])), CL_FRACTION },
	{ "comp_stat", comp_metrics,
	  (int)(sizeof(comp_metrics) / sizeof(comp_metrics[0])), -1 },
	{ "bd_stat", bd_metrics, (int)(sizeof(bd_metrics) / sizeof(bd_metrics[0])), -1 },
};

/* The figures of no stat file. */
static const struct metric up_metric = { "ghostswap_up", GAUGE,
	"1 when the module is loaded and its device there, 0 when not." };
static const struct metric info_metric = { "ghostswap_device_info", GAUGE,
	"Always 1; the labels give the compression algorithm, the backing device and the module's version." };
static const struct metric recomp_metric = { "ghostswap_recompress_algorithm_info", GAUGE,
	"Always 1, once per secondary algorithm of recompression; the labels give its priority and name (recomp_algorithm)." };
static const struct metric disksize_metric = { "ghostswap_disksize_bytes", GAUGE,
	"Size of the device (disksize)." };
static const struct metric wb_enabled_metric = { "ghostswap_writeback_limit_enabled", GAUGE,
	"1 when writeback_limit is enforced, 0 when not (writeback_limit_enable)." };
static const struct metric wb_limit_metric = { "ghostswap_writeback_limit_pages", GAUGE,
	"Pages writeback may still write while the limit is enforced (writeback_limit)." };

#define DEVICE_LABEL	"device=\"ghostswap\""

static void family(FILE *o, const struct metric *m)
{
	fprintf(o, "# HELP %s %s\n# TYPE %s %s\n", m->name, m->help, m->name,
		m->counter ? "counter" : "gauge");
}

/*
 * The length of the UTF-8 sequence @s starts with, 0 if it is not one
 * (overlong forms, surrogates and code points past U+10FFFF are not).
 */
static size_t utf8_len(const unsigned char *s)
{
	size_t n, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	for (i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0) ||
	    (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))
		return 0;
	return n;
}

/*
 * ,NAME="VALUE" with VALUE escaped as the format wants: backslash, double
 * quote and newline as \\ \" \n. The format is UTF-8: a byte that is not
 * part of a UTF-8 sequence (a file name may hold any) becomes U+FFFD.
 */
static void label(FILE *o, const char *name, const char *value)
{
	const unsigned char *s = (const unsigned char *)value;
	size_t n;

	fprintf(o, ",%s=\"", name);
	while (*s) {
		if (*s == '\\' || *s == '"') {
			fputc('\\', o);
			fputc(*s++, o);
		} else if (*s == '\n') {
			fputs("\\n", o);
			s++;
		} else if ((n = utf8_len(s))) {
			fwrite(s, 1, n, o);
			s += n;
		} else {
			fputs("\xef\xbf\xbd", o);
			s++;
		}
	}
	fputc('"', o);
}

/* A family of one sample: device="ghostswap" and @value. */
static void one(FILE *o, const struct metric *m, const char *value)
{
	family(o, m);
	fprintf(o, "%s{" DEVICE_LABEL "} %s\n", m->name, value);
}

/*
 * A column of a stat file as a number: an integer (a sign allowed), or
 * with @fraction a decimal fraction too; @out gets it as printed.
 */
static bool number(const char *tok, bool fraction, char *out, size_t n)
{
	const char *p = tok;
	unsigned long long u;
	long long v;
	char *end;

	if (fraction) {
		p += strspn(p, "0123456789");
		if (p == tok)
			return false;
		if (*p == '.') {
			p++;
			if (!*p || strspn(p, "0123456789") != strlen(p))
				return false;
		} else if (*p) {
			return false;
		}
		return bfmt(out, n, "%s", tok) < (int)n;
	}
	errno = 0;
	if (*p == '-') {
		v = strtoll(p, &end, 10);
		if (errno || *end || end == p + 1)
			return false;
		bfmt(out, n, "%lld", v);
		return true;
	}
	if (*p < '0' || *p > '9')
		return false;
	u = strtoull(p, &end, 10);
	if (errno || *end)
		return false;
	bfmt(out, n, "%llu", u);
	return true;
}

/*
 * One stat file: a family for each column the module prints, up to the
 * ones known here (later ones are ignored). A missing file: none.
 */
static int stat_families(FILE *o, int f)
{
	char buf[1024], val[32], *tok, *save = NULL;
	const char *attr = stat_files[f].attr;
	char vals[32][32];
	int i, n = 0, ret;

	ret = read_attr(attr, buf, sizeof(buf));
	if (ret == -ENOENT)
		return RC_OK;
	if (ret)
		return stat_failed(attr, ret);
	for (tok = strtok_r(buf, " \t\n", &save); tok && n < stat_files[f].n;
	     tok = strtok_r(NULL, " \t\n", &save), n++) {
		if (!number(tok, n == stat_files[f].fraction, val, sizeof(val)))
			return stat_failed(attr, -EPROTO);
		memcpy(vals[n], val, sizeof(val));
	}
	if (!n)
		return stat_failed(attr, -EPROTO);
	for (i = 0; i < n; i++)
		one(o, &stat_files[f].m[i], vals[i]);
	return RC_OK;
}

/* An attribute holding one count: its family, or none without the file. */
static int count_family(FILE *o, const char *attr, const struct metric *m)
{
	char buf[64], val[32];
	int ret = read_attr(attr, buf, sizeof(buf));

	if (ret == -ENOENT)
		return RC_OK;
	if (ret)
		return read_failed(attr, ret);
	if (!number(buf, false, val, sizeof(val)))
		return stat_failed(attr, -EPROTO);
	one(o, m, val);
	return RC_OK;
}

/*
 * ghostswap_device_info: the algorithm (comp_algorithm's current one),
 * the backing device (backing_dev: a path or none), the module's
 * version; each label only where its file is there.
 */
static void info_families(FILE *o)
{
	char buf[PATH_MAX], alg[64], *line, *save = NULL;
	unsigned int prio;
	bool first = true;

	family(o, &info_metric);
	fprintf(o, "%s{" DEVICE_LABEL, info_metric.name);
	if (!read_attr("comp_algorithm", buf, sizeof(buf))) {
		current_alg(buf, alg, sizeof(alg));
		label(o, "algorithm", alg);
	}
	if (!read_attr("backing_dev", buf, sizeof(buf)))
		label(o, "backing_dev", buf[0] ? buf : "none");
	if (!read_sys("module/ghostswap/version", buf, sizeof(buf)) && buf[0])
		label(o, "version", buf);
	fputs("} 1\n", o);

	/* recomp_algorithm: "#1: lzo [zstd] deflate", a line per priority. */
	if (read_attr("recomp_algorithm", buf, sizeof(buf)))
		return;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char num[16];

		if (sscanf(line, "#%u:", &prio) != 1 || !strchr(line, ':'))
			continue;
		current_alg(trim(strchr(line, ':') + 1), alg, sizeof(alg));
		if (!alg[0])
			continue;
		if (first)
			family(o, &recomp_metric);
		first = false;
		bfmt(num, sizeof(num), "%u", prio);
		fprintf(o, "%s{" DEVICE_LABEL, recomp_metric.name);
		label(o, "priority", num);
		label(o, "algorithm", alg);
		fputs("} 1\n", o);
	}
}

/* Every family of a device that is there. */
static int device_families(FILE *o)
{
	int rc, f;

	one(o, &up_metric, "1");
	info_families(o);
	rc = count_family(o, "disksize", &disksize_metric);
	for (f = 0; !rc && f < (int)(sizeof(stat_files) / sizeof(stat_files[0])); f++)
		rc = stat_families(o, f);
	if (!rc)
		rc = count_family(o, "writeback_limit_enable", &wb_enabled_metric);
	if (!rc)
		rc = count_family(o, "writeback_limit", &wb_limit_metric);
	return rc;
}

/*
 * The figures in a buffer (*@text, *@len, to be freed): RC_OK, RC_NODEV
 * with ghostswap_up 0 alone when the module is not loaded (before or
 * while they are read), or another exit code, said, and no text.
 */
static int collect(char **text, size_t *len)
{
	bool present = dev_present();
	int rc = RC_NODEV;
	FILE *o;

	for (;;) {
		*text = NULL;
		o = open_memstream(text, len);
		if (!o)
			return fail(RC_FAIL, "out of memory");
		if (present)
			rc = device_families(o);
		else
			one(o, &up_metric, "0");
		if (fclose(o)) {
			free(*text);
			*text = NULL;
			return fail(RC_FAIL, "out of memory");
		}
		if (!present || dev_present())
			break;
		/* Unloaded while it was read: ghostswap_up 0 alone. */
		free(*text);
		present = false;
		rc = RC_NODEV;
	}
	if (rc && rc != RC_NODEV) {
		free(*text);
		*text = NULL;
	}
	return rc;
}

/*
 * @text written whole as @dir/METRICS_FILE: into a new file beside it,
 * made readable by all (node_exporter does not run as root), then
 * renamed over it. A reader opens either the old file or the new one,
 * never a part of one. The new file's name does not end in .prom: the
 * collector skips it while it is written.
 */
static int write_textfile(const char *dir, const char *text, size_t len)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	size_t done = 0;
	ssize_t r;
	int fd, err = 0;

	if (bfmt(path, sizeof(path), "%s/%s", dir, METRICS_FILE) >= (int)sizeof(path) ||
	    bfmt(tmp, sizeof(tmp), "%s/.%s.XXXXXX", dir, METRICS_FILE) >= (int)sizeof(tmp))
		return fail(RC_USAGE, "metrics: directory name too long");
	fd = mkstemp(tmp);
	if (fd < 0) {
		err = errno;
		if (err == ENOENT || err == ENOTDIR)
			return fail(RC_FAIL, "cannot write metrics to %s: no such directory (node_exporter's textfile directory: install prometheus-node-exporter, or name another with --textfile-dir or metrics_dir)",
				    dir);
		if (err == EACCES || err == EPERM || err == EROFS)
			return fail(RC_FAIL, "cannot write metrics to %s: %s (run as root)",
				    dir, strerror(err));
		return fail(RC_FAIL, "cannot write metrics to %s: %s", dir,
			    strerror(err));
	}
	while (done < len) {
		r = write(fd, text + done, len - done);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = errno;
			break;
		}
		done += (size_t)r;
	}
	if (!err && fchmod(fd, 0644))
		err = errno;
	if (close(fd) && !err)
		err = errno;
	if (!err && rename(tmp, path))
		err = errno;
	if (err) {
		unlink(tmp);
		return fail(RC_FAIL, "cannot write %s: %s", path, strerror(err));
	}
	return RC_OK;
}

int cmd_metrics(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "textfile-dir", required_argument, NULL, 'd' },
		{ "config", required_argument, NULL, 'c' },
		{ "system-config", no_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dir = NULL, *config = NULL;
	bool system_config = false;
	struct settings s = { 0 };
	char *text;
	size_t len, n;
	int c, rc = RC_OK, wrc;

	while ((c = next_opt(argc, argv, ":d:c:Ch", opts, &rc)) != -1) {
		switch (c) {
		case 'd': dir = optarg; break;
		case 'c': config = optarg; break;
		case 'C': system_config = true; break;
		case 'h': usage(stdout); return RC_OK;
		default: return rc;
		}
	}
	if (optind < argc)
		return fail(RC_USAGE, "metrics: unexpected argument '%s'",
			    argv[optind]);
	if (config && system_config)
		return fail(RC_USAGE, "--config and --system-config exclude each other");
	if (dir && !*dir)
		return fail(RC_USAGE, "metrics: --textfile-dir needs a directory");
	/* The kernel command line's switch is the boot setup's, not ours. */
	if (config)
		rc = read_config(config, &s, NULL);
	else if (system_config)
		rc = read_system_config(&s, NULL, &n);
	if (rc)
		return rc;
	if (!dir && (config || system_config))
		dir = s.has_metrics_dir ? s.metrics_dir : METRICS_DIR;

	rc = collect(&text, &len);
	if (rc && rc != RC_NODEV)
		return rc;
	if (dir) {
		wrc = write_textfile(dir, text, len);
	} else {
		fwrite(text, 1, len, stdout);
		wrc = fflush(stdout) ? fail(RC_FAIL, "cannot write the metrics: %s",
					    strerror(errno)) : RC_OK;
	}
	free(text);
	if (wrc)
		return wrc;
	return rc == RC_NODEV ? fail_not_loaded() : RC_OK;
}
