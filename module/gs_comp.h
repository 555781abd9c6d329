/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ghostswap compression streams: one crypto acomp transform, request and
 * buffer per possible CPU, each behind a mutex.
 */
#ifndef _GS_COMP_H
#define _GS_COMP_H

#include <linux/mutex.h>
#include <linux/types.h>
#include "gs_compat.h"

struct crypto_acomp;
struct acomp_req;
struct gs_comp;

struct gs_stream {
	struct mutex lock;	/* held by the stream's user */
	struct crypto_acomp *tfm;
	struct acomp_req *req;
	struct gs_acomp_bufs bufs;	/* the request's buffers, if it keeps them */
	u8 *buf;		/* PAGE_SIZE: compressed data, in or out */
};

/* Algorithms offered by name when the kernel has them. */
extern const char *const gs_comp_known[];

int gs_comp_init(void);
void gs_comp_exit(void);

bool gs_comp_available(const char *alg);
/* Returns an ERR_PTR: -ENOENT if the kernel has no such algorithm. */
struct gs_comp *gs_comp_create(const char *alg);
void gs_comp_destroy(struct gs_comp *comp);
const char *gs_comp_name(const struct gs_comp *comp);
/* Bytes the streams' buffers and requests take (the transforms excluded). */
size_t gs_comp_bytes(const struct gs_comp *comp);

/* A stream of some CPU, locked; may sleep. */
struct gs_stream *gs_stream_get(struct gs_comp *comp);
void gs_stream_put(struct gs_stream *st);

/*
 * Compress the page at @src into st->buf. Returns the compressed length,
 * or 0 if it did not shrink or the algorithm failed: store it as is.
 */
int gs_compress(struct gs_stream *st, const void *src);
/*
 * Decompress @len bytes at @src (st->buf, or any other buffer in the
 * direct map) into the page at @dst.
 */
int gs_decompress(struct gs_stream *st, const void *src, unsigned int len,
		  void *dst);

#endif /* _GS_COMP_H */
