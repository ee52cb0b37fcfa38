/* gpu.power_clocks: no GPU runs below its default power limit or default
 * application clocks (live only; F16).
 *
 * A power limit lowered with `nvidia-smi -pl` or application clocks
 * lowered with `nvidia-smi -ac` (power-capping experiments, a facility
 * limit never reset) make a node slower than its peers in every
 * collective, with no error: the whole job waits for it. NVML
 * (NVIDIA's NVML API reference): nvmlDeviceGetEnforcedPowerLimit (what
 * the GPU obeys: the lowest of the limit set through NVML and any other,
 * such as an out-of-band cap from the BMC), nvmlDeviceGetPowerManagementLimit
 * (the limit set through NVML, `nvidia-smi -pl`),
 * nvmlDeviceGetPowerManagementDefaultLimit (the board's default), all in
 * milliwatts; nvmlDeviceGetApplicationsClock against
 * nvmlDeviceGetDefaultApplicationsClock for graphics and memory, in MHz.
 *
 * Application clocks are judged against their default, not the maximum
 * clock (Azure/azurehpc-health-checks azure_gpu_app_clocks.nhc compares
 * with the maximum): on some GPUs the default application clock is below
 * the maximum by design, and that is not a fault. A limit raised above
 * the default is not judged. What NVML does not report (application
 * clocks are not supported on every GPU) is left out of the verdict and
 * said in the OK message; a GPU that reports neither is a skip. */
#include "checks/check.h"
#include "core/strbuf.h"
#include "common.h"

#include <stdio.h>

/* Differences smaller than these are not a lowered setting. */
#define POWER_SLACK_MW 1000
#define CLOCK_SLACK_MHZ 1

static double pct_below(long long have, long long want)
{
	return want > 0 ? 100.0 * (double)(want - have) / (double)want : 0;
}

/* The power part: a warning added to msg/hint, or what was seen in ok. */
static bool power(const struct nvml_gpu *g, struct strbuf *msg, struct strbuf *hint, struct strbuf *ok)
{
	long long def = g->power_default_mw, set = g->power_limit_mw;
	long long enf = g->power_enforced_mw != GPU_UNKNOWN ? g->power_enforced_mw : set;
	if (def <= 0 || enf == GPU_UNKNOWN) {
		strbuf_addf(ok, "%spower limit not reported", ok->len ? ", " : "");
		return false;
	}
	if (enf + POWER_SLACK_MW > def) {
		strbuf_addf(ok, "%spower limit %lld W (default %lld W)", ok->len ? ", " : "", enf / 1000, def / 1000);
		return false;
	}
	strbuf_addf(msg, "%spower limit %lld W, %.0f%% below the default %lld W", msg->len ? "; " : "", enf / 1000,
		    pct_below(enf, def), def / 1000);
	if (set != GPU_UNKNOWN && set + POWER_SLACK_MW > def) {
		/* the NVML limit is the default: the cap comes from elsewhere */
		strbuf_addf(msg, " (the limit set through NVML is %lld W: the cap comes from outside the driver, e.g. "
				 "the BMC's power capping)",
			    set / 1000);
		strbuf_addf(hint, "%s`nvidia-smi -q -d POWER -i %u` shows the limits; lift the cap where it is set (the "
				  "BMC's power policy)",
			    hint->len ? "; " : "", g->index);
	} else {
		strbuf_addf(hint, "%s`nvidia-smi -i %u -pl %lld` restores the default limit", hint->len ? "; " : "",
			    g->index, def / 1000);
	}
	return true;
}

/* One clock domain's application clock against its default. */
static bool clock(const char *domain, int app, int def, int max, struct strbuf *msg, struct strbuf *ok)
{
	if (app == GPU_UNKNOWN || def <= 0)
		return false;
	if (app + CLOCK_SLACK_MHZ > def) {
		strbuf_addf(ok, "%s%s application clock %d MHz", ok->len ? ", " : "", domain, app);
		return false;
	}
	strbuf_addf(msg, "%s%s application clock %d MHz, %.0f%% below the default %d MHz", msg->len ? "; " : "",
		    domain, app, pct_below(app, def), def);
	if (max > 0)
		strbuf_addf(msg, " (maximum %d MHz)", max);
	return true;
}

static void one(struct check_ctx *c, const struct nvml_gpu *g)
{
	_cleanup_strbuf_ struct strbuf msg = STRBUF_INIT, hint = STRBUF_INIT, ok = STRBUF_INIT;
	char buf[32];
	const char *s = nvml_subject(g, buf, sizeof(buf));
	bool low = power(g, &msg, &hint, &ok);
	bool clocks_low = clock("graphics", g->app_clock_gr, g->app_default_gr, g->max_clock_gr, &msg, &ok);
	clocks_low |= clock("memory", g->app_clock_mem, g->app_default_mem, g->max_clock_mem, &msg, &ok);
	if (clocks_low)
		strbuf_addf(&hint, "%s`nvidia-smi -i %u -rac` resets the application clocks", hint.len ? "; " : "",
			    g->index);
	if (low || clocks_low) {
		struct finding *f = check_add(c, STATUS_WARN, s, "%s: the node is slower than its peers in every "
								 "collective",
					      msg.buf);
		finding_hint(f, "%s", hint.buf);
		return;
	}
	bool any_clock = g->app_clock_gr != GPU_UNKNOWN || g->app_clock_mem != GPU_UNKNOWN;
	if (g->power_default_mw <= 0 && !any_clock) {
		check_add(c, STATUS_SKIP, s, "NVML reports neither the power limits nor the application clocks of this GPU");
		return;
	}
	check_add(c, STATUS_OK, s, "%s%s", ok.buf, any_clock ? "" : ", application clocks not reported");
}

static int run(struct check_ctx *c)
{
	const struct nvml_info *n = nvml_usable(c);
	for (size_t i = 0; n && i < n->n; i++)
		one(c, &n->v[i]);
	return 0;
}

const struct check_def check_gpu_power_clocks = {
	.id = "gpu.power_clocks",
	.section = "NVML (live)",
	.summary = "live: no GPU's power limit or application clocks are set below their defaults",
	.run = run,
	.needs = NEEDS_LIVE,
};
