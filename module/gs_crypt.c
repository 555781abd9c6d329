// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswap encryption at rest (see gs_crypt.h).
 *
 * XTS is the disk-encryption mode: a page encrypts to a page (no room is
 * needed for an IV or a tag), and the tweak, here the backing slot, makes
 * the same data in two slots look unrelated. What XTS does not give,
 * integrity, the checksums of the writeback tier do: they are taken of
 * the plaintext and checked after decryption, so a changed ciphertext
 * fails the read like any other wrong data.
 *
 * The key is 64 random bytes (two AES-256 keys) from get_random_bytes(),
 * handed to the cipher and wiped: only the cipher's own key schedule
 * keeps it, in RAM, until the cipher is freed (reset, or encryption
 * turned off).
 *
 * A kernel built without the skcipher API (CONFIG_CRYPTO_SKCIPHER unset,
 * as in minimal configurations) gets a module without encryption:
 * turning it on fails with -EOPNOTSUPP.
 */
#include <crypto/skcipher.h>
#include <linux/err.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/scatterlist.h>
#include <linux/string.h>
#include "gs_crypt.h"

#define GS_CRYPT_KEY_SIZE	64	/* AES-256-XTS */
#define GS_CRYPT_BLOCK		16	/* the AES block */

#if IS_ENABLED(CONFIG_CRYPTO_SKCIPHER)

struct crypto_sync_skcipher *gs_crypt_create(void)
{
	struct crypto_sync_skcipher *tfm;
	u8 key[GS_CRYPT_KEY_SIZE];
	int ret;

	tfm = crypto_alloc_sync_skcipher("xts(aes)", 0, 0);
	if (IS_ERR(tfm))
		return tfm;
	get_random_bytes(key, sizeof(key));
	ret = crypto_sync_skcipher_setkey(tfm, key, sizeof(key));
	memzero_explicit(key, sizeof(key));
	if (ret) {
		crypto_free_sync_skcipher(tfm);
		return ERR_PTR(ret);
	}
	return tfm;
}

void gs_crypt_destroy(struct crypto_sync_skcipher *tfm)
{
	if (tfm)
		crypto_free_sync_skcipher(tfm);
}

static int gs_crypt(struct crypto_sync_skcipher *tfm, u64 b, const void *src,
		    void *dst, unsigned int len, bool enc)
{
	SYNC_SKCIPHER_REQUEST_ON_STACK(req, tfm);
	struct scatterlist sg_src, sg_dst;
	__le64 iv[2] = { cpu_to_le64(b), 0 };
	int ret;

	sg_init_one(&sg_src, src, len);
	sg_init_one(&sg_dst, dst, len);
	skcipher_request_set_sync_tfm(req, tfm);
	skcipher_request_set_callback(req, 0, NULL, NULL);
	skcipher_request_set_crypt(req, &sg_src, &sg_dst, len, iv);
	ret = enc ? crypto_skcipher_encrypt(req) : crypto_skcipher_decrypt(req);
	skcipher_request_zero(req);
	return ret;
}

int gs_crypt_encrypt(struct crypto_sync_skcipher *tfm, u64 b,
		     const void *src, void *dst)
{
	return gs_crypt(tfm, b, src, dst, PAGE_SIZE, true);
}

int gs_crypt_decrypt(struct crypto_sync_skcipher *tfm, u64 b, void *buf,
		     unsigned int len)
{
	/*
	 * XTS deciphers each 16-byte block with its own tweak, whatever
	 * follows it: a prefix of whole blocks decrypts alone.
	 */
	return gs_crypt(tfm, b, buf, buf,
			min_t(unsigned int, round_up(len, GS_CRYPT_BLOCK),
			      PAGE_SIZE), false);
}

#else	/* !CONFIG_CRYPTO_SKCIPHER */

struct crypto_sync_skcipher *gs_crypt_create(void)
{
	return ERR_PTR(-EOPNOTSUPP);
}

void gs_crypt_destroy(struct crypto_sync_skcipher *tfm)
{
}

int gs_crypt_encrypt(struct crypto_sync_skcipher *tfm, u64 b,
		     const void *src, void *dst)
{
	return -EOPNOTSUPP;
}

int gs_crypt_decrypt(struct crypto_sync_skcipher *tfm, u64 b, void *buf,
		     unsigned int len)
{
	return -EOPNOTSUPP;
}

#endif	/* CONFIG_CRYPTO_SKCIPHER */
