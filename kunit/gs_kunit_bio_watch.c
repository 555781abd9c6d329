// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "ghostswap_bio_watch": the bio watch of gs_bio_watch.c
 * (built here whatever the kernel; in the module only with
 * CONFIG_DEBUG_VM), on bios of one page made here: a bio that ends as it
 * should passes, and each broken rule is reported and counted. The
 * reports are made on purpose, between GS-EXPECT-REPORT lines, which
 * the console scan (testbed/console-scan.py) checks hold one.
 */
#include <kunit/test.h>
#include <linux/bio.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include "gs_bio_watch.h"

struct gs_bw_test {
	int ends;		/* calls of the bio's own end_io */
	void *private;		/* the bi_private it saw */
};

static void gs_bw_test_end(struct bio *bio)
{
	struct gs_bw_test *t = bio->bi_private;

	t->ends++;
	t->private = bio->bi_private;
}

/* A read bio of one page, its own end_io gs_bw_test_end() with @t. */
static struct bio *gs_bw_bio(struct kunit *test, struct page *page,
			     struct gs_bw_test *t)
{
	struct bio *bio = bio_kmalloc(1, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, bio);
	bio_init_inline(bio, NULL, 1, REQ_OP_READ);
	__bio_add_page(bio, page, PAGE_SIZE, 0);
	bio->bi_end_io = gs_bw_test_end;
	bio->bi_private = t;
	return bio;
}

static long gs_bw_violations(void)
{
	struct gs_bio_watch_stats st;

	gs_bio_watch_read_stats(&st);
	return st.violations;
}

/* Its parts started and ended, its page held: no report. */
static void gs_bio_watch_clean(struct kunit *test)
{
	struct page *page = alloc_page(GFP_KERNEL);
	struct gs_bio_watch_stats st0, st1;
	struct gs_bw_test t = {};
	struct bio *bio;

	KUNIT_ASSERT_NOT_NULL(test, page);
	bio = gs_bw_bio(test, page, &t);
	gs_bio_watch_read_stats(&st0);
	__gs_bio_watch_begin(bio);
	gs_bio_watch_read_stats(&st1);
	KUNIT_EXPECT_EQ(test, st1.watched, st0.watched + 1);
	KUNIT_EXPECT_GT(test, st1.bytes, st0.bytes);
	/* The watch's reference besides the owner's. */
	KUNIT_EXPECT_EQ(test, page_count(page), 2);
	bio_inc_remaining(bio);
	__gs_bio_watch_part(bio, 1);
	__gs_bio_watch_part(bio, -1);
	bio_endio(bio);		/* the part's */
	KUNIT_EXPECT_EQ(test, t.ends, 0);
	bio_endio(bio);
	KUNIT_EXPECT_EQ(test, t.ends, 1);
	KUNIT_EXPECT_PTR_EQ(test, t.private, (void *)&t);
	gs_bio_watch_read_stats(&st1);
	KUNIT_EXPECT_EQ(test, st1.violations, st0.violations);
	KUNIT_EXPECT_EQ(test, st1.bytes, st0.bytes);
	KUNIT_EXPECT_EQ(test, page_count(page), 1);
	bio_uninit(bio);
	kfree(bio);
	__free_page(page);
}

/* A bio that ends while a part of it still runs: reported, then ends. */
static void gs_bio_watch_part_running(struct kunit *test)
{
	struct page *page = alloc_page(GFP_KERNEL);
	struct gs_bw_test t = {};
	struct bio *bio;
	long v0;

	KUNIT_ASSERT_NOT_NULL(test, page);
	bio = gs_bw_bio(test, page, &t);
	v0 = gs_bw_violations();
	__gs_bio_watch_begin(bio);
	__gs_bio_watch_part(bio, 1);
	pr_info("GS-EXPECT-REPORT begin bio-watch-part\n");
	bio_endio(bio);
	pr_info("GS-EXPECT-REPORT end bio-watch-part\n");
	KUNIT_EXPECT_EQ(test, gs_bw_violations(), v0 + 1);
	KUNIT_EXPECT_EQ(test, t.ends, 1);
	KUNIT_EXPECT_EQ(test, page_count(page), 1);
	bio_uninit(bio);
	kfree(bio);
	__free_page(page);
}

/* The owner lets its page go while the bio runs: reported at the end. */
static void gs_bio_watch_page_gone(struct kunit *test)
{
	struct page *page = alloc_page(GFP_KERNEL);
	struct gs_bw_test t = {};
	struct bio *bio;
	long v0;

	KUNIT_ASSERT_NOT_NULL(test, page);
	bio = gs_bw_bio(test, page, &t);
	v0 = gs_bw_violations();
	__gs_bio_watch_begin(bio);
	__free_page(page);	/* the owner's reference: the watch's is left */
	pr_info("GS-EXPECT-REPORT begin bio-watch-page\n");
	bio_endio(bio);		/* and lets the page go */
	pr_info("GS-EXPECT-REPORT end bio-watch-page\n");
	KUNIT_EXPECT_EQ(test, gs_bw_violations(), v0 + 1);
	KUNIT_EXPECT_EQ(test, t.ends, 1);
	bio_uninit(bio);
	kfree(bio);
}

static struct kunit_case gs_bio_watch_cases[] = {
	KUNIT_CASE(gs_bio_watch_clean),
	KUNIT_CASE(gs_bio_watch_part_running),
	KUNIT_CASE(gs_bio_watch_page_gone),
	{}
};

static struct kunit_suite gs_bio_watch_suite = {
	.name = "ghostswap_bio_watch",
	.test_cases = gs_bio_watch_cases,
};

kunit_test_suite(gs_bio_watch_suite);
