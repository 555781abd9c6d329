/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ghostswap compression: a store's algorithms and their streams.
 *
 * A gs_comp holds up to GS_MAX_COMPS algorithms by priority: the primary
 * (0), which compresses every page stored, and up to three secondary ones
 * (1..3) that recompression uses. Each is a backend (gs_backend.h) with
 * its parameters (level, dictionary). One stream per possible CPU holds a
 * context of every algorithm and a buffer, behind a mutex.
 *
 * An algorithm is changed only while the store holds no page it
 * compressed, with no I/O running (the device claimed for reconfiguring).
 */
#ifndef _GS_COMP_H
#define _GS_COMP_H

#include <linux/atomic.h>
#include <linux/bug.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/types.h>
#include <asm/page.h>
#include "gs_params.h"

/*
 * A stream's buffer: two pages, as in zram. It has room for anything a
 * compressor can make of a page, which can be more than a page: zstd
 * refuses an output smaller than its bound for a page
 * (zstd_compress_bound(PAGE_SIZE), gs_be_zstd.c); whether the result is
 * small enough to keep is decided after. (It buys lz4 nothing: the
 * library's streaming compressor, which the lz4 backend uses, checks the
 * room left at every step whatever the room given.) It also holds an
 * object zsmalloc copies out because it spans two pages, and a
 * compressed page read back from the backing device.
 */
#define GS_STREAM_BUF		(2 * PAGE_SIZE)

struct gs_stream {
	struct mutex lock;	/* held by the stream's user */
	void *ctx[GS_MAX_COMPS];	/* per algorithm, NULL where none */
	u8 *buf;		/* GS_STREAM_BUF: compressed data, in or out */
	/*
	 * Where units are on (gs_comp_set_unit()), NULL where not: a
	 * unit's pages (unit_bytes), and its compressed form
	 * (gs_unit_zbuf_bytes()), in or out. Physically contiguous, as
	 * the crypto API's one-entry scatterlists want.
	 */
	u8 *ubuf;
	u8 *zbuf;
	/* The unit whose pages @ubuf holds (its seq, gs_unit.h), 0: none. */
	u64 ubuf_seq;
};

/*
 * Here rather than in gs_comp.c for gs_stream_get() and gs_stream_put(),
 * which every compressed read and write calls: inline, they cost no call.
 * Nothing else reaches inside.
 */
struct gs_comp {
	struct gs_stream __percpu *streams;
	struct hlist_node node;		/* CPU hotplug instance */
	atomic_long_t buf_bytes;	/* the streams' buffers */
	unsigned int unit_bytes;	/* largest unit, 0: none */
	struct gs_comp_params *params[GS_MAX_COMPS];
};

/* Algorithms offered by name, ours first, where the kernel has them. */
extern const char *const gs_comp_known[];

int gs_comp_init(void);
void gs_comp_exit(void);

bool gs_comp_available(const char *alg);
/*
 * A new gs_comp whose primary algorithm is @alg with its default
 * parameters. Returns an ERR_PTR: -ENOENT if the kernel has no such
 * algorithm.
 */
struct gs_comp *gs_comp_create(const char *alg);
void gs_comp_destroy(struct gs_comp *comp);
/*
 * Algorithm @alg with its default parameters, set up (gs_backend.h), for
 * gs_comp_set(): an ERR_PTR (-ENOENT: no such algorithm).
 */
struct gs_comp_params *gs_comp_params_new(const char *alg);
/*
 * Make @p (set up, see gs_backend.h) the algorithm of priority @prio,
 * replacing what was there, or with @p NULL remove a secondary one. The
 * gs_comp owns @p from then on, also on failure (-ENOMEM: every stream
 * keeps what it had).
 */
int gs_comp_set(struct gs_comp *comp, unsigned int prio,
		struct gs_comp_params *p);
/*
 * Units of up to @bytes (whole pages, at most GS_BE_MAX_SRC; 0: none):
 * every algorithm set up again for inputs that large, every stream given
 * unit buffers. No stream may be in use. On failure (-ENOMEM, -EINVAL)
 * nothing changed.
 */
int gs_comp_set_unit(struct gs_comp *comp, unsigned int bytes);
/* Room a unit's compressed form may take while it is made. */
static inline unsigned int gs_unit_zbuf_bytes(unsigned int unit_bytes)
{
	return unit_bytes + 2 * PAGE_SIZE;
}

/* The algorithm of @prio: its name, NULL if none. */
const char *gs_comp_name(const struct gs_comp *comp, unsigned int prio);
/* Its parameters as set up, NULL if none. */
const struct gs_comp_params *gs_comp_get_params(const struct gs_comp *comp,
						unsigned int prio);
/* The highest priority that has an algorithm (0: the primary only). */
unsigned int gs_comp_top(const struct gs_comp *comp);
/*
 * Bytes the streams' buffers and every algorithm's parameters and
 * contexts take (the crypto API's own transforms excluded).
 */
size_t gs_comp_bytes(const struct gs_comp *comp);

/* A stream of some CPU, locked; may sleep. */
static inline struct gs_stream *gs_stream_get(struct gs_comp *comp)
{
	struct gs_stream *st = raw_cpu_ptr(comp->streams);

	mutex_lock(&st->lock);
	return st;
}

static inline void gs_stream_put(struct gs_stream *st)
{
	mutex_unlock(&st->lock);
}

/*
 * Compress the page at @src with the algorithm of @prio into st->buf.
 * Returns the compressed length, or 0 if it did not shrink below @max
 * bytes or the algorithm failed (-ENOSPC, or the library's own error):
 * store it as is. Inline: every page stored comes here, and with the
 * primary's constant @prio no more is left of it than the backend's call.
 */
static inline unsigned int gs_compress(struct gs_comp *comp,
				       struct gs_stream *st, unsigned int prio,
				       const void *src, unsigned int max)
{
	struct gs_comp_params *p = comp->params[prio];
	void *ctx = st->ctx[prio];
	int len;

	if (WARN_ON_ONCE(!p || !ctx))
		return 0;
	len = p->be->compress(p, ctx, src, PAGE_SIZE, st->buf, GS_STREAM_BUF);
	return len > 0 && len < max ? len : 0;
}

/*
 * Decompress @len bytes at @src (st->buf, or any other buffer in the
 * direct map) with the algorithm of @prio into the @dlen bytes at @dst
 * (a page, or a unit's pages).
 */
int gs_decompress_len(struct gs_comp *comp, struct gs_stream *st,
		      unsigned int prio, const void *src, unsigned int len,
		      void *dst, unsigned int dlen);

/* The same for a page. */
static inline int gs_decompress(struct gs_comp *comp, struct gs_stream *st,
				unsigned int prio, const void *src,
				unsigned int len, void *dst)
{
	return gs_decompress_len(comp, st, prio, src, len, dst, PAGE_SIZE);
}

/*
 * A unit: compress the @slen bytes (whole pages, at most unit_bytes) at
 * @src into st->zbuf. Returns the compressed length, or 0 if it did not
 * shrink below @max bytes or the algorithm failed.
 */
unsigned int gs_compress_unit(struct gs_comp *comp, struct gs_stream *st,
			      unsigned int prio, const void *src,
			      unsigned int slen, unsigned int max);

#endif /* _GS_COMP_H */
