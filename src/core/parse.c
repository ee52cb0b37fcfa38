/* Pure text parsers; see parse.h. */
#include "parse.h"
#include "strbuf.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

char *str_trim(char *s)
{
	char *e;
	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		e--;
	*e = '\0';
	return s;
}

bool str_startswith(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool str_endswith(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && !strcmp(s + a - b, suffix);
}

char *str_first_line(const char *s)
{
	const char *nl = strchr(s, '\n');
	char *l = nl ? xstrndup(s, (size_t)(nl - s)) : xstrdup(s);
	char *t = str_trim(l);
	if (t != l)
		memmove(l, t, strlen(t) + 1);
	return l;
}

/* Copies the trimmed s into buf; -ENODATA if empty, -EINVAL if too long. */
static int trimmed(const char *s, char *buf, size_t size)
{
	while (isspace((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		n--;
	if (n == 0)
		return -ENODATA;
	if (n >= size)
		return -EINVAL;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return 0;
}

int parse_u64(const char *s, int base, uint64_t *ret)
{
	char buf[128], *end;
	int r = trimmed(s, buf, sizeof(buf));
	if (r < 0)
		return r;
	if (buf[0] == '-' || buf[0] == '+')
		return -EINVAL;
	errno = 0;
	unsigned long long v = strtoull(buf, &end, base);
	if (errno == ERANGE)
		return -ERANGE;
	if (end == buf || *end)
		return -EINVAL;
	*ret = v;
	return 0;
}

int parse_s64(const char *s, int base, int64_t *ret)
{
	char buf[128], *end;
	int r = trimmed(s, buf, sizeof(buf));
	if (r < 0)
		return r;
	errno = 0;
	long long v = strtoll(buf, &end, base);
	if (errno == ERANGE)
		return -ERANGE;
	if (end == buf || *end)
		return -EINVAL;
	*ret = v;
	return 0;
}

int parse_int(const char *s, int base, int *ret)
{
	int64_t v;
	int r = parse_s64(s, base, &v);
	if (r < 0)
		return r;
	if (v < INT32_MIN || v > INT32_MAX)
		return -ERANGE;
	*ret = (int)v;
	return 0;
}

int parse_leading_double(const char *s, double *ret)
{
	while (isspace((unsigned char)*s))
		s++;
	if (!*s)
		return -ENODATA;
	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	/* digits [. digits] only: no exponents, no hex, locale-independent */
	double v = 0, scale = 1;
	bool frac = false;
	for (; *s; s++) {
		if (isdigit((unsigned char)*s)) {
			if (frac) {
				scale /= 10;
				v += (*s - '0') * scale;
			} else {
				v = v * 10 + (*s - '0');
				if (v > 1e15)
					return -ERANGE;
			}
		} else if (*s == '.' && !frac) {
			frac = true;
		} else {
			break;
		}
	}
	*ret = v;
	return 0;
}

int parse_num_colon_name(const char *s, int *ret_num, char **ret_name)
{
	while (isspace((unsigned char)*s))
		s++;
	const char *colon = strchr(s, ':');
	if (!colon)
		return *s ? -EINVAL : -ENODATA;
	char num[32];
	size_t n = (size_t)(colon - s);
	if (n == 0 || n >= sizeof(num))
		return -EINVAL;
	memcpy(num, s, n);
	num[n] = '\0';
	int v;
	int r = parse_int(num, 10, &v);
	if (r < 0)
		return r == -ENODATA ? -EINVAL : r;
	if (ret_name) {
		char *name = str_first_line(colon + 1);
		*ret_name = name;
	}
	*ret_num = v;
	return 0;
}

int str_foreach_line(const char *s, size_t len, int (*fn)(void *ud, char *line, unsigned lineno), void *ud)
{
	struct strbuf line = STRBUF_INIT;
	unsigned no = 0;
	size_t i = 0;
	int r = 0;
	while (i < len) {
		size_t j = i;
		while (j < len && s[j] != '\n')
			j++;
		strbuf_reset(&line);
		strbuf_add(&line, s + i, j - i);
		if (line.alloc == 0) {
			/* empty line: give the callback a writable empty string */
			strbuf_grow(&line, 1);
		}
		/* embedded NULs end the line as far as C strings go */
		r = fn(ud, line.buf, ++no);
		if (r)
			break;
		i = j + 1;
	}
	strbuf_release(&line);
	return r;
}

unsigned str_distance(const char *a, const char *b, unsigned cap)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 64 || lb > 64)
		return cap + 1;
	if ((la > lb ? la - lb : lb - la) > cap)
		return cap + 1;
	unsigned prev[65], cur[65];
	for (size_t j = 0; j <= lb; j++)
		prev[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = (unsigned)i;
		unsigned rowmin = cur[0];
		for (size_t j = 1; j <= lb; j++) {
			unsigned c = prev[j - 1] + (a[i - 1] != b[j - 1]);
			if (prev[j] + 1 < c)
				c = prev[j] + 1;
			if (cur[j - 1] + 1 < c)
				c = cur[j - 1] + 1;
			cur[j] = c;
			if (c < rowmin)
				rowmin = c;
		}
		if (rowmin > cap)
			return cap + 1;
		memcpy(prev, cur, sizeof(unsigned) * (lb + 1));
	}
	return prev[lb] > cap ? cap + 1 : prev[lb];
}

void str_nearest_offer(struct str_nearest *n, const char *candidate)
{
	unsigned d = str_distance(n->want, candidate, 2);
	if (d < n->dist) {
		n->dist = d;
		n->best = candidate;
	}
}

bool is_pci_bdf(const char *s)
{
	/* domain: 4..8 hex digits, then ':' bb ':' dd '.' f */
	size_t n = 0;
	while (isxdigit((unsigned char)s[n]))
		n++;
	if (n < 4 || n > 8 || s[n] != ':')
		return false;
	s += n + 1;
	if (!isxdigit((unsigned char)s[0]) || !isxdigit((unsigned char)s[1]) || s[2] != ':')
		return false;
	s += 3;
	if (!isxdigit((unsigned char)s[0]) || !isxdigit((unsigned char)s[1]) || s[2] != '.')
		return false;
	return s[3] >= '0' && s[3] <= '7' && s[4] == '\0';
}

char *str_printable(char *s, bool keep_newlines)
{
	for (char *p = s; p && *p; p++) {
		unsigned char ch = (unsigned char)*p;
		if ((ch < 0x20 && !(ch == '\n' && keep_newlines)) || ch == 0x7f)
			*p = '?';
	}
	return s;
}
