// SPDX-License-Identifier: GPL-2.0
/*
 * The host's side of the store-buffering test (testbed/tcg-litmus.sh):
 * maps the file behind the guest's ivshmem device and runs ROUNDS rounds
 * in each MODE: reset x and y, start the round, store y = 1, mfence, load
 * x; the guest stores x = 1, runs MODE's barrier, loads y. It prints, per
 * mode, how often each side read 0. "both 0" is the outcome a full barrier
 * on both sides forbids: the guest's store was still invisible to the
 * host after the guest's barrier. "none" (no barrier) is the control: it
 * shows the test can see the reordering at all.
 *
 * usage: sb-host FILE ROUNDS HOST_DELAY GUEST_DELAY MODE...
 */
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "sb.h"

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	unsigned long rounds, out[2][2], i, w;
	unsigned int hdelay, gdelay, seed = 7, round = 0, rh, rg;
	struct sb_shared *s;
	double t0, t;
	int fd, a, m, failed = 0;

	if (argc < 6) {
		fprintf(stderr,
			"usage: sb-host FILE ROUNDS HOST_DELAY GUEST_DELAY MODE...\n");
		return 2;
	}
	rounds = strtoul(argv[2], NULL, 0);
	hdelay = strtoul(argv[3], NULL, 0);
	gdelay = strtoul(argv[4], NULL, 0);
	fd = open(argv[1], O_RDWR);
	if (fd < 0) {
		perror(argv[1]);
		return 2;
	}
	s = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (s == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	t0 = now();
	while (s->ready != SB_MAGIC) {
		if (now() - t0 > 900) {
			fprintf(stderr, "sb-host: the guest never came\n");
			return 2;
		}
		usleep(100000);
	}
	s->delay = gdelay;
	for (a = 5; a < argc; a++) {
		for (m = 0; m < SB_MODES; m++)
			if (!strcmp(argv[a], sb_mode_name[m]))
				break;
		if (m == SB_MODES) {
			fprintf(stderr, "sb-host: no mode %s\n", argv[a]);
			failed = 2;
			break;
		}
		memset(out, 0, sizeof(out));
		t = now();
		for (i = 0; i < rounds; i++) {
			s->x = 0;
			s->y = 0;
			s->mode = m;
			__asm__ volatile("mfence" ::: "memory");
			s->go = ++round;
			seed = seed * 1103515245 + 12345;
			spin((seed >> 8) % (hdelay + 1));
			s->y = 1;
			__asm__ volatile("mfence" ::: "memory");
			rh = s->x;
			t0 = now();
			for (w = 0; s->done != round; w++) {
				/* The guest may share this CPU (GS_PIN_CPU). */
				if (w > 1000)
					sched_yield();
				if (!(w & 0xffff) && now() - t0 > 60) {
					fprintf(stderr, "sb-host: the guest stopped at round %u\n",
						round);
					s->quit = 1;
					return 2;
				}
			}
			rg = s->seen;
			out[!!rh][!!rg]++;
		}
		printf("%-10s rounds %lu  both 0: %lu  host 0 only: %lu  guest 0 only: %lu  both 1: %lu  (%.1f s)\n",
		       sb_mode_name[m], rounds, out[0][0], out[0][1], out[1][0],
		       out[1][1], now() - t);
		fflush(stdout);
	}
	s->quit = 1;
	return failed;
}
