// SPDX-License-Identifier: GPL-2.0
/*
 * Uses no feature at all: when this does not compile against a kernel's
 * headers, no other probe's failure means anything, and the build stops.
 */
#include <linux/kernel.h>

int gs_probe(void);

int gs_probe(void)
{
	return 0;
}
