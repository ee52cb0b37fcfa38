/* The comparison side of the ABI tests (abi.h). */
#include "abi.h"

#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct abi_entry *find(const struct abi_entry *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].name, name))
			return &v[i];
	return NULL;
}

static int group_bit(unsigned group)
{
	int b = 0;
	while (group > 1u) {
		group >>= 1;
		b++;
	}
	return b;
}

/* One table against the other; counts into *checked and *absent. */
static int compare(const char *lib, const struct abi_entry *ours, size_t n, const struct abi_entry *rv, size_t rn,
		   const struct abi_real *real, const char *const *group_names, int *checked, int *absent)
{
	int bad = 0;

	for (size_t i = 0; i < n; i++) {
		const struct abi_entry *o = &ours[i], *r = find(rv, rn, o->name);
		int proto = strstr(o->name, " prototype") != NULL;
		if (!r) {
			if (o->group && !(real->groups & o->group)) {
				printf("%s: %s: not in this header (%s)\n", lib, o->name,
				       group_names ? group_names[group_bit(o->group)] : "?");
				(*absent)++;
				continue;
			}
			printf("%s ABI: %s: missing from the real side's list\n", lib, o->name);
			bad++;
			continue;
		}
		(*checked)++;
		if (proto && r->symbol &&
		    (strncmp(o->name, r->symbol, strlen(r->symbol)) || o->name[strlen(r->symbol)] != ' '))
			printf("%s: %s: the header declares that name only as %s (a macro renames it); checked "
			       "against %s's declaration\n", lib, o->name, r->symbol, r->symbol);
		if (proto ? (o->a && r->a) : (o->a == r->a && o->b == r->b))
			continue;
		if (proto)
			printf("%s ABI mismatch: %s: the prototype spelled out in the test %s gpuready's and %s the "
			       "header's\n", lib, o->name, o->a ? "matches" : "does not match",
			       r->a ? "matches" : "does not match");
		else
			printf("%s ABI mismatch: %s: gpuready (%lld, %lld), %s (%lld, %lld)\n", lib, o->name, o->a, o->b,
			       real->header_version, r->a, r->b);
		bad++;
	}
	return bad;
}

int abi_compare(const char *lib, const struct abi_entry *ours, size_t n,
		const struct abi_entry *(*ours_runtime)(size_t *n), const struct abi_real *real,
		const char *const *group_names)
{
	int checked = 0, absent = 0;
	int bad = compare(lib, ours, n, real->v, real->n, real, group_names, &checked, &absent);

	if (ours_runtime || real->runtime) {
		size_t on = 0, rn = 0;
		const struct abi_entry *ov = ours_runtime ? ours_runtime(&on) : NULL;
		const struct abi_entry *rv = real->runtime ? real->runtime(&rn) : NULL;
		bad += compare(lib, ov, on, rv, rn, real, group_names, &checked, &absent);
	}
	printf("%s: %d entries checked against %s, %d not in it, %d mismatched\n", lib, checked,
	       real->header_version, absent, bad);
	return bad;
}

int abi_names_resolved(const char *lib, const struct abi_real *real, const char *const *syms, size_t n)
{
	int bad = 0;

	for (size_t i = 0; i < real->n_names; i++) {
		const struct abi_name *nm = &real->names[i];
		size_t k = 0;
		while (k < n && (!syms[k] || strcmp(syms[k], nm->symbol)))
			k++;
		if (k == n) {
			printf("%s: the header maps %s to %s, which gpuready does not resolve\n", lib, nm->api, nm->symbol);
			bad++;
		} else if (strcmp(nm->api, nm->symbol)) {
			printf("%s: %s means %s here\n", lib, nm->api, nm->symbol);
		}
	}
	printf("%s: %zu API names map to symbols gpuready resolves (%d do not)\n", lib, real->n_names, bad);
	return bad;
}

int abi_protos_cover(const char *lib, const struct abi_entry *ours, size_t n, const char *const *syms,
		     size_t n_syms)
{
	char want[256];
	int bad = 0;

	for (size_t i = 0; i < n_syms; i++) {
		snprintf(want, sizeof(want), "%s prototype", syms[i]);
		if (!find(ours, n, want)) {
			printf("%s: gpuready resolves %s, but the test has no prototype entry for it\n", lib, syms[i]);
			bad++;
		}
	}
	return bad;
}

/* The file with comments blanked (newlines kept), malloc'd; NULL if
 * unreadable. */
static char *read_code(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, len = 0;
	char *s = malloc(cap);
	size_t got;
	while (s && (got = fread(s + len, 1, cap - len - 1, f)) > 0) {
		len += got;
		if (len + 1 == cap) {
			char *t = realloc(s, cap *= 2);
			if (!t) {
				free(s);
				fclose(f);
				return NULL;
			}
			s = t;
		}
	}
	fclose(f);
	if (!s)
		return NULL;
	s[len] = '\0';
	for (char *p = s; *p; p++) {
		if (p[0] == '/' && p[1] == '*') {
			char *e = strstr(p + 2, "*/");
			char *end = e ? e + 2 : p + strlen(p);
			for (; p < end; p++)
				if (*p != '\n')
					*p = ' ';
			p--;
		} else if (p[0] == '/' && p[1] == '/') {
			for (; *p && *p != '\n'; p++)
				*p = ' ';
			if (!*p)
				break;
		} else if (*p == '"') { /* a string literal: skip it */
			for (p++; *p && *p != '"' && *p != '\n'; p++)
				if (*p == '\\' && p[1])
					p++;
			if (!*p)
				break;
		}
	}
	return s;
}

