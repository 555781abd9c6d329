// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswapctl: the status output, as zramctl prints it: the columns, a
 * table (or raw fields) in human sizes or bytes, or JSON.
 */
#include "ghostswapctl.h"

#include <ctype.h>
#include <inttypes.h>
#include <string.h>
#include <strings.h>

/* Human size as util-linux prints it: 1023B, 1.5K, 12.3M, 1T. */
void human_size(uint64_t bytes, char *buf, size_t n)
{
	static const char letters[] = "BKMGTPE";
	unsigned int exp = 0, dec;
	uint64_t frac = 0;
	int len;

	while (exp < 60 && bytes >= (1ULL << (exp + 10)))
		exp += 10;
	dec = exp ? (unsigned int)(bytes >> exp) : (unsigned int)bytes;
	if (exp) {
		frac = bytes & ((1ULL << exp) - 1);
		/* Three digits after the point, rounded to one. */
		if (frac >= UINT64_MAX / 1000)
			frac = ((frac / 1024) * 1000) >> (exp - 10);
		else
			frac = (frac * 1000) >> exp;
		frac = ((frac + 50) / 100) * 10;
		if (frac == 100) {
			dec++;
			frac = 0;
		}
	}
	if (frac) {
		len = bfmt(buf, n, "%u.%02" PRIu64, dec, frac);
		if (len > 0 && (size_t)len < n && buf[len - 1] == '0')
			buf[--len] = '\0';
		bfmt(buf + len, n - (size_t)len, "%c", letters[exp / 10]);
	} else {
		bfmt(buf, n, "%u%c", dec, letters[exp / 10]);
	}
}

enum col_type {
	CT_STR,		/* text */
	CT_SIZE,	/* bytes: human unless --bytes; JSON number */
	CT_NUM,		/* a count */
	CT_RATIO,	/* two decimals; "-" / null without data */
	CT_RATIO4,	/* four decimals (zramctl's COMP-RATIO); the same */
	CT_PRIO,	/* swap priority; empty / null when not swap */
	CT_COUNT,	/* a count that may be unknown: "-" / null */
};

struct column {
	const char *name;
	enum col_type type;
	const char *help;
};

enum {
	COL_NAME, COL_ALGORITHM, COL_DISKSIZE, COL_DATA, COL_COMPR, COL_TOTAL,
	COL_RATIO, COL_WRITTEN, COL_CLUSTERS, COL_MOUNTPOINT,
	COL_MEM_LIMIT, COL_MEM_USED, COL_POOL, COL_META, COL_ZERO,
	COL_HUGE, COL_MIGRATED, COL_SLOTS, COL_PEAK_CLUSTERS, COL_STREAMS,
	COL_STREAM_MEM, COL_COMP_RATIO,
	COL_PRIORITY, COL_BACKING, COL_BD_READS, COL_BD_WRITES, COL_BD_META,
	COL_FAILED_READS, COL_FAILED_WRITES, COL_MULTI_PAGE,
	NCOLS
};

/*
 * Where zramctl has a column, it has its name and meaning: ZERO-PAGES,
 * MEM-USED (the peak), MIGRATED, STREAMS (a count), COMP-RATIO
 * (DATA/TOTAL). Names this tool used before for some of them, refused
 * with the new one named.
 */
static const struct {
	const char *old, *now;
} renamed_columns[] = {
	{ "SAME-PAGES", "ZERO-PAGES" },
	{ "MEM-PEAK", "MEM-USED (the peak, as in zramctl)" },
	{ "COMPACTED", "MIGRATED" },
};

