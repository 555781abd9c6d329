/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ghostswap algorithm parameters in zram's syntax (zram.rst,
 * "algorithm_params" and "recomp_algorithm"): blank-separated key=value
 * tokens, values optionally in double quotes, a trailing newline
 * accepted. Parsing only: which algorithm sits at which priority is the
 * device's, handed in as a table of names.
 */
#ifndef _GS_PARAMS_H
#define _GS_PARAMS_H

#include <linux/types.h>
#include "gs_backend.h"

/* Priority 0 is the primary algorithm, 1 to 3 recompress. */
#define GS_PRIMARY_COMP		0
#define GS_SECONDARY_COMP	1
#define GS_MAX_COMPS		4

/* One algorithm_params write. */
struct gs_params_req {
	s32 prio;		/* GS_PARAM_UNSET if not given */
	s32 level;		/* GS_PARAM_UNSET if not given */
	s32 deflate_winbits;	/* GS_PARAM_UNSET if not given */
	char algo[GS_ALG_NAME_MAX];	/* "" if not given */
	char *dict_path;	/* NULL if not given */
};

/*
 * Parse an algorithm_params write: priority=N, algo=NAME, level=N,
 * dict=PATH, deflate.winbits=N. -EINVAL with a message for an unknown
 * key, a key without a value, a bad number or a priority out of range.
 * Later tokens override earlier ones. On success the caller frees @req
 * with gs_params_req_free().
 */
int gs_params_parse(const char *buf, struct gs_params_req *req);
void gs_params_req_free(struct gs_params_req *req);

/*
 * The priority a request addresses, as zram resolves it: priority= if
 * given (and algo=, if also given, must be the algorithm there), else
 * the first priority whose algorithm is algo=, else the primary.
 * @names[prio] is the algorithm at each priority, NULL or "" if none.
 * -EINVAL with a message if nothing matches.
 */
int gs_params_prio(const struct gs_params_req *req,
		   const char *const names[GS_MAX_COMPS]);

/*
 * Set @p up with what @req gives: @p is freshly initialised for the
 * algorithm at the request's priority. Level and window are set, the
 * dictionary is read from its path (at most GS_DICT_MAX bytes), then
 * gs_comp_params_setup() validates them. What the request does not give
 * takes the backend's default: each write replaces the whole set. On
 * failure (-EINVAL for parameters the algorithm does not take or a bad
 * value, the file's errno for a dictionary that cannot be read) @p is
 * released and the caller's old parameters stay as they were.
 */
int gs_params_apply(const struct gs_params_req *req, struct gs_comp_params *p);

/* Read the dictionary at @path into @p (at most GS_DICT_MAX bytes). */
int gs_params_load_dict(struct gs_comp_params *p, const char *path);

/*
 * Parse a recomp_algorithm write: algo=NAME (required) and priority=N
 * (1 to 3, default 1). The algorithm must exist (gs_backend_find()).
 * @algo holds GS_ALG_NAME_MAX bytes.
 */
int gs_recomp_algorithm_parse(const char *buf, int *prio, char *algo);

struct gs_recomp_req;

/*
 * Parse a recompress write (zram's syntax): type=idle|huge|huge_idle,
 * threshold=BYTES, max_pages=N, priority=N (1 to 3), algo=NAME (the
 * secondary algorithm of that name). Without priority and algo, every
 * secondary algorithm in turn (prio_min 0). -EINVAL with a message.
 */
int gs_recompress_parse(const char *buf, const char *const names[GS_MAX_COMPS],
			struct gs_recomp_req *r);

#endif /* _GS_PARAMS_H */
