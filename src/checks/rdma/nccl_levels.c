/* rdma.nccl_levels: NCCL_NET_GDR_LEVEL and NCCL_P2P_LEVEL hold values NCCL
 * understands.
 *
 * NCCL compares the value with its path type names (case-sensitive:
 * LOC, NVL, NVB, C2C, PIX, PXB, P2C, PXN, PHB, SYS) and otherwise reads a
 * leading digit as the legacy number 0 LOC, 1 PIX, 2 PXB, 3 PHB, 4 and up
 * SYS (NCCL src/graph/paths.cc; NCCL documentation, Environment Variables). Anything else is ignored
 * without a warning and the default (PXB) applies, which is a fail: the
 * operator's intent is lost. A legacy number still works (NCCL documents the
 * integer values as legacy, not removed), so it is information that names
 * the string it means — bring-up scripts write NCCL_NET_GDR_LEVEL=5 with
 * comments claiming "5 = PIX", but 5 means SYS. A warn here would be a false
 * alarm on a healthy node (the DGX Spark setup guides write 5). */
#include "checks/check.h"
#include "common.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const names[] = { "LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS" };
static const char *const legacy[] = { "LOC", "PIX", "PXB", "PHB", "SYS" };

static void one(struct check_ctx *c, const char *var, const char *what)
{
	const struct nccl_var *v = nccl_get(&c->inv->nccl, var);
	struct finding *f;
	if (!v) {
		check_add(c, STATUS_OK, var, "not set: NCCL's default (PXB) applies to %s", what);
		return;
	}
	if (nccl_skip_computed(c, v))
		return;
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(v->value, names[i])) {
			check_add(c, STATUS_OK, var, "=%s (%s)", v->value, v->source);
			return;
		}
	if (isdigit((unsigned char)v->value[0])) {
		long n = strtol(v->value, NULL, 0);
		const char *s = legacy[n < 0 ? 0 : n > 4 ? 4 : n];
		f = check_add(c, STATUS_INFO, var, "=%s (%s) is NCCL's legacy number for %s", v->value, v->source, s);
		finding_hint(f, "write the name instead: %s=%s (legacy numbers: 0 LOC, 1 PIX, 2 PXB, 3 PHB, 4+ SYS)", var,
			     s);
		return;
	}
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcasecmp(v->value, names[i])) {
			f = check_add(c, STATUS_FAIL, var, "=%s (%s): NCCL matches names case-sensitively and ignores "
							   "this value, so the default PXB applies",
				      v->value, v->source);
			finding_hint(f, "%s=%s", var, names[i]);
			return;
		}
	f = check_add(c, STATUS_FAIL, var, "=%s (%s) is not a path type: NCCL ignores it and uses the default PXB",
		      v->value, v->source);
	finding_hint(f, "use one of LOC, PIX, PXB, PHB, SYS (also NVL, NVB, C2C, P2C, PXN)");
}

static int run(struct check_ctx *c)
{
	one(c, "NCCL_NET_GDR_LEVEL", "GPUDirect RDMA (GPU<->NIC distance)");
	one(c, "NCCL_P2P_LEVEL", "GPU peer-to-peer (GPU<->GPU distance)");
	return 0;
}

const struct check_def check_rdma_nccl_levels = {
	.id = "rdma.nccl_levels",
	.section = "NCCL Configuration",
	.summary = "NCCL_NET_GDR_LEVEL and NCCL_P2P_LEVEL hold values NCCL understands",
	.run = run,
	.nccl_vars = true,
};
