// SPDX-License-Identifier: GPL-2.0
/*
 * The swap core keeps a byte per swap slot (swap_map), allocated for the
 * whole device at swapon, and with it a cgroup id and a zero bit per slot
 * (6.12). 7.x's swap table has none of these.
 */
#include <linux/swap.h>

unsigned char *gs_probe(struct swap_info_struct *si);

unsigned char *gs_probe(struct swap_info_struct *si)
{
	return si->swap_map;
}
