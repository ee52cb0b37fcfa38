/* The MTU remedy's line-based readers and editors (mtu.h):
 * systemd.network(5) [Match] Name= and [Link] MTUBytes=, interfaces(5)
 * stanzas and their `mtu` option, and NetworkManager keyfiles
 * (nm-settings-keyfile(5): GKeyFile INI, the [ethernet] group's mtu). */
#include "fix/mtu.h"

#include "core/cleanup.h"
#include "core/parse.h"
#include "core/strv.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

/* One line of text: [p, p+n), the next one after it. */
struct line {
	const char *p;
	size_t n;
	const char *next;
};

static bool next_line(const char **s, struct line *l)
{
	if (!**s)
		return false;
	const char *nl = strchr(*s, '\n');
	l->p = *s;
	l->n = nl ? (size_t)(nl - *s) : strlen(*s);
	l->next = *s + l->n + (nl ? 1 : 0);
	*s = l->next;
	return true;
}

/* The line trimmed, as a new string. */
static char *trimmed(const struct line *l)
{
	char *t = xstrndup(l->p, l->n);
	char *s = str_trim(t);
	memmove(t, s, strlen(s) + 1);
	return t;
}

/* "[Section]" -> "Section" (malloc'd); NULL for another line. */
static char *section_of(const char *t)
{
	size_t n = strlen(t);
	return n >= 2 && t[0] == '[' && t[n - 1] == ']' ? xstrndup(t + 1, n - 2) : NULL;
}

/* "Key=Value" -> key and value (trimmed, in t); false for another line. */
static bool key_value(char *t, char **key, char **val)
{
	char *eq = strchr(t, '=');
	if (!eq || t[0] == '#' || t[0] == ';')
		return false;
	*eq = '\0';
	*key = str_trim(t);
	*val = str_trim(eq + 1);
	return true;
}

/* Walks the key=value lines of an INI text (systemd unit syntax,
 * GKeyFile): each call gives the next one, with the section it is in
 * (NULL before the first); false at the end. */
struct ini {
	const char *s;
	char *sect, *t, *key, *val;
};

static bool ini_next(struct ini *it)
{
	struct line l;
	free(it->t);
	it->t = NULL;
	while (next_line(&it->s, &l)) {
		char *t = trimmed(&l), *name = section_of(t);
		if (name) {
			free(it->sect);
			it->sect = name;
		} else if (key_value(t, &it->key, &it->val)) {
			it->t = t;
			return true;
		}
		free(t);
	}
	free(it->sect);
	it->sect = NULL;
	return false;
}

static bool ini_in(const struct ini *it, const char *section)
{
	return it->sect && !strcmp(it->sect, section);
}

/* ---- systemd-networkd ---- */

/* Name= as systemd-networkd tests it (src/shared/net-condition.c,
 * net_condition_test_strv): every Name= line adds its globs, "!" before a
 * line makes its globs exclusions; the name matches when it matches no
 * exclusion and one of the other globs, if there is one. */
static bool names_match(const struct strv *lines, const char *iface)
{
	bool has_positive = false, positive = false;
	for (size_t i = 0; i < lines->n; i++) {
		bool invert = lines->v[i][0] == '!';
		_cleanup_free_ char *copy = xstrdup(lines->v[i] + (invert ? 1 : 0));
		char *save = NULL;
		for (char *w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
			bool hit = fnmatch(w, iface, 0) == 0;
			if (invert && hit)
				return false;
			if (!invert) {
				has_positive = true;
				positive |= hit;
			}
		}
	}
	return !has_positive || positive;
}

int mtu_networkd_match(const char *text, const char *iface)
{
	_cleanup_strv_ struct strv names = { 0 };
	bool other = false;
	for (struct ini it = { .s = text }; ini_next(&it);) {
		if (!ini_in(&it, "Match"))
			continue;
		if (strcmp(it.key, "Name"))
			other = true;
		else if (!*it.val)
			strv_free(&names);
		else
			strv_add(&names, it.val);
	}
	if (!names_match(&names, iface))
		return 0;
	return other ? -EINVAL : 1;
}

