// SPDX-License-Identifier: GPL-2.0
/*
 * ghostswapctl: sizes as expressions of the machine's memory, in the
 * grammar zram-generator.conf(5) uses for zram-size:
 *
 *   expr    := term { ("+" | "-") term }
 *   term    := unary { ("*" | "/") unary }
 *   unary   := "-" unary | primary
 *   primary := NUMBER [SUFFIX] | "ram" | "(" expr ")"
 *            | ("min" | "max") "(" expr { "," expr } ")"
 *
 * Every value is in MiB: "ram" is MemTotal, a bare number is MiB, and a
 * number with a suffix K M G T P (either case, powers of 1024) is that
 * many bytes' worth of MiB (8G is 8192). Fractions are allowed (ram *
 * 0.25). Errors say what was expected and where.
 */
#include "ghostswapctl.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Nesting deeper than this is an error, not a stack overflow. */
#define EXPR_MAX_DEPTH	32

struct expr_parser {
	const char *start, *p;
	double ram;
	int depth;
	char *err;
	size_t errlen;
};

static bool expr_sum(struct expr_parser *e, double *out);

static bool expr_error(struct expr_parser *e, const char *what)
{
	if (*e->p)
		bfmt(e->err, e->errlen, "%s at '%s' (column %d)", what, e->p,
		     (int)(e->p - e->start) + 1);
	else
		bfmt(e->err, e->errlen, "%s at the end", what);
	return false;
}

static void skip_space(struct expr_parser *e)
{
	while (isspace((unsigned char)*e->p))
		e->p++;
}

/* Whether the next token is @word, not followed by more of a name. */
static bool take_word(struct expr_parser *e, const char *word)
{
	size_t n = strlen(word);

	if (strncasecmp(e->p, word, n) ||
	    isalnum((unsigned char)e->p[n]) || e->p[n] == '_')
		return false;
	e->p += n;
	skip_space(e);
	return true;
}

static bool take_char(struct expr_parser *e, char c)
{
	if (*e->p != c)
		return false;
	e->p++;
	skip_space(e);
	return true;
}

/* NUMBER [SUFFIX]: digits, an optional fraction, an optional suffix. */
static bool expr_number(struct expr_parser *e, double *out)
{
	static const char suffixes[] = "KMGTP";
	const char *s = e->p, *suf;
	double v = 0, scale = 1;
	bool digits = false;

	for (; isdigit((unsigned char)*s); s++, digits = true)
		v = v * 10 + (*s - '0');
	if (*s == '.')
		for (s++; isdigit((unsigned char)*s); s++, digits = true)
			v += (*s - '0') * (scale /= 10);
	if (!digits)
		return expr_error(e, "expected a number, ram, min(), max() or '('");
	if (*s && (suf = strchr(suffixes, toupper((unsigned char)*s)))) {
		/* K is 1/1024 MiB, M is 1, G 1024, ... */
		v /= 1024;
		for (; suf > suffixes; suf--)
			v *= 1024;
		s++;
	}
	if (isalnum((unsigned char)*s) || *s == '_' || *s == '.') {
		e->p = s;
		return expr_error(e, "unexpected character after a number");
	}
	e->p = s;
	skip_space(e);
	*out = v;
	return true;
}

/* min(...) or max(...): one argument or more. */
static bool expr_minmax(struct expr_parser *e, bool is_max, double *out)
{
	double v;

	if (!take_char(e, '('))
		return expr_error(e, "expected '('");
	if (!expr_sum(e, out))
		return false;
	while (take_char(e, ',')) {
		if (!expr_sum(e, &v))
			return false;
		if (is_max ? v > *out : v < *out)
			*out = v;
	}
	if (!take_char(e, ')'))
		return expr_error(e, "expected ',' or ')'");
	return true;
}

static bool expr_unary(struct expr_parser *e, double *out)
{
	bool ok;

	if (++e->depth > EXPR_MAX_DEPTH)
		return expr_error(e, "nested too deeply");
	if (take_char(e, '-')) {
		ok = expr_unary(e, out);
		*out = -*out;
	} else if (take_char(e, '(')) {
		ok = expr_sum(e, out);
		if (ok && !take_char(e, ')'))
			ok = expr_error(e, "expected ')'");
	} else if (take_word(e, "ram")) {
		*out = e->ram;
		ok = e->ram >= 0 ||
		     expr_error(e, "ram is unknown (no MemTotal in meminfo)");
	} else if (take_word(e, "min")) {
		ok = expr_minmax(e, false, out);
	} else if (take_word(e, "max")) {
		ok = expr_minmax(e, true, out);
	} else if (isalpha((unsigned char)*e->p)) {
		ok = expr_error(e, "unknown name (want ram, min or max)");
	} else {
		ok = expr_number(e, out);
	}
	e->depth--;
	return ok;
}

static bool expr_product(struct expr_parser *e, double *out)
{
	const char *divisor;
	double v;
	char op;

	if (!expr_unary(e, out))
		return false;
	while (*e->p == '*' || *e->p == '/') {
		op = *e->p;
		take_char(e, op);
		divisor = e->p;
		if (!expr_unary(e, &v))
			return false;
		if (op == '/' && v == 0) {
			e->p = divisor;
			return expr_error(e, "division by zero");
		}
		*out = op == '*' ? *out * v : *out / v;
	}
	return true;
}

static bool expr_sum(struct expr_parser *e, double *out)
{
	double v;
	char op;

	if (!expr_product(e, out))
		return false;
	while (*e->p == '+' || *e->p == '-') {
		op = *e->p;
		take_char(e, op);
		if (!expr_product(e, &v))
			return false;
		*out = op == '+' ? *out + v : *out - v;
	}
	return true;
}

/*
 * Evaluates @s with ram = @ram_mib (negative: unknown, an error if used).
 * *@mib gets the result in MiB (finite, maybe negative: the caller judges
 * it); false with a message in @err.
 */
bool eval_mib_expr(const char *s, double ram_mib, double *mib, char *err,
		   size_t errlen)
{
	struct expr_parser e = {
		.start = s, .p = s, .ram = ram_mib, .err = err,
		.errlen = errlen,
	};

	skip_space(&e);
	if (!expr_sum(&e, mib))
		return false;
	if (*e.p)
		return expr_error(&e, "expected an operator");
	if (!isfinite(*mib))
		return expr_error(&e, "the result is out of range");
	return true;
}
