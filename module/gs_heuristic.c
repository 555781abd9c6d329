// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswap's incompressible-page heuristic.
 *
 * The sample is 32 64-bit words, one from each 1/32 of the page, at an
 * offset within its stretch that changes from word to word (so that
 * arrays of structures do not show the same field every time) and
 * repeats every 8 words (so that a page whose halves or quarters are
 * equal shows equal words). The words are looked at in groups of four,
 * one from each quarter of the page (quarters 0, 2, 1, 3), so that the
 * first few already spread over the whole page: a page with data in one
 * part and zeroes in the rest (a heap page in use at its start, a stack
 * page at its end) shows both within a few words. Within a group the
 * four words lie at different eighths of their quarters, three eighths
 * apart, and at different offsets within a 512-byte block: data made of
 * short blocks, each part data and part zeroes (fio's default buffers:
 * 256 random bytes and 256 zeroes, over and over), shows both in the
 * first four words too. Word by word: the eighth of its quarter the k-th
 * word lies in is bit-reversed k / 4, plus 3 * (k % 4), modulo 8.
 *
 * - Bytes below 0x80, first. If no byte of the first four words of that
 *   order (one from each quarter of the page) has its top bit set, the
 *   page is most likely text, small integers or mostly zeroes: at most
 *   128 byte values, which the byte-pair test below would call
 *   compressible too. Random bytes pass with probability 2^-32. It only
 *   ever says compressible, and it is the whole look for most text: four
 *   loads instead of a dozen words counted. A page it lets through that
 *   is random past those words costs a compression, never a page.
 *
 * - Zero bytes, next. If 5 or more of the 64 bytes of the first eight
 *   words are zero (counted word by word, so that the count stops where
 *   it reaches 5: one word of counters or pointers decides), the page
 *   holds small integers, pointers, machine code or runs of zeroes:
 *   compressible. Random bytes do that with probability about
 *   C(64,5) / 256^5, 6 * 10^-6 (one random page in 150,000 goes to the
 *   compressor for it). Like the test before, it only ever says
 *   compressible; it saves the counting below on a page of counters,
 *   offsets or pointers, whose top bits fail the first test, and on most
 *   pages of programs and libraries: of the 8,192 pages of the bench's
 *   corpus of them, 845 are left to count (4,189 when it looked at four
 *   words for 8 zero bytes).
 *
 * Then two tests run word by word, and the first that speaks stops the
 * look. The order changes how soon their verdict comes, never which:
 * both only ever see more.
 *
 * - Equal byte pairs. Among n bytes of uniformly random data, two are
 *   equal with probability 1/256: n(n-1)/512 equal pairs are expected
 *   (127.5 for the 256 bytes sampled). Each byte adds the count of its
 *   equals seen before, so the running sum is the number of equal pairs
 *   and never goes down. At 1.3 times the random expectation the bytes
 *   are skewed enough for an entropy coder or for repeated strings:
 *   compressible. This is the collision entropy of the byte
 *   distribution (the sum of squared byte frequencies), which needs no
 *   logarithms and no pass over a histogram. Zeroes, small alphabets,
 *   pointers and small integers cross the line within a few words;
 *   random bytes come out near 1.0 times (standard deviation 0.09), and
 *   about one random page in 500 goes to the compressor anyway.
 *
 * - Equal words. A word equal to one sampled before means repeated
 *   content whatever the bytes look like (a block of random bytes
 *   repeated, equal halves): compressible. A 256-bit set of word hashes
 *   finds candidates; only a hit is compared with the words before.
 *
 * A page that passes all four as random is called incompressible. What
 * it cannot see: near-random bytes repeated at a distance that no two
 * sampled words share (a random 1500-byte block repeated, say).
 *
 * Cost: four words for text, counters and pointers, eight for most
 * machine code; else 256 bytes read and counted, a 256-byte histogram on
 * the stack, compressible data stopping after a few words.
 * About a quarter of what lz4 takes to find out a random page does not
 * compress, under a hundredth of its time on a page of text
 * (kunit/bench/gs_bench_heuristic.c). The btrfs compression heuristic
 * (fs/btrfs/compression.c) answers the same question for file extents
 * with byte-set sizes, a core-set size and Shannon entropy.
 */
#include <linux/bitops.h>
#include <linux/hash.h>
#include <linux/mm.h>
#include <linux/string.h>
#include "gs_heuristic.h"

#define GS_HEUR_WORDS		32
#define GS_HEUR_STRIDE		(PAGE_SIZE / GS_HEUR_WORDS)
#define GS_HEUR_SAMPLE_BYTES	(GS_HEUR_WORDS * 8)
/* 1.3 times the equal pairs expected of random bytes. */
#define GS_HEUR_PAIRS_MIN	(GS_HEUR_SAMPLE_BYTES * (GS_HEUR_SAMPLE_BYTES - 1) / \
				 2 * 13 / (256 * 10))
