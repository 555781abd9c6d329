// SPDX-License-Identifier: GPL-2.0
/*
 * pagerw: 4 KiB random writes or reads of given data on a block device,
 * direct, one at a time, for the bench's data patterns that fio cannot
 * make (bench/guest/bench.sh, section patterns): pages of a file (the
 * guest's binaries or text), or usemem's counters (each 8-byte word its
 * index in the device).
 *
 * usage: pagerw DEV fill|write|read psync|libaio SECONDS MIB DATA
 *   fill: DATA's pages written over the first MIB of DEV, in order;
 *   write, read: SECONDS of 4 KiB random writes (DATA's pages in turn) or
 *   reads within the first MIB of DEV, with pwrite/pread (psync) or one
 *   Linux AIO request at a time (libaio, as fio's iodepth=1).
 *   DATA: a file (its first 64 MiB), or "counters".
 * Prints one JSON object: {"ios": N, "seconds": S, "iops": N/S}.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PAGE		4096
#define DATA_MAX	(64UL << 20)

static void die(const char *what)
{
	fprintf(stderr, "pagerw: %s: %s\n", what, strerror(errno));
	exit(1);
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* DATA's pages: a file's, or counters for @pages pages. */
static char *load(const char *data, size_t pages, size_t *n)
{
	char *buf;
	size_t i, got = 0;
	ssize_t r;
	int fd;

	if (!strcmp(data, "counters")) {
		if (pages > DATA_MAX / PAGE)
			pages = DATA_MAX / PAGE;
		if (posix_memalign((void **)&buf, PAGE, pages * PAGE))
			die("memory");
		for (i = 0; i < pages * PAGE / 8; i++)
			((uint64_t *)buf)[i] = i;
		*n = pages;
		return buf;
	}
	if (posix_memalign((void **)&buf, PAGE, DATA_MAX))
		die("memory");
	fd = open(data, O_RDONLY);
	if (fd < 0)
		die(data);
	while (got < DATA_MAX && (r = read(fd, buf + got, DATA_MAX - got)) > 0)
		got += r;
	close(fd);
	*n = got / PAGE;
	if (!*n) {
		errno = EINVAL;
		die("DATA holds less than a page");
	}
	return buf;
}

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* One 4 KiB I/O at page @pg of the device, by @engine. */
static void io(int fd, aio_context_t ctx, int aio, int wr, char *buf,
	       uint64_t pg)
{
	struct iocb cb, *cbs[1] = { &cb };
	struct io_event ev;

	if (!aio) {
		if ((wr ? pwrite(fd, buf, PAGE, pg * PAGE) :
			  pread(fd, buf, PAGE, pg * PAGE)) != PAGE)
			die(wr ? "pwrite" : "pread");
		return;
	}
	memset(&cb, 0, sizeof(cb));
	cb.aio_fildes = fd;
	cb.aio_lio_opcode = wr ? IOCB_CMD_PWRITE : IOCB_CMD_PREAD;
	cb.aio_buf = (uintptr_t)buf;
	cb.aio_nbytes = PAGE;
	cb.aio_offset = pg * PAGE;
	if (syscall(SYS_io_submit, ctx, 1, cbs) != 1)
		die("io_submit");
	if (syscall(SYS_io_getevents, ctx, 1, 1, &ev, NULL) != 1)
		die("io_getevents");
	if (ev.res != PAGE) {
		errno = ev.res < 0 ? -ev.res : EIO;
		die("aio");
	}
}

int main(int argc, char **argv)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL, pages, ios = 0, i;
	aio_context_t ctx = 0;
	int fd, wr, aio, fill;
	double secs, t0, t;
	size_t n;
	char *data, *rbuf;

	if (argc != 7) {
		fprintf(stderr, "usage: pagerw DEV fill|write|read psync|libaio SECONDS MIB DATA\n");
		return 2;
	}
	fill = !strcmp(argv[2], "fill");
	wr = fill || !strcmp(argv[2], "write");
	aio = !strcmp(argv[3], "libaio");
	secs = atof(argv[4]);
	pages = strtoull(argv[5], NULL, 0) << 20 >> 12;
	if ((!wr && strcmp(argv[2], "read")) ||
	    (!aio && strcmp(argv[3], "psync")) || !pages) {
		fprintf(stderr, "pagerw: bad arguments\n");
		return 2;
	}
	data = load(argv[6], pages, &n);
	if (posix_memalign((void **)&rbuf, PAGE, PAGE))
		die("memory");
	fd = open(argv[1], (wr ? O_WRONLY : O_RDONLY) | O_DIRECT);
	if (fd < 0)
		die(argv[1]);
	if (aio && syscall(SYS_io_setup, 1, &ctx))
		die("io_setup");
	t0 = now();
	if (fill) {
		for (i = 0; i < pages; i++)
			io(fd, ctx, aio, 1, data + (i % n) * PAGE, i);
		ios = pages;
	} else {
		do {
			/* 64 I/Os between looks at the clock, as a batch. */
			for (i = 0; i < 64; i++, ios++)
				io(fd, ctx, aio, wr,
				   wr ? data + (ios % n) * PAGE : rbuf,
				   rnd(&x) % pages);
		} while (now() - t0 < secs);
	}
	t = now() - t0;
	printf("{\"ios\": %llu, \"seconds\": %.6f, \"iops\": %.3f}\n",
	       (unsigned long long)ios, t, ios / t);
	return 0;
}
