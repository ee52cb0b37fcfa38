/* rdma.nccl_tuning: NCCL tuning variables left in the node's permanent
 * configuration do not cap collective bandwidth.
 *
 * Read the way NCCL reads them (NVIDIA/nccl; NCCL documentation,
 * Environment Variables):
 *   - NCCL_NVLS_ENABLE (src/transport/nvls.cc ncclNvlsInit: strtoll, 0 is
 *     off, default 2 = on where CUDA reports multicast): 0 on a node with
 *     NVSwitches and Hopper-or-later GPUs turns NVLink SHARP off (warn;
 *     sites set it as a stopgap when NVLS fails, which the fabric manager
 *     fixes). No NVSwitch on PCI but several GPUs (HGX B200, NVL racks
 *     keep theirs off the host's PCI): skip, not known from files.
 *   - NCCL_ALGO / NCCL_PROTO (src/graph/tuning.cc parseList, 2.24+):
 *     ';'-separated entries "[function:]element,element...", only the
 *     first without a function; '^' before an element list turns the
 *     listed elements off instead of on; names match case-insensitively.
 *     An unknown name fails communicator init (ncclInvalidUsage): fail.
 *     A collective left with no algorithm that applies to it (Broadcast
 *     and Reduce run only Ring; AllGather/ReduceScatter Ring, PAT, NVLS,
 *     CollNetDirect; AllReduce all but PAT) or no protocol fails at the
 *     call, "No algorithm/protocol available" (src/enqueue.cc): fail. Any
 *     other restriction overrides NCCL's tuner for every job: warn (the
 *     documentation discourages forcing them except to avoid a bug).
 *   - Channel caps (src/graph/connect.cc ncclMaxNchannels; src/init.cc
 *     NCCL_MAX_CTAS): NCCL_MAX_NCHANNELS (else the legacy NCCL_MAX_NRINGS;
 *     below 1 means 1) and NCCL_MAX_CTAS (0 or less ignored) cap the
 *     channels, 64 at most. A ring or tree channel sends through one NIC,
 *     so a cap below the NICs NCCL uses leaves NICs idle (warn); NVLS on
 *     Hopper runs 16 channels (src/transport/nvls.cc NVLS_NCHANNELS_SM90),
 *     clamped to NCCL_MAX_CTAS, so a lower NCCL_MAX_CTAS on an NVLS node
 *     is a warn too. Other caps are reported, not judged. */
#include "checks/check.h"
#include "common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define NFUNCS 5
#define MAXEL 7
#define NVLS_CHANNELS_SM90 16
#define NCCL_MAXCHANNELS 64

static const char *const funcs[NFUNCS] = { "Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce" };
static const char *const algos[] = { "Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT" };
static const char *const protos[] = { "LL", "LL128", "Simple" };

/* Which algorithms NCCL's tuner considers for each function (tuning.cc). */
static bool algo_applies(size_t f, size_t a)
{
	if (f <= 1) /* Broadcast, Reduce */
		return a == 1;
	if (f <= 3) /* AllGather, ReduceScatter: PAT, Ring, NVLS, CollNetDirect */
		return a == 6 || a == 1 || a == 4 || a == 2;
	return a != 6; /* AllReduce */
}

/* NCCL's parseList on a copy, with strtok_r as NCCL uses it: on[f][e] is
 * what remains enabled. Returns 0, or -EINVAL with the reason in why. */