#define GS_HEUR_HASH_BITS	8
/* The bits the bytes-below-0x80 test looks at. */
#define GS_HEUR_TOP_BITS	0x8080808080808080ULL
#define GS_HEUR_LOW_BITS	0x7f7f7f7f7f7f7f7fULL
/*
 * Zero bytes among the first eight words' 64, counted word by word, that
 * make a page compressible.
 */
#define GS_HEUR_ZERO_BYTES_MIN	5

static_assert(GS_HEUR_STRIDE >= 128);

/*
 * Word @i of the sample. The offsets within the stretch cycle through
 * 8 values, multiples of 8 below 128: the words stay aligned.
 */
static inline u64 gs_heur_word(const void *page, unsigned int i)
{
	return *(const u64 *)(page + i * GS_HEUR_STRIDE +
			      (((i & 7) * 24) & 120));
}

/* The order the words are looked at: four at a time, one per quarter. */
static const u8 gs_heur_order[GS_HEUR_WORDS] = {
	0, 19, 14, 25, 4, 23, 10, 29, 2, 21, 8, 27, 6, 17, 12, 31,
	1, 20, 15, 26, 5, 16, 11, 30, 3, 22, 9, 28, 7, 18, 13, 24,
};

/* Is @x, the @k-th word looked at, equal to one looked at before it? */
static bool gs_heur_seen(const void *page, unsigned int k, u64 x)
{
	unsigned int j;

	for (j = 0; j < k; j++)
		if (gs_heur_word(page, gs_heur_order[j]) == x)
			return true;
	return false;
}

/*
 * The two tests that count, out of line: their arrays, stack frame and
 * stack protector are not paid by a page the quick test decides.
 */
static noinline enum gs_heur_verdict gs_heur_count(const void *page)
{
	/* Cleared here, not by the kernel's automatic stack initialization. */
	DECLARE_BITMAP(hashes, 1 << GS_HEUR_HASH_BITS) __uninitialized;
	unsigned int pairs = 0, k, b;
	/*
	 * A count stays below 256: 23 equal bytes already make more pairs
	 * than GS_HEUR_PAIRS_MIN, and the sum is checked every 8 bytes.
	 */
	u8 count[256] __uninitialized;
	u64 x;

	static_assert(GS_HEUR_PAIRS_MIN < 23 * 22 / 2);
	memset(count, 0, sizeof(count));
	bitmap_zero(hashes, 1 << GS_HEUR_HASH_BITS);
	for (k = 0; k < GS_HEUR_WORDS; k++) {
		x = gs_heur_word(page, gs_heur_order[k]);
		if (__test_and_set_bit(hash_64(x, GS_HEUR_HASH_BITS), hashes) &&
		    gs_heur_seen(page, k, x))
			return GS_HEUR_REPEATS;
		for (b = 0; b < 8; b++, x >>= 8)
			pairs += count[x & 0xff]++;
		if (pairs >= GS_HEUR_PAIRS_MIN)
			return GS_HEUR_BYTES;
	}
	return GS_HEUR_INCOMPRESSIBLE;
}

/* The top bit of each zero byte of @x, the others clear. */
static inline u64 gs_heur_zero_bytes(u64 x)
{
	return ~(((x & GS_HEUR_LOW_BITS) + GS_HEUR_LOW_BITS) | x |
		 GS_HEUR_LOW_BITS);
}

/*
 * Add the zero bytes of the @k-th word looked at to *@zeroes: are they
 * enough to call the page compressible?
 */
static __always_inline bool gs_heur_zeroes(const void *page, unsigned int k,
					   unsigned int *zeroes)
{
	u64 x = gs_heur_word(page, gs_heur_order[k]);

	*zeroes += hweight64(gs_heur_zero_bytes(x));
	return *zeroes >= GS_HEUR_ZERO_BYTES_MIN;
}

enum gs_heur_verdict gs_page_heuristic(const void *page)
{
	/* The quick tests: the first four words of gs_heur_order... */
	u64 a = gs_heur_word(page, gs_heur_order[0]);
	u64 b = gs_heur_word(page, gs_heur_order[1]);
	u64 c = gs_heur_word(page, gs_heur_order[2]);
	u64 d = gs_heur_word(page, gs_heur_order[3]);
	unsigned int zeroes = 0;

	if (!((a | b | c | d) & GS_HEUR_TOP_BITS))
		return GS_HEUR_BYTES;
	/*
	 * ...and the first eight, word by word, for their zero bytes: one
	 * word decides a page of counters or pointers.
	 */
	if (gs_heur_zeroes(page, 0, &zeroes) ||
	    gs_heur_zeroes(page, 1, &zeroes) ||
	    gs_heur_zeroes(page, 2, &zeroes) ||
	    gs_heur_zeroes(page, 3, &zeroes) ||
	    gs_heur_zeroes(page, 4, &zeroes) ||
	    gs_heur_zeroes(page, 5, &zeroes) ||
	    gs_heur_zeroes(page, 6, &zeroes) ||
	    gs_heur_zeroes(page, 7, &zeroes))
		return GS_HEUR_BYTES;
	return gs_heur_count(page);
}
