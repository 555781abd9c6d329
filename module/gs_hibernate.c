// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswap and hibernation: the image is never written here.
 *
 * The kernel writes a hibernation image into one swap device, the one it
 * is told to resume from, or the first swap device on; systemd picks the
 * swap with the highest priority and room that is not zram, which is
 * often this one. But every page ghostswap holds lives in RAM (and the
 * map of the pages it wrote back too): an image written here is gone at
 * power-off, the next boot finds none, and the hibernated session is
 * lost. The pages ghostswap holds are safe in an image written to a disk
 * swap: the image holds all of RAM, the pool included.
 *
 * So while the system hibernates, a write to the device that is not the
 * swap core's (REQ_SWAP: pages swapped out to make room for the image
 * still come, and are stored as always) is the image or its header, and
 * fails with an I/O error: the kernel gives hibernation up and the system
 * goes on running, the session intact, with one line in the log saying
 * why. The window is the PM notifier's, from PM_HIBERNATION_PREPARE to
 * PM_POST_HIBERNATION; outside it the test is a static branch, free on
 * the write path.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/bio.h>
#include <linux/blk_types.h>
#include <linux/jump_label.h>
#include <linux/notifier.h>
#include <linux/printk.h>
#include <linux/suspend.h>
#include "gs_dev.h"

DEFINE_STATIC_KEY_FALSE(gs_hibernating);
/* Writes refused in this hibernation attempt; the first one is logged. */
static atomic_long_t gs_hib_refused;

bool __gs_hibernation_refuses(struct bio *bio)
{
	if (bio_op(bio) != REQ_OP_WRITE || (bio->bi_opf & REQ_SWAP))
		return false;
	if (atomic_long_inc_return(&gs_hib_refused) == 1)
		pr_err("refusing the hibernation image: /dev/%s keeps its pages in RAM, so an image written here would be gone at power-off; hibernation fails and the system goes on. Name a disk swap in resume= (ghostswapctl doctor)\n",
		       GS_NAME);
	return true;
}

static int gs_pm_notify(struct notifier_block *nb, unsigned long action,
			void *unused)
{
	switch (action) {
	case PM_HIBERNATION_PREPARE:
		atomic_long_set(&gs_hib_refused, 0);
		static_branch_enable(&gs_hibernating);
		break;
	case PM_POST_HIBERNATION:
		static_branch_disable(&gs_hibernating);
		if (atomic_long_read(&gs_hib_refused))
			pr_info("hibernation over: %ld writes of its image refused\n",
				atomic_long_read(&gs_hib_refused));
		break;
	}
	return NOTIFY_DONE;
}

static struct notifier_block gs_pm_nb = {
	.notifier_call = gs_pm_notify,
};

int gs_hibernate_init(void)
{
	return register_pm_notifier(&gs_pm_nb);
}

void gs_hibernate_exit(void)
{
	unregister_pm_notifier(&gs_pm_nb);
	static_branch_disable(&gs_hibernating);
}