static int parse_list(const char *str, const char *const *el, size_t nel, bool on[NFUNCS][MAXEL], char *why,
		      size_t wsize)
{
	char *full = xstrdup(str), *t1 = NULL;
	int ret = 0;
	for (char *tok = strtok_r(full, ";", &t1); tok && !ret; tok = strtok_r(NULL, ";", &t1)) {
		char *sub = xstrdup(tok), *t2 = NULL;
		char *prefix = strtok_r(sub, ":", &t2), *list = strtok_r(NULL, ":", &t2);
		if (!list && tok != full) {
			snprintf(why, wsize, "entry \"%s\" has no function prefix (only the first may omit it)", tok);
			ret = -EINVAL;
		} else if (!list && !prefix) {
			/* ":" alone: NCCL would read a NULL list (its parseList) */
			snprintf(why, wsize, "entry \"%s\" names nothing", tok);
			ret = -EINVAL;
		} else if (!list) {
			list = prefix;
			prefix = NULL;
		}
		bool set = !ret && list[0] != '^', found = false;
		if (!ret && !set)
			list++;
		for (size_t f = 0; f < NFUNCS && !ret; f++) {
			if (prefix && strcasecmp(prefix, funcs[f]))
				continue;
			found = true;
			for (size_t e = 0; e < nel; e++)
				on[f][e] = !set;
			char *els = xstrdup(list), *t3 = NULL;
			for (char *x = strtok_r(els, ",", &t3); x && !ret; x = strtok_r(NULL, ",", &t3)) {
				size_t e = 0;
				while (e < nel && strcasecmp(x, el[e]))
					e++;
				if (e == nel) {
					snprintf(why, wsize, "\"%s\" is not one of NCCL's names", x);
					ret = -EINVAL;
				} else {
					on[f][e] = set;
				}
			}
			free(els);
		}
		if (!ret && !found) {
			snprintf(why, wsize, "\"%s\" is not a collective (Broadcast, Reduce, AllGather, ReduceScatter, "
					     "AllReduce)",
				 prefix);
			ret = -EINVAL;
		}
		free(sub);
	}
	free(full);
	return ret;
}

/* Describes what on[][] turns off into off ("AllReduce: Tree, NVLS; ...",
 * or "Tree (every collective)" when it is the same for all) and the
 * collectives left without any element into dead. */
static void describe(const char *const *el, size_t nel, bool algo, bool on[NFUNCS][MAXEL], struct strbuf *off,
		     struct strbuf *dead)
{
	struct strbuf per[NFUNCS];
	bool same = true;
	for (size_t f = 0; f < NFUNCS; f++) {
		size_t left = 0;
		strbuf_init(&per[f]);
		for (size_t e = 0; e < nel; e++) {
			if (algo && !algo_applies(f, e))
				continue;
			if (on[f][e])
				left++;
			else
				strbuf_addf(&per[f], "%s%s", per[f].len ? ", " : "", el[e]);
		}
		if (left == 0)
			strbuf_addf(dead, "%s%s", dead->len ? ", " : "", funcs[f]);
		same &= !algo && !strcmp(per[f].len ? per[f].buf : "", per[0].len ? per[0].buf : "");
	}
	if (same && per[0].len)
		strbuf_addf(off, "%s (every collective)", per[0].buf);
	for (size_t f = 0; f < NFUNCS; f++) {
		if (!same && per[f].len)
			strbuf_addf(off, "%s%s: %s", off->len ? "; " : "", funcs[f], per[f].buf);
		strbuf_release(&per[f]);
	}
}

