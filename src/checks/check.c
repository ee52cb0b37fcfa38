/* Running the registered checks; see check.h. */
#include "check.h"
#include "core/cleanup.h"
#include "core/parse.h"
#include "core/strbuf.h"
#include "inventory/topo.h"

#include <stdlib.h>

#include <errno.h>
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

static bool in_area(const char *id, const char *area)
{
	size_t n = strlen(area);
	return !strncmp(id, area, n) && id[n] == '.';
}

/* A shell glob on the whole ID; a bare word (no '.', no glob character)
 * names an area: "rdma" is "rdma.*". */
static bool pattern_matches(const char *pat, const char *id)
{
	if (!strpbrk(pat, ".*?[\\"))
		return in_area(id, pat);
	return fnmatch(pat, id, 0) == 0;
}

static bool matches_any(const struct strv *pats, const char *id)
{
	for (size_t i = 0; i < pats->n; i++)
		if (pattern_matches(pats->v[i], id))
			return true;
	return false;
}

bool check_selected(const struct check_select *sel, const char *id)
{
	if (sel->only && sel->only->n && !matches_any(sel->only, id))
		return false;
	return !sel->skip || !matches_any(sel->skip, id);
}

/* Why pat selects no check (of area, or of any when area is NULL): the
 * area that has its checks, or the nearest area or ID and the areas. */
static char *pattern_unmatched(const char *what, const char *pat, const char *area)
{
	_cleanup_strbuf_ struct strbuf areas = STRBUF_INIT;
	struct strv names = STRV_INIT;
	struct str_nearest near = STR_NEAREST_INIT(pat);
	bool elsewhere = false;
	for (size_t i = 0; i < check_registry_n; i++) {
		const char *id = check_registry[i]->id;
		elsewhere |= pattern_matches(pat, id);
		_cleanup_free_ char *name = xstrndup(id, strcspn(id, "."));
		if (!strv_contains(&names, name))
			strv_push(&names, TAKE_PTR(name));
	}
	for (size_t i = 0; i < names.n; i++) {
		strbuf_addf(&areas, "%s%s", i == 0 ? "" : i + 1 < names.n ? ", " : " and ", names.v[i]);
		str_nearest_offer(&near, names.v[i]);
	}
	for (size_t i = 0; i < check_registry_n; i++)
		str_nearest_offer(&near, check_registry[i]->id);
	char *msg = elsewhere && area ? xasprintf("%s '%s' matches no check of `gpuready %s` (its checks are %s.*)",
						  what, pat, area, area)
		    : near.best ? xasprintf("%s '%s' matches no check (did you mean '%s'?); the areas are %s, and "
					    "`gpuready list-checks` lists every check ID",
					    what, pat, near.best, areas.buf)
				: xasprintf("%s '%s' matches no check; the areas are %s, and `gpuready list-checks` lists "
					    "every check ID",
					    what, pat, areas.buf);
	strv_free(&names);
	return msg;
}

int check_patterns_validate(const struct strv *pats, const char *what, const char *area, char **err)
{
	for (size_t p = 0; p < pats->n; p++) {
		bool hit = false;
		for (size_t i = 0; i < check_registry_n && !hit; i++)
			hit = (!area || in_area(check_registry[i]->id, area)) &&
			      pattern_matches(pats->v[p], check_registry[i]->id);
		if (!hit) {
			*err = pattern_unmatched(what, pats->v[p], area);
			return -EINVAL;
		}
	}
	return 0;
}

/* A check that read NCCL_* values while some file that sets them could not
 * be read: its OK findings become warnings naming the files. */
static void unsure_without_nccl_files(const struct nccl_config *nc, struct report *rep, size_t from)
{
	if (!nc->unreadable.n)
		return;
	_cleanup_strbuf_ struct strbuf files = STRBUF_INIT;
	for (size_t i = 0; i < nc->unreadable.n; i++)
		strbuf_addf(&files, "%s%s", i ? ", " : "", nc->unreadable.v[i]);
	for (size_t i = from; i < rep->n; i++) {
		struct finding *f = rep->v[i];
		if (f->status != STATUS_OK)
			continue;
		report_set_status(rep, f, STATUS_WARN);
		char *m = xasprintf("%s; unverified: NCCL_* may be set in what could not be read: %s", f->message,
				    files.buf);
		free(f->message);
		f->message = m;
		if (!f->hint)
			finding_hint(f, "run gpuready as root (`sudo gpuready check`), or record the snapshot as root, so "
					"that it can read every file that sets NCCL_* variables");
	}
}

/* Why check d cannot run on this inventory: the first of its NEEDS_* that
 * is missing (0 when none is), with the words for it. */
