/* The facts that should agree across the nodes of one hardware shape, from
 * the inventory (docs/cluster.md lists every key).
 *
 * Each fact is "key=value"; a fact with several values on one node (the
 * firmware of eight NICs of one model, the MTUs of their ports) is the
 * sorted set of its distinct values joined by ",", so two nodes agree when
 * their sets do, whatever their devices are named. Per-device facts are
 * keyed by the device's model, never its name: mlx5_3 on one node is not
 * the same NIC as mlx5_3 on the next. A NIC's model is the checks' name
 * for it (rdma_dev_model: "ConnectX-7", else its HCA type or PCI IDs). What the inventory could not read is
 * left out (the node then votes FACT_ABSENT), never guessed; live-only
 * facts (CUDA's version through NVML, PyTorch's NCCL) are absent from a
 * recorded tree. */
#include "cluster/cluster.h"
#include "checks/rdma/common.h"
#include "core/cleanup.h"
#include "core/strbuf.h"
#include "inventory/inventory.h"
#include "inventory/copy_bw.h"
#include "inventory/topo.h"

#include <arpa/inet.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Values are one line of printable text: control bytes and a '=' in a key
 * would break "key=value" and the text table. */
static char *clean(const char *s, bool key)
{
	char *c = xstrdup(s);
	for (char *p = c; *p; p++) {
		bool ctl = (unsigned char)*p < 0x20 || *p == 0x7f;
		if (key && (ctl || *p == '=' || *p == ' ' || *p == ','))
			*p = '_';
		else if (ctl)
			*p = '?';
	}
	return c;
}

/* Collects (key, value) pairs as "key\nvalue"; facts_finish joins them. */
static void add(struct strv *pairs, const char *key, const char *value)
{
	if (!value || !*value)
		return;
	_cleanup_free_ char *k = clean(key, true), *v = clean(value, false);
	strv_push(pairs, xasprintf("%s\n%s", k, v));
}

static void addf(struct strv *pairs, const char *key, const char *fmt, long long v)
{
	char buf[32];
	snprintf(buf, sizeof(buf), fmt, v);
	add(pairs, key, buf);
}

static void kernel_facts(const struct inventory *inv, struct strv *pairs)
{
	add(pairs, "kernel.release", inv->kernel.release);
	add(pairs, "kernel.arch", inv->kernel.arch);
}

/* GPUs: model and count (the shape), PCIe width and maximum speed (not the
 * current speed: an idle GPU trains its link down to save power). */
static void gpu_facts(const struct inventory *inv, struct strv *pairs)
{
	long long count = 0;
	for (size_t i = 0; i < inv->pci.n; i++) {
		const struct pci_dev *p = &inv->pci.v[i];
		if (!pci_is_nvidia_gpu(p) || p->is_vf)
			continue;
		count++;
		const char *model = NULL;
		for (size_t g = 0; g < inv->nvidia.n_gpus; g++)
			if (inv->nvidia.gpus[g].bdf && !strcasecmp(inv->nvidia.gpus[g].bdf, p->bdf))
				model = inv->nvidia.gpus[g].model;
		char ids[16];
		snprintf(ids, sizeof(ids), "%04x:%04x", p->vendor, p->device);
		add(pairs, "gpu.model", model ? model : ids);
		add(pairs, "gpu.ids", ids);
		if (p->cur_width > 0)
			addf(pairs, "gpu.pcie.width", "x%lld", p->cur_width);
		if (p->max_speed > 0) {
			char sp[32];
			snprintf(sp, sizeof(sp), "%gGT/s", p->max_speed);
			add(pairs, "gpu.pcie.max_speed", sp);
		}
	}
	if (!inv->pci.err)
		addf(pairs, "gpu.count", "%lld", count);
}

static void nvidia_facts(const struct inventory *inv, struct strv *pairs)
{
	const struct nvidia_info *n = &inv->nvidia;
	add(pairs, "nvidia.driver", n->version);
	if (n->flavour_proc != NV_FLAVOUR_UNKNOWN)
		add(pairs, "nvidia.flavour", n->flavour_proc == NV_FLAVOUR_OPEN ? "open" : "proprietary");
	add(pairs, "nvidia.fabricmanager", inv->fabric.fm_pkg_version);
	char v[32];
	if (inv->nvml && inv->nvml->loaded && inv->nvml->cuda_driver_version > 0) {
		cuda_version_string(inv->nvml->cuda_driver_version, v, sizeof(v));
		add(pairs, "cuda.driver", v);
	} else if (inv->cuda && inv->cuda->driver_version > 0) {
		cuda_version_string(inv->cuda->driver_version, v, sizeof(v));
		add(pairs, "cuda.driver", v);
	}
	if (inv->torch && inv->torch->ok)
		add(pairs, "nccl.version", inv->torch->nccl_version);
}

