// SPDX-License-Identifier: GPL-2.0
/* zs_obj_write() (7.x); 6.12 has zs_map_object() and zs_unmap_object(). */
#include <linux/atomic.h>
#include <linux/zsmalloc.h>

void gs_probe(struct zs_pool *pool, unsigned long handle, void *buf,
	      size_t len);

void gs_probe(struct zs_pool *pool, unsigned long handle, void *buf,
	      size_t len)
{
	zs_obj_write(pool, handle, buf, len);
}
