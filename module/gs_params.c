// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswap algorithm parameters: zram's algorithm_params and
 * recomp_algorithm syntax, and setting a gs_comp_params up from them.
 *
 * Unlike zram, an unknown key is an error rather than ignored, and a
 * level, window or dictionary the algorithm does not take is reported
 * by the write that gives it, not later when the device is set up.
 */
#define pr_fmt(fmt) "ghostswap: " fmt

#include <linux/kernel.h>
#include <linux/kernel_read_file.h>
#include <linux/printk.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/vmalloc.h>
#include "gs_params.h"
#include "gs_recomp.h"

/*
 * Call @fn for each key=value token of @buf (zram's tokens: next_arg(),
 * blanks between them, double quotes around a value). @what names the
 * attribute in messages.
 */
static int gs_params_each(const char *buf, const char *what,
			  int (*fn)(const char *key, const char *val,
				    void *arg),
			  void *arg)
{
	char *copy, *args, *key, *val;
	int ret = 0;

	copy = kstrdup(buf, GFP_KERNEL);
	if (!copy)
		return -ENOMEM;
	args = skip_spaces(copy);
	while (*args) {
		args = next_arg(args, &key, &val);
		if (!val || !*val) {
			pr_err("%s: '%s' needs a value (key=value)\n", what,
			       key);
			ret = -EINVAL;
			break;
		}
		ret = fn(key, val, arg);
		if (ret)
			break;
	}
	kfree(copy);
	return ret;
}

static int gs_params_int(const char *key, const char *val, s32 *out)
{
	int n;

	if (kstrtoint(val, 10, &n) || n == GS_PARAM_UNSET) {
		pr_err("%s=%s: not a number (a decimal int)\n", key, val);
		return -EINVAL;
	}
	*out = n;
	return 0;
}

static int gs_params_prio_int(const char *key, const char *val, s32 *out,
			      int min)
{
	int ret = gs_params_int(key, val, out);

	if (ret)
		return ret;
	if (*out < min || *out >= GS_MAX_COMPS) {
		pr_err("priority=%d, valid: %d to %d\n", *out, min,
		       GS_MAX_COMPS - 1);
		return -EINVAL;
	}
	return 0;
}

static int gs_params_algo(const char *val, char *algo)
{
	if (strscpy(algo, val, GS_ALG_NAME_MAX) < 0) {
		pr_err("algo=%s: name too long (at most %d bytes)\n", val,
		       GS_ALG_NAME_MAX - 1);
		return -EINVAL;
	}
	return 0;
}

static int gs_params_token(const char *key, const char *val, void *arg)
{
	struct gs_params_req *req = arg;

	if (!strcmp(key, "priority"))
		return gs_params_prio_int(key, val, &req->prio,
					  GS_PRIMARY_COMP);
	if (!strcmp(key, "level"))
		return gs_params_int(key, val, &req->level);
	if (!strcmp(key, "deflate.winbits"))
		return gs_params_int(key, val, &req->deflate_winbits);
	if (!strcmp(key, "algo"))
		return gs_params_algo(val, req->algo);
	if (!strcmp(key, "dict")) {
		kfree(req->dict_path);
		req->dict_path = kstrdup(val, GFP_KERNEL);
		return req->dict_path ? 0 : -ENOMEM;
	}
	pr_err("algorithm_params: unknown parameter '%s' (priority, algo, level, dict, deflate.winbits)\n",
	       key);
	return -EINVAL;
}

int gs_params_parse(const char *buf, struct gs_params_req *req)
{
	int ret;

	memset(req, 0, sizeof(*req));
	req->prio = GS_PARAM_UNSET;
	req->level = GS_PARAM_UNSET;
	req->deflate_winbits = GS_PARAM_UNSET;
	ret = gs_params_each(buf, "algorithm_params", gs_params_token, req);
	if (ret)
		gs_params_req_free(req);
	return ret;
}

void gs_params_req_free(struct gs_params_req *req)
{
	kfree(req->dict_path);
	req->dict_path = NULL;
}

static bool gs_params_is(const char *const names[GS_MAX_COMPS], int prio,
			 const char *algo)
{
	return names[prio] && !strcmp(names[prio], algo);
}

int gs_params_prio(const struct gs_params_req *req,
		   const char *const names[GS_MAX_COMPS])
{
	int prio;

	if (req->prio != GS_PARAM_UNSET) {
		if (req->prio < GS_PRIMARY_COMP || req->prio >= GS_MAX_COMPS)
			return -EINVAL;
		if (!names[req->prio] || !*names[req->prio]) {
			pr_err("priority=%d: no algorithm there (recomp_algorithm sets one)\n",
			       req->prio);
			return -EINVAL;
		}
		if (req->algo[0] && !gs_params_is(names, req->prio, req->algo)) {
			pr_err("algo=%s is not the algorithm at priority %d\n",
			       req->algo, req->prio);
			return -EINVAL;
		}
		return req->prio;
	}
	if (!req->algo[0])
		return GS_PRIMARY_COMP;
	for (prio = GS_PRIMARY_COMP; prio < GS_MAX_COMPS; prio++)
		if (gs_params_is(names, prio, req->algo))
			return prio;
	pr_err("algo=%s: no priority has this algorithm\n", req->algo);
	return -EINVAL;
}

