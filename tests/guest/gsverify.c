// SPDX-License-Identifier: GPL-2.0
/*
 * gsverify: a swap workload that checks every byte it gets back.
 *
 * Maps SIZE MiB of anonymous memory and fills every page with content that is
 * a pure function of (seed, page number, generation): zero pages, pages filled
 * with one repeated 64-bit word, text-like pages and random pages, mixed. Then
 * it sweeps the area PASSES times; each sweep verifies every page and rewrites
 * it with the next generation. Run inside a memory cgroup smaller than SIZE,
 * this pushes most pages through swap and back, many times.
 *
 * usage: [GSVERIFY_STOP=1] gsverify SIZE_MIB [PASSES] [SEED] [MIX]
 *   MIX: letters z (zero), s (same-filled), t (text), r (random); default
 *        "zstr", one kind per page in turn by a hash of the page number.
 * Prints "verified BYTES" and exits 0, or prints the first mismatches and
 * exits 1.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "pagegen.h"


int main(int argc, char **argv)
{
	uint64_t mib, passes, seed, npages, pg, pass, bad = 0, verified = 0;
	const char *mix;
	unsigned char *area, *want;

	if (argc < 2) {
		fprintf(stderr, "usage: %s SIZE_MIB [PASSES] [SEED] [MIX]\n",
			argv[0]);
		return 2;
	}
	mib = strtoull(argv[1], NULL, 0);
	passes = argc > 2 ? strtoull(argv[2], NULL, 0) : 2;
	seed = argc > 3 ? strtoull(argv[3], NULL, 0) : 1;
	mix = argc > 4 ? argv[4] : "zstr";
	if (!mib || !*mix || strspn(mix, "zstr") != strlen(mix)) {
		fprintf(stderr, "bad arguments\n");
		return 2;
	}
	npages = mib * (1 << 20) / PAGE;
	area = mmap(NULL, npages * PAGE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	want = malloc(PAGE);
	if (area == MAP_FAILED || !want) {
		perror("mmap");
		return 2;
	}
	for (pg = 0; pg < npages; pg++)
		fill(area + pg * PAGE, mix, seed, pg, 0);
	/*
	 * GSVERIFY_STOP set: stop (SIGSTOP) once filled, until continued, so
	 * that a caller can tell the swap-out of the fill from the swap-in of
	 * the sweeps (bench.sh's zswap_path).
	 */
	if (getenv("GSVERIFY_STOP") && raise(SIGSTOP)) {
		perror("raise");
		return 2;
	}

	for (pass = 1; pass <= passes + 1; pass++) {
		for (pg = 0; pg < npages; pg++) {
			/* Alternate the sweep direction to defeat readahead luck. */
			uint64_t p = pass & 1 ? npages - 1 - pg : pg;
			unsigned char *got = area + p * PAGE;

			fill(want, mix, seed, p, pass - 1);
			if (memcmp(got, want, PAGE)) {
				if (bad++ < 5) {
					size_t o = 0;

					while (got[o] == want[o])
						o++;
					fprintf(stderr,
						"MISMATCH page %llu pass %llu byte %zu: got %02x want %02x\n",
						(unsigned long long)p,
						(unsigned long long)pass, o,
						got[o], want[o]);
				}
			}
			verified += PAGE;
			if (pass <= passes)
				fill(got, mix, seed, p, pass);
		}
	}
	printf("verified %llu bad_pages %llu\n", (unsigned long long)verified,
	       (unsigned long long)bad);
	return bad ? 1 : 0;
}