static const struct column columns[NCOLS] = {
	[COL_NAME] = { "NAME", CT_STR, "device name" },
	[COL_ALGORITHM] = { "ALGORITHM", CT_STR, "compression algorithm" },
	[COL_DISKSIZE] = { "DISKSIZE", CT_SIZE, "size of the device" },
	[COL_DATA] = { "DATA", CT_SIZE, "uncompressed size of the stored data" },
	[COL_COMPR] = { "COMPR", CT_SIZE, "compressed size of the stored data" },
	[COL_TOTAL] = { "TOTAL", CT_SIZE, "all memory used: pool plus metadata" },
	[COL_RATIO] = { "RATIO", CT_RATIO, "compression ratio, DATA/COMPR" },
	[COL_WRITTEN] = { "WRITTEN", CT_SIZE, "data held on the backing device" },
	[COL_CLUSTERS] = { "CLUSTERS", CT_NUM, "clusters of 512 slots allocated" },
	[COL_MOUNTPOINT] = { "MOUNTPOINT", CT_STR, "[SWAP] if swap is on" },
	[COL_MEM_LIMIT] = { "MEM-LIMIT", CT_SIZE, "pool memory limit (0: none)" },
	[COL_MEM_USED] = { "MEM-USED", CT_SIZE, "peak pool memory (zramctl's)" },
	[COL_POOL] = { "POOL", CT_SIZE, "pool memory in use now" },
	[COL_META] = { "META", CT_SIZE, "metadata memory (clusters)" },
	[COL_ZERO] = { "ZERO-PAGES", CT_NUM, "same-filled pages, no pool memory" },
	[COL_HUGE] = { "HUGE-PAGES", CT_NUM, "incompressible pages stored raw" },
	[COL_MIGRATED] = { "MIGRATED", CT_NUM, "pages freed by compaction" },
	[COL_SLOTS] = { "SLOTS", CT_NUM, "slots holding data" },
	[COL_PEAK_CLUSTERS] = { "PEAK-CLUSTERS", CT_NUM, "most clusters allocated" },
	[COL_STREAMS] = { "STREAMS", CT_COUNT, "compression streams (one per online CPU)" },
	[COL_STREAM_MEM] = { "STREAM-MEM", CT_SIZE, "memory of the compression streams" },
	[COL_COMP_RATIO] = { "COMP-RATIO", CT_RATIO4, "DATA/TOTAL, as zramctl's" },
	[COL_PRIORITY] = { "PRIORITY", CT_PRIO, "swap priority" },
	[COL_BACKING] = { "BACKING", CT_STR, "backing device, or none" },
	[COL_BD_READS] = { "BD-READS", CT_NUM, "pages read from the backing device" },
	[COL_BD_WRITES] = { "BD-WRITES", CT_NUM, "pages written to the backing device" },
	[COL_BD_META] = { "BD-META", CT_SIZE, "memory of the backing device's reverse map" },
	[COL_FAILED_READS] = { "FAILED-READS", CT_NUM, "failed reads" },
	[COL_FAILED_WRITES] = { "FAILED-WRITES", CT_NUM, "failed writes" },
	[COL_MULTI_PAGE] = { "MULTI-PAGE", CT_NUM, "most pages compressed as one unit (0: off)" },
};

static const int default_cols[] = {
	COL_NAME, COL_ALGORITHM, COL_DISKSIZE, COL_DATA, COL_COMPR, COL_TOTAL,
	COL_RATIO, COL_WRITTEN, COL_CLUSTERS, COL_MOUNTPOINT,
};

/* The default columns into @cols; returns how many. */
int default_columns(int *cols)
{
	memcpy(cols, default_cols, sizeof(default_cols));
	return (int)(sizeof(default_cols) / sizeof(default_cols[0]));
}

/* Every column (--output-all) into @cols; returns how many. */
int all_columns(int *cols)
{
	int i;

	for (i = 0; i < NCOLS; i++)
		cols[i] = i;
	return NCOLS;
}

/* The columns and what they show, for --help. */
void print_column_help(FILE *out)
{
	int i;

	for (i = 0; i < NCOLS; i++)
		fprintf(out, " %-13s  %s\n", columns[i].name, columns[i].help);
}

/* One cell: a number or a text, or nothing (empty / null). */
struct cell {
	bool null;
	bool is_num;
	uint64_t num;
	long snum;		/* CT_PRIO */
	double ratio;		/* CT_RATIO */
	char text[PATH_MAX];
};

