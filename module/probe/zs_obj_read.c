// SPDX-License-Identifier: GPL-2.0
/*
 * zs_obj_read_begin() and zs_obj_read_end() with the object's length
 * (7.x); 6.12 has zs_map_object() and zs_unmap_object().
 */
#include <linux/atomic.h>
#include <linux/zsmalloc.h>

void *gs_probe(struct zs_pool *pool, unsigned long handle, size_t len,
	       void *buf);

void *gs_probe(struct zs_pool *pool, unsigned long handle, size_t len,
	       void *buf)
{
	void *p = zs_obj_read_begin(pool, handle, len, buf);

	zs_obj_read_end(pool, handle, len, p);
	return p;
}
