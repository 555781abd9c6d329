// SPDX-License-Identifier: GPL-2.0
/* zs_malloc() takes a NUMA node (7.x); 6.12's has no node argument. */
#include <linux/atomic.h>
#include <linux/gfp.h>
#include <linux/numa.h>
#include <linux/zsmalloc.h>

unsigned long gs_probe(struct zs_pool *pool);

unsigned long gs_probe(struct zs_pool *pool)
{
	return zs_malloc(pool, 64, GFP_KERNEL, NUMA_NO_NODE);
}
