/* rdma.nccl_debug: NCCL logging is not left at INFO/TRACE for every job.
 *
 * NCCL_DEBUG=INFO (or TRACE) set permanently — in /etc/profile.d,
 * /etc/environment or an nccl.conf — makes every rank of every job log
 * dozens of lines per communicator (50+ lines for one all-reduce on an
 * 8-GPU node), filling job logs and slowing start-up at scale. Set it per
 * job when debugging. NCCL_DEBUG_SUBSYS names are checked against the
 * 2.30 list (NCCL documentation, Environment Variables). */
#include "checks/check.h"
#include "common.h"
#include "core/cleanup.h"
#include "core/parse.h"

#include <string.h>
#include <strings.h>

static const char *const subsys[] = {
	"INIT", "COLL", "P2P", "SHM", "NET", "GRAPH", "TUNING", "ENV", "ALLOC", "ALLOC_HOST", "CALL", "PROXY",
	"NVLS", "BOOTSTRAP", "REG", "PROFILE", "RAS", "DESTROY", "ALL",
};
static const char *const levels[] = { "VERSION", "WARN", "INFO", "ABORT", "TRACE" };

static void check_subsys(struct check_ctx *c, const struct nccl_var *v)
{
	_cleanup_free_ char *copy = xstrdup(v->value);
	char *s = copy, *save = NULL;
	struct strbuf bad = STRBUF_INIT;
	if (*s == '^')
		s++;
	for (char *t = strtok_r(s, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		bool known = false;
		for (size_t i = 0; i < ARRAY_SIZE(subsys) && !known; i++)
			known = !strcasecmp(str_trim(t), subsys[i]);
		if (!known)
			strbuf_addf(&bad, "%s%s", bad.len ? ", " : "", t);
	}
	if (bad.len) {
		struct finding *f = check_add(c, STATUS_WARN, "NCCL_DEBUG_SUBSYS", "=%s (%s): unknown subsystem %s",
					      v->value, v->source, bad.buf);
		finding_hint(f, "valid: INIT, COLL, P2P, SHM, NET, GRAPH, TUNING, ENV, ALLOC, CALL, PROXY, NVLS, "
				"BOOTSTRAP, REG, PROFILE, RAS, ALL");
	} else {
		check_add(c, STATUS_OK, "NCCL_DEBUG_SUBSYS", "=%s (%s)", v->value, v->source);
	}
	strbuf_release(&bad);
}

static int run(struct check_ctx *c)
{
	const struct nccl_var *v = nccl_get(&c->inv->nccl, "NCCL_DEBUG");
	const struct nccl_var *s = nccl_get(&c->inv->nccl, "NCCL_DEBUG_SUBSYS");
	struct finding *f;
	if (nccl_skip_computed(c, s))
		s = NULL;
	if (nccl_skip_computed(c, v)) {
		/* reported */
	} else if (!v) {
		check_add(c, STATUS_OK, "NCCL_DEBUG", "not set: NCCL prints only warnings");
	} else {
		bool known = false;
		for (size_t i = 0; i < ARRAY_SIZE(levels) && !known; i++)
			known = !strcasecmp(v->value, levels[i]);
		bool loud = !strcasecmp(v->value, "INFO") || !strcasecmp(v->value, "TRACE");
		bool permanent = v->file_source != NULL;
		if (!known) {
			f = check_add(c, STATUS_WARN, "NCCL_DEBUG", "=%s (%s) is not a level NCCL knows", v->value,
				      v->source);
			finding_hint(f, "use VERSION, WARN, INFO or TRACE");
		} else if (loud && permanent) {
			char place[256];
			f = check_add(c, STATUS_WARN, "NCCL_DEBUG", "=%s set permanently (%s): every rank of every job "
								    "logs at %s",
				      v->value, v->file_source, v->value);
			struct nccl_var fv = { .source = v->file_source };
			finding_hint(f, "remove it from %s and set NCCL_DEBUG=INFO only for the job you debug",
				     nccl_var_place(&fv, place, sizeof(place)));
		} else {
			check_add(c, STATUS_OK, "NCCL_DEBUG", "=%s (%s)", v->value, v->source);
		}
	}
	if (s)
		check_subsys(c, s);
	return 0;
}

const struct check_def check_rdma_nccl_debug = {
	.id = "rdma.nccl_debug",
	.section = "NCCL Configuration",
	.summary = "NCCL_DEBUG is not INFO/TRACE permanently; NCCL_DEBUG_SUBSYS names are valid",
	.run = run,
	.nccl_vars = true,
};
