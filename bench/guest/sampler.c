// SPDX-License-Identifier: GPL-2.0
/*
 * sampler: what a swap set-up holds in memory and on disk, sampled while a
 * workload runs, by one process that starts nothing. Every set-up pays the
 * same for it: a few small reads a sample, where a shell loop of awk, cat
 * and df started a process for each figure (and more for some set-ups
 * than for others).
 *
 * usage: sampler peak PERIOD_MS FILE GROUP [-- GROUP ...]
 *        sampler once EXPR ...
 *   peak: every PERIOD_MS, evaluate every EXPR; each GROUP (one or more
 *         EXPRs) keeps the values of the sample where its first EXPR was
 *         largest. On SIGTERM or SIGINT, FILE gets one line per group
 *         (zeros for a group whose first EXPR never went above 0) and
 *         sampler exits.
 *   once: print the values of the EXPRs, on one line.
 *   EXPR: TERM[+TERM...]; TERM, times N if it ends in *N:
 *         PATH:F   field F (from 1) of the first line of PATH
 *         du:PATH  KiB allocated to file PATH
 *         df:PATH  KiB used on PATH's filesystem (as df counts it)
 *         N        a number (may be negative)
 *   A file that cannot be read counts 0.
 * Exits 2 on bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#define MAX_EXPRS 16
#define MAX_GROUPS 4

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(void)
{
	fputs("usage: sampler peak PERIOD_MS FILE GROUP [-- GROUP ...]\n"
	      "       sampler once EXPR ...\n", stderr);
	exit(2);
}

/* Field @f (from 1) of the first line of @path, 0 if there is none. */
static long long field(const char *path, long f)
{
	char buf[512], *p, *end;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = buf;
	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || *p == '\n')
			return 0;
		if (--f == 0)
			return strtoll(p, &end, 10);
		while (*p && *p != ' ' && *p != '\t' && *p != '\n')
			p++;
	}
}

/* One term, parsed: exits on bad usage, so that "once" checks EXPRs. */
static long long term(const char *t)
{
	char path[4096], *colon, *star, *end;
	long long mult = 1, v = 0;
	struct statfs sf;
	struct stat st;
	long f;

	if (strlen(t) >= sizeof(path))
		usage();
	strcpy(path, t);
	star = strrchr(path, '*');
	if (star) {
		*star = 0;
		mult = strtoll(star + 1, &end, 10);
		if (!star[1] || *end)
			usage();
	}
	if (!strncmp(path, "du:", 3)) {
		if (!stat(path + 3, &st))
			v = (long long)st.st_blocks / 2;
	} else if (!strncmp(path, "df:", 3)) {
		if (!statfs(path + 3, &sf))
			v = (long long)(sf.f_blocks - sf.f_bfree) *
				sf.f_frsize / 1024;
	} else if ((colon = strrchr(path, ':'))) {
		*colon = 0;
		f = strtol(colon + 1, &end, 10);
		if (!colon[1] || *end || f < 1 || !path[0])
			usage();
		v = field(path, f);
	} else {
		v = strtoll(path, &end, 10);
		if (!path[0] || *end)
			usage();
	}
	return v * mult;
}

static long long expr(const char *e)
{
	char buf[8192], *save, *t;
	long long sum = 0;

	/* No empty term: strtok_r() would skip it. */
	if (!*e || strlen(e) >= sizeof(buf) || *e == '+' ||
	    e[strlen(e) - 1] == '+' || strstr(e, "++"))
		usage();
	strcpy(buf, e);
	for (t = strtok_r(buf, "+", &save); t; t = strtok_r(NULL, "+", &save))
		sum += term(t);
	return sum;
}

static int once(int argc, char **argv)
{
	int i;

	if (argc < 1)
		usage();
	for (i = 0; i < argc; i++)
		printf("%s%lld", i ? " " : "", expr(argv[i]));
	putchar('\n');
	return 0;
}

static int peak(int argc, char **argv)
{
	long long best[MAX_EXPRS] = { 0 }, now[MAX_EXPRS];
	int first[MAX_GROUPS + 1], ngroups = 0, nexprs = 0, g, i;
	struct timespec ts;
	struct sigaction sa;
	const char *file;
	char *exprs[MAX_EXPRS], *end;
	long ms;
	FILE *out;

	if (argc < 3)
		usage();
	ms = strtol(argv[0], &end, 10);
	if (!argv[0][0] || *end || ms < 1 || ms > 60000)
		usage();
	file = argv[1];
	first[0] = 0;
	for (i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			if (nexprs == first[ngroups] || ngroups + 1 == MAX_GROUPS)
				usage();
			first[++ngroups] = nexprs;
			continue;
		}
		if (nexprs == MAX_EXPRS)
			usage();
		exprs[nexprs++] = argv[i];
	}
	if (nexprs == first[ngroups])
		usage();
	first[++ngroups] = nexprs;
	/* Every EXPR checked before the first sample. */
	for (i = 0; i < nexprs; i++)
		expr(exprs[i]);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = ms % 1000 * 1000000L;
	while (!stop) {
		for (i = 0; i < nexprs; i++)
			now[i] = expr(exprs[i]);
		for (g = 0; g < ngroups; g++)
			if (now[first[g]] > best[first[g]])
				memcpy(best + first[g], now + first[g],
				       (first[g + 1] - first[g]) * sizeof(*now));
		/* A signal ends the sleep early (no SA_RESTART). */
		nanosleep(&ts, NULL);
	}
	out = fopen(file, "w");
	if (!out) {
		fprintf(stderr, "sampler: %s: %s\n", file, strerror(errno));
		return 1;
	}
	for (g = 0; g < ngroups; g++) {
		for (i = first[g]; i < first[g + 1]; i++)
			fprintf(out, "%s%lld", i > first[g] ? " " : "", best[i]);
		fputc('\n', out);
	}
	return fclose(out) ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "once"))
		return once(argc - 2, argv + 2);
	if (argc >= 2 && !strcmp(argv[1], "peak"))
		return peak(argc - 2, argv + 2);
	usage();
	return 2;
}
