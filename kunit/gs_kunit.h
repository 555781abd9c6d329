/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the ghostswap KUnit suites. */
#ifndef _GS_KUNIT_H
#define _GS_KUNIT_H

#include <kunit/resource.h>
#include <kunit/test.h>
#include <linux/err.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/string.h>
#include "gs_core.h"

KUNIT_DEFINE_ACTION_WRAPPER(gs_kunit_store_destroy, gs_store_destroy,
			    struct gs_store *);

/* A store that is destroyed when the test ends, even if it fails. */
static inline struct gs_store *gs_kunit_store(struct kunit *test,
					      const char *alg, u64 nr_slots)
{
	struct gs_store *s = gs_store_create(alg, nr_slots);
	int ret;

	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(s), "gs_store_create(%s): %ld",
			       alg, PTR_ERR_OR_ZERO(s));
	ret = kunit_add_action_or_reset(test, gs_kunit_store_destroy, s);
	KUNIT_ASSERT_EQ(test, ret, 0);
	return s;
}

static inline void *gs_kunit_page(struct kunit *test)
{
	void *p = kunit_kmalloc(test, PAGE_SIZE, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, p);
	return p;
}

/* Every 64-bit word equal to @word: stored inline as SAME. */
static inline void *gs_kunit_same(struct kunit *test, unsigned long word)
{
	void *p = gs_kunit_page(test);

	memset64(p, word, PAGE_SIZE / 8);
	return p;
}

/* Random bytes: incompressible, stored RAW. */
static inline void *gs_kunit_random(struct kunit *test)
{
	void *p = gs_kunit_page(test);

	get_random_bytes(p, PAGE_SIZE);
	return p;
}

/* Text-like content, a pure function of @seed: compresses well. */
static inline void *gs_kunit_text(struct kunit *test, u32 seed)
{
	static const char *const words[] = {
		"swap ", "page ", "slot ", "cluster ", "memory ", "the ",
		"table ", "entry\n",
	};
	char *p = gs_kunit_page(test);
	u32 x = seed * 2654435761u + 1;
	size_t n = 0, len;

	while (n < PAGE_SIZE) {
		x = x * 1103515245u + 12345;
		len = min(strlen(words[(x >> 16) & 7]), PAGE_SIZE - n);
		memcpy(p + n, words[(x >> 16) & 7], len);
		n += len;
	}
	return p;
}

#endif /* _GS_KUNIT_H */
