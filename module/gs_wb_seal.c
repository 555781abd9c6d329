// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswap writeback tier: sealing and unsealing. Every page that goes
 * to the backing device is sealed here (its checksum recorded, then
 * encrypted), and every page that comes back is unsealed here (decrypted,
 * then checked against that checksum): in one place each. It calls the
 * backing store (gs_backing.c: the checksums) and the cipher (gs_crypt.c).
 */
#define pr_fmt(fmt) "ghostswap: " fmt

#include <linux/atomic.h>
#include <linux/printk.h>
#include "gs_backing.h"
#include "gs_crypt.h"
#include "gs_store.h"
#include "gs_wb_internal.h"

/*
 * The page at @src encrypted for backing slot @b into @dst (if encryption
 * is on; @dst may be @src). Returns what to write: @dst, or @src itself
 * without encryption; NULL if encryption failed (then nothing may be
 * written).
 */
void *gs_wb_encrypt(struct gs_store *s, u64 b, void *src, void *dst)
{
	if (!s->wb.cipher)
		return src;
	if (gs_crypt_encrypt(s->wb.cipher, b, src, dst)) {
		pr_err_ratelimited("cannot encrypt for backing slot %llu: not written\n",
				   b);
		return NULL;
	}
	return dst;
}

/*
 * Make the page that goes to backing slot @b from the page at @src, whose
 * first @len bytes hold data (the rest of a compressed page is padding):
 * their checksum is recorded (if checksums are on), and the page is
 * encrypted (gs_wb_encrypt()).
 */
void *gs_wb_seal(struct gs_store *s, u64 b, void *src, void *dst,
		 unsigned int len)
{
	if (s->wb.checksum)
		gs_backing_set_sum(s->bk, b, gs_backing_sum(src, len));
	return gs_wb_encrypt(s, b, src, dst);
}

/*
 * The checksum of what was written to backing slot @b (which the caller
 * keeps allocated), 0 with checksums off. A read takes it with its pin:
 * the end of the read then checks the page without the reverse map's
 * lock, which a hard interrupt may not take.
 */
u32 gs_wb_sum_of(struct gs_store *s, u64 b)
{
	return s->wb.checksum ? gs_backing_sum_of(s->bk, b) : 0;
}

/*
 * Check a page just read from backing slot @b (which the caller keeps
 * allocated): decrypt its first @len bytes in place (if encryption is
 * on), then check them against @sum, the checksum of what was written
 * there (gs_wb_sum_of(); if checksums are on). The padding after them is
 * never read: it is neither decrypted nor checked. A mismatch means the
 * device returned other data: the read fails with -EIO, and is counted
 * as a failed read and in bd_sum_errors. Unencrypted, any context.
 */
int gs_wb_unseal(struct gs_store *s, u64 slot, u64 b, void *page,
		 unsigned int len, u32 sum)
{
	if (s->wb.cipher && gs_crypt_decrypt(s->wb.cipher, b, page, len)) {
		pr_err_ratelimited("slot %llu: cannot decrypt backing slot %llu\n",
				   slot, b);
		return -EIO;
	}
	if (!s->wb.checksum || likely(gs_backing_sum(page, len) == sum))
		return 0;
	atomic_long_inc(&s->stats.bd_sum_errors);
	pr_err_ratelimited("slot %llu: backing slot %llu does not hold what was written there (checksum mismatch): read refused\n",
			   slot, b);
	return -EIO;
}
