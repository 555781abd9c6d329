/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Pages of known kinds for the swap workloads (gsverify, usemem): the
 * content of a page is a pure function of (seed, page number, generation),
 * so a workload can check every byte it gets back without keeping a copy.
 *
 * MIX is a string of kind letters; each page takes one by a hash:
 *   z  zero page          s  one repeated 64-bit word
 *   t  text-like          r  random (incompressible)
 *   b  binary-like: half random, half zero
 */
#ifndef PAGEGEN_H
#define PAGEGEN_H

#include <stdint.h>
#include <string.h>

#define PAGE 4096UL
#define PAGEGEN_KINDS "zstrb"

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

static const char *const pagegen_words[] = {
	"swap ", "page ", "cluster ", "slot ", "memory ", "the ", "of ",
	"kernel ", "ghost ", "table ", "compressed ", "and ", "a ", "zram ",
	"writeback ", "entry\n",
};

static void pagegen_random(uint64_t *w, size_t n, uint64_t x)
{
	size_t i;

	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		w[i] = x;
	}
}

/* Fill page @p: page @pg of generation @gen. */
static void fill(unsigned char *p, const char *mix, uint64_t seed,
		 uint64_t pg, uint64_t gen)
{
	uint64_t h = mix64(seed ^ mix64(pg * 0x9e3779b97f4a7c15ULL + gen));
	char kind = mix[h % strlen(mix)];
	uint64_t *w = (uint64_t *)p, x = h | 1;
	size_t i, n, len;

	switch (kind) {
	case 'z':
		memset(p, 0, PAGE);
		break;
	case 's':
		for (i = 0; i < PAGE / 8; i++)
			w[i] = h >> 3;
		break;
	case 't':
		for (n = 0; n < PAGE; n += len) {
			x = mix64(x);
			len = strlen(pagegen_words[x % 16]);
			if (len > PAGE - n)
				len = PAGE - n;
			memcpy(p + n, pagegen_words[x % 16], len);
		}
		break;
	case 'b':
		pagegen_random(w, PAGE / 16, x);
		memset(p + PAGE / 2, 0, PAGE / 2);
		break;
	default:
		pagegen_random(w, PAGE / 8, x);
		break;
	}
}

#endif /* PAGEGEN_H */
