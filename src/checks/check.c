/* Running the registered checks; see check.h. */
#include "check.h"
#include "core/strbuf.h"

#include <fnmatch.h>
#include <stdarg.h>
#include <string.h>

struct finding *check_add(struct check_ctx *c, enum status st, const char *subject, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	struct finding *f = report_vadd(c->report, c->def->id, c->def->section, st, subject, fmt, ap);
	va_end(ap);
	return f;
}

static bool matches_any(const struct strv *pats, const char *id)
{
	for (size_t i = 0; i < pats->n; i++)
		if (fnmatch(pats->v[i], id, 0) == 0)
			return true;
	return false;
}

bool check_selected(const struct check_select *sel, const char *id)
{
	if (sel->only && sel->only->n && !matches_any(sel->only, id))
		return false;
	return !sel->skip || !matches_any(sel->skip, id);
}

static bool in_area(const char *id, const char *area)
{
	size_t n = strlen(area);
	return !strncmp(id, area, n) && id[n] == '.';
}

int checks_run(const char *area, const struct inventory *inv, const struct site_expect *expect,
	       const struct check_select *sel, struct report *rep)
{
	int first = 0;
	for (size_t i = 0; i < check_registry_n; i++) {
		const struct check_def *d = check_registry[i];
		if (area && !in_area(d->id, area))
			continue;
		if (!check_selected(sel, d->id))
			continue;
		struct check_ctx c = { .inv = inv, .expect = expect, .report = rep, .def = d };
		int r = d->run(&c);
		if (r < 0) {
			struct finding *f = check_add(&c, STATUS_SKIP, "gpuready",
						      "internal error in this check: %s", strerror(-r));
			finding_hint(f, "report this as a gpuready bug with `gpuready snapshot DIR` attached");
			if (!first)
				first = r;
		}
	}
	return first;
}
