// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswapctl dict: train a zstd dictionary for algorithm_params from a
 * sample of the running system's anonymous memory (what swap stores).
 *
 * Pages are taken at random from the private writable mappings of every
 * process (/proc/PID/maps), spread evenly over all of them (one in every
 * mapped/N), each once at most, only where they are in memory now
 * (/proc/PID/pagemap: reading a swapped-out page would swap it in), and
 * not same-filled (ghostswap keeps those in its table, compression never
 * sees them). Each becomes a sample file; zstd(1) --train makes the
 * dictionary from them. Paths under $GHOSTSWAP_PROC (default /proc).
 */
#include "ghostswapctl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DICT_PAGES	2000		/* default sample */
#define DICT_SIZE	(64 * 1024)	/* default dictionary size */
#define PAGEMAP_PRESENT	(1ULL << 63)

struct sampler {
	const char *dir;	/* where the samples go */
	uint64_t want, got;
	uint64_t seen;		/* pages of every anonymous mapping */
	uint64_t step;		/* one page sampled in this many */
	unsigned int seed;
	unsigned char page[PAGE_BYTES];
};

/* A page whose 64-bit words are all equal: stored inline, no sample. */
static bool same_filled(const unsigned char *p)
{
	const uint64_t *w = (const uint64_t *)p;
	size_t i;

	for (i = 1; i < PAGE_BYTES / 8; i++)
		if (w[i] != w[0])
			return false;
	return true;
}

static bool present(int pagemap, uint64_t addr)
{
	uint64_t e;

	if (pread(pagemap, &e, sizeof(e), (off_t)(addr / PAGE_BYTES * 8)) !=
	    (ssize_t)sizeof(e))
		return false;
	return e & PAGEMAP_PRESENT;
}

static int save(struct sampler *s)
{
	char path[PATH_MAX];
	FILE *f;

	bfmt(path, sizeof(path), "%s/%06" PRIu64, s->dir, s->got);
	f = fopen(path, "w");
	if (!f || fwrite(s->page, 1, PAGE_BYTES, f) != PAGE_BYTES) {
		if (f)
			fclose(f);
		return fail(RC_FAIL, "dict: cannot write %s: %s", path,
			    strerror(errno));
	}
	fclose(f);
	s->got++;
	return RC_OK;
}

/*
 * The private writable mappings of a process (anonymous, the heap, the
 * stack): @fn for each, with the process's mem and pagemap open.
 */
static int each_anon(struct sampler *s, const char *pid,
		     int (*fn)(struct sampler *s, int mem, int pagemap,
			       uint64_t lo, uint64_t hi))
{
	char path[PATH_MAX], line[1024], perms[8];
	int mem, pagemap, rc = RC_OK;
	uint64_t lo, hi;
	FILE *maps;
	int n;

	bfmt(path, sizeof(path), "%s/%s/maps", procroot, pid);
	maps = fopen(path, "r");
	if (!maps)
		return RC_OK;	/* gone, or a kernel thread */
	bfmt(path, sizeof(path), "%s/%s/mem", procroot, pid);
	mem = open(path, O_RDONLY);
	bfmt(path, sizeof(path), "%s/%s/pagemap", procroot, pid);
	pagemap = open(path, O_RDONLY);
	while (!rc && mem >= 0 && pagemap >= 0 && s->got < s->want &&
	       fgets(line, sizeof(line), maps)) {
		n = 0;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %*s %*s %*s %n",
			   &lo, &hi, perms, &n) < 3)
			continue;
		/* Anonymous (no file behind it), or the heap and stack. */
		if (perms[0] != 'r' || perms[1] != 'w' || perms[3] != 'p' ||
		    (n && line[n] && line[n] != '\n' && line[n] != '[') ||
		    strstr(line, "[vvar") || strstr(line, "[vsyscall"))
			continue;
		rc = fn(s, mem, pagemap, lo, hi);
	}
	if (mem >= 0)
		close(mem);
	if (pagemap >= 0)
		close(pagemap);
	fclose(maps);
	return rc;
}

static int count_pages(struct sampler *s, int mem, int pagemap, uint64_t lo,
		       uint64_t hi)
{
	(void)mem;
	(void)pagemap;
	s->seen += (hi - lo) / PAGE_BYTES;
	return RC_OK;
}

