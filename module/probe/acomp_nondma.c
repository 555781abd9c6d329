// SPDX-License-Identifier: GPL-2.0
/*
 * Compression requests take plain virtual addresses (7.x); 6.12's take
 * scatterlists only.
 */
#include <crypto/acompress.h>

void gs_probe(struct acomp_req *req, const u8 *src, u8 *dst);

void gs_probe(struct acomp_req *req, const u8 *src, u8 *dst)
{
	acomp_request_set_src_nondma(req, src, 1);
	acomp_request_set_dst_nondma(req, dst, 1);
}
