// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswap writeback tier: the end of a backing read or write started
 * from a submit path (struct gs_wb_io, gs_wb_internal.h), in whatever
 * context the device ends it: finished there, or handed to the worker
 * (wb.end_wq); and the count of such reads and writes in flight, which
 * detaching waits for. It calls nothing of ours.
 */
#include <linux/atomic.h>
#include <linux/container_of.h>
#include <linux/wait_bit.h>
#include <linux/workqueue.h>
#include "gs_backing.h"
#include "gs_store.h"
#include "gs_wb_internal.h"

static void gs_wb_io_end(struct gs_bk_io *io)
{
	struct gs_wb_io *st = container_of(io, struct gs_wb_io, io);

	if (st->fast && st->fast(st))
		return;
	queue_work(st->s->wb.end_wq, &st->work);
}

void gs_wb_io_init(struct gs_wb_io *st, struct gs_store *s,
		   work_func_t finish, bool (*fast)(struct gs_wb_io *st))
{
	st->s = s;
	st->io.end = gs_wb_io_end;
	st->fast = fast;
	INIT_WORK(&st->work, finish);
}

/* Started reads and writes: one less in flight. */
void gs_wb_io_done(struct gs_store *s)
{
	if (atomic_dec_and_test(&s->wb.inflight))
		wake_up_var(&s->wb.inflight);
}
