/* Owned string vectors; see strv.h. */
#include "strv.h"
#include "strbuf.h"

#include <stdlib.h>
#include <string.h>

void strv_push(struct strv *sv, char *s)
{
	sv->v = xreallocarray(sv->v, sv->n + 2, sizeof(char *));
	sv->v[sv->n++] = s;
	sv->v[sv->n] = NULL;
}

void strv_add(struct strv *sv, const char *s)
{
	strv_push(sv, xstrdup(s));
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void strv_sort(struct strv *sv)
{
	if (sv->n > 1)
		qsort(sv->v, sv->n, sizeof(char *), cmp);
}

bool strv_contains(const struct strv *sv, const char *s)
{
	for (size_t i = 0; i < sv->n; i++)
		if (!strcmp(sv->v[i], s))
			return true;
	return false;
}

void strv_free(struct strv *sv)
{
	for (size_t i = 0; i < sv->n; i++)
		free(sv->v[i]);
	free(sv->v);
	sv->v = NULL;
	sv->n = 0;
}
