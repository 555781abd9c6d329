// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswap compression backends: the table, lookup by name, the life of
 * a gs_comp_params and the byte counting every backend allocates with.
 */
#define pr_fmt(fmt) "ghostswap: " fmt

#include <crypto/acompress.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/printk.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/vmalloc.h>
#include "gs_backend.h"
#include "gs_be.h"

const struct gs_backend *const gs_backends[] = {
#if GS_HAVE_LZO
	&gs_be_lzo,
	&gs_be_lzo_rle,
#endif
#if GS_HAVE_LZ4
	&gs_be_lz4,
#endif
#if GS_HAVE_LZ4HC
	&gs_be_lz4hc,
#endif
#if GS_HAVE_ZSTD
	&gs_be_zstd,
#endif
#if GS_HAVE_DEFLATE
	&gs_be_deflate,
#endif
	NULL,
};

const struct gs_backend *gs_backend_find(const char *name)
{
	const struct gs_backend *const *be;

	if (!*name || strlen(name) >= GS_ALG_NAME_MAX)
		return NULL;
	for (be = gs_backends; *be; be++)
		if (!strcmp((*be)->name, name))
			return *be;
	if (crypto_has_acomp(name, 0, 0) > 0)
		return &gs_be_acomp;
	return NULL;
}

/* What an allocation of @size at @ptr really takes. */
static size_t gs_be_bytes(const void *ptr, size_t size)
{
	return is_vmalloc_addr(ptr) ? PAGE_ALIGN(size) : ksize(ptr);
}

void *gs_be_alloc(struct gs_comp_params *p, size_t size, int node)
{
	void *ptr;

	if (size <= PAGE_SIZE)
		ptr = kzalloc_node(size, GFP_KERNEL, node);
	else
		ptr = vzalloc_node(size, node);
	if (ptr)
		atomic_long_add(gs_be_bytes(ptr, size), &p->bytes);
	return ptr;
}

void gs_be_free(struct gs_comp_params *p, void *ptr, size_t size)
{
	if (!ptr)
		return;
	atomic_long_sub(gs_be_bytes(ptr, size), &p->bytes);
	if (is_vmalloc_addr(ptr))
		vfree(ptr);
	else
		kfree(ptr);
}

int gs_comp_params_init(struct gs_comp_params *p, const char *name)
{
	const struct gs_backend *be = gs_backend_find(name);

	memset(p, 0, sizeof(*p));
	p->level = GS_PARAM_UNSET;
	p->deflate_winbits = GS_PARAM_UNSET;
	p->max_src = PAGE_SIZE;
	atomic_long_set(&p->bytes, 0);
	if (!be)
		return -ENOENT;
	strscpy(p->name, name, sizeof(p->name));
	p->be = be;
	return 0;
}

static void gs_comp_params_drop_dict(struct gs_comp_params *p)
{
	gs_be_free(p, p->dict, p->dict_len);
	p->dict = NULL;
	p->dict_len = 0;
}

int gs_comp_params_set_dict(struct gs_comp_params *p, const void *data,
			    size_t len)
{
	void *dict;

	if (!(p->be->caps & GS_BE_DICT)) {
		pr_err("%s: this algorithm takes no dictionary\n", p->name);
		return -EINVAL;
	}
	/* Streams may be using the one there is. */
	if (WARN_ON(p->shared))
		return -EBUSY;
	if (!len || len > GS_DICT_MAX) {
		pr_err("%s: dictionary of %zu bytes, valid: 1 to %u\n",
		       p->name, len, GS_DICT_MAX);
		return -EINVAL;
	}
	dict = gs_be_alloc(p, len, NUMA_NO_NODE);
	if (!dict)
		return -ENOMEM;
	memcpy(dict, data, len);
	gs_comp_params_drop_dict(p);
	p->dict = dict;
	p->dict_len = len;
	return 0;
}

int gs_comp_params_set_max_src(struct gs_comp_params *p, unsigned int bytes)
{
	if (WARN_ON(p->shared))
		return -EBUSY;
	if (bytes < PAGE_SIZE || bytes > GS_BE_MAX_SRC ||
	    !IS_ALIGNED(bytes, PAGE_SIZE))
		return -EINVAL;
	p->max_src = bytes;
	return 0;
}

int gs_comp_params_setup(struct gs_comp_params *p)
{
	const struct gs_backend *be = p->be;

	if (p->level != GS_PARAM_UNSET && !(be->caps & GS_BE_LEVEL)) {
		pr_err("%s: this algorithm takes no level (level=%d)\n",
		       p->name, p->level);
		return -EINVAL;
	}
	if (p->deflate_winbits != GS_PARAM_UNSET && !(be->caps & GS_BE_WINBITS)) {
		pr_err("%s: deflate.winbits is for deflate only\n", p->name);
		return -EINVAL;
	}
	if (p->dict_len && !(be->caps & GS_BE_DICT)) {
		pr_err("%s: this algorithm takes no dictionary\n", p->name);
		return -EINVAL;
	}
	return be->setup(p);
}

void gs_comp_params_release(struct gs_comp_params *p)
{
	if (!p->be)
		return;
	p->be->release(p);
	gs_comp_params_drop_dict(p);
	WARN_ON(atomic_long_read(&p->bytes));
}
