/* The comparison side of the ABI tests (abi.h). */
#include "abi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct abi_entry *find(const struct abi_real *real, const char *name)
{
	for (size_t i = 0; i < real->n; i++)
		if (!strcmp(real->v[i].name, name))
			return &real->v[i];
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

int abi_compare(const char *lib, const struct abi_entry *ours, size_t n, const struct abi_real *real,
		const char *const *group_names)
{
	int bad = 0, checked = 0, absent = 0;

	for (size_t i = 0; i < n; i++) {
		const struct abi_entry *o = &ours[i], *r = find(real, o->name);
		int proto = strstr(o->name, " prototype") != NULL;
		if (!r) {
			if (o->group && !(real->groups & o->group)) {
				printf("%s: %s: not in this header (%s)\n", lib, o->name, group_names[group_bit(o->group)]);
				absent++;
				continue;
			}
			printf("%s ABI: %s: missing from the real side's list\n", lib, o->name);
			bad++;
			continue;
		}
		checked++;
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
		}
	}
	printf("%s: %zu API names map to symbols gpuready resolves (%d do not)\n", lib, real->n_names, bad);
	return bad;
}

int abi_skip_without_header(const char *lib, const struct abi_real *real)
{
	const char *dir = getenv("GPUREADY_NVIDIA_DIR");
	char path[4096], why[512] = "";

	if (real->have_header)
		return 0;
	if (dir && *dir) {
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