static void list_var(struct check_ctx *c, const char *name, const char *const *el, size_t nel, bool algo,
		     const struct nccl_node *n)
{
	const struct nccl_var *v = nccl_get(&c->inv->nccl, name);
	bool on[NFUNCS][MAXEL];
	char why[256], place[256];
	struct strbuf off = STRBUF_INIT, dead = STRBUF_INIT;
	struct finding *f;
	if (!v || nccl_skip_computed(c, v))
		return;
	for (size_t i = 0; i < NFUNCS; i++)
		for (size_t e = 0; e < MAXEL; e++)
			on[i][e] = true;
	nccl_var_place(v, place, sizeof(place));
	if (parse_list(v->value, el, nel, on, why, sizeof(why)) < 0) {
		f = check_add(c, STATUS_FAIL, name, "=%s (%s): %s, so NCCL 2.24 and later refuse it and communicator init "
						    "fails (ncclInvalidUsage)",
			      v->value, v->source, why);
		finding_hint(f, "remove %s from %s, or use NCCL's names: %s", name, place,
			     algo ? "Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT" : "LL, LL128, Simple");
		return;
	}
	describe(el, nel, algo, on, &off, &dead);
	if (dead.len) {
		f = check_add(c, STATUS_FAIL, name, "=%s (%s) leaves %s without any %s it can run: those calls fail "
						    "(\"No algorithm/protocol available\", ncclInvalidUsage)",
			      v->value, v->source, dead.buf, algo ? "algorithm" : "protocol");
		finding_hint(f, "remove %s from %s; NCCL chooses per call when it is unset", name, place);
	} else if (off.len) {
		bool nvls = algo && n->nvls && !on[4][4];
		f = check_add(c, STATUS_WARN, name, "=%s (%s) turns off %s for every job on this node%s, overriding NCCL's "
						    "tuner (bandwidth and latency below what NCCL would choose)",
			      v->value, v->source, off.buf,
			      nvls ? "; all-reduce does not use NVLink SHARP (NVLS) of this node's NVSwitches" : "");
		finding_hint(f, "remove %s from %s and set it per job only while debugging (NCCL's documentation "
				"discourages forcing it except to avoid a suspected NCCL bug)",
			     name, place);
	} else {
		check_add(c, STATUS_OK, name, "=%s (%s) turns nothing off", v->value, v->source);
	}
	strbuf_release(&off);
	strbuf_release(&dead);
}

static void nvls_enable(struct check_ctx *c, const struct nccl_node *n)
{
	const struct nccl_var *v = nccl_get(&c->inv->nccl, "NCCL_NVLS_ENABLE");
	long long x;
	char place[256];
	if (!v || nccl_skip_computed(c, v))
		return;
	if (nccl_param_int(v->value, &x, NULL) < 0 || x != 0) {
		check_add(c, STATUS_OK, v->name, "=%s (%s): NVLS on where the hardware has it", v->value, v->source);
	} else if (n->nvls) {
		struct finding *f = check_add(c, STATUS_WARN, v->name, "=%s (%s) turns off NVLink SHARP (NVLS) of this "
								       "node's %zu NVSwitches (%s...): all-reduce, "
								       "all-gather and reduce-scatter among its %zu GPUs "
								       "run without the switches' multicast and reduction",
					      v->value, v->source, n->nvswitches, n->nvswitch_bdf, n->gpus);
		finding_hint(f, "remove %s from %s; if it was set because NVLS failed (errors in transport/nvls.cc), "
				"restart the fabric manager with the GPUs idle: `systemctl restart nvidia-fabricmanager`",
			     v->name, nccl_var_place(v, place, sizeof(place)));
	} else if (!n->nvswitches && n->gpus + n->unidentified > 1 && !n->nvlink) {
		check_add(c, STATUS_SKIP, v->name, "=%s (%s): no NVSwitch on PCI, so whether this node has NVLS (HGX B200 "
						   "and NVL racks keep their NVSwitches off the host's PCI) is not known "
						   "from files",
			  v->value, v->source);
	} else {
		check_add(c, STATUS_OK, v->name, "=%s (%s): no effect, this node has no NVLink SHARP (NVSwitches of the "
						 "Hopper generation or later)",
			  v->value, v->source);
	}
}

/* The channel cap NCCL applies, from NCCL_MAX_NCHANNELS (else
 * NCCL_MAX_NRINGS) and NCCL_MAX_CTAS; *by names what sets it. 64 when
 * nothing caps, -1 when a value is computed at login. */
