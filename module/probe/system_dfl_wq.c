// SPDX-License-Identifier: GPL-2.0
/* system_dfl_wq (7.x); 6.12 has system_unbound_wq only. */
#include <linux/workqueue.h>

struct workqueue_struct *gs_probe(void);

struct workqueue_struct *gs_probe(void)
{
	return system_dfl_wq;
}
