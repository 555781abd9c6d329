// SPDX-License-Identifier: GPL-2.0
/* ghostswapctl compact: compact the memory pool or the backing device. */
#include "ghostswapctl.h"

#include <inttypes.h>
#include <string.h>

int cmd_compact(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "backing", no_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *attr = "compact";
	uint64_t before[MM_STAT_COLS], after[MM_STAT_COLS];
	uint64_t bd0[BD_STAT_COLS], bd1[BD_STAT_COLS];
	int c, rc = RC_OK;
	char h[32];

	while ((c = next_opt(argc, argv, ":bh", opts, &rc)) != -1) {
		switch (c) {
		case 'b': attr = "backing_compact"; break;
		case 'h': usage(stdout); return RC_OK;
		default: return rc;
		}
	}
	if (optind < argc)
		return fail(RC_USAGE, "compact: unexpected argument '%s'",
			    argv[optind]);
	rc = need_root_and_device("compact");
	if (rc)
		return rc;
	if (strcmp(attr, "compact")) {
		if (!attr_exists(attr))
			return fail(RC_NODEV, "this ghostswap module has no backing compaction (no %s)",
				    attr);
		if (read_bd_stat(bd0))
			memset(bd0, 0, sizeof(bd0));
		rc = write_attr_checked(attr, "1");
		if (rc)
			return rc;
		if (read_bd_stat(bd1))
			memcpy(bd1, bd0, sizeof(bd1));
		printf("backing compaction: %" PRIu64 " pages moved\n",
		       bd1[BD_RELOCATED] - bd0[BD_RELOCATED]);
		return RC_OK;
	}
	if (read_mm_stat(before))
		memset(before, 0, sizeof(before));
	rc = write_attr_checked(attr, "1");
	if (rc)
		return rc;
	if (read_mm_stat(after))
		memcpy(after, before, sizeof(after));
	human_size(after[MM_USED], h, sizeof(h));
	printf("compaction: %" PRIu64 " pages freed; pool now %s\n",
	       after[MM_COMPACTED] - before[MM_COMPACTED], h);
	return RC_OK;
}
