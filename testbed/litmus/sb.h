/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The store-buffering litmus test between a guest vCPU and a host thread:
 * the words both sides share, one cache line each, at the start of an
 * ivshmem region (the guest's PCI BAR 2, the host's memory backend file).
 */
#ifndef SB_H
#define SB_H

#include <stdint.h>

#define SB_MAGIC	0x6c69746dU	/* "litm" */
#define SB_LINE		64

enum sb_mode { SB_NONE, SB_LOCK_ADD, SB_MFENCE, SB_XCHG, SB_MODES };

static const char *const sb_mode_name[SB_MODES] = {
	"none", "lock-addl", "mfence", "xchg",
};

/* A delay of @n empty loops, which the compiler keeps. */
static inline void spin(unsigned int n)
{
	while (n--)
		__asm__ volatile("" ::: "memory");
}

struct sb_shared {
	/* host -> guest: the round to run (0: none yet), its mode, quit */
	volatile uint32_t go __attribute__((aligned(SB_LINE)));
	volatile uint32_t mode;
	volatile uint32_t delay;	/* the guest's delay range, loops */
	volatile uint32_t quit;
	/* guest -> host: ready, the round done and what it read */
	volatile uint32_t ready __attribute__((aligned(SB_LINE)));
	volatile uint32_t done;
	volatile uint32_t seen;
	/* the two words of the test */
	volatile uint32_t x __attribute__((aligned(SB_LINE)));	/* the guest's */
	volatile uint32_t y __attribute__((aligned(SB_LINE)));	/* the host's */
};

#endif
