/* rdma.nccl_env: the effective value of each NCCL_* variable, and where it
 * comes from (process environment, login-shell files, NCCL's config files;
 * precedence in inventory/nccl_conf.c). Lower-priority definitions that
 * lose are listed as details. Informational: ok or skip, and a warning for
 * each file that may set NCCL_* but could not be read. */
#include "checks/check.h"
#include "common.h"

static int run(struct check_ctx *c)
{
	const struct nccl_config *nc = &c->inv->nccl;
	if (!nc->env_known)
		check_add(c, STATUS_SKIP, "environment",
			  "process environment not recorded in this tree (.gpuready/environ): only files are considered");
	for (size_t i = 0; i < nc->notes.n; i++)
		check_add(c, STATUS_SKIP, "NCCL_CONF_FILE", "%s", nc->notes.v[i]);
	for (size_t i = 0; i < nc->unreadable.n; i++) {
		struct finding *f = check_add(c, STATUS_WARN, "unreadable",
					      "%s: cannot tell which NCCL_* variables it sets; the NCCL verdicts below are "
					      "unverified",
					      nc->unreadable.v[i]);
		finding_hint(f, "run gpuready as root (`sudo gpuready check`), or record the snapshot as root");
	}
	if (nc->n == 0 && !nc->unreadable.n) {
		check_add(c, STATUS_OK, SUBJECT_NODE, "no NCCL_* variables set anywhere: NCCL uses its defaults");
		return 0;
	}
	for (size_t i = 0; i < nc->n; i++) {
		const struct nccl_var *v = &nc->v[i];
		struct finding *f = check_add(c, STATUS_OK, v->name, "=%s (%s%s%s)", v->value, v->source,
					      v->login_only ? ", login shells only" : "",
					      v->computed ? ", computed when the shell runs" : "");
		for (size_t k = 0; k < v->shadowed.n; k++)
			finding_detail(f, "also set, not used: %s", v->shadowed.v[k]);
	}
	return 0;
}

const struct check_def check_rdma_nccl_env = {
	.id = "rdma.nccl_env",
	.section = "NCCL Configuration",
	.summary = "effective NCCL_* values and where each comes from",
	.run = run,
	.listing = true,
};
