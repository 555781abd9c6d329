// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswap sysfs, the compression attributes: the algorithms and their
 * parameters (zram's comp_algorithm, algorithm_params, recomp_algorithm),
 * recompression (zram's recompress, and our background sweep), the
 * incompressible-page heuristic, and their statistics (comp_stat).
 *
 * The algorithms change only on an idle device (gs_reconfigure()):
 * the primary while the store is empty, a secondary one while no page
 * is compressed with it.
 */
#define pr_fmt(fmt) "ghostswap: " fmt

#include <linux/device.h>
#include <linux/kernel.h>
#include <linux/log2.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include "gs_backend.h"
#include "gs_comp.h"
#include "gs_compat.h"
#include "gs_dev.h"
#include "gs_params.h"
#include "gs_recomp.h"
#include "gs_store.h"

/* The algorithms on offer, @cur in brackets, then a newline. */
static ssize_t gs_algs_show(const char *cur, char *buf, ssize_t n)
{
	const char *const *alg;
	bool listed = false;

	for (alg = gs_comp_known; *alg; alg++) {
		if (cur && !strcmp(*alg, cur)) {
			n += sysfs_emit_at(buf, n, "[%s] ", cur);
			listed = true;
		} else if (gs_comp_available(*alg)) {
			n += sysfs_emit_at(buf, n, "%s ", *alg);
		}
	}
	if (cur && !listed)
		n += sysfs_emit_at(buf, n, "[%s] ", cur);
	buf[n - 1] = '\n';
	return n;
}

static ssize_t comp_algorithm_show(struct device *dev,
				   struct device_attribute *attr, char *buf)
{
	struct gs_dev *d = dev_to_gs(dev);

	guard(rwsem_read)(&d->conf_lock);
	return gs_algs_show(gs_store_algorithm(d->store), buf, 0);
}

static int gs_do_set_alg(struct gs_dev *d, const void *arg)
{
	return gs_store_set_algorithm(d->store, arg);
}

static ssize_t comp_algorithm_store(struct device *dev,
				    struct device_attribute *attr,
				    const char *buf, size_t len)
{
	char name[GS_ALG_NAME_MAX], *alg;
	int ret;

	if (len >= sizeof(name))
		return -EINVAL;
	strscpy(name, buf, sizeof(name));
	alg = strim(name);
	if (!*alg)
		return -EINVAL;
	ret = gs_reconfigure(dev_to_gs(dev), true, gs_do_set_alg, alg);
	if (ret == -ENOENT)
		return -EINVAL;	/* like zram: no such algorithm */
	return ret ? ret : len;
}
static DEVICE_ATTR_RW(comp_algorithm);

/* The algorithm of each priority, as gs_params_prio() wants them. */
static void gs_names(struct gs_store *s, const char *names[GS_MAX_COMPS])
{
	unsigned int prio;

	for (prio = 0; prio < GS_MAX_COMPS; prio++)
		names[prio] = gs_store_comp_name(s, prio);
}

static int gs_do_set_params(struct gs_dev *d, const void *arg)
{
	const struct gs_params_req *req = arg;
	const char *names[GS_MAX_COMPS];
	struct gs_comp_params *p;
	int prio, ret;

	gs_names(d->store, names);
	prio = gs_params_prio(req, names);
	if (prio < 0)
		return prio;
	p = kzalloc_obj(*p);
	if (!p)
		return -ENOMEM;
	ret = gs_comp_params_init(p, names[prio]);
	if (!ret)
		ret = gs_params_apply(req, p);
	if (ret) {
		kfree(p);
		return ret;
	}
	ret = gs_store_set_comp(d->store, prio, p);
	if (ret == -EBUSY)
		pr_err("algorithm_params: pages compressed with %s are stored: reset first\n",
		       names[prio]);
	return ret;
}

/* zram's algorithm_params: level, dictionary, deflate.winbits. */
static ssize_t algorithm_params_store(struct device *dev,
				      struct device_attribute *attr,
				      const char *buf, size_t len)
{
	struct gs_params_req req;
	int ret;

	ret = gs_params_parse(buf, &req);
	if (ret)
		return ret;
	ret = gs_reconfigure(dev_to_gs(dev), false, gs_do_set_params, &req);
	gs_params_req_free(&req);
	return ret ? ret : len;
}
static DEVICE_ATTR_WO(algorithm_params);

static ssize_t recomp_algorithm_show(struct device *dev,
				     struct device_attribute *attr, char *buf)
{
	struct gs_dev *d = dev_to_gs(dev);
	unsigned int prio;
	ssize_t n = 0;
	const char *name;

	guard(rwsem_read)(&d->conf_lock);
	for (prio = GS_SECONDARY_COMP; prio < GS_MAX_COMPS; prio++) {
		name = gs_store_comp_name(d->store, prio);
		if (!name)
			continue;
		n += sysfs_emit_at(buf, n, "#%u: ", prio);
		n = gs_algs_show(name, buf, n);
	}
	return n;
}

struct gs_recomp_alg {
	int prio;
	char algo[GS_ALG_NAME_MAX];
};

static int gs_do_set_recomp_alg(struct gs_dev *d, const void *arg)
{
	const struct gs_recomp_alg *ra = arg;
	struct gs_comp_params *p;
	int ret;

	p = gs_comp_params_new(ra->algo);
	if (IS_ERR(p))
		return PTR_ERR(p) == -ENOENT ? -EINVAL : PTR_ERR(p);
	ret = gs_store_set_comp(d->store, ra->prio, p);
	if (ret == -EBUSY)
		pr_err("recomp_algorithm: pages compressed with priority %d are stored: reset first\n",
		       ra->prio);
	return ret;
}

/* zram's recomp_algorithm: "algo=NAME [priority=N]". */
static ssize_t recomp_algorithm_store(struct device *dev,
				      struct device_attribute *attr,
				      const char *buf, size_t len)
{
	struct gs_recomp_alg ra;
	int ret;

	ret = gs_recomp_algorithm_parse(buf, &ra.prio, ra.algo);
	if (ret)
		return ret;
	ret = gs_reconfigure(dev_to_gs(dev), false, gs_do_set_recomp_alg, &ra);
	return ret ? ret : len;
}
static DEVICE_ATTR_RW(recomp_algorithm);

/* zram's recompress; runs beside I/O, like writeback. */
static ssize_t recompress_store(struct device *dev,
				struct device_attribute *attr,
				const char *buf, size_t len)
{
	struct gs_dev *d = dev_to_gs(dev);
	const char *names[GS_MAX_COMPS];
	struct gs_recomp_req r;
	u64 done;
	int ret;

	guard(rwsem_read)(&d->conf_lock);
	gs_names(d->store, names);
	ret = gs_recompress_parse(buf, names, &r);
	if (ret)
		return ret;
	ret = gs_store_recompress(d->store, &r, &done);
	if (ret == -EINVAL)
		pr_err("recompress: no secondary algorithm (recomp_algorithm)\n");
	return ret ? ret : len;
}
static DEVICE_ATTR_WO(recompress);

/* The background sweep: "PCT" (of one CPU, 0: off) or "PCT AGE". */
static ssize_t recompress_auto_show(struct device *dev,
				    struct device_attribute *attr, char *buf)
{
	struct gs_dev *d = dev_to_gs(dev);

	guard(rwsem_read)(&d->conf_lock);
	return sysfs_emit(buf, "%u %u\n", READ_ONCE(d->store->recomp.auto_pct),
			  READ_ONCE(d->store->recomp.auto_age));
}

static ssize_t recompress_auto_store(struct device *dev,
				     struct device_attribute *attr,
				     const char *buf, size_t len)
{
	struct gs_dev *d = dev_to_gs(dev);
	unsigned int pct, age;
	int n;

	guard(rwsem_read)(&d->conf_lock);
	age = READ_ONCE(d->store->recomp.auto_age);
	n = sscanf(buf, "%u %u", &pct, &age);
	if (n < 1 || pct > 100) {
		pr_err("recompress_auto: PCT [AGE]: a share of one CPU from 0 (off) to 100, seconds\n");
		return -EINVAL;
	}
	gs_store_set_recomp_auto(d->store, pct, age);
	return len;
}
static DEVICE_ATTR_RW(recompress_auto);

static ssize_t incompressible_check_show(struct device *dev,
					 struct device_attribute *attr,
					 char *buf)
{
	struct gs_dev *d = dev_to_gs(dev);

	guard(rwsem_read)(&d->conf_lock);
	return sysfs_emit(buf, "%d\n", READ_ONCE(d->store->incomp_check));
}

static ssize_t incompressible_check_store(struct device *dev,
					  struct device_attribute *attr,
					  const char *buf, size_t len)
{
	struct gs_dev *d = dev_to_gs(dev);
	bool on;

	if (kstrtobool(buf, &on))
		return -EINVAL;
	guard(rwsem_read)(&d->conf_lock);
	WRITE_ONCE(d->store->incomp_check, on);
	return len;
}
static DEVICE_ATTR_RW(incompressible_check);

/*
 * compressions (when storing), pages stored but same-filled ones (so that
 * compressions / stored is the compressions per page), pages stored as
 * they are because the heuristic found them incompressible, pages
 * recompressed, recompressions that gained nothing, pages recompressed
 * by the background sweep; then units (gs_unit.h): now, their pages now,
 * ever stored, runs refused, read whole, pages read alone, of them copied
 * out of a stream's copy of the unit, units split, units on the backing
 * device now, units ever written back whole.
 */
static ssize_t comp_stat_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	struct gs_dev *d = dev_to_gs(dev);

	guard(rwsem_read)(&d->conf_lock);
	struct gs_stats *st = &d->store->stats;
	const long v[] = {
		gs_stat_read(st, GS_STAT_COMPRESSIONS),
		gs_stat_read(st, GS_STAT_PACKED),
		gs_stat_read(st, GS_STAT_HEUR_RAW),
		atomic_long_read(&st->recompressed),
		atomic_long_read(&st->recomp_no_gain),
		atomic_long_read(&st->recomp_auto),
		gs_stat_read(st, GS_STAT_UNITS),
		gs_stat_read(st, GS_STAT_UNIT_PAGES),
		atomic_long_read(&st->units_stored),
		atomic_long_read(&st->units_refused),
		atomic_long_read(&st->unit_reads),
		atomic_long_read(&st->unit_part_reads),
		atomic_long_read(&st->unit_part_cached),
		atomic_long_read(&st->unit_splits),
		atomic_long_read(&st->units_backed),
		atomic_long_read(&st->units_written),
	};
	unsigned int i;
	int n = 0;

	for (i = 0; i < ARRAY_SIZE(v); i++)
		n += sysfs_emit_at(buf, n, "%8ld%c", v[i],
				   i + 1 < ARRAY_SIZE(v) ? ' ' : '\n');
	return n;
}
static DEVICE_ATTR_RO(comp_stat);

/* Units (gs_unit.h): the largest, in pages; 0: every page alone. */
static ssize_t multi_page_show(struct device *dev,
			       struct device_attribute *attr, char *buf)
{
	struct gs_dev *d = dev_to_gs(dev);

	guard(rwsem_read)(&d->conf_lock);
	return sysfs_emit(buf, "%u\n", gs_store_unit(d->store));
}

static int gs_do_set_unit(struct gs_dev *d, const void *arg)
{
	return gs_store_set_unit(d->store, *(const unsigned int *)arg);
}

static ssize_t multi_page_store(struct device *dev,
				struct device_attribute *attr,
				const char *buf, size_t len)
{
	unsigned int pages;
	int ret;

	ret = kstrtouint(buf, 10, &pages);
	if (ret)
		return ret;
	if (!gs_unit_pages_valid(pages)) {
		pr_info_ratelimited("multi_page: %u pages, valid: 0 (off), %u, %u or %u\n",
				    pages, GS_UNIT_MIN_PAGES,
				    GS_UNIT_MIN_PAGES * 2, GS_UNIT_MAX_PAGES);
		return -EINVAL;
	}
	ret = gs_reconfigure(dev_to_gs(dev), true, gs_do_set_unit, &pages);
	return ret ? ret : len;
}
static DEVICE_ATTR_RW(multi_page);

static struct attribute *gs_comp_attrs[] = {
	&dev_attr_comp_algorithm.attr,
	&dev_attr_algorithm_params.attr,
	&dev_attr_recomp_algorithm.attr,
	&dev_attr_recompress.attr,
	&dev_attr_recompress_auto.attr,
	&dev_attr_incompressible_check.attr,
	&dev_attr_comp_stat.attr,
	&dev_attr_multi_page.attr,
	NULL,
};

const struct attribute_group gs_comp_attr_group = {
	.attrs = gs_comp_attrs,
};
