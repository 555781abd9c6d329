// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswapctl config: the configuration "setup --system-config" would
 * use (or one file's, with --config), each key with the file and line
 * that set it, and what a size expression comes to on this machine.
 */
#include "ghostswapctl.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* The value a size key came to, when it was written as an expression. */
static void print_computed(const char *key, const struct settings *s,
			   const char *text)
{
	char human[32];
	uint64_t v;

	if (parse_bytes(text, &v) || !strcmp(text, "none"))
		return;
	if (!strcmp(key, "size"))
		v = s->size;
	else if (!strcmp(key, "mem_limit"))
		v = s->mem_limit;
	else
		return;
	human_size(v, human, sizeof(human));
	printf("; here %s (%" PRIu64 " bytes)", human, v);
}

int cmd_config(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct key_origin origins[N_CONFIG_KEYS];
	struct config_files cf = { 0 };
	struct settings s = { 0 };
	const char *config = NULL;
	int c, rc = RC_OK, sw, k, w;
	size_t i;

	while ((c = next_opt(argc, argv, ":c:h", opts, &rc)) != -1) {
		switch (c) {
		case 'c': config = optarg; break;
		case 'h': usage(stdout); return RC_OK;
		default: return rc;
		}
	}
	if (optind < argc)
		return fail(RC_USAGE, "config: unexpected argument '%s'",
			    argv[optind]);
	if (config) {
		rc = read_config(config, &s, origins);
		if (rc)
			return rc;
		printf("# %s\n", config);
	} else {
		if (find_config_files(&cf))
			return RC_USAGE;
		if (!cf.n)
			printf("# no configuration files: setup --system-config uses the defaults\n");
		else
			printf("# setup --system-config reads, in this order:\n");
		for (i = 0; i < cf.n && !rc; i++) {
			printf("#   %s\n", cf.path[i]);
			rc = read_config(cf.path[i], &s, origins);
		}
		free_config_files(&cf);
		if (rc)
			return rc;
		sw = cmdline_switch();
		if (sw == 0)
			printf("# %s\n", SWITCH_OFF_MSG);
		else if (sw == 1)
			printf("# " CMDLINE_KEY " on the kernel command line: the boot setup runs with or without files\n");
	}
	for (k = 0; k < N_CONFIG_KEYS; k++) {
		if (!origins[k].line)
			continue;
		w = printf("%s = %s", config_keys[k], origins[k].value);
		printf("%*s# %s:%d", w < 31 ? 32 - w : 1, "", origins[k].file,
		       origins[k].line);
		print_computed(config_keys[k], &s, origins[k].value);
		putchar('\n');
	}
	return RC_OK;
}