static void cell_value(int col, const struct dev_info *d, struct cell *c)
{
	memset(c, 0, sizeof(*c));
	c->is_num = true;
	switch (col) {
	case COL_NAME:
		c->is_num = false;
		bfmt(c->text, sizeof(c->text), "%s", DEV_PATH);
		break;
	case COL_ALGORITHM:
		c->is_num = false;
		bfmt(c->text, sizeof(c->text), "%s", d->alg);
		break;
	case COL_MOUNTPOINT:
		c->is_num = false;
		c->null = !d->swap;
		bfmt(c->text, sizeof(c->text), "%s", d->swap ? "[SWAP]" : "");
		break;
	case COL_BACKING:
		c->is_num = false;
		bfmt(c->text, sizeof(c->text), "%s", d->backing);
		break;
	case COL_DISKSIZE: c->num = d->disksize; break;
	case COL_DATA: c->num = d->mm[MM_ORIG]; break;
	case COL_COMPR: c->num = d->mm[MM_COMPR]; break;
	case COL_TOTAL: c->num = d->mm[MM_USED] + d->cl[CL_META]; break;
	case COL_RATIO:
		c->null = !d->mm[MM_COMPR];
		if (!c->null)
			c->ratio = (double)d->mm[MM_ORIG] / (double)d->mm[MM_COMPR];
		break;
	case COL_WRITTEN: c->num = d->bd[BD_COUNT] * PAGE_BYTES; break;
	case COL_CLUSTERS: c->num = d->cl[CL_CLUSTERS]; break;
	case COL_MEM_LIMIT: c->num = d->mm[MM_LIMIT]; break;
	case COL_MEM_USED: c->num = d->mm[MM_MAX]; break;
	case COL_POOL: c->num = d->mm[MM_USED]; break;
	case COL_META: c->num = d->cl[CL_META]; break;
	case COL_ZERO: c->num = d->mm[MM_SAME]; break;
	case COL_HUGE: c->num = d->mm[MM_HUGE]; break;
	case COL_MIGRATED: c->num = d->mm[MM_COMPACTED]; break;
	case COL_SLOTS: c->num = d->cl[CL_SLOTS]; break;
	case COL_PEAK_CLUSTERS: c->num = d->cl[CL_PEAK]; break;
	case COL_STREAMS:
		c->null = d->streams < 0;
		c->num = d->streams < 0 ? 0 : (uint64_t)d->streams;
		break;
	case COL_STREAM_MEM: c->num = d->cl[CL_STREAM]; break;
	case COL_COMP_RATIO: {
		uint64_t total = d->mm[MM_USED] + d->cl[CL_META];

		c->null = !total;
		if (total)
			c->ratio = (double)d->mm[MM_ORIG] / (double)total;
		break;
	}
	case COL_PRIORITY:
		c->null = !d->swap;
		c->snum = d->prio;
		break;
	case COL_BD_READS: c->num = d->bd[BD_READS]; break;
	case COL_BD_WRITES: c->num = d->bd[BD_WRITES]; break;
	case COL_BD_META: c->num = d->bd[BD_META]; break;
	case COL_FAILED_READS: c->num = d->io[IO_FAILED_READS]; break;
	case COL_FAILED_WRITES: c->num = d->io[IO_FAILED_WRITES]; break;
	case COL_MULTI_PAGE: c->num = d->multi_page; break;
	}
}

/* The cell as table or raw text. */
static void cell_text(int col, const struct cell *c, bool bytes, char *buf,
		      size_t n)
{
	switch (columns[col].type) {
	case CT_STR:
		bfmt(buf, n, "%s", c->text);
		break;
	case CT_SIZE:
		if (bytes)
			bfmt(buf, n, "%" PRIu64, c->num);
		else
			human_size(c->num, buf, n);
		break;
	case CT_NUM:
		bfmt(buf, n, "%" PRIu64, c->num);
		break;
	case CT_RATIO:
	case CT_RATIO4:
		if (c->null)
			bfmt(buf, n, "-");
		else
			bfmt(buf, n, columns[col].type == CT_RATIO ? "%.2f" : "%.4f",
			     c->ratio);
		break;
	case CT_COUNT:
		if (c->null)
			bfmt(buf, n, "-");
		else
			bfmt(buf, n, "%" PRIu64, c->num);
		break;
	case CT_PRIO:
		if (c->null)
			buf[0] = '\0';
		else
			bfmt(buf, n, "%ld", c->snum);
		break;
	}
}

static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

static void json_key(const char *name)
{
	char key[64];
	size_t i;

	for (i = 0; name[i] && i < sizeof(key) - 1; i++)
		key[i] = (char)tolower((unsigned char)name[i]);
	key[i] = '\0';
	json_string(key);
	printf(": ");
}