static long long channel_cap(const struct inventory *inv, const struct nccl_var **by, long long *ctas)
{
	const struct nccl_var *mn = nccl_get(&inv->nccl, "NCCL_MAX_NCHANNELS");
	const struct nccl_var *mr = nccl_get(&inv->nccl, "NCCL_MAX_NRINGS");
	const struct nccl_var *mc = nccl_get(&inv->nccl, "NCCL_MAX_CTAS");
	const struct nccl_var *ch = mn ? mn : mr;
	long long cap = NCCL_MAXCHANNELS, x;
	*by = NULL;
	*ctas = NCCL_MAXCHANNELS;
	if ((ch && ch->computed) || (mc && mc->computed))
		return -1;
	if (ch && nccl_param_int(ch->value, &x, NULL) == 0 && x < cap) {
		cap = x < 1 ? 1 : x;
		*by = ch;
	}
	if (mc && nccl_param_int(mc->value, &x, NULL) == 0 && x > 0 && x < NCCL_MAXCHANNELS) {
		*ctas = x;
		if (x < cap) {
			cap = x;
			*by = mc;
		}
	}
	return cap;
}

static void channels(struct check_ctx *c, const struct nccl_node *n)
{
	const struct nccl_var *by = NULL, *mc = nccl_get(&c->inv->nccl, "NCCL_MAX_CTAS");
	long long ctas, cap = channel_cap(c->inv, &by, &ctas);
	size_t nics = nccl_port_count(c->inv);
	char place[256];
	struct finding *f;
	if (cap < 0) {
		nccl_skip_computed(c, nccl_get(&c->inv->nccl, "NCCL_MAX_NCHANNELS"));
		nccl_skip_computed(c, nccl_get(&c->inv->nccl, "NCCL_MAX_NRINGS"));
		nccl_skip_computed(c, mc);
		return;
	}
	if (!by)
		return; /* nothing caps below NCCL's own limit */
	nccl_var_place(by, place, sizeof(place));
	if ((size_t)cap < nics) {
		f = check_add(c, STATUS_WARN, by->name, "=%s (%s) caps NCCL at %lld channel%s, fewer than the %zu RDMA "
							"ports NCCL uses: a channel sends through one NIC, so %zu NIC%s "
							"carry no ring or tree traffic",
			      by->value, by->source, cap, cap == 1 ? "" : "s", nics, nics - (size_t)cap,
			      nics - (size_t)cap == 1 ? "" : "s");
		finding_hint(f, "remove %s from %s (NCCL chooses up to 64 channels from the topology)", by->name, place);
	} else if (n->nvls && mc && ctas < NVLS_CHANNELS_SM90) {
		f = check_add(c, STATUS_WARN, mc->name, "=%s (%s) clamps NVLink SHARP to %lld channels; NCCL runs %d on "
							"Hopper NVSwitch nodes",
			      mc->value, mc->source, ctas, NVLS_CHANNELS_SM90);
		finding_hint(f, "remove %s from %s", mc->name, nccl_var_place(mc, place, sizeof(place)));
	} else {
		check_add(c, STATUS_OK, by->name, "=%s (%s) caps NCCL at %lld channels (NCCL's limit 64), not fewer than "
						  "the %zu RDMA ports it uses",
			  by->value, by->source, cap, nics);
	}
}

static int run(struct check_ctx *c)
{
	struct nccl_node n;
	nccl_node_get(c->inv, &n);
	size_t before = c->report->n;
	nvls_enable(c, &n);
	list_var(c, "NCCL_ALGO", algos, ARRAY_SIZE(algos), true, &n);
	list_var(c, "NCCL_PROTO", protos, ARRAY_SIZE(protos), false, &n);
	channels(c, &n);
	if (c->report->n == before)
		check_add(c, STATUS_OK, SUBJECT_NODE, "no NVLS, algorithm, protocol or channel override: NCCL tunes each "
						      "call itself");
	return 0;
}

const struct check_def check_rdma_nccl_tuning = {
	.id = "rdma.nccl_tuning",
	.section = "NCCL Configuration",
	.summary = "NCCL_NVLS_ENABLE, NCCL_ALGO, NCCL_PROTO and channel caps do not cap bandwidth for every job",
	.run = run,
	.nccl_vars = true,
};
