// SPDX-License-Identifier: GPL-2.0
/*
 * gsparallel: shows whether two CPUs of this machine execute at the same
 * instant.
 *
 * Two threads, pinned to two CPUs, pass a token back and forth through one
 * shared word for SECONDS: each spins (plain loads, no pause, no yield)
 * until the word says it is its turn, then hands the token on. A pass needs
 * the other thread to be executing: where the emulator runs one virtual CPU
 * at a time (single-threaded TCG), a pass waits for it to switch CPUs, which
 * it does a few dozen times a second; where both run at once, passes take
 * well under a microsecond of guest time.
 *
 * usage: gsparallel SECONDS [CPU_A CPU_B]   (default CPUs 0 and 1)
 * Prints "passes N in SECONDS s: R per second" and exits 0 (1 on a usage
 * or setup error). The caller judges the rate.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static _Atomic unsigned long token;	/* even: A's turn, odd: B's */
static atomic_int stop;

struct player {
	int cpu;
	unsigned long parity;
	int err;
};

static void *play(void *arg)
{
	struct player *p = arg;
	cpu_set_t set;
	unsigned long t;

	CPU_ZERO(&set);
	CPU_SET(p->cpu, &set);
	p->err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (p->err)
		return NULL;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		t = atomic_load_explicit(&token, memory_order_acquire);
		if ((t & 1) == p->parity)
			atomic_store_explicit(&token, t + 1,
					      memory_order_release);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct player a = { .parity = 0 }, b = { .parity = 1 };
	struct timespec t0, t1;
	pthread_t ta, tb;
	double secs, took;
	unsigned long passes;

	if (argc != 2 && argc != 4) {
		fprintf(stderr, "usage: %s SECONDS [CPU_A CPU_B]\n", argv[0]);
		return 1;
	}
	secs = strtod(argv[1], NULL);
	a.cpu = argc == 4 ? atoi(argv[2]) : 0;
	b.cpu = argc == 4 ? atoi(argv[3]) : 1;
	if (secs <= 0 || a.cpu == b.cpu) {
		fprintf(stderr, "%s: SECONDS > 0 and two different CPUs\n",
			argv[0]);
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (pthread_create(&ta, NULL, play, &a) ||
	    pthread_create(&tb, NULL, play, &b)) {
		perror("pthread_create");
		return 1;
	}
	usleep((useconds_t)(secs * 1e6));
	atomic_store(&stop, 1);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (a.err || b.err) {
		fprintf(stderr, "%s: pinning to CPUs %d and %d: %s\n", argv[0],
			a.cpu, b.cpu, strerror(a.err ? a.err : b.err));
		return 1;
	}
	passes = atomic_load(&token);
	took = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("passes %lu in %.1f s: %.0f per second (CPUs %d and %d)\n",
	       passes, took, passes / took, a.cpu, b.cpu);
	return 0;
}