/* A page at random of every @s->step, where it is in memory. */
static int sample_pages(struct sampler *s, int mem, int pagemap,
			uint64_t lo, uint64_t hi)
{
	uint64_t a, at;
	int rc;

	for (a = lo; a < hi && s->got < s->want; a += s->step * PAGE_BYTES) {
		at = a + (uint64_t)(rand_r(&s->seed) % s->step) * PAGE_BYTES;
		if (at >= hi || !present(pagemap, at) ||
		    pread(mem, s->page, PAGE_BYTES, (off_t)at) !=
		    (ssize_t)PAGE_BYTES || same_filled(s->page))
			continue;
		rc = save(s);
		if (rc)
			return rc;
	}
	return RC_OK;
}

/* @fn for every process but ourselves. */
static int each_process(struct sampler *s,
			int (*fn)(struct sampler *s, int mem, int pagemap,
				  uint64_t lo, uint64_t hi))
{
	struct dirent *de;
	DIR *d;
	int rc = RC_OK;

	d = opendir(procroot);
	if (!d)
		return fail(RC_FAIL, "dict: cannot read %s: %s", procroot,
			    strerror(errno));
	while (!rc && s->got < s->want && (de = readdir(d)))
		if (de->d_name[0] >= '1' && de->d_name[0] <= '9' &&
		    (pid_t)atol(de->d_name) != getpid())
			rc = each_anon(s, de->d_name, fn);
	closedir(d);
	return rc;
}

static void remove_samples(const char *dir, uint64_t n)
{
	char path[PATH_MAX];
	uint64_t i;

	for (i = 0; i < n; i++) {
		bfmt(path, sizeof(path), "%s/%06" PRIu64, dir, i);
		unlink(path);
	}
	rmdir(dir);
}

int cmd_dict(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pages", required_argument, NULL, 'n' },
		{ "size", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t size = DICT_SIZE;
	char dir[] = "/tmp/ghostswap-dict.XXXXXX";
	char maxdict[40], *out;
	struct sampler *s;
	int c, rc = RC_OK;

	s = calloc(1, sizeof(*s));
	if (!s)
		return fail(RC_FAIL, "dict: out of memory");
	s->want = DICT_PAGES;
	while ((c = next_opt(argc, argv, ":n:s:h", opts, &rc)) != -1) {
		switch (c) {
		case 'n':
			if (!parse_count(optarg, &s->want, 10)) {
				free(s);
				return fail(RC_USAGE, "dict: bad --pages '%s' (a count, at least 10)",
					    optarg);
			}
			break;
		case 's':
			if (!parse_bytes(optarg, &size) || size < 1024 ||
			    size > (1ULL << 20)) {
				free(s);
				return fail(RC_USAGE, "dict: bad --size '%s' (1K to 1M: the module takes at most 1 MiB)",
					    optarg);
			}
			break;
		case 'h':
			free(s);
			usage(stdout);
			return RC_OK;
		default:
			free(s);
			return rc;
		}
	}
	if (optind + 1 != argc) {
		free(s);
		return fail(RC_USAGE, "dict: want one output file (ghostswapctl dict [--pages N] [--size SIZE] FILE)");
	}
	out = argv[optind];
	rc = need_root("dict");
	if (rc || !mkdtemp(dir)) {
		free(s);
		return rc ? rc : fail(RC_FAIL, "dict: cannot make %s: %s",
				      dir, strerror(errno));
	}
	s->dir = dir;
	s->seed = (unsigned int)getpid();
	/*
	 * Spread the sample over all of it: count the pages, then one at
	 * random in every (pages / N), each page once at most.
	 */
	rc = each_process(s, count_pages);
	s->step = s->seen > s->want ? s->seen / s->want : 1;
	if (!rc)
		rc = each_process(s, sample_pages);
	if (!rc && s->got < 10)
		rc = fail(RC_FAIL, "dict: only %" PRIu64 " pages to sample (of %" PRIu64 " mapped): too little to train on",
			  s->got, s->seen);
	if (!rc) {
		bfmt(maxdict, sizeof(maxdict), "--maxdict=%" PRIu64, size);
		printf("dict: %" PRIu64 " pages sampled, training %s\n",
		       s->got, out);
		fflush(stdout);
		rc = RUN(false, "zstd", "--train", "-r", dir, "-o", out,
			 maxdict, "-q", "-f");
		if (rc)
			rc = fail(RC_FAIL, "dict: zstd --train failed (is zstd installed?)");
	}
	remove_samples(dir, s->got);
	free(s);
	return rc;
}
