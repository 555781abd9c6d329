// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswap writeback tier: the writeback budget (writeback_limit,
 * writeback_limit_enable), the pages that may still go to the backing
 * device. Writeback rounds and direct stores take from it and give back
 * what did not reach the device. It calls nothing of ours.
 */
#include <linux/atomic.h>
#include <linux/minmax.h>
#include <linux/spinlock.h>
#include "gs_store.h"
#include "gs_wb_internal.h"

/*
 * Take up to @want pages of the writeback budget. *@charged says whether
 * they came out of it (the budget is in use): what is given back goes
 * back only then, even if the budget was switched on or off meanwhile.
 */
u64 gs_budget_take(struct gs_store *s, u64 want, bool *charged)
{
	u64 take = want;

	spin_lock(&s->wb.limit_lock);
	*charged = s->wb.limit_enable;
	if (*charged) {
		take = min_t(u64, want, atomic_long_read(&s->wb.budget));
		atomic_long_sub(take, &s->wb.budget);
	}
	spin_unlock(&s->wb.limit_lock);
	return take;
}

void gs_budget_give(struct gs_store *s, u64 pages, bool charged)
{
	if (!pages || !charged)
		return;
	spin_lock(&s->wb.limit_lock);
	atomic_long_add(pages, &s->wb.budget);
	spin_unlock(&s->wb.limit_lock);
}

/*
 * Switching the budget on or off leaves what is left of it alone, and
 * setting it leaves the switch alone: neither can undo a take.
 */
void gs_store_set_wb_limit_enable(struct gs_store *s, bool enable)
{
	spin_lock(&s->wb.limit_lock);
	WRITE_ONCE(s->wb.limit_enable, enable);
	spin_unlock(&s->wb.limit_lock);
}

void gs_store_set_wb_budget(struct gs_store *s, u64 pages)
{
	spin_lock(&s->wb.limit_lock);
	atomic_long_set(&s->wb.budget, min_t(u64, pages, LONG_MAX));
	spin_unlock(&s->wb.limit_lock);
}
