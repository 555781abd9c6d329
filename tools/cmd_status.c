// SPDX-License-Identifier: GPL-2.0
/* ghostswapctl status: the device as a table (the default command). */
#include "ghostswapctl.h"

#include <string.h>

int cmd_status(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "bytes", no_argument, NULL, 'b' },
		{ "output", required_argument, NULL, 'o' },
		{ "output-all", no_argument, NULL, 'A' },
		{ "json", no_argument, NULL, 'J' },
		{ "raw", no_argument, NULL, 'r' },
		{ "noheadings", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool bytes = false, json = false, raw = false, headings = true;
	int cols[MAX_COLUMNS], ncols, c, rc = RC_OK;
	struct dev_info d;

	ncols = default_columns(cols);
	while ((c = next_opt(argc, argv, ":bo:Jrnh", opts, &rc)) != -1) {
		switch (c) {
		case 'b': bytes = true; break;
		case 'o':
			rc = parse_columns(optarg, cols, &ncols);
			if (rc)
				return rc;
			break;
		case 'A': ncols = all_columns(cols); break;
		case 'J': json = true; break;
		case 'r': raw = true; break;
		case 'n': headings = false; break;
		case 'h': usage(stdout); return RC_OK;
		default: return rc;
		}
	}
	if (optind < argc)
		return fail(RC_USAGE, "status: unexpected argument '%s'",
			    argv[optind]);
	if (json && raw)
		return fail(RC_USAGE, "--json and --raw exclude each other");
	rc = read_dev_info(&d);
	if (rc)
		return rc;
	zswap_warning();
	if (json)
		print_json(&d, cols, ncols);
	else
		print_table(&d, cols, ncols, bytes, raw, headings);
	return RC_OK;
}