/* check --bench's copy bandwidth (gpu.copy_bandwidth), live only: the set
 * of bands each GPU's slower host copy falls in, as a share of its PCIe
 * link's expected figure, so that the nodes of one shape agree on "75%+"
 * and a slow slot's node votes apart. A GPU whose copy changed the data
 * is "data check failed"; one that could not be measured,
 * or a run that measured nothing on a node with NVIDIA GPUs, is "not
 * measured", and a figure with no known limit "no PCIe limit known": the
 * node then votes apart from measured ones too, never with them. The
 * bands carry no reason (it differs from node to node and would split the
 * vote); the node's gpu.copy_bandwidth finding says it. */
static const char *copy_band(const struct copy_bw_gpu *g)
{
	if (g->bad_data)
		return "data check failed";
	if (g->err[0] || isnan(g->h2d) || isnan(g->d2h))
		return "not measured";
	if (!(g->expected > 0))
		return "no PCIe limit known";
	double share = (g->h2d < g->d2h ? g->h2d : g->d2h) / g->expected;
	return share >= 0.75 ? "75%+ of PCIe limit" : share >= 0.5 ? "50-75% of PCIe limit" : "<50% of PCIe limit";
}

static void copy_facts(const struct inventory *inv, struct strv *pairs)
{
	const struct copy_bw_info *bw = inv->copy_bw;
	if (!bw)
		return;
	if (bw->error) {
		/* as the check: nothing to measure without an NVIDIA GPU on PCI */
		for (size_t i = 0; i < inv->pci.n; i++)
			if (topo_is_gpu(inv, &inv->pci.v[i])) {
				add(pairs, "gpu.copy_bandwidth", "not measured");
				break;
			}
		return;
	}
	for (size_t i = 0; i < bw->n; i++)
		add(pairs, "gpu.copy_bandwidth", copy_band(&bw->v[i]));
}

/* The lowest GID index of a RoCE port that holds RoCE v2 with an IPv4
 * address (::ffff:a.b.c.d), the one NCCL_IB_GID_INDEX usually names; -1
 * none. */
static int roce_v2_ipv4_index(const struct rdma_port *p)
{
	int best = -1;
	for (size_t g = 0; g < p->n_gids; g++) {
		const struct rdma_gid *gid = &p->gids[g];
		if (!gid->parsed || !gid->type || strcmp(gid->type, "RoCE v2") || !IN6_IS_ADDR_V4MAPPED(&gid->addr))
			continue;
		if (best < 0 || gid->index < (unsigned)best)
			best = (int)gid->index;
	}
	return best;
}

static void port_facts(const struct inventory *inv, const char *model, const struct rdma_port *p,
		       struct strv *pairs)
{
	_cleanup_free_ char *rate = xasprintf("rdma.rate.%s", model), *mtu = xasprintf("rdma.mtu.%s", model),
			    *ll = xasprintf("rdma.link_layer.%s", model);
	if (p->rate_gbps > 0)
		addf(pairs, rate, "%lld", (long long)p->rate_gbps);
	add(pairs, ll, p->link_layer);
	const struct netdev *nd = p->netdev ? net_find(&inv->net, p->netdev) : NULL;
	if (nd && nd->mtu > 0)
		addf(pairs, mtu, "%lld", nd->mtu);
	if (p->verbs_ok && p->active_mtu > 0) {
		_cleanup_free_ char *am = xasprintf("rdma.active_mtu.%s", model);
		addf(pairs, am, "%lld", p->active_mtu);
	}
	if (p->link_layer && !strcmp(p->link_layer, "Ethernet")) {
		/* only where the port's rdma_cm configfs entry was read: without
		 * one the kernel default applies, or the tree did not record it */
		if (!p->roce_tos_err)
			addf(pairs, "rdma.roce_tos", "%lld", p->roce_tos);
		int gi = roce_v2_ipv4_index(p);
		if (gi >= 0)
			addf(pairs, "rdma.roce_v2_ipv4_gid_index", "%lld", gi);
	}
}

/* NICs: models (the shape), count, firmware per model, and their ports. */
static void rdma_facts(const struct inventory *inv, struct strv *pairs)
{
	if (!(inv->parts & INV_RDMA) || inv->rdma.err)
		return;
	_cleanup_(strv_freep) struct strv models = STRV_INIT;
	for (size_t i = 0; i < inv->rdma.n; i++) {
		const struct rdma_dev *d = &inv->rdma.v[i];
		const struct pci_dev *p = d->pci_bdf ? pci_find(&inv->pci, d->pci_bdf) : NULL;
		/* an SR-IOV virtual function comes and goes with the workload
		 * (Kubernetes' SR-IOV device plugin): not part of the node's shape */
		if (p && p->is_vf)
			continue;
		const char *model = rdma_dev_model(inv, d);
		add(pairs, "nic.models", model);
		strv_add(&models, model);
		_cleanup_free_ char *fw = xasprintf("nic.fw.%s", model), *width = xasprintf("nic.pcie.width.%s", model);
		add(pairs, fw, d->fw_ver);
		if (p && p->cur_width > 0)
			addf(pairs, width, "x%lld", p->cur_width);
		for (size_t k = 0; k < d->n_ports; k++)
			port_facts(inv, model, &d->ports[k], pairs);
	}
	strv_sort(&models);
	for (size_t i = 0, j; i < models.n; i = j) {
		for (j = i; j < models.n && !strcmp(models.v[j], models.v[i]); j++)
			;
		_cleanup_free_ char *key = xasprintf("nic.count.%s", models.v[i]);
		addf(pairs, key, "%lld", (long long)(j - i));
	}
}

