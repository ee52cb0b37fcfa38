/* gpu.fabric: every GPU that takes part in an NVLink fabric has completed
 * its registration with it, without error, and the fabric reports it
 * healthy (live only; F04).
 *
 * On HGX/DGX Hopper and Blackwell the fabric manager registers each GPU
 * with the NVSwitch fabric; on GB200 NVL racks the NVLink switch trays'
 * fabric manager does. Until registration completes, CUDA fails on the GPU
 * (error 802, "system not yet initialized"); a degraded fabric makes
 * multi-node NVLink jobs fail or hang at communicator creation
 * (NVIDIA/nccl#2186). NVML (NVIDIA's NVML API reference,
 * nvmlDeviceGetGpuFabricInfoV; nvml.h "Fabric definitions"): state Not
 * Started (1), In Progress (2), Completed (3); status, the registration's
 * own nvmlReturn_t, meaningful once completed; healthMask (R550+), 2-bit
 * fields NOT_SUPPORTED 0 / TRUE 1 / FALSE 2 for degraded bandwidth, route
 * recovery in progress, route unhealthy and access-timeout recovery in
 * progress, and a 4-bit incorrect-configuration cause (1 none);
 * healthSummary (R560+) Healthy 1 / Unhealthy 2 / Limited Capacity 3.
 * `nvidia-smi -q` prints the same under "Fabric".
 *
 * A GPU outside any NVLink fabric (PCIe cards, NVLink bridges, GPUs
 * before Hopper, and an H100/H200/GB200 set up with a single GPU:
 * leptonai/gpud#1140, #1147) answers "not supported" (state 0 with
 * success, or the call's NVML_ERROR_NOT_SUPPORTED): not applicable, a
 * skip. Recovery in progress
 * is a warn (it may finish by itself); everything else that is not healthy
 * is a fail. */
#include "checks/check.h"
#include "core/strbuf.h"
#include "common.h"

#include <stdio.h>

/* nvml.h NVML_GPU_FABRIC_STATE_* and NVML_GPU_FABRIC_HEALTH_* */
#define FABRIC_NOT_STARTED 1
#define FABRIC_IN_PROGRESS 2
#define FABRIC_COMPLETED 3
#define HEALTH_TRUE 1u
#define HEALTH_SHIFT_DEGRADED_BW 0
#define HEALTH_SHIFT_ROUTE_RECOVERY 2
#define HEALTH_SHIFT_ROUTE_UNHEALTHY 4
#define HEALTH_SHIFT_ACCESS_TIMEOUT_RECOVERY 6
#define HEALTH_SHIFT_CONFIG 8
#define HEALTH_CONFIG_NONE 1u
#define SUMMARY_UNHEALTHY 2
#define SUMMARY_LIMITED 3

static unsigned field(unsigned mask, int shift, unsigned width)
{
	return (mask >> shift) & width;
}

static const char *config_cause(unsigned v)
{
	static const char *const causes[] = { [2] = "incorrect system GUID", [3] = "incorrect chassis serial number",
					      [4] = "no partition", [5] = "insufficient NVLinks",
					      [6] = "incompatible GPU firmware", [7] = "invalid location",
					      [8] = "GPU state invalid" };
	return v < sizeof(causes) / sizeof(causes[0]) && causes[v] ? causes[v] : "unknown cause";
}

/* The health mask and summary: FAIL/WARN with the reasons in msg, or OK. */
static enum status health(const struct nvml_gpu *g, struct strbuf *msg)
{
	unsigned m = g->fabric_health_mask;
	enum status st = STATUS_OK;
	unsigned cfg = field(m, HEALTH_SHIFT_CONFIG, 0xf);
	if (g->fabric_health_summary == SUMMARY_UNHEALTHY)
		strbuf_addf(msg, "%sfabric health Unhealthy", msg->len ? ", " : ""), st = STATUS_FAIL;
	if (field(m, HEALTH_SHIFT_DEGRADED_BW, 3) == HEALTH_TRUE)
		strbuf_addf(msg, "%sbandwidth degraded", msg->len ? ", " : ""), st = STATUS_FAIL;
	if (field(m, HEALTH_SHIFT_ROUTE_UNHEALTHY, 3) == HEALTH_TRUE)
		strbuf_addf(msg, "%sroute unhealthy", msg->len ? ", " : ""), st = STATUS_FAIL;
	if (cfg > HEALTH_CONFIG_NONE)
		strbuf_addf(msg, "%sincorrect configuration: %s", msg->len ? ", " : "", config_cause(cfg)),
			st = STATUS_FAIL;
	bool recovering = false;
	if (field(m, HEALTH_SHIFT_ROUTE_RECOVERY, 3) == HEALTH_TRUE)
		strbuf_addf(msg, "%sroute recovery in progress", msg->len ? ", " : ""), recovering = true;
	if (field(m, HEALTH_SHIFT_ACCESS_TIMEOUT_RECOVERY, 3) == HEALTH_TRUE)
		strbuf_addf(msg, "%saccess-timeout recovery in progress", msg->len ? ", " : ""), recovering = true;
	if (g->fabric_health_summary == SUMMARY_LIMITED)
		strbuf_addf(msg, "%sfabric health Limited Capacity", msg->len ? ", " : ""), recovering = true;
	if (recovering && st == STATUS_OK)
		st = STATUS_WARN;
	return st;
}