static unsigned unmet_need(const struct check_def *d, const struct inventory *inv, const char **why)
{
	if ((d->needs & NEEDS_LIVE) && !inv->live) {
		*why = "needs the live machine: a recorded tree cannot be queried";
		return NEEDS_LIVE;
	}
	if (d->needs & NEEDS_GPU) {
		const struct pci_dev **gpus = NULL;
		size_t n = topo_gpus(inv, &gpus);
		free(gpus);
		if (n == 0) {
			*why = "no NVIDIA GPU on PCI (see gpu.pci)";
			return NEEDS_GPU;
		}
	}
	if ((d->needs & NEEDS_RDMA_DEVICE) && inv->rdma.n == 0) {
		*why = "no RDMA device (see rdma.devices)";
		return NEEDS_RDMA_DEVICE;
	}
	return 0;
}

/* The check that fails for a missing prerequisite, with its fix, so the
 * others only skip; NULL for one that is not a fault (a recorded tree). */
static const char *need_owner(unsigned need)
{
	return need == NEEDS_GPU ? "gpu.pci" : need == NEEDS_RDMA_DEVICE ? "rdma.devices" : NULL;
}

static bool in_run(const char *id, const char *area, const struct check_select *sel)
{
	return (!area || in_area(id, area)) && check_selected(sel, id);
}

/* A missing prerequisite: a skip naming it, or, when the check that owns
 * it does not run here (`gpuready gpudirect` on a node without GPUs), a
 * failure the first time, so the command does not pass on such a node. */
static void add_unmet(struct check_ctx *c, unsigned need, const char *why, const char *area,
		      const struct check_select *sel, unsigned *failed)
{
	_cleanup_free_ char *subject = xstrndup(c->def->id, strcspn(c->def->id, "."));
	const char *owner = need_owner(need);
	if (!owner || in_run(owner, area, sel) || (*failed & need)) {
		check_add(c, STATUS_SKIP, subject, "%s", why);
		return;
	}
	*failed |= need;
	int len = (int)strcspn(why, "(");
	while (len > 0 && why[len - 1] == ' ')
		len--;
	struct finding *f = check_add(c, STATUS_FAIL, subject, "%.*s: the %s checks cannot run", len, why, subject);
	finding_hint(f, "`gpuready check --only %s` says why and how to fix it", owner);
}

/* Each warn or fail from `from` on that a change `gpuready fix` wrote
 * answers says so: waiting for a reload or reboot, or, when the node has
 * booted since it was written, that it did not take (docs/fix.md). */
static void mark_pending(const struct fix_pending_info *p, struct report *rep, size_t from)
{
	for (size_t i = from; i < rep->n; i++) {
		struct finding *f = rep->v[i];
		if (f->status != STATUS_WARN && f->status != STATUS_FAIL)
			continue;
		for (size_t k = 0; k < p->n; k++) {
			const struct fix_pending_entry *e = &p->v[k];
			if (strcmp(e->check_id, f->id) || strcmp(e->subject, f->subject))
				continue;
			if (p->boot_id && strcmp(e->boot_id, "-") && strcmp(e->boot_id, p->boot_id))
				finding_pending(f, "`gpuready fix` wrote \"%s\" at %s, and the node has booted since: it did "
						   "not take effect",
						e->title, e->time);
			else
				finding_pending(f, "`gpuready fix` wrote \"%s\" at %s; it takes effect at the next module "
						   "reload or reboot",
						e->title, e->time);
			break;
		}
	}
}

int checks_run(const char *area, const struct inventory *inv, const struct site_expect *expect,
	       const struct check_select *sel, struct report *rep)
{
	size_t start = rep->n;
	int first = 0;
	unsigned failed_needs = 0;
	for (size_t i = 0; i < check_registry_n; i++) {
		const struct check_def *d = check_registry[i];
		if (area && !in_area(d->id, area))
			continue;
		if (!check_selected(sel, d->id))
			continue;
		struct check_ctx c = { .inv = inv, .expect = expect, .report = rep, .def = d };
		const char *why = NULL;
		unsigned need = unmet_need(d, inv, &why);
		if (need) {
			add_unmet(&c, need, why, area, sel, &failed_needs);
			continue;
		}
		size_t before = rep->n;
		int r = d->run(&c);
		if (d->nccl_vars)
			unsure_without_nccl_files(&inv->nccl, rep, before);
		for (size_t k = before; d->listing && k < rep->n; k++)
			if (rep->v[k]->status == STATUS_OK)
				report_set_status(rep, rep->v[k], STATUS_INFO);
		if (r < 0) {
			struct finding *f = check_add(&c, STATUS_SKIP, "gpuready",
						      "internal error in this check: %s", strerror(-r));
			finding_hint(f, "report this as a gpuready bug with `gpuready snapshot gpuready-snapshot` attached");
			if (!first)
				first = r;
		}
	}
	mark_pending(&inv->fix_pending, rep, start);
	return first;
}
