/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ghostswap's incompressible-page heuristic: a cheap look at a sample of
 * a page that says whether compressing it is worth a try.
 */
#ifndef _GS_HEURISTIC_H
#define _GS_HEURISTIC_H

#include <linux/types.h>

enum gs_heur_verdict {
	GS_HEUR_INCOMPRESSIBLE,	/* the sample looks like random bytes */
	GS_HEUR_BYTES,		/* its bytes repeat more than random ones do */
	GS_HEUR_REPEATS,	/* a sampled 64-bit word occurs twice */
};

/* Why @page (PAGE_SIZE bytes, 8-byte aligned) is worth compressing, or not. */
enum gs_heur_verdict gs_page_heuristic(const void *page);

/*
 * True if compressing @page is very likely pointless: store it as it
 * is. Wrong the other way (a page that would have compressed) only for
 * data of near-random bytes repeated at distances the sample misses.
 */
static inline bool gs_page_looks_incompressible(const void *page)
{
	return gs_page_heuristic(page) == GS_HEUR_INCOMPRESSIBLE;
}

#endif /* _GS_HEURISTIC_H */