static const char *state_name(int s)
{
	return s == FABRIC_NOT_STARTED ? "Not Started" : s == FABRIC_IN_PROGRESS ? "In Progress" : "unknown";
}

static void hint(struct check_ctx *c, struct finding *f, const struct nvml_gpu *g)
{
	if (nvswitch_count(c->inv))
		finding_hint(f, "`systemctl status nvidia-fabricmanager` (see gpu.fabricmanager), then reset the GPU "
				"(`nvidia-smi -r -i %u`) or reboot; `nvidia-smi -q -i %u` shows the fabric state under "
				"Fabric",
			     g->index, g->index);
	else
		finding_hint(f, "check the NVLink switch trays and their fabric manager, then reset the GPU (`nvidia-smi "
				"-r -i %u`) or reboot the tray; `nvidia-smi -q -i %u` shows the fabric state under Fabric",
			     g->index, g->index);
}

/* One GPU in the fabric (state 1..3). */
static void one(struct check_ctx *c, const struct nvml_gpu *g, const char *s)
{
	_cleanup_strbuf_ struct strbuf why = STRBUF_INIT;
	struct finding *f;
	if (g->fabric_state != FABRIC_COMPLETED) {
		f = check_add(c, STATUS_FAIL, s, "not registered with the NVLink fabric: state %s (%d); CUDA fails on "
						 "it (error 802, system not yet initialized) until registration completes",
			      state_name(g->fabric_state), g->fabric_state);
		hint(c, f, g);
		return;
	}
	if (g->fabric_status != 0) {
		f = check_add(c, STATUS_FAIL, s, "registration with the NVLink fabric completed with an error: %s (%d)",
			      g->fabric_status_text[0] ? g->fabric_status_text : "NVML error", g->fabric_status);
		hint(c, f, g);
		return;
	}
	enum status st = g->fabric_version >= 2 ? health(g, &why) : STATUS_OK;
	if (st != STATUS_OK) {
		f = check_add(c, st, s, "registered with the NVLink fabric (clique %u), but the fabric reports: %s "
					"(health mask 0x%x)",
			      g->fabric_clique, why.buf, g->fabric_health_mask);
		hint(c, f, g);
		return;
	}
	if (g->fabric_version >= 2)
		check_add(c, STATUS_OK, s, "registered with the NVLink fabric (clique %u), healthy (health mask 0x%x)",
			  g->fabric_clique, g->fabric_health_mask);
	else
		check_add(c, STATUS_OK, s, "registered with the NVLink fabric (clique %u); this driver does not report "
					   "the fabric's health (R550 and newer do)",
			  g->fabric_clique);
}

static int run(struct check_ctx *c)
{
	const struct nvml_info *n = nvml_usable(c);
	size_t in_fabric = 0;
	for (size_t i = 0; n && i < n->n; i++)
		in_fabric += n->v[i].fabric_state > 0;
	if (n && in_fabric == 0) {
		check_add(c, STATUS_SKIP, "nvml", "not applicable: no GPU takes part in an NVLink fabric (NVML: fabric "
						  "information not supported, as on PCIe cards, NVLink bridges and GPUs "
						  "before Hopper)");
		return 0;
	}
	for (size_t i = 0; n && i < n->n; i++) {
		const struct nvml_gpu *g = &n->v[i];
		char buf[32];
		const char *s = nvml_subject(g, buf, sizeof(buf));
		if (g->fabric_state > 0) {
			one(c, g, s);
			continue;
		}
		/* the others are in a fabric: this one should be too */
		struct finding *f = check_add(c, STATUS_WARN, s, "reports no NVLink fabric registration (not "
								 "supported), while %zu other GPU%s of this node %s",
					      in_fabric, in_fabric == 1 ? "" : "s", in_fabric == 1 ? "does" : "do");
		hint(c, f, g);
	}
	return 0;
}

const struct check_def check_gpu_fabric = {
	.id = "gpu.fabric",
	.section = "NVML (live)",
	.summary = "live: every GPU in an NVLink fabric completed its registration without error, and the fabric "
		   "reports it healthy",
	.run = run,
	.needs = NEEDS_LIVE,
};