int64_t mtu_networkd_mtu(const char *text)
{
	int64_t mtu = 0, x;
	for (struct ini it = { .s = text }; ini_next(&it);)
		if (ini_in(&it, "Link") && !strcmp(it.key, "MTUBytes"))
			mtu = parse_s64(it.val, 10, &x) == 0 ? x : 0;
	return mtu;
}

/* ---- ifupdown ---- */

/* The first word of a line and its offset; "" for blank and comment lines. */
static char *first_word(const struct line *l, size_t *at)
{
	size_t i = 0;
	while (i < l->n && (l->p[i] == ' ' || l->p[i] == '\t'))
		i++;
	size_t e = i;
	while (e < l->n && l->p[e] != ' ' && l->p[e] != '\t' && l->p[e] != '\r')
		e++;
	if (at)
		*at = i;
	return i < l->n && l->p[i] == '#' ? xstrdup("") : xstrndup(l->p + i, e - i);
}

/* A line that starts a stanza or another top-level statement (interfaces(5)). */
static bool stanza_word(const char *w)
{
	static const char *const words[] = { "iface", "mapping", "auto", "source", "source-directory",
					     "rename", "no-auto-down", "no-scripts" };
	for (size_t i = 0; i < sizeof(words) / sizeof(*words); i++)
		if (!strcmp(w, words[i]))
			return true;
	return str_startswith(w, "allow-");
}

/* Is this line `iface IFACE ...`? */
static bool iface_line(const struct line *l, const char *iface)
{
	_cleanup_free_ char *t = trimmed(l);
	char *save = NULL, *w1 = strtok_r(t, " \t", &save), *w2 = strtok_r(NULL, " \t", &save);
	return w1 && w2 && !strcmp(w1, "iface") && !strcmp(w2, iface);
}

bool mtu_ifupdown_has(const char *text, const char *iface)
{
	struct line l;
	for (const char *s = text; next_line(&s, &l);)
		if (iface_line(&l, iface))
			return true;
	return false;
}

/* Does any stanza of iface have an mtu line? */
static bool stanza_has_mtu(const char *text, const char *iface)
{
	bool in = false;
	struct line l;
	for (const char *s = text; next_line(&s, &l);) {
		_cleanup_free_ char *w = first_word(&l, NULL);
		if (stanza_word(w))
			in = iface_line(&l, iface);
		else if (in && !strcmp(w, "mtu"))
			return true;
	}
	return false;
}

/* A line continued with a backslash (interfaces(5)): not edited line by line. */
static bool continued(const char *text)
{
	struct line l;
	for (const char *s = text; next_line(&s, &l);)
		if (l.n && (l.p[l.n - 1] == '\\' || (l.n > 1 && l.p[l.n - 1] == '\r' && l.p[l.n - 2] == '\\')))
			return true;
	return false;
}