int gs_params_load_dict(struct gs_comp_params *p, const char *path)
{
	void *buf = NULL;
	ssize_t len;
	int ret;

	if (!(p->be->caps & GS_BE_DICT)) {
		pr_err("%s: this algorithm takes no dictionary (dict=%s)\n",
		       p->name, path);
		return -EINVAL;
	}
	/*
	 * As zram reads its dictionaries: READING_POLICY, a configuration
	 * file. The security modules have no rule for READING_UNKNOWN, and
	 * IPE warns about it.
	 */
	len = kernel_read_file_from_path(path, 0, &buf, GS_DICT_MAX, NULL,
					 READING_POLICY);
	if (len < 0) {
		if (len == -EFBIG)
			pr_err("dict=%s: larger than %u bytes\n", path,
			       GS_DICT_MAX);
		else if (len == -EINVAL)
			pr_err("dict=%s: empty or not a regular file\n", path);
		else
			pr_err("dict=%s: cannot read it: %zd\n", path, len);
		return len;
	}
	ret = gs_comp_params_set_dict(p, buf, len);
	vfree(buf);
	return ret;
}

int gs_params_apply(const struct gs_params_req *req, struct gs_comp_params *p)
{
	int ret = 0;

	p->level = req->level;
	p->deflate_winbits = req->deflate_winbits;
	if (req->dict_path)
		ret = gs_params_load_dict(p, req->dict_path);
	if (!ret)
		ret = gs_comp_params_setup(p);
	if (ret)
		gs_comp_params_release(p);
	return ret;
}

struct gs_recomp_alg_req {
	int prio;
	char *algo;
};

static int gs_recomp_token(const char *key, const char *val, void *arg)
{
	struct gs_recomp_alg_req *req = arg;

	if (!strcmp(key, "priority"))
		return gs_params_prio_int(key, val, &req->prio,
					  GS_SECONDARY_COMP);
	if (!strcmp(key, "algo"))
		return gs_params_algo(val, req->algo);
	pr_err("recomp_algorithm: unknown parameter '%s' (algo, priority)\n",
	       key);
	return -EINVAL;
}

int gs_recomp_algorithm_parse(const char *buf, int *prio, char *algo)
{
	struct gs_recomp_alg_req req = {
		.prio = GS_SECONDARY_COMP,
		.algo = algo,
	};
	int ret;

	algo[0] = '\0';
	ret = gs_params_each(buf, "recomp_algorithm", gs_recomp_token, &req);
	if (ret)
		return ret;
	if (!algo[0]) {
		pr_err("recomp_algorithm: algo= is required\n");
		return -EINVAL;
	}
	if (!gs_backend_find(algo)) {
		pr_err("recomp_algorithm: unknown algorithm %s\n", algo);
		return -EINVAL;
	}
	*prio = req.prio;
	return 0;
}

/* A recompress write, as parsed. */
struct gs_recompress_parse {
	struct gs_recomp_req *r;
	s32 prio;
	char algo[GS_ALG_NAME_MAX];
};

static int gs_recompress_token(const char *key, const char *val, void *arg)
{
	struct gs_recompress_parse *pr = arg;
	struct gs_recomp_req *r = pr->r;
	s32 n;

	if (!strcmp(key, "type")) {
		if (!strcmp(val, "idle")) {
			r->type = GS_RECOMP_IDLE;
		} else if (!strcmp(val, "huge")) {
			r->type = GS_RECOMP_HUGE;
		} else if (!strcmp(val, "huge_idle")) {
			r->type = GS_RECOMP_HUGE_IDLE;
		} else {
			pr_err("recompress: type=%s (idle, huge or huge_idle)\n",
			       val);
			return -EINVAL;
		}
		return 0;
	}
	if (!strcmp(key, "threshold")) {
		if (gs_params_int(key, val, &n))
			return -EINVAL;
		if (n < 1 || n > PAGE_SIZE) {
			pr_err("recompress: threshold=%d, valid: 1 to %lu bytes\n",
			       n, PAGE_SIZE);
			return -EINVAL;
		}
		r->threshold = n;
		return 0;
	}
	if (!strcmp(key, "max_pages")) {
		if (kstrtou64(val, 10, &r->max_pages) || !r->max_pages) {
			pr_err("recompress: max_pages=%s: a number of pages above 0\n",
			       val);
			return -EINVAL;
		}
		return 0;
	}
	if (!strcmp(key, "priority"))
		return gs_params_prio_int(key, val, &pr->prio,
					  GS_SECONDARY_COMP);
	if (!strcmp(key, "algo"))
		return gs_params_algo(val, pr->algo);
	pr_err("recompress: unknown parameter '%s' (type, threshold, max_pages, algo, priority)\n",
	       key);
	return -EINVAL;
}

int gs_recompress_parse(const char *buf, const char *const names[GS_MAX_COMPS],
			struct gs_recomp_req *r)
{
	struct gs_recompress_parse pr = { .r = r, .prio = GS_PARAM_UNSET };
	int ret, prio;

	memset(r, 0, sizeof(*r));
	ret = gs_params_each(buf, "recompress", gs_recompress_token, &pr);
	if (ret)
		return ret;
	if (pr.prio == GS_PARAM_UNSET && !pr.algo[0])
		return 0;	/* every secondary algorithm in turn */
	if (pr.prio != GS_PARAM_UNSET) {
		prio = pr.prio;
		if (!names[prio] || !*names[prio] ||
		    (pr.algo[0] && strcmp(names[prio], pr.algo))) {
			pr_err("recompress: no algorithm %s at priority %d\n",
			       pr.algo[0] ? pr.algo : "set", prio);
			return -EINVAL;
		}
	} else {
		for (prio = GS_SECONDARY_COMP; prio < GS_MAX_COMPS; prio++)
			if (names[prio] && !strcmp(names[prio], pr.algo))
				break;
		if (prio == GS_MAX_COMPS) {
			pr_err("recompress: %s is no secondary algorithm (recomp_algorithm)\n",
			       pr.algo);
			return -EINVAL;
		}
	}
	r->prio_min = prio;
	r->prio_max = prio;
	return 0;
}
