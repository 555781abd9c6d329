// SPDX-License-Identifier: GPL-2.0
/*
 * The guest's side of the store-buffering test (testbed/tcg-litmus.sh):
 * maps the ivshmem device's BAR 2 and, for each round the host starts,
 * stores x = 1, runs the round's barrier, loads y. With a full barrier
 * between them, the guest and the host cannot both read 0.
 *
 * usage: sb-guest   (run as root in the guest)
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "sb.h"

static int read_hex(const char *dir, const char *name, unsigned int *v)
{
	char path[512];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	ok = fscanf(f, "%x", v) == 1;
	fclose(f);
	return ok ? 0 : -1;
}

static struct sb_shared *map_ivshmem(void)
{
	DIR *d = opendir("/sys/bus/pci/devices");
	struct dirent *e;
	unsigned int vendor, device;
	char path[512];
	void *p;
	int fd;

	if (!d) {
		perror("/sys/bus/pci/devices");
		exit(2);
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' ||
		    read_hex(e->d_name, "vendor", &vendor) ||
		    read_hex(e->d_name, "device", &device) ||
		    vendor != 0x1af4 || device != 0x1110)
			continue;
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/enable",
			 e->d_name);
		fd = open(path, O_WRONLY);
		if (fd >= 0) {
			if (write(fd, "1", 1) != 1)
				perror(path);
			close(fd);
		}
		snprintf(path, sizeof(path),
			 "/sys/bus/pci/devices/%s/resource2", e->d_name);
		fd = open(path, O_RDWR | O_SYNC);
		if (fd < 0) {
			perror(path);
			exit(2);
		}
		p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED) {
			perror("mmap");
			exit(2);
		}
		printf("sb-guest: ivshmem at %s\n", e->d_name);
		closedir(d);
		return p;
	}
	fprintf(stderr, "sb-guest: no ivshmem device (1af4:1110)\n");
	exit(2);
}

int main(void)
{
	struct sb_shared *s = map_ivshmem();
	unsigned int last = 0, n, r, seed = 1;
	time_t idle = time(NULL);

	s->ready = SB_MAGIC;
	for (;;) {
		n = s->go;
		if (s->quit)
			break;
		if (n == last) {
			/* The host is gone: end after a minute without a round. */
			if (!(++seed & 0xfffff) && time(NULL) - idle > 60) {
				fprintf(stderr, "sb-guest: no round for 60 s\n");
				return 1;
			}
			continue;
		}
		idle = time(NULL);
		seed = seed * 1103515245 + 12345;
		spin((seed >> 8) % (s->delay + 1));
		switch (s->mode) {
		case SB_NONE:
			s->x = 1;
			__asm__ volatile("" ::: "memory");
			break;
		case SB_LOCK_ADD:	/* x86-64 Linux's smp_mb(), virtio_mb() */
			s->x = 1;
			__asm__ volatile("lock; addl $0,-4(%%rsp)" ::: "memory", "cc");
			break;
		case SB_MFENCE:
			s->x = 1;
			__asm__ volatile("mfence" ::: "memory");
			break;
		case SB_XCHG:		/* smp_store_mb() */
			r = 1;
			__asm__ volatile("xchgl %0, %1"
					 : "+r"(r), "+m"(s->x) : : "memory");
			break;
		}
		r = s->y;
		s->seen = r;
		s->done = n;
		last = n;
	}
	printf("sb-guest: %u rounds\n", last);
	return 0;
}
