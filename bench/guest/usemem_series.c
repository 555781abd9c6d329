// SPDX-License-Identifier: GPL-2.0
/*
 * usemem_series: the swap-table series' own workload, as it runs
 * vm-scalability's usemem ("usemem --init-time -O -y -x -n N SIZE"),
 * written for the bench since the suite's sources cannot be fetched on
 * the test bed.
 *
 * N processes each map SIZE MiB of private anonymous memory, wait until
 * all of them have (-y), then write every 8-byte word of it once with the
 * word's index, front to back: first-touch faults, and in a memory cgroup
 * smaller than N * SIZE, reclaim that swaps the oldest pages out. Nothing
 * is read back. Each process's time runs, as in usemem, from the common
 * start (after the setup, --init-time) to the end of its own writes. Then
 * they wait for each other again (-x) and each times its munmap(), which
 * frees its swap slots.
 *
 * After the timed part, once all have written, each process checks one
 * word of every 8th page (most of them swapped in for it): the data came
 * back. Its time is printed, not part of the throughput, and the
 * timed part is the same as usemem's, where no process reads.
 *
 * usage: usemem_series NPROC SIZE_MIB [CMD]
 *   CMD: a shell command run once every process has written, before any
 *   reads back (bench/funcs.sh counts the writes apart).
 *
 * Prints one JSON object: for each process its KiB/s (SIZE over its time;
 * usemem itself counts SIZE * 9/8, so its figures are 12.5% higher, the
 * same factor for every driver), seconds, the check's seconds and the
 * munmap()'s microseconds; their sum; and the bad words. Exits 1 if a
 * word was wrong.
 */
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WORDS_PER_PAGE (4096 / sizeof(uint64_t))

struct result {
	double secs;
	double check_secs;
	double free_us;
	uint64_t bad;
	int done;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* All processes meet here: each says it is ready, the parent says go. */
struct gate {
	int ready[2];
	int go[2];
};

static void gate_wait(struct gate *g)
{
	struct pollfd pfd = { .fd = g->go[0], .events = POLLIN };
	char c = 1;

	if (write(g->ready[1], &c, 1) != 1 || poll(&pfd, 1, -1) != 1) {
		perror("usemem_series: gate");
		_exit(2);
	}
}

/*
 * Wait until @n processes are at the gate; run @cmd (if not NULL) while
 * they wait, then let them go. -1 if the gate failed, 1 if @cmd did.
 */
static int gate_open(struct gate *g, int n, const char *cmd)
{
	int failed = 0;
	char c;

	while (n--)
		if (read(g->ready[0], &c, 1) != 1)
			return -1;
	if (cmd) {
		fflush(stdout);
		failed = system(cmd) != 0;
	}
	return write(g->go[1], &c, 1) == 1 ? failed : -1;
}

static void worker(struct result *r, uint64_t bytes, double t0,
		   struct gate *start, struct gate *check, struct gate *free_gate)
{
	uint64_t words = bytes / sizeof(uint64_t), i;
	volatile uint64_t *p;
	double t;

	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("usemem_series: mmap");
		_exit(2);
	}
	gate_wait(start);
	for (i = 0; i < words; i++)
		p[i] = i;
	r->secs = now() - t0;

	gate_wait(check);
	t = now();
	/* Every 8th page, one word of it, at an offset that moves. */
	for (i = 0; i < words; i += 8 * WORDS_PER_PAGE) {
		uint64_t j = i + (i / (8 * WORDS_PER_PAGE)) % WORDS_PER_PAGE;

		if (j < words && p[j] != j)
			r->bad++;
	}
	r->check_secs = now() - t;

	gate_wait(free_gate);
	t = now();
	munmap((void *)p, bytes);
	r->free_us = (now() - t) * 1e6;
	r->done = 1;
	_exit(0);
}

int main(int argc, char **argv)
{
	struct gate start, check, free_gate;
	struct result *res;
	uint64_t bytes, bad = 0;
	double t0, sum = 0;
	char *end;
	long n, i;
	int st, rc, ok = 1;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: usemem_series NPROC SIZE_MIB [CMD]\n");
		return 2;
	}
	n = strtol(argv[1], &end, 10);
	if (*end || n < 1 || n > 64) {
		fprintf(stderr, "usemem_series: NPROC is 1 to 64\n");
		return 2;
	}
	bytes = strtoull(argv[2], &end, 10) << 20;
	if (*end || !bytes || bytes > (1ULL << 40)) {
		fprintf(stderr, "usemem_series: SIZE_MIB is 1 to 1048576\n");
		return 2;
	}
	res = mmap(NULL, n * sizeof(*res), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (res == MAP_FAILED || pipe(start.ready) || pipe(start.go) ||
	    pipe(check.ready) || pipe(check.go) ||
	    pipe(free_gate.ready) || pipe(free_gate.go)) {
		perror("usemem_series");
		return 2;
	}
	t0 = now();
	for (i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("usemem_series: fork");
			return 2;
		}
		if (!pid)
			worker(&res[i], bytes, t0, &start, &check, &free_gate);
	}
	/* CMD runs once every process has written, before any checks. */
	if (gate_open(&start, n, NULL) ||
	    (rc = gate_open(&check, n, argc == 4 ? argv[3] : NULL)) < 0 ||
	    gate_open(&free_gate, n, NULL)) {
		perror("usemem_series: gate");
		return 2;
	}
	if (rc)
		ok = 0;
	for (i = 0; i < n; i++)
		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			ok = 0;

	printf("{\"nproc\": %ld, \"size_mib\": %llu, \"procs\": [", n,
	       (unsigned long long)(bytes >> 20));
	for (i = 0; i < n; i++) {
		double kbps = res[i].secs > 0 ? (bytes >> 10) / res[i].secs : 0;

		sum += kbps;
		bad += res[i].bad;
		if (!res[i].done)
			ok = 0;
		printf("%s{\"kbps\": %.0f, \"secs\": %.3f, \"check_secs\": %.3f, \"free_us\": %.0f}",
		       i ? ", " : "", kbps, res[i].secs, res[i].check_secs,
		       res[i].free_us);
	}
	printf("], \"sum_kbps\": %.0f, \"bad_words\": %llu, \"complete\": %s}\n",
	       sum, (unsigned long long)bad, ok ? "true" : "false");
	return ok && !bad ? 0 : 1;
}
