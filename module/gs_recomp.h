/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ghostswap recompression (gs_recomp.c): what the store and sysfs call of
 * it. Its state is struct gs_recomp in gs_store.h.
 */
#ifndef _GS_RECOMP_H
#define _GS_RECOMP_H

#include <linux/types.h>

struct gs_store;

/* Which pages, as zram's recompress "type=" (none: all of them). */
enum gs_recomp_type {
	GS_RECOMP_ALL,
	GS_RECOMP_IDLE,		/* idle (marked, or cold: see age) */
	GS_RECOMP_HUGE,		/* stored as they are (RAW) */
	GS_RECOMP_HUGE_IDLE,
};

struct gs_recomp_req {
	enum gs_recomp_type type;
	unsigned int threshold;	/* bytes in the pool at least, 0: any */
	u64 max_pages;		/* pages tried at most, 0: no limit */
	/* The algorithms tried, in turn; prio_min 0: every secondary one. */
	unsigned int prio_min;
	unsigned int prio_max;
	/* Idle also means: its cluster not stored to for @age s (0: no). */
	u32 age;
};

/*
 * The background sweep's defaults: 5% of one CPU, pages in clusters not
 * stored to for 60 s (or marked idle), once a secondary algorithm is set.
 */
#define GS_RECOMP_AUTO_PCT	5
#define GS_RECOMP_AUTO_AGE	60

void gs_recomp_init(struct gs_store *s);
/* (Re)start the background sweep if it is on and has an algorithm. */
void gs_recomp_start(struct gs_store *s);
/* Stop it and wait for it. */
void gs_recomp_stop(struct gs_store *s);

/*
 * Recompress the pages @r asks for; *@done gets how many were. -EINVAL
 * if @r names no secondary algorithm. May sleep; runs beside I/O.
 */
int gs_store_recompress(struct gs_store *s, const struct gs_recomp_req *r,
			u64 *done);
/* The background sweep: @pct percent of one CPU (0: off), @age s. */
void gs_store_set_recomp_auto(struct gs_store *s, unsigned int pct, u32 age);

#endif /* _GS_RECOMP_H */
