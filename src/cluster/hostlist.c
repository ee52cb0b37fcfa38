/* Slurm hostlist expansion: "node[01-16,20],login1" -> node01 ... node16,
 * node20, login1 (the inverse of hostlist_compress in render.c).
 *
 * The syntax is Slurm's (slurm.conf(5) NodeName, Slurm::Hostlist(3pm)):
 * hostnames or bracketed lists separated by ',' or whitespace; a bracket
 * holds comma-separated numbers and ranges "a-b"; a number written with a
 * leading zero keeps its width ("[08-10]" -> 08 09 10); several brackets in
 * one name multiply ("rack[1-2]-node[01-02]" -> rack1-node01, rack1-node02,
 * rack2-node01, rack2-node02). Slurm's 3-D "bgl[123x456]" prisms are not
 * supported (refused).
 *
 * The text is untrusted (a file, a command line): its length and the number
 * of names it expands to are bounded before anything is expanded, and every
 * name must be a host name gpuready can hand to a remote shell as one word:
 * [A-Za-z0-9._-] only, not starting with '-' (an ssh option). */
#include "cluster/cluster.h"
#include "core/cleanup.h"
#include "core/strbuf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define HOST_MAX_DIGITS 18 /* range numbers below 10^18 (as hostlist_compress writes them) */

bool host_name_valid(const char *h)
{
	size_t n = strlen(h);
	if (!n || n > HOST_NAME_MAX_LEN || h[0] == '-')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((h[i] >= 'a' && h[i] <= 'z') || (h[i] >= 'A' && h[i] <= 'Z') || (h[i] >= '0' && h[i] <= '9') ||
		      h[i] == '.' || h[i] == '_' || h[i] == '-'))
			return false;
	return true;
}

/* One range of a bracket. */
struct hl_range {
	unsigned long long lo, hi;
	int width; /* zero padding to this many digits; 0: none */
};

/* One name pattern: literal text and brackets alternating. */
struct hl_part {
	char *lit;               /* literal text before the bracket (may be "") */
	struct hl_range *ranges; /* NULL for the last part (no bracket) */
	size_t n_ranges;
	unsigned long long count; /* names of this bracket */
};

static void parts_free(struct hl_part *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(p[i].lit);
		free(p[i].ranges);
	}
	free(p);
}

static int parse_num(const char *s, size_t len, unsigned long long *ret)
{
	if (!len || len > HOST_MAX_DIGITS)
		return -EINVAL;
	unsigned long long v = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (unsigned long long)(s[i] - '0');
	}
	*ret = v;
	return 0;
}

/* The ranges of a bracket's inside s[0..len): "01-16,20". */
static int parse_bracket(const char *s, size_t len, struct hl_part *p, char **err)
{
	for (size_t i = 0; i <= len;) {
		size_t j = i;
		while (j < len && s[j] != ',')
			j++;
		const char *dash = memchr(s + i, '-', j - i);
		struct hl_range r = { 0 };
		size_t lolen = dash ? (size_t)(dash - (s + i)) : j - i;
		if (parse_num(s + i, lolen, &r.lo) < 0 ||
		    parse_num(dash ? dash + 1 : s + i, dash ? (size_t)(s + j - dash - 1) : lolen, &r.hi) < 0 ||
		    r.hi < r.lo) {
			*err = xasprintf("'[%.*s]': '%.*s' is no number or range a-b (a <= b)", (int)len, s, (int)(j - i),
					 s + i);
			return -EINVAL;
		}
		r.width = lolen > 1 && s[i] == '0' ? (int)lolen : 0;
		p->ranges = xreallocarray(p->ranges, p->n_ranges + 1, sizeof(*p->ranges));
		p->ranges[p->n_ranges++] = r;
		/* stays above the bound once there, never overflows */
		p->count += r.hi - r.lo + 1 > HOSTLIST_MAX_HOSTS ? HOSTLIST_MAX_HOSTS + 1ull : r.hi - r.lo + 1;
		if (p->count > HOSTLIST_MAX_HOSTS)
			p->count = HOSTLIST_MAX_HOSTS + 1ull;
		i = j + 1;
	}
	return 0;
}

/* One item ("rack[1-2]-node[01-04]") into parts; *count its names. */
static int parse_item(const char *s, size_t len, struct hl_part **ret, size_t *ret_n, unsigned long long *count,
		      char **err)
{
	struct hl_part *p = NULL;
	size_t n = 0;
	unsigned long long c = 1;
	for (size_t i = 0;;) {
		const char *open = memchr(s + i, '[', len - i);
		size_t litlen = open ? (size_t)(open - (s + i)) : len - i;
		p = xreallocarray(p, n + 1, sizeof(*p));
		p[n] = (struct hl_part){ .lit = xstrndup(s + i, litlen) };
		n++;
		if (!open)
			break;
		const char *close = memchr(open, ']', len - (size_t)(open - s));
		const char *inner = open + 1;
		if (!close || memchr(inner, '[', (size_t)(close - inner))) {
			*err = xasprintf("'%.*s': unbalanced '['", (int)len, s);
			parts_free(p, n);
			return -EINVAL;
		}
		if (parse_bracket(inner, (size_t)(close - inner), &p[n - 1], err) < 0) {
			parts_free(p, n);
			return -EINVAL;
		}
		/* both factors at most the bound + 1 here: no overflow */
		c = p[n - 1].count > HOSTLIST_MAX_HOSTS ? HOSTLIST_MAX_HOSTS + 1ull : c * p[n - 1].count;
		if (c > HOSTLIST_MAX_HOSTS)
			c = HOSTLIST_MAX_HOSTS + 1ull;
		i = (size_t)(close - s) + 1;
	}
	*ret = p;
	*ret_n = n;
	*count = c;
	return 0;
}

