/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The backends gs_backend.c lists, each in its gs_be_*.c. A backend is
 * built only when the kernel has its library (a module links against
 * the kernel it is built for); without it the name falls to the crypto
 * acomp backend, if the crypto API has the algorithm.
 */
#ifndef _GS_BE_H
#define _GS_BE_H

#include <linux/kconfig.h>
#include "gs_backend.h"

#define GS_HAVE_LZO	(IS_ENABLED(CONFIG_LZO_COMPRESS) && \
			 IS_ENABLED(CONFIG_LZO_DECOMPRESS))
#define GS_HAVE_LZ4	(IS_ENABLED(CONFIG_LZ4_COMPRESS) && \
			 IS_ENABLED(CONFIG_LZ4_DECOMPRESS))
#define GS_HAVE_LZ4HC	(IS_ENABLED(CONFIG_LZ4HC_COMPRESS) && \
			 IS_ENABLED(CONFIG_LZ4_DECOMPRESS))
#define GS_HAVE_ZSTD	(IS_ENABLED(CONFIG_ZSTD_COMPRESS) && \
			 IS_ENABLED(CONFIG_ZSTD_DECOMPRESS))
#define GS_HAVE_DEFLATE	(IS_ENABLED(CONFIG_ZLIB_DEFLATE) && \
			 IS_ENABLED(CONFIG_ZLIB_INFLATE))

extern const struct gs_backend gs_be_lzo;
extern const struct gs_backend gs_be_lzo_rle;
extern const struct gs_backend gs_be_lz4;
extern const struct gs_backend gs_be_lz4hc;
extern const struct gs_backend gs_be_zstd;
extern const struct gs_backend gs_be_deflate;

#endif /* _GS_BE_H */
