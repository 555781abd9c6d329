// SPDX-License-Identifier: GPL-2.0
/*
 * kzalloc_obj(), the typed allocation helper (7.x; Debian's 6.12 has it
 * from 6.12.107 on, 6.12.95 not).
 */
#include <linux/slab.h>

struct gs_probe_obj {
	int x;
};

struct gs_probe_obj *gs_probe(void);

struct gs_probe_obj *gs_probe(void)
{
	struct gs_probe_obj *p = kzalloc_obj(*p);

	return p;
}