void print_json(const struct dev_info *d, const int *cols, int ncols)
{
	struct cell c;
	int i;

	printf("{\n   \"blockdevices\": [\n      {\n");
	for (i = 0; i < ncols; i++) {
		cell_value(cols[i], d, &c);
		printf("         ");
		json_key(columns[cols[i]].name);
		if (c.null)
			printf("null");
		else if (columns[cols[i]].type == CT_RATIO)
			printf("%.2f", c.ratio);
		else if (columns[cols[i]].type == CT_RATIO4)
			printf("%.4f", c.ratio);
		else if (columns[cols[i]].type == CT_PRIO)
			printf("%ld", c.snum);
		else if (c.is_num)
			printf("%" PRIu64, c.num);
		else
			json_string(c.text);
		printf("%s\n", i + 1 < ncols ? "," : "");
	}
	printf("      }\n   ]\n}\n");
}

/* Raw output escapes what would split a field, like libsmartcols. */
static void raw_field(const char *s)
{
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch <= ' ' || ch == '\\' || ch == 0x7f)
			printf("\\x%02x", ch);
		else
			putchar(ch);
	}
}

void print_table(const struct dev_info *d, const int *cols, int ncols,
			bool bytes, bool raw, bool headings)
{
	static char text[MAX_COLUMNS][PATH_MAX], line[MAX_COLUMNS * PATH_MAX];
	static size_t width[MAX_COLUMNS];
	struct cell c;
	bool right;
	int i;

	for (i = 0; i < ncols; i++) {
		cell_value(cols[i], d, &c);
		cell_text(cols[i], &c, bytes, text[i], sizeof(text[i]));
		/* As libsmartcols: the header counts, shown or not. */
		width[i] = strlen(text[i]);
		if (strlen(columns[cols[i]].name) > width[i])
			width[i] = strlen(columns[cols[i]].name);
	}
	if (raw) {
		for (i = 0; headings && i < ncols; i++)
			printf("%s%s", i ? " " : "", columns[cols[i]].name);
		if (headings)
			putchar('\n');
		for (i = 0; i < ncols; i++) {
			if (i)
				putchar(' ');
			raw_field(text[i]);
		}
		putchar('\n');
		return;
	}
	for (int row = headings ? 0 : 1; row < 2; row++) {
		size_t len = 0;

		for (i = 0; i < ncols; i++) {
			const char *s = row ? text[i] : columns[cols[i]].name;

			right = columns[cols[i]].type != CT_STR;
			len += (size_t)bfmt(line + len, sizeof(line) - len,
					    right ? "%s%*s" : "%s%-*s",
					    i ? " " : "", (int)width[i], s);
			if (len >= sizeof(line))
				len = sizeof(line) - 1;
		}
		/* No trailing blanks (an empty last column). */
		while (len && line[len - 1] == ' ')
			line[--len] = '\0';
		puts(line);
	}
}

static int find_column(const char *name, size_t len)
{
	int i;

	for (i = 0; i < NCOLS; i++)
		if (strlen(columns[i].name) == len &&
		    !strncasecmp(columns[i].name, name, len))
			return i;
	return -1;
}

static int unknown_column(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < sizeof(renamed_columns) / sizeof(renamed_columns[0]); i++)
		if (strlen(renamed_columns[i].old) == len &&
		    !strncasecmp(renamed_columns[i].old, name, len))
			return fail(RC_USAGE, "column %s is now called %s",
				    renamed_columns[i].old, renamed_columns[i].now);
	return fail(RC_USAGE, "unknown column: '%.*s' (see --help)", (int)len,
		    name);
}

/* --output: "COL,COL" or "+COL,COL" (added to the default columns). */
int parse_columns(const char *spec, int *cols, int *ncols)
{
	const char *p = spec, *e;
	int c;

	if (*p == '+')
		p++;
	else
		*ncols = 0;
	if (!*p)
		return fail(RC_USAGE, "--output: no columns given");
	for (; *p; p = *e ? e + 1 : e) {
		e = strchr(p, ',');
		if (!e)
			e = p + strlen(p);
		c = find_column(p, (size_t)(e - p));
		if (c < 0)
			return unknown_column(p, (size_t)(e - p));
		if (*ncols >= MAX_COLUMNS)
			return fail(RC_USAGE, "--output: too many columns");
		cols[(*ncols)++] = c;
	}
	return RC_OK;
}
