// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswapctl: messages. Errors and warnings on stderr, one line each,
 * "ghostswapctl: ..."; the GHOSTSWAP_TRACE file; bfmt().
 */
#include "ghostswapctl.h"

#include <stdarg.h>

const char *trace_path;

/*
 * snprintf() that may truncate: paths are bounded by PATH_MAX, texts by
 * their buffers, and a truncated one simply fails later.
 */
__attribute__((format(printf, 3, 4)))
int bfmt(char *buf, size_t n, const char *format, ...)
{
	va_list ap;
	int ret;

	va_start(ap, format);
	ret = vsnprintf(buf, n, format, ap);
	va_end(ap);
	return ret;
}

static void vmsg(const char *prefix, const char *fmt, va_list ap)
{
	fflush(stdout);
	fprintf(stderr, "%s: %s", PROG, prefix);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

/* Prints "ghostswapctl: MESSAGE" and returns @rc, for "return fail(...)". */
int fail(int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
	return rc;
}

void warning(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("warning: ", fmt, ap);
	va_end(ap);
}

void trace(const char *fmt, ...)
{
	va_list ap;
	FILE *f;

	if (!trace_path)
		return;
	f = fopen(trace_path, "a");
	if (!f)
		return;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fclose(f);
}
