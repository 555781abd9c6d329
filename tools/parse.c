// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswapctl: values as the command line and ghostswap.conf(5) give
 * them: sizes, counts, priorities, booleans.
 */
#include "ghostswapctl.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/*
 * The module's size syntax: decimal bytes with an optional suffix K M G
 * T P (either case, powers of 1024). *@out gets the bytes.
 */
bool parse_bytes(const char *s, uint64_t *out)
{
	static const char suffixes[] = "KMGTP";
	char num[24], *end;
	unsigned int shift = 0;
	const char *suf;
	size_t len = strlen(s), i;
	unsigned long long v;

	if (!len || len >= sizeof(num))
		return false;
	memcpy(num, s, len + 1);
	suf = strchr(suffixes, toupper((unsigned char)num[len - 1]));
	if (suf) {
		shift = 10 * (unsigned int)(suf - suffixes + 1);
		num[--len] = '\0';
	}
	if (!len)
		return false;
	for (i = 0; i < len; i++)
		if (!isdigit((unsigned char)num[i]))
			return false;
	errno = 0;
	v = strtoull(num, &end, 10);
	if (errno || *end)
		return false;
	if (shift && v > (UINT64_MAX >> shift))
		return false;
	*out = (uint64_t)v << shift;
	return true;
}

/* A device or pool size: as the module takes it, rounded up to 4 KiB. */
bool parse_size(const char *s, uint64_t *out)
{
	uint64_t v;

	if (!parse_bytes(s, &v) || v > UINT64_MAX - PAGE_BYTES)
		return false;
	v = (v + PAGE_BYTES - 1) & ~(PAGE_BYTES - 1);
	if (v < MIN_SIZE || v > MAX_SIZE)
		return false;
	*out = v;
	return true;
}

/* mem_limit: "0" or "none" (no limit), or a size. */
bool parse_limit(const char *s, uint64_t *out)
{
	if (!strcmp(s, "0") || !strcasecmp(s, "none")) {
		*out = 0;
		return true;
	}
	return parse_size(s, out);
}

/* A plain decimal count (pages, seconds). */
bool parse_count(const char *s, uint64_t *out, uint64_t min)
{
	unsigned long long v;
	const char *c;
	char *end;

	if (!*s)
		return false;
	for (c = s; *c; c++)
		if (!isdigit((unsigned char)*c))
			return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min)
		return false;
	*out = v;
	return true;
}

bool parse_prio(const char *s, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (!*s || errno || *end || v < -1 || v > 32767)
		return false;
	*out = v;
	return true;
}

bool parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = { "yes", "true", "on", "1", NULL };
	static const char *const no[] = { "no", "false", "off", "0", NULL };
	int i;

	for (i = 0; yes[i]; i++)
		if (!strcasecmp(s, yes[i]))
			return *out = true, true;
	for (i = 0; no[i]; i++)
		if (!strcasecmp(s, no[i]))
			return *out = false, true;
	return false;
}
