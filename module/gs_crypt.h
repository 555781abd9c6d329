/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ghostswap encryption at rest: pages on the backing device are encrypted
 * with AES-256-XTS under a key made at random when encryption is turned
 * on and kept only in RAM, the backing slot as the tweak. The writeback
 * tier is its only caller: sealing (gs_wb_seal.c) and the tier's life
 * (gs_wb_attach.c).
 */
#ifndef _GS_CRYPT_H
#define _GS_CRYPT_H

#include <linux/types.h>

struct crypto_sync_skcipher;

/*
 * The cipher with a fresh random key, or an ERR_PTR (-ENOENT: no AES-XTS;
 * -EOPNOTSUPP: a kernel without the skcipher API).
 */
struct crypto_sync_skcipher *gs_crypt_create(void);
/* Forget the key and free the cipher; NULL is fine. */
void gs_crypt_destroy(struct crypto_sync_skcipher *tfm);
/*
 * Encrypt the page at @src into @dst (may be the same), or decrypt the
 * first @len bytes of @buf (rounded up to a 16-byte block; the rest
 * stays as it was) in place, for backing slot @b. Both are linear-map
 * addresses (a page from the page allocator or its kmap_local on
 * 64-bit). 0 or -errno.
 */
int gs_crypt_encrypt(struct crypto_sync_skcipher *tfm, u64 b,
		     const void *src, void *dst);
int gs_crypt_decrypt(struct crypto_sync_skcipher *tfm, u64 b, void *buf,
		     unsigned int len);

#endif /* _GS_CRYPT_H */
