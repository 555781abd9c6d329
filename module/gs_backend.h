/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ghostswap compression backends: one small ops table per algorithm
 * family, calling the kernel's compression libraries directly (lz4,
 * lz4hc, zstd, lzo, lzo-rle, deflate), and the crypto acomp API for any
 * other algorithm the kernel has (842, hardware engines).
 *
 * A struct gs_comp_params holds what every stream of one algorithm
 * shares: the level, the deflate window, a dictionary and what the
 * backend built from them. A stream's workspace is a context made by
 * ctx_create(). Every byte a backend allocates for the parameters and
 * their contexts is counted in gs_comp_params.bytes.
 *
 * Life of a gs_comp_params:
 *	gs_comp_params_init()		name and backend, nothing set
 *	level, deflate_winbits and
 *	gs_comp_params_set_dict()	optional
 *	gs_comp_params_setup()		validated; defaults filled in
 *	ctx_create() ...		one context per stream
 *	compress() / decompress()	a context used by one caller at a
 *					time; the params by any number
 *	ctx_destroy() ...		every context
 *	gs_comp_params_release()	dictionary and shared state gone,
 *					bytes back to 0
 */
#ifndef _GS_BACKEND_H
#define _GS_BACKEND_H

#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/limits.h>
#include <linux/sizes.h>
#include <linux/types.h>
#include <asm/page.h>

/* A parameter the user did not give: the backend's default applies. */
#define GS_PARAM_UNSET		INT_MIN
#define GS_ALG_NAME_MAX		64

/* What a backend accepts besides the page (gs_backend.caps). */
#define GS_BE_LEVEL		BIT(0)
#define GS_BE_DICT		BIT(1)
#define GS_BE_WINBITS		BIT(2)

struct gs_backend;

/* Shared by every stream of one algorithm; read-only once set up. */
struct gs_comp_params {
	/* GS_PARAM_UNSET: the default; after setup the level in use. */
	s32 level;
	/* deflate only; GS_PARAM_UNSET: the default; after setup the one in use. */
	s32 deflate_winbits;
	/*
	 * The most bytes compress() is given at once: PAGE_SIZE, or a
	 * unit's (gs_comp_params_set_max_src()); the backend sizes its
	 * parameters and workspaces for it.
	 */
	unsigned int max_src;
	/* A dictionary, owned by the params (gs_comp_params_set_dict()). */
	void *dict;
	size_t dict_len;
	/* What the backend's setup() built from level and dictionary. */
	void *shared;
	/*
	 * Every byte allocated for this algorithm and its contexts: slab
	 * objects by ksize(), vmalloc areas by their page-rounded size.
	 */
	atomic_long_t bytes;
	char name[GS_ALG_NAME_MAX];
	const struct gs_backend *be;
};

struct gs_backend {
	const char *name;
	unsigned int caps;
	/*
	 * Validate the level and window (-EINVAL with a message naming
	 * the bad value and the valid range), fill in defaults, build
	 * what the streams share (a loaded dictionary).
	 */
	int (*setup)(struct gs_comp_params *p);
	/* Free what setup() built. */
	void (*release)(struct gs_comp_params *p);
	/* One stream's workspace, on NUMA node @node: an ERR_PTR on failure. */
	void *(*ctx_create)(struct gs_comp_params *p, int node);
	void (*ctx_destroy)(struct gs_comp_params *p, void *ctx);
	/*
	 * Compress @slen bytes at @src (a page, or a unit of whole pages
	 * up to gs_comp_params.max_src) into @dst, which holds @dst_cap
	 * bytes: the compressed length (> 0), or -ENOSPC if the result
	 * does not fit. Never writes past @dst + @dst_cap. Other errors
	 * (-EINVAL: the library failed; acomp: the driver's errno) mean
	 * the data cannot be compressed now. The length is returned, not
	 * stored through a pointer: the store's write path calls this
	 * for every page, and a pointer would give it a stack slot.
	 */
	int (*compress)(const struct gs_comp_params *p, void *ctx,
			const void *src, unsigned int slen, void *dst,
			unsigned int dst_cap);
	/*
	 * Decompress @slen bytes at @src into the @dlen bytes at @dst: 0
	 * only if exactly @dlen bytes came out, else -EIO (acomp: or the
	 * driver's errno). Safe against corrupt input: never reads past
	 * @src + @slen or writes past @dst + @dlen.
	 */
	int (*decompress)(const struct gs_comp_params *p, void *ctx,
			  const void *src, unsigned int slen, void *dst,
			  unsigned int dlen);
};

/* Our own backends, NULL-terminated (those the kernel has libraries for). */
extern const struct gs_backend *const gs_backends[];
/* The crypto acomp fallback: the algorithm is gs_comp_params.name. */
extern const struct gs_backend gs_be_acomp;

/*
 * Our own backend for @name, else the crypto acomp fallback if the
 * kernel's crypto API has that algorithm, else NULL. May sleep (the
 * crypto API may load a module).
 */
const struct gs_backend *gs_backend_find(const char *name);

/* Backend for @name, level and window unset: -ENOENT if there is none. */
int gs_comp_params_init(struct gs_comp_params *p, const char *name);
/*
 * Give @p a copy of @len bytes at @data as its dictionary, before setup
 * (replaces one set before). -EINVAL if the backend takes none or @len
 * is 0 or above GS_DICT_MAX.
 */
int gs_comp_params_set_dict(struct gs_comp_params *p, const void *data,
			    size_t len);
/*
 * Check what was set against the backend's caps, then its setup().
 * Once only; gs_comp_params_release() undoes it. On failure nothing of
 * the setup is left (a dictionary stays until release).
 */
int gs_comp_params_setup(struct gs_comp_params *p);
/*
 * Free the dictionary and the shared state. Every context must have
 * been destroyed: bytes is back to 0. Level and window stay.
 */
void gs_comp_params_release(struct gs_comp_params *p);

/*
 * The most compress() is ever given: a unit of 16 pages (gs_unit.h).
 * A backend's workspace may have to hold its window.
 */
#define GS_BE_MAX_SRC		(16 * PAGE_SIZE)

/*
 * Before setup: inputs of up to @bytes (whole pages, at most
 * GS_BE_MAX_SRC; PAGE_SIZE unless set). -EINVAL otherwise.
 */
int gs_comp_params_set_max_src(struct gs_comp_params *p, unsigned int bytes);

/* Largest dictionary accepted, from memory or a file. */
#define GS_DICT_MAX		SZ_1M

/*
 * For the backends: zeroed memory counted in @p->bytes (slab up to a
 * page, vmalloc above), and its release. @size must be the size
 * allocated.
 */
void *gs_be_alloc(struct gs_comp_params *p, size_t size, int node);
void gs_be_free(struct gs_comp_params *p, void *ptr, size_t size);

#endif /* _GS_BACKEND_H */
