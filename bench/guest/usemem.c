// SPDX-License-Identifier: GPL-2.0
/*
 * usemem: a memory hog for swap benchmarks, in the spirit of the usemem
 * tool of the vm-scalability suite, that times every swap-in and checks
 * every byte it gets back.
 *
 * Maps SIZE MiB of anonymous memory and fills it with pages of a chosen
 * mix (content is a pure function of seed, page number and generation).
 * Then sweeps the area PASSES times, alternating direction; each sweep
 * reads every page (timed: a page that mincore() says is not in memory is
 * a swap-in, and the time of its first access is its latency), verifies
 * it and rewrites it with the next generation. Run in a memory cgroup
 * smaller than SIZE, this pushes most pages through swap on every sweep.
 *
 * usage: usemem SIZE_MIB PASSES MIX [SEED]
 *   MIX: letters z (zero page), s (one repeated 64-bit word), t (text),
 *        r (random), b (binary-like: half random, half zero); each page
 *        picks one letter by a hash, so "zzzst" is 60% zero pages.
 *
 * Prints one JSON object: sizes, the fill and sweep times, throughput
 * (MiB swept per second, generation and verification included), the
 * number of swap-ins and their latency percentiles in microseconds, major
 * faults, pages verified and bad pages. Exits 1 if any page was wrong.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include "pagegen.h"


static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static double pct(const uint32_t *v, uint64_t n, double p)
{
	uint64_t i;

	if (!n)
		return 0;
	i = (uint64_t)(p / 100.0 * (n - 1) + 0.5);
	return v[i] / 1000.0;
}

int main(int argc, char **argv)
{
	uint64_t mib, passes, seed, npages, pg, pass, bad = 0, verified = 0;
	uint64_t nlat = 0;
	double t0, t1, t2, tmc = 0, a, b;
	unsigned char *area, *want, vec;
	struct rusage ru0, ru1;
	uint32_t *lat;
	const char *mix;

	if (argc < 4) {
		fprintf(stderr, "usage: %s SIZE_MIB PASSES MIX [SEED]\n",
			argv[0]);
		return 2;
	}
	mib = strtoull(argv[1], NULL, 0);
	passes = strtoull(argv[2], NULL, 0);
	mix = argv[3];
	seed = argc > 4 ? strtoull(argv[4], NULL, 0) : 1;
	if (!mib || !passes || !*mix || strspn(mix, PAGEGEN_KINDS) != strlen(mix)) {
		fprintf(stderr, "bad arguments\n");
		return 2;
	}
	npages = mib * (1 << 20) / PAGE;
	area = mmap(NULL, npages * PAGE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	want = aligned_alloc(PAGE, PAGE);
	lat = calloc(npages * passes, sizeof(*lat));
	if (area == MAP_FAILED || !want || !lat) {
		perror("usemem: memory");
		return 2;
	}

	t0 = now();
	for (pg = 0; pg < npages; pg++)
		fill(area + pg * PAGE, mix, seed, pg, 0);
	t1 = now();
	getrusage(RUSAGE_SELF, &ru0);
	for (pass = 1; pass <= passes; pass++) {
		for (pg = 0; pg < npages; pg++) {
			uint64_t p = pass & 1 ? npages - 1 - pg : pg;
			unsigned char *got = area + p * PAGE;
			volatile unsigned char c;

			fill(want, mix, seed, p, pass - 1);
			a = now();
			if (mincore(got, PAGE, &vec))
				vec = 1;
			b = now();
			tmc += b - a;
			c = got[0];
			(void)c;
			if (!(vec & 1))
				lat[nlat++] = (uint32_t)((now() - b) * 1e9);
			if (memcmp(got, want, PAGE) && bad++ < 5)
				fprintf(stderr, "usemem: MISMATCH page %llu pass %llu\n",
					(unsigned long long)p,
					(unsigned long long)pass);
			verified++;
			fill(got, mix, seed, p, pass);
		}
	}
	t2 = now();
	getrusage(RUSAGE_SELF, &ru1);
	qsort(lat, nlat, sizeof(*lat), cmp_u32);
	printf("{\"size_mib\": %llu, \"passes\": %llu, \"mix\": \"%s\", "
	       "\"fill_s\": %.3f, \"sweep_s\": %.3f, \"mib_s\": %.2f, "
	       "\"swapins\": %llu, \"majflt\": %ld, "
	       "\"lat_us\": {\"p50\": %.1f, \"p90\": %.1f, \"p99\": %.1f, "
	       "\"p999\": %.1f, \"max\": %.1f}, "
	       "\"verified_pages\": %llu, \"bad_pages\": %llu}\n",
	       (unsigned long long)mib, (unsigned long long)passes, mix,
	       t1 - t0, t2 - t1,
	       (double)mib * passes / (t2 - t1 - tmc),
	       (unsigned long long)nlat, ru1.ru_majflt - ru0.ru_majflt,
	       pct(lat, nlat, 50), pct(lat, nlat, 90), pct(lat, nlat, 99),
	       pct(lat, nlat, 99.9), nlat ? lat[nlat - 1] / 1000.0 : 0,
	       (unsigned long long)verified, (unsigned long long)bad);
	return bad ? 1 : 0;
}