int mtu_ifupdown_edit(const char *text, const char *iface, int64_t mtu, struct strbuf *out)
{
	if (!mtu_ifupdown_has(text, iface))
		return -ENOENT;
	if (continued(text))
		return -EINVAL;
	bool change = stanza_has_mtu(text, iface), in = false, added = false;
	const char *insert_after = NULL; /* the end of the first stanza's last option line */
	_cleanup_free_ char *indent = NULL;
	struct line l;
	for (const char *s = text; next_line(&s, &l);) {
		size_t at = 0;
		_cleanup_free_ char *w = first_word(&l, &at);
		if (stanza_word(w)) {
			in = iface_line(&l, iface) && (change || !insert_after);
			if (in && !insert_after)
				insert_after = l.next;
			continue;
		}
		if (!in || !*w)
			continue;
		if (!change && !indent)
			indent = xstrndup(l.p, at);
		if (!change)
			insert_after = l.next;
	}
	in = false;
	for (const char *s = text; next_line(&s, &l);) {
		size_t at = 0;
		_cleanup_free_ char *w = first_word(&l, &at);
		if (stanza_word(w))
			in = iface_line(&l, iface);
		if (change && in && !strcmp(w, "mtu")) {
			strbuf_add(out, l.p, at);
			strbuf_addf(out, "mtu %lld", (long long)mtu);
			if (l.n && l.p[l.n - 1] == '\r')
				strbuf_addch(out, '\r');
			strbuf_add(out, l.p + l.n, (size_t)(l.next - l.p) - l.n);
		} else {
			strbuf_add(out, l.p, (size_t)(l.next - l.p));
		}
		if (!change && !added && l.next == insert_after) {
			if (out->len && out->buf[out->len - 1] != '\n')
				strbuf_addch(out, '\n');
			strbuf_addf(out, "%smtu %lld\n", indent ? indent : "    ", (long long)mtu);
			added = true;
		}
	}
	return 0;
}

void mtu_ifupdown_sources(const char *text, struct strv *out)
{
	struct line l;
	for (const char *s = text; next_line(&s, &l);) {
		_cleanup_free_ char *t = trimmed(&l);
		size_t w = strcspn(t, " \t");
		if (w == strlen(t))
			continue;
		t[w] = '\0';
		if (!strcmp(t, "source") || !strcmp(t, "source-directory"))
			strv_push(out, xasprintf("%s\t%s", t, str_trim(t + w + 1)));
	}
}

/* ---- NetworkManager keyfiles ---- */

char *mtu_keyfile_get(const char *text, const char *section, const char *key)
{
	char *val = NULL;
	for (struct ini it = { .s = text }; ini_next(&it);)
		if (ini_in(&it, section) && !strcmp(it.key, key)) {
			free(val);
			val = xstrdup(it.val);
		}
	return val;
}

/* [ethernet] or its long name [802-3-ethernet] (nm-settings-keyfile(5):
 * keyfile writes the alias). */
static bool ethernet_section(const char *name)
{
	return name && (!strcmp(name, "ethernet") || !strcmp(name, "802-3-ethernet"));
}

void mtu_keyfile_edit(const char *text, int64_t mtu, struct strbuf *out)
{
	bool has = false, in = false, done = false;
	const char *sect_end = NULL; /* after the last key line of the ethernet section */
	struct line l;
	for (const char *s = text; next_line(&s, &l);) {
		_cleanup_free_ char *t = trimmed(&l);
		_cleanup_free_ char *name = section_of(t);
		char *k, *v;
		if (name) {
			in = ethernet_section(name);
			if (in && !sect_end)
				sect_end = l.next;
		} else if (in && key_value(t, &k, &v)) {
			has |= !strcmp(k, "mtu");
			sect_end = l.next;
		}
	}
	in = false;
	for (const char *s = text; next_line(&s, &l);) {
		_cleanup_free_ char *t = trimmed(&l);
		_cleanup_free_ char *name = section_of(t);
		char *k, *v;
		if (name)
			in = ethernet_section(name);
		if (in && !name && has && key_value(t, &k, &v) && !strcmp(k, "mtu"))
			strbuf_addf(out, "mtu=%lld\n", (long long)mtu);
		else
			strbuf_add(out, l.p, (size_t)(l.next - l.p));
		if (!has && !done && l.next == sect_end) {
			if (out->len && out->buf[out->len - 1] != '\n')
				strbuf_addch(out, '\n');
			strbuf_addf(out, "mtu=%lld\n", (long long)mtu);
			done = true;
		}
	}
	if (!sect_end) {
		if (out->len && out->buf[out->len - 1] != '\n')
			strbuf_addch(out, '\n');
		strbuf_addf(out, "%s[ethernet]\nmtu=%lld\n", out->len ? "\n" : "", (long long)mtu);
	}
}