/* The k-th value of a bracket, written into sb. */
static void bracket_value(struct strbuf *sb, const struct hl_part *p, unsigned long long k)
{
	for (size_t r = 0; r < p->n_ranges; r++) {
		unsigned long long span = p->ranges[r].hi - p->ranges[r].lo + 1;
		if (k < span) {
			strbuf_addf(sb, "%0*llu", p->ranges[r].width, p->ranges[r].lo + k);
			return;
		}
		k -= span;
	}
}

/* The names of parts, odometer order (the last bracket varies fastest).
 * out grows once, not per name (strv_push reallocates every time). */
static int emit_item(const struct hl_part *p, size_t n, unsigned long long count, struct strv *out, char **err)
{
	out->v = xreallocarray(out->v, out->n + (size_t)count + 1, sizeof(*out->v));
	out->v[out->n] = NULL;
	for (unsigned long long k = 0; k < count; k++) {
		struct strbuf sb = STRBUF_INIT;
		unsigned long long rest = k, div = count;
		for (size_t i = 0; i < n; i++) {
			strbuf_adds(&sb, p[i].lit);
			if (!p[i].ranges)
				continue;
			div /= p[i].count;
			bracket_value(&sb, &p[i], rest / div);
			rest %= div;
		}
		char *name = strbuf_detach(&sb);
		if (!host_name_valid(name)) {
			*err = xasprintf("'%.*s' is no host name (letters, digits, '.', '_', '-'; not starting with '-'; "
					 "at most %u bytes)",
					 80, name, HOST_NAME_MAX_LEN);
			free(name);
			return -EINVAL;
		}
		out->v[out->n++] = name;
		out->v[out->n] = NULL;
	}
	return 0;
}

/* The end of the item that starts at s[i]: a ',' or blank outside brackets. */
static size_t item_end(const char *s, size_t len, size_t i)
{
	int depth = 0;
	for (; i < len; i++) {
		if (s[i] == '[')
			depth++;
		else if (s[i] == ']' && depth)
			depth--;
		else if (!depth && (s[i] == ',' || s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
			break;
	}
	return i;
}

int hostlist_expand(const char *text, size_t len, struct strv *out, char **err)
{
	if (len > HOSTLIST_MAX_TEXT) {
		*err = xasprintf("a host list of %zu bytes: at most %u", len, HOSTLIST_MAX_TEXT);
		return -E2BIG;
	}
	if (memchr(text, '\0', len)) {
		*err = xstrdup("a host list with a NUL byte");
		return -EINVAL;
	}
	for (size_t i = 0; i < len;) {
		size_t j = item_end(text, len, i);
		if (j == i) {
			i++;
			continue;
		}
		struct hl_part *p = NULL;
		size_t n = 0;
		unsigned long long count = 0;
		if (parse_item(text + i, j - i, &p, &n, &count, err) < 0)
			return -EINVAL;
		if (out->n + count > HOSTLIST_MAX_HOSTS) {
			parts_free(p, n);
			*err = xasprintf("'%.*s': more than %u hosts", (int)(j - i > 80 ? 80 : j - i), text + i,
					 HOSTLIST_MAX_HOSTS);
			return -E2BIG;
		}
		int r = emit_item(p, n, count, out, err);
		parts_free(p, n);
		if (r < 0)
			return r;
		i = j;
	}
	return 0;
}

/* Drops '#' comments: from a '#' to the end of its line. */
static void strip_comments(struct strbuf *sb)
{
	size_t w = 0;
	bool comment = false;
	for (size_t r = 0; r < sb->len; r++) {
		char c = sb->buf[r];
		if (c == '#')
			comment = true;
		else if (c == '\n')
			comment = false;
		if (!comment)
			sb->buf[w++] = c;
	}
	sb->len = w;
	sb->buf[w] = '\0';
}

int hostlist_parse_file(const char *text, size_t len, struct strv *out, char **err)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_add(&sb, text, len);
	strip_comments(&sb);
	int r = hostlist_expand(sb.buf, sb.len, out, err);
	strbuf_release(&sb);
	return r;
}

struct host_at {
	const char *name;
	size_t i;
};

static int host_at_cmp(const void *x, const void *y)
{
	const struct host_at *a = x, *b = y;
	int c = strcmp(a->name, b->name);
	return c ? c : (a->i > b->i) - (a->i < b->i);
}

void hostlist_unique(struct strv *hosts, struct strv *dropped)
{
	struct host_at *h = xcalloc(hosts->n + 1, sizeof(*h));
	bool *dup = xcalloc(hosts->n + 1, sizeof(*dup));
	for (size_t i = 0; i < hosts->n; i++)
		h[i] = (struct host_at){ hosts->v[i], i };
	qsort(h, hosts->n, sizeof(*h), host_at_cmp);
	for (size_t i = 1; i < hosts->n; i++)
		dup[h[i].i] = !strcmp(h[i - 1].name, h[i].name);
	size_t w = 0;
	dropped->v = xreallocarray(dropped->v, dropped->n + hosts->n + 1, sizeof(*dropped->v));
	dropped->v[dropped->n] = NULL;
	for (size_t i = 0; i < hosts->n; i++) {
		if (dup[i]) {
			dropped->v[dropped->n++] = hosts->v[i];
			dropped->v[dropped->n] = NULL;
		} else {
			hosts->v[w++] = hosts->v[i];
		}
	}
	hosts->n = w;
	if (hosts->v)
		hosts->v[w] = NULL;
	free(h);
	free(dup);
}
