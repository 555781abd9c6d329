// SPDX-License-Identifier: GPL-2.0
/*
 * gsparallel: shows whether two CPUs of this machine execute at the same
 * instant.
 *
 * Two threads, pinned to two CPUs, pass a token back and forth through one
 * shared word: each spins (plain loads, no pause, no yield) until the word
 * says it is its turn, then hands the token on. A pass needs the other
 * thread to be executing: where the emulator runs one virtual CPU at a
 * time (single-threaded TCG), a pass waits for it to switch CPUs, which it
 * does a few hundred times a second; where both run at once, passes take
 * well under a microsecond of guest time.
 *
 * Whether two emulated CPUs run at once also depends on the host: a host
 * whose CPUs are busy with other work may run both vCPU threads on one
 * host CPU for a while. So the main thread reads the count every WINDOW
 * (0.1 s) and keeps the best window's rate; with -r RATE it stops at the
 * first window that reaches RATE passes a second.
 *
 * usage: gsparallel [-r RATE] SECONDS [CPU_A CPU_B]   (default CPUs 0 and 1)
 * Prints "passes N in T s: R per second, best 0.1 s window B per second
 * (CPUs A and B)" and exits 0 (1 on a usage or setup error). The caller
 * judges the rate.
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

#define WINDOW_US 100000

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

static double since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) + (t.tv_nsec - t0->tv_nsec) / 1e9;
}

int main(int argc, char **argv)
{
	struct player a = { .parity = 0 }, b = { .parity = 1 };
	double secs, took, want = 0, best = 0, w0, w1, rate;
	unsigned long passes, n0, n1;
	struct timespec t0;
	pthread_t ta, tb;
	int i = 1;

	if (argc > 2 && !strcmp(argv[1], "-r")) {
		want = strtod(argv[2], NULL);
		i = 3;
	}
	if (argc - i != 1 && argc - i != 3) {
		fprintf(stderr, "usage: %s [-r RATE] SECONDS [CPU_A CPU_B]\n",
			argv[0]);
		return 1;
	}
	secs = strtod(argv[i], NULL);
	a.cpu = argc - i == 3 ? atoi(argv[i + 1]) : 0;
	b.cpu = argc - i == 3 ? atoi(argv[i + 2]) : 1;
	if (secs <= 0 || want < 0 || a.cpu == b.cpu) {
		fprintf(stderr, "%s: SECONDS > 0, RATE >= 0, two different CPUs\n",
			argv[0]);
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (pthread_create(&ta, NULL, play, &a) ||
	    pthread_create(&tb, NULL, play, &b)) {
		perror("pthread_create");
		return 1;
	}
	w0 = since(&t0);
	n0 = atomic_load(&token);
	while (w0 < secs) {
		usleep(WINDOW_US);
		w1 = since(&t0);
		n1 = atomic_load(&token);
		rate = (n1 - n0) / (w1 - w0);
		if (rate > best)
			best = rate;
		w0 = w1;
		n0 = n1;
		if (want && best >= want)
			break;
	}
	atomic_store(&stop, 1);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	took = since(&t0);
	if (a.err || b.err) {
		fprintf(stderr, "%s: pinning to CPUs %d and %d: %s\n", argv[0],
			a.cpu, b.cpu, strerror(a.err ? a.err : b.err));
		return 1;
	}
	passes = atomic_load(&token);
	printf("passes %lu in %.1f s: %.0f per second, best 0.1 s window %.0f per second (CPUs %d and %d)\n",
	       passes, took, passes / took, best, a.cpu, b.cpu);
	return 0;
}
