/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ghostswap kernel compatibility.
 *
 * The module is written against the 7.x kernel API. On a kernel that lacks
 * a piece of it (Debian's 6.12 LTS kernels), this header provides that
 * piece in terms of what the kernel has. Which pieces a kernel has is
 * probed when the module is built (module/probe/: GS_HAVE_* in the
 * generated gs_features.h), never guessed from a version number:
 * distributions backport features into older kernels, e.g. Debian's
 * 6.12.107 and later have kzalloc_obj(), 6.12.95 has not. On a kernel that
 * has every piece, this header adds nothing but gs_acomp_set_bufs().
 *
 * Include it instead of the kernel headers it amends.
 */
#ifndef _GS_COMPAT_H
#define _GS_COMPAT_H

#include <crypto/acompress.h>
#include <linux/atomic.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/swap.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <linux/zsmalloc.h>
#include "gs_features.h"

#ifndef GS_HAVE_KZALLOC_OBJ
/* The form the module uses: one object, GFP_KERNEL. */
#define kzalloc_obj(P)	kzalloc(sizeof(P), GFP_KERNEL)
#endif

#ifndef GS_HAVE_SYSTEM_DFL_WQ
/* The unbound system workqueue, by its name before 7.x renamed it. */
#define system_dfl_wq	system_unbound_wq
#endif

#ifndef GS_HAVE_ZS_MALLOC_NODE
/* No node argument: the page allocator picks, as for NUMA_NO_NODE. */
#define zs_malloc(pool, size, gfp, nid)	\
	({ (void)(nid); zs_malloc(pool, size, gfp); })
#endif

/*
 * Without zs_obj_read_begin() and zs_obj_write(), objects are reached
 * through zs_map_object(), which disables preemption and page faults
 * until zs_unmap_object(): nothing may sleep in between. zs_obj_write()
 * below only copies. A reader of zs_obj_read_begin()'s mapping must not
 * decompress in it where GS_ZS_READ_ATOMIC is true: a decompressor may
 * sleep (an asynchronous crypto acomp driver waits for its request), so
 * the reader copies the object out, ends the mapping, and decompresses
 * the copy (gs_obj_read(), gs_core_internal.h).
 */
#ifdef GS_HAVE_ZS_OBJ_READ
#define GS_ZS_READ_ATOMIC	false
#else
#define GS_ZS_READ_ATOMIC	true

static inline void *zs_obj_read_begin(struct zs_pool *pool,
				      unsigned long handle, size_t mem_len,
				      void *local_copy)
{
	return zs_map_object(pool, handle, ZS_MM_RO);
}

static inline void zs_obj_read_end(struct zs_pool *pool, unsigned long handle,
				   size_t mem_len, void *handle_mem)
{
	zs_unmap_object(pool, handle);
}
#endif

#ifndef GS_HAVE_ZS_OBJ_WRITE
static inline void zs_obj_write(struct zs_pool *pool, unsigned long handle,
				void *handle_mem, size_t mem_len)
{
	void *dst = zs_map_object(pool, handle, ZS_MM_WO);

	memcpy(dst, handle_mem, mem_len);
	zs_unmap_object(pool, handle);
}
#endif

/*
 * The buffers of a compression request. 7.x requests take virtual
 * addresses; older ones take scatterlists only: a one-entry list each
 * way, kept with the request. Either way the buffers must be in the
 * kernel's linear map (kmalloc, a page's address), not vmalloc or stack.
 * The module's are: stream buffers, bounce and writeback pages, and
 * kmap_local_page() of a bio's page, which is the page's linear address
 * on 64-bit kernels (unless CONFIG_DEBUG_KMAP_LOCAL_FORCE_MAP is set, a
 * debugging option no distribution kernel has; CONFIG_DEBUG_SG catches
 * it).
 */
#ifdef GS_HAVE_ACOMP_NONDMA
struct gs_acomp_bufs {
};

static inline void gs_acomp_set_bufs(struct acomp_req *req,
				     struct gs_acomp_bufs *bufs,
				     const void *src, unsigned int slen,
				     void *dst, unsigned int dlen)
{
	acomp_request_set_src_nondma(req, src, slen);
	acomp_request_set_dst_nondma(req, dst, dlen);
}
#else
struct gs_acomp_bufs {
	struct scatterlist src;
	struct scatterlist dst;
};

static inline void gs_acomp_set_bufs(struct acomp_req *req,
				     struct gs_acomp_bufs *bufs,
				     const void *src, unsigned int slen,
				     void *dst, unsigned int dlen)
{
	sg_init_one(&bufs->src, src, slen);
	sg_init_one(&bufs->dst, dst, dlen);
	acomp_request_set_params(req, &bufs->src, &bufs->dst, slen, dlen);
}
#endif

/*
 * The swap core's memory for a swap device, allocated at swapon for all
 * of it, used or not. Kernels with swap_map (6.12) keep state for every
 * slot there: GS_SWAP_PER_SLOT. 7.x's swap table allocates it only as
 * clusters fill. Both allocate a struct swap_cluster_info per cluster:
 * a PMD's worth of slots with THP swap, else 256 (PREEMPT_RT kernels
 * have no THP). 7.x keeps that struct to itself (mm/swap.h); its size is
 * estimated from what it holds: a spinlock_t (4 bytes, 32 on
 * PREEMPT_RT), a count and two flag bytes, the table and extended-count
 * pointers, with memory cgroups the cgroup table's, and a list head:
 * 48 bytes on 64-bit 7.3, 80 on PREEMPT_RT.
 */
#define GS_SWAP_CLUSTER_SLOTS	(IS_ENABLED(CONFIG_THP_SWAP) ? \
				 1UL << (PMD_SHIFT - PAGE_SHIFT) : 256UL)
#ifdef GS_HAVE_SWAP_MAP
#define GS_SWAP_PER_SLOT	true
#define GS_SWAP_CLUSTER_BYTES	sizeof(struct swap_cluster_info)
#else
#define GS_SWAP_PER_SLOT	false
#define GS_SWAP_CLUSTER_BYTES					\
	(ALIGN(sizeof(spinlock_t) + 4, sizeof(void *)) +		\
	 (2 + IS_ENABLED(CONFIG_MEMCG)) * sizeof(void *) +		\
	 sizeof(struct list_head))
#endif

#endif /* _GS_COMPAT_H */