static bool is_prefixed(const char *name, const char *const *prefixes)
{
	for (size_t i = 0; prefixes[i]; i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

static bool is_listed(const char *name, const char *const *names)
{
	for (size_t i = 0; names[i]; i++)
		if (!strcmp(name, names[i]))
			return true;
	return false;
}

/* Loaded modules of the RDMA stack and of the NVIDIA driver, from
 * /proc/modules (absent when it could not be read). */
static void module_facts(const struct inventory *inv, struct strv *pairs)
{
	static const char *const rdma[] = { "ib_", "rdma_", "mlx4", "mlx5", "iw_", "irdma", "bnxt_re", "efa", NULL };
	/* nvidia_uvm, nvidia_drm and nvidia_modeset load on first use
	 * (nvidia-modprobe), so a node fresh from boot would differ: only the
	 * modules that must be loaded before a job are compared */
	static const char *const nv[] = { "nvidia", "nvidia_peermem", "nv_peer_mem", "gdrdrv", NULL };
	const struct modules_info *m = &inv->modules;
	if (m->proc_err)
		return;
	for (size_t i = 0; i < m->loaded.n; i++) {
		if (is_prefixed(m->loaded.v[i], rdma))
			add(pairs, "modules.rdma", m->loaded.v[i]);
		if (is_listed(m->loaded.v[i], nv))
			add(pairs, "modules.nvidia", m->loaded.v[i]);
	}
}

/* The effective NCCL_* values, wherever they are set (nccl_var.source). */
static void nccl_facts(const struct inventory *inv, struct strv *pairs)
{
	for (size_t i = 0; i < inv->nccl.n; i++) {
		const struct nccl_var *v = &inv->nccl.v[i];
		_cleanup_free_ char *key = xasprintf("nccl_var.%s", v->name);
		add(pairs, key, v->value);
	}
}

/* Joins the sorted pairs into "key=v1,v2" with distinct values. */
static void facts_finish(struct strv *pairs, struct strv *out)
{
	strv_sort(pairs);
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < pairs->n;) {
		const char *nl = strchr(pairs->v[i], '\n');
		size_t klen = (size_t)(nl - pairs->v[i]);
		strbuf_reset(&sb);
		strbuf_add(&sb, pairs->v[i], klen);
		strbuf_addch(&sb, '=');
		const char *last = NULL;
		for (; i < pairs->n && !strncmp(pairs->v[i], sb.buf, klen) && pairs->v[i][klen] == '\n'; i++) {
			const char *val = pairs->v[i] + klen + 1;
			if (last && !strcmp(last, val))
				continue;
			if (last)
				strbuf_addch(&sb, ',');
			strbuf_adds(&sb, val);
			last = val;
		}
		strv_add(out, sb.buf);
	}
	strv_sort(out); /* "a.b.c=" sorts before "a.b=" */
}

void facts_collect(const struct inventory *inv, struct strv *out)
{
	_cleanup_(strv_freep) struct strv pairs = STRV_INIT;
	kernel_facts(inv, &pairs);
	gpu_facts(inv, &pairs);
	nvidia_facts(inv, &pairs);
	copy_facts(inv, &pairs);
	rdma_facts(inv, &pairs);
	module_facts(inv, &pairs);
	nccl_facts(inv, &pairs);
	facts_finish(&pairs, out);
}

const char *facts_get(const struct strv *facts, const char *key)
{
	size_t klen = strlen(key), lo = 0, hi = facts->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strncmp(facts->v[mid], key, klen);
		if (!c && facts->v[mid][klen] == '=')
			return facts->v[mid] + klen + 1;
		if (!c)
			c = (unsigned char)facts->v[mid][klen] - '=';
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

char *facts_shape(const struct strv *facts)
{
	/* the GPUs' PCI IDs, not their count or the driver's model names: a
	 * node that lost a GPU, or whose driver did not name one, stays in its
	 * group, where the vote on gpu.count and gpu.model finds it */
	const char *ids = facts_get(facts, "gpu.ids"), *nics = facts_get(facts, "nic.models");
	_cleanup_free_ char *gpus = ids ? xasprintf("GPU %s", ids) : xstrdup("no GPU");
	return xasprintf("%s / %s", gpus, nics ? nics : "no RDMA NIC");
}