static bool covered(const char *name, const struct abi_entry *v, size_t n, const struct abi_entry *rv, size_t rn,
		    bool type)
{
	size_t len = strlen(name);
	char want[256];

	snprintf(want, sizeof(want), "sizeof %s", name);
	for (size_t k = 0; k < 2; k++) {
		const struct abi_entry *t = k ? rv : v;
		size_t tn = k ? rn : n;
		for (size_t i = 0; i < tn; i++) {
			if (!type && !strcmp(t[i].name, name))
				return true;
			if (type && (!strcmp(t[i].name, want) || (!strncmp(t[i].name, name, len) && t[i].name[len] == '.')))
				return true;
		}
	}
	return false;
}

/* list[i] "PREFIX*" matches every name that starts with PREFIX */
static bool in_list(const char *name, const char *const *list, size_t n)
{
	for (size_t i = 0; list && (n == (size_t)-1 ? list[i] != NULL : i < n); i++) {
		size_t len = strlen(list[i]);
		if (len && list[i][len - 1] == '*' ? !strncmp(list[i], name, len - 1) : !strcmp(list[i], name))
			return true;
	}
	return false;
}

int abi_cover(const char *lib, const char *header, const struct abi_entry *ours, size_t n,
	      const struct abi_entry *(*ours_runtime)(size_t *n), const char *const *members, size_t n_members,
	      const char *const *except)
{
	/* kind: 0 value, 1 type, 2 member */
	static const struct {
		const char *re;
		int kind;
	} pats[] = {
		{ "^[[:space:]]*([A-Za-z_][A-Za-z0-9_]*)[[:space:]]*=([^=]|$)", 0 },
		{ "^[[:space:]]*#[[:space:]]*define[[:space:]]+([A-Za-z_][A-Za-z0-9_]*)[[:space:]]+"
		  "\\(?-?(0[xX][0-9a-fA-F]+|[0-9]+|INT_MIN|INT_MAX)[uUlL]*\\)?[[:space:]]*$", 0 },
		{ "^[[:space:]]*typedef[^;{(]*[[:space:]*]([A-Za-z_][A-Za-z0-9_]*)[[:space:]]*;", 1 },
		{ "^[[:space:]]*}[[:space:]]*([A-Za-z_][A-Za-z0-9_]*)[[:space:]]*;", 1 },
		{ "^[^(]*\\(\\*[[:space:]]*([A-Za-z_][A-Za-z0-9_]*)\\)[[:space:]]*\\(", 2 },
	};
	const char *src = getenv("GPUREADY_SOURCE_DIR");
	char path[4096];
	regex_t re[ABI_N(pats)];
	size_t rn = 0;
	const struct abi_entry *rv = ours_runtime ? ours_runtime(&rn) : NULL;
	int bad = 0, seen = 0, depth = 0;

	snprintf(path, sizeof(path), "%s/%s", src ? src : ".", header);
	char *code = read_code(path);
	if (!code) {
		printf("%s: cannot read %s to check that the test covers it (GPUREADY_SOURCE_DIR)\n", lib, path);
		return 1;
	}
	for (size_t i = 0; i < ABI_N(pats); i++)
		if (regcomp(&re[i], pats[i].re, REG_EXTENDED)) {
			printf("bad pattern %s\n", pats[i].re);
			abort();
		}
	for (char *line = code, *next; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		int start = depth;
		for (const char *p = line; *p; p++)
			depth += *p == '{' ? 1 : *p == '}' ? -1 : 0;
		for (size_t i = 0; i < ABI_N(pats); i++) {
			regmatch_t m[2];
			char name[128];
			if (regexec(&re[i], line, 2, m, 0))
				continue;
			/* a "} name;" closes a typedef only at the top level */
			if (i == 3 && !(start == 1 && depth == 0))
				continue;
			if (pats[i].kind == 2 && start == 0)
				continue;
			snprintf(name, sizeof(name), "%.*s", (int)(m[1].rm_eo - m[1].rm_so), line + m[1].rm_so);
			seen++;
			bool ok = in_list(name, except, (size_t)-1) ||
				  (pats[i].kind == 2 ? in_list(name, members, n_members)
						     : covered(name, ours, n, rv, rn, pats[i].kind == 1));
			if (!ok) {
				printf("%s: %s declares %s %s, which the test does not check\n", lib, header,
				       pats[i].kind == 0 ? "the value" : pats[i].kind == 1 ? "the type" : "the member",
				       name);
				bad++;
			}
			break;
		}
	}
	for (size_t i = 0; i < ABI_N(pats); i++)
		regfree(&re[i]);
	free(code);
	printf("%s: %d declarations in %s, %d without a check\n", lib, seen, header, bad);
	return bad;
}

int abi_skip_without_header(const char *lib, const struct abi_real *real)
{
	const char *dir = getenv("GPUREADY_NVIDIA_DIR");
	char path[4096], why[512] = "";

	if (real->have_header) {
		printf("%s: against %s\n", lib, real->header_version);
		return 0;
	}
	if (real->from_nvidia_dir && dir && *dir) {
		snprintf(path, sizeof(path), "%s/unavailable", dir);
		FILE *f = fopen(path, "r");
		if (f && fgets(why, sizeof(why), f))
			why[strcspn(why, "\n")] = '\0';
		if (f)
			fclose(f);
	}
	printf("SKIP: %s: %s%s%s\n", lib, real->header_version, why[0] ? "; scripts/nvidia-libs.sh: " : "", why);
	return 77;
}
