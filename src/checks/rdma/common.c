/* RDMA/NCCL policy helpers; see common.h. */
#include "common.h"
#include "checks/check.h"
#include "checks/gpu/common.h"
#include "core/cleanup.h"
#include "core/parse.h"
#include "core/readers.h"
#include "core/strbuf.h"

#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const struct {
	uint32_t id;
	const char *name;
	enum rdma_provider prov;
} nic_models[] = {
	/* pci.ids; rdma-core providers/mlx4, providers/mlx5 */
	{ 0x1003, "ConnectX-3", PROVIDER_MLX4 },
	{ 0x1004, "ConnectX-3 VF", PROVIDER_MLX4 },
	{ 0x1007, "ConnectX-3 Pro", PROVIDER_MLX4 },
	{ 0x1011, "Connect-IB", PROVIDER_MLX5 },
	{ 0x1013, "ConnectX-4", PROVIDER_MLX5 },
	{ 0x1014, "ConnectX-4 VF", PROVIDER_MLX5 },
	{ 0x1015, "ConnectX-4 Lx", PROVIDER_MLX5 },
	{ 0x1016, "ConnectX-4 Lx VF", PROVIDER_MLX5 },
	{ 0x1017, "ConnectX-5", PROVIDER_MLX5 },
	{ 0x1018, "ConnectX-5 VF", PROVIDER_MLX5 },
	{ 0x1019, "ConnectX-5 Ex", PROVIDER_MLX5 },
	{ 0x101a, "ConnectX-5 Ex VF", PROVIDER_MLX5 },
	{ 0x101b, "ConnectX-6", PROVIDER_MLX5 },
	{ 0x101c, "ConnectX-6 VF", PROVIDER_MLX5 },
	{ 0x101d, "ConnectX-6 Dx", PROVIDER_MLX5 },
	{ 0x101e, "ConnectX VF", PROVIDER_MLX5 },
	{ 0x101f, "ConnectX-6 Lx", PROVIDER_MLX5 },
	{ 0x1021, "ConnectX-7", PROVIDER_MLX5 },
	{ 0x1023, "ConnectX-8", PROVIDER_MLX5 },
	{ 0x1025, "ConnectX-9", PROVIDER_MLX5 },
	{ 0xa2d2, "BlueField", PROVIDER_MLX5 },
	{ 0xa2d6, "BlueField-2", PROVIDER_MLX5 },
	{ 0xa2dc, "BlueField-3", PROVIDER_MLX5 },
	{ 0xa2df, "BlueField-4", PROVIDER_MLX5 },
};

const char *nic_model_name(uint32_t device)
{
	for (size_t i = 0; i < ARRAY_SIZE(nic_models); i++)
		if (nic_models[i].id == device)
			return nic_models[i].name;
	return NULL;
}

enum rdma_provider nic_provider(uint32_t device)
{
	for (size_t i = 0; i < ARRAY_SIZE(nic_models); i++)
		if (nic_models[i].id == device)
			return nic_models[i].prov;
	return PROVIDER_NONE;
}

const char *rdma_dev_model(const struct inventory *inv, const struct rdma_dev *d)
{
	const struct pci_dev *p = pci_find(&inv->pci, d->pci_bdf);
	if (p && p->nvswitch_mgmt)
		return NVSWITCH_MGMT_MODEL;
	if (p && p->ids_err == 0 && p->vendor == VENDOR_MELLANOX && nic_model_name(p->device))
		return nic_model_name(p->device);
	if (d->hca_type)
		return d->hca_type;
	if (p && p->ids_err == 0 && p->vendor == VENDOR_MELLANOX)
		return "Mellanox device";
	return "RDMA device";
}

bool port_is_roce(const struct rdma_port *p)
{
	return p->link_layer && !strcmp(p->link_layer, "Ethernet");
}

bool port_is_ib(const struct rdma_port *p)
{
	return p->link_layer && !strcmp(p->link_layer, "InfiniBand");
}

bool port_link_unknown(const struct rdma_port *p)
{
	return !p->link_layer;
}

bool port_link_known(struct check_ctx *c, const struct rdma_dev *d, const struct rdma_port *p, const char *what)
{
	if (!port_link_unknown(p))
		return true;
	char lbl[96];
	struct finding *f = check_add(c, STATUS_WARN, port_label(d, p, lbl, sizeof(lbl)),
				      "link layer unknown (/sys/class/infiniband/%s/ports/%u/link_layer: %s): cannot "
				      "tell whether %s applies",
				      d->name, p->num, read_strerror(p->link_layer_err), what);
	finding_hint(f, "`cat /sys/class/infiniband/%s/ports/%u/link_layer` must print Ethernet or InfiniBand "
			"(`rdma link show %s/%u`); if it cannot be read, run gpuready as root",
		     d->name, p->num, d->name, p->num);
	return false;
}

bool rdma_dev_nvswitch_mgmt(const struct inventory *inv, const struct rdma_dev *d)
{
	return pci_bdf_nvswitch_mgmt(&inv->pci, d->pci_bdf);
}

bool port_active(const struct rdma_port *p)
{
	return p->state == PORT_ACTIVE;
}

const char *port_label(const struct rdma_dev *d, const struct rdma_port *p, char *buf, size_t size)
{
	snprintf(buf, size, "%s/%u", d->name, p->num);
	return buf;
}

void roce_ports_each(struct check_ctx *c, bool active_only, const char *what, const char *no_roce,
		     void (*judge)(struct check_ctx *c, const struct rdma_dev *d, const struct rdma_port *p,
				   const char *lbl, void *ud),
		     void *ud)
{
	size_t roce = 0;
	char lbl[96];
	const struct rdma_dev *d;
	const struct rdma_port *p;
	for_each_rdma_port(&c->inv->rdma, d, p) {
		if (!port_link_known(c, d, p, what)) {
			roce++;
			continue;
		}
		if (!port_is_roce(p))
			continue;
		roce++;
		port_label(d, p, lbl, sizeof(lbl));
		if (active_only && p->state < 0)
			check_add(c, STATUS_SKIP, lbl, "/sys/class/infiniband/%s/ports/%u/state unreadable: whether the port "
							"is active is unknown, so %s is not judged",
				  d->name, p->num, what);
		else if (active_only && !port_active(p))
			check_add(c, STATUS_SKIP, lbl, "port not active");
		else
			judge(c, d, p, lbl, ud);
	}
	if (roce == 0)
		check_add(c, STATUS_SKIP, SUBJECT_NODE, "no RoCE ports (%s)", no_roce);
}

void roce_port_netdevs(struct check_ctx *c, const char *lbl, const struct rdma_port *p, const char *what,
		       void (*judge)(struct check_ctx *c, const char *subject, const struct netdev *nd, void *ud),
		       void *ud)
{
	const struct net_info *ni = &c->inv->net;
	const struct netdev *nd = p->netdev ? net_find(ni, p->netdev) : NULL;
	if (!nd) {
		check_add(c, STATUS_SKIP, lbl, "no netdev found for this RoCE port: its %s settings cannot be read", what);
		return;
	}
	const struct bond *b = bond_find(ni, nd->name);
	if (!b) {
		judge(c, lbl, nd, ud);
		return;
	}
	for (size_t i = 0; i < b->n_slaves; i++) {
		const struct netdev *s = net_find(ni, b->slaves[i].name);
		char subject[160];
		snprintf(subject, sizeof(subject), "%s %s", lbl, b->slaves[i].name);
		if (s)
			judge(c, subject, s, ud);
		else
			check_add(c, STATUS_SKIP, subject, "slave of %s not found under /sys/class/net", b->name);
	}
	if (b->n_slaves == 0)
		check_add(c, STATUS_SKIP, lbl, "its netdev %s is a bond without slaves: no port to read %s from", b->name,
			  what);
}

int roce_dscp_prio(const struct inventory *inv, const char *ifname, int dscp, bool *from_map)
{
	const struct dcb_port *dp = inv->net.dcb.known ? dcb_find(&inv->net.dcb, ifname) : NULL;
	bool mapped = dp && dp->err == 0 && dscp >= 0 && dscp < 64 && (dp->dscp_set & (UINT64_C(1) << dscp));
	if (from_map)
		*from_map = mapped;
	return mapped ? dp->dscp_prio[dscp] : dscp >> 3;
}

int roce_active_mtu(int64_t netdev_mtu)
{
	int64_t m = netdev_mtu - 96;
	for (int mtu = 4096; mtu >= 256; mtu /= 2)
		if (m >= mtu)
			return mtu;
	return 0;
}

/* The IPv4 address of an IPv4-mapped GID, host order. */
static bool gid_v4addr(const struct rdma_gid *g, uint32_t *ip)
{
	if (!g->parsed || !IN6_IS_ADDR_V4MAPPED(&g->addr))
		return false;
	const uint8_t *b = g->addr.s6_addr;
	*ip = (uint32_t)b[12] << 24 | (uint32_t)b[13] << 16 | (uint32_t)b[14] << 8 | b[15];
	return true;
}

bool gid_ipv4(const struct rdma_gid *g, char *buf, size_t size)
{
	uint32_t ip;
	if (!gid_v4addr(g, &ip))
		return false;
	if (buf)
		snprintf(buf, size, "%u.%u.%u.%u", ip >> 24, ip >> 16 & 0xff, ip >> 8 & 0xff, ip & 0xff);
	return true;
}

bool gid_link_local(const struct rdma_gid *g)
{
	return g->parsed && IN6_IS_ADDR_LINKLOCAL(&g->addr);
}

bool gid_is_v2(const struct rdma_gid *g)
{
	return g->type && !strcmp(g->type, "RoCE v2");
}

const struct rdma_gid *port_best_gid(const struct rdma_port *p)
{
	for (size_t i = 0; i < p->n_gids; i++)
		if (gid_is_v2(&p->gids[i]) && gid_ipv4(&p->gids[i], NULL, 0))
			return &p->gids[i];
	for (size_t i = 0; i < p->n_gids; i++)
		if (gid_is_v2(&p->gids[i]) && !gid_link_local(&p->gids[i]))
			return &p->gids[i];
	return NULL;
}

/* "10.0.0.0/16" -> network and mask; false if not an IPv4 CIDR. */
static bool ipv4_cidr(const char *s, uint32_t *net, uint32_t *mask)
{
	unsigned a, b, c, d, n;
	if (sscanf(s, "%u.%u.%u.%u/%u", &a, &b, &c, &d, &n) != 5 || a > 255 || b > 255 || c > 255 || d > 255 || n > 32)
		return false;
	*mask = n ? 0xffffffffu << (32 - n) : 0;
	*net = (a << 24 | b << 16 | c << 8 | d) & *mask;
	return true;
}

unsigned nccl_auto_gid_index(const struct inventory *inv, const struct rdma_port *p, const char **why)
{
	const struct nccl_var *fam = nccl_get(&inv->nccl, "NCCL_IB_ADDR_FAMILY");
	const struct nccl_var *ver = nccl_get(&inv->nccl, "NCCL_IB_ROCE_VERSION_NUM");
	const struct nccl_var *range = nccl_get(&inv->nccl, "NCCL_IB_ADDR_RANGE");
	bool v6 = fam && !strcmp(fam->value, "AF_INET6");
	long long vn = 2;
	if (ver)
		nccl_param_int(ver->value, &vn, NULL);
	const char *want = vn == 1 ? "IB/RoCE v1" : "RoCE v2";
	uint32_t net = 0, mask = 0;
	bool have_range = range && range->value[0];
	if (why)
		*why = NULL;
	if (have_range && !ipv4_cidr(range->value, &net, &mask)) {
		have_range = false;
		if (why)
			*why = "NCCL_IB_ADDR_RANGE is not an IPv4 CIDR: not modelled";
	}
	for (size_t i = 0; i < p->n_gids; i++) {
		const struct rdma_gid *g = &p->gids[i];
		uint32_t ip = 0;
		bool is4 = gid_v4addr(g, &ip);
		if (!g->type || strcmp(g->type, want) || is4 == v6)
			continue;
		if (have_range && is4 && (ip & mask) != net)
			continue;
		return g->index;
	}
	return 0;
}

const struct rdma_gid *port_gid(const struct rdma_port *p, unsigned index)
{
	for (size_t i = 0; i < p->n_gids; i++)
		if (p->gids[i].index == index)
			return &p->gids[i];
	return NULL;
}

void nccl_list_parse(const char *s, struct nccl_list *out)
{
	memset(out, 0, sizeof(*out));
	if (!s)
		return;
	if (*s == '^') {
		out->exclude = true;
		s++;
	}
	if (*s == '=') {
		out->exact = true;
		s++;
	}
	/* parseStringList: entries split at ',', a ':' ends the name and
	 * the port is atoi() of what follows; anything after that up to the
	 * next ',' is ignored (rail/plane fields in newer NCCL). Empty names
	 * are dropped. */
	while (*s) {
		size_t n = strcspn(s, ",:");
		int port = -1;
		const char *next = s + n;
		if (*next == ':') {
			port = atoi(next + 1);
			next += strcspn(next, ",");
		}
		if (n > 0) {
			out->v = xreallocarray(out->v, out->n + 1, sizeof(*out->v));
			out->v[out->n].name = xstrndup(s, n);
			out->v[out->n].port = port;
			out->n++;
		}
		s = *next ? next + 1 : next;
	}
}

void nccl_list_free(struct nccl_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].name);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

bool nccl_entry_matches(const struct nccl_list *l, const struct nccl_list_entry *e, const char *name, int port)
{
	bool name_ok = l->exact ? !strcmp(name, e->name) : str_startswith(name, e->name);
	bool port_ok = e->port == -1 || port == -1 || e->port == port;
	return name_ok && port_ok;
}

bool nccl_list_selects(const struct nccl_list *l, const char *name, int port)
{
	bool match = l->n == 0;
	for (size_t i = 0; i < l->n && !match; i++)
		match = nccl_entry_matches(l, &l->v[i], name, port);
	return match != l->exclude;
}

const struct nccl_var *nccl_hca(const struct inventory *inv, struct nccl_list *list)
{
	const struct nccl_var *v = nccl_get(&inv->nccl, "NCCL_IB_HCA");
	if (v && v->computed)
		v = NULL;
	nccl_list_parse(v ? v->value : NULL, list);
	return v;
}

bool nccl_uses_port(const struct nccl_list *hca, const struct rdma_dev *d, const struct rdma_port *p)
{
	if (!port_active(p) || !(port_is_roce(p) || port_is_ib(p)))
		return false;
	return !hca || nccl_list_selects(hca, d->name, (int)p->num);
}

const char *tos_describe(int tos, char *buf, size_t size)
{
	static const char *const ecn[] = { "Not-ECT", "ECT(1)", "ECT(0)", "CE" };
	snprintf(buf, size, "ToS %d = DSCP %d + ECN %d (%s)", tos, tos_dscp(tos), tos_ecn(tos), ecn[tos_ecn(tos)]);
	return buf;
}

int nccl_param_int(const char *s, long long *ret, const char **surprise)
{
	const char *why = NULL;
	if (!*s)
		return -ENODATA;
	errno = 0;
	char *end;
	long long v = strtoll(s, &end, 0);
	if (errno == ERANGE)
		return -ERANGE;
	const char *p = s;
	while (isspace((unsigned char)*p))
		p++;
	if (*p == '+' || *p == '-')
		p++;
	if (end == s)
		why = "it has no digits, so NCCL reads 0";
	else if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		why = NULL; /* hex is deliberate */
	else if (p[0] == '0' && isdigit((unsigned char)p[1]))
		why = "a leading 0 makes NCCL read it as octal";
	else if (*end)
		why = "NCCL ignores the text after the number";
	if (surprise)
		*surprise = why;
	*ret = v;
	return 0;
}

const char *nccl_var_place(const struct nccl_var *v, char *buf, size_t size)
{
	if (v->source[0] != '/') {
		snprintf(buf, size, "the job environment");
		return buf;
	}
	const char *colon = strrchr(v->source, ':');
	int n = colon ? (int)(colon - v->source) : (int)strlen(v->source);
	snprintf(buf, size, "%.*s", n, v->source);
	return buf;
}

bool nic_host_function(const struct pci_dev *p)
{
	if (p->ids_err || p->vendor != VENDOR_MELLANOX || nic_provider(p->device) == PROVIDER_NONE)
		return false;
	if (p->driver)
		return !strcmp(p->driver, "mlx5_core") || !strcmp(p->driver, "mlx4_core");
	return !p->is_vf;
}

bool node_has_rdma_hw(const struct inventory *inv)
{
	if (inv->rdma.n > 0)
		return true;
	for (size_t i = 0; i < inv->pci.n; i++) {
		if (nic_host_function(&inv->pci.v[i]))
			return true;
	}
	return false;
}

size_t counters_summary(const struct counter *cs, size_t n, const char *const *names, size_t n_names,
			struct strbuf *nonzero, struct strbuf *all, struct strbuf *meanings, struct strbuf *unread, bool all_expected)
{
	size_t seen = 0;
	for (size_t e = 0; e < n_names; e++) {
		bool found = false;
		for (size_t k = 0; k < n; k++) {
			if (strcmp(cs[k].name, names[e]))
				continue;
			found = true;
			if (cs[k].err) {
				if (unread)
					strbuf_addf(unread, "%s%s (%s)", unread->len ? ", " : "", names[e],
						    read_strerror(cs[k].err));
				continue;
			}
			unsigned long long v = cs[k].value;
			seen++;
			if (all)
				strbuf_addf(all, "%s%s=%llu", all->len ? ", " : "", names[e], v);
			if (v && nonzero)
				strbuf_addf(nonzero, "%s%s=%llu", nonzero->len ? ", " : "", names[e], v);
			const char *m = v && meanings ? rdma_counter_meaning(names[e]) : NULL;
			if (m)
				strbuf_addf(meanings, "%s%s: %s", meanings->len ? "; " : "", names[e], m);
		}
		if (!found && unread && all_expected)
			strbuf_addf(unread, "%s%s (missing)", unread->len ? ", " : "", names[e]);
	}
	return seen;
}

void counters_unread_warn(struct check_ctx *c, const struct rdma_dev *d, const struct rdma_port *p, const char *what,
			  const char *dir, const struct strbuf *unread, const struct strbuf *nonzero)
{
	char lbl[96];
	struct finding *f = check_add(c, STATUS_WARN, port_label(d, p, lbl, sizeof(lbl)),
				      "%s counters cannot be read in /sys/class/infiniband/%s/ports/%u/%s: %s%s%s", what,
				      d->name, p->num, dir, unread->buf, nonzero->len ? "; nonzero: " : "",
				      nonzero->buf);
	finding_hint(f, "`grep . /sys/class/infiniband/%s/ports/%u/%s/*` shows them; if they cannot be read, run "
			"gpuready as root",
		     d->name, p->num, dir);
}

enum nccl_int_outcome nccl_int_var(struct check_ctx *c, const struct nccl_var *v, long long min, long long max,
				   const char *what, long long *ret)
{
	long long n = 0;
	const char *why = NULL;
	char place[256];
	if (!v)
		return NCCL_INT_UNSET;
	int r = nccl_param_int(v->value, &n, &why);
	if (r == -ENODATA)
		return NCCL_INT_UNSET;
	if (r < 0 || n < min || n > max) {
		struct finding *f = check_add(c, STATUS_FAIL, v->name, "='%s' (%s): not a valid %s, must be %lld..%lld",
					      v->value, v->source, what, min, max);
		finding_hint(f, "set a value in range in %s, or remove it to get NCCL's default",
			     nccl_var_place(v, place, sizeof(place)));
		return NCCL_INT_INVALID;
	}
	if (why) {
		struct finding *f = check_add(c, STATUS_WARN, v->name, "='%s' (%s): %s, giving %lld", v->value,
					      v->source, why, n);
		finding_hint(f, "write the plain decimal number %lld in %s", n, nccl_var_place(v, place, sizeof(place)));
	}
	*ret = n;
	return why ? NCCL_INT_WARNED : NCCL_INT_OK;
}

bool nccl_skip_computed(struct check_ctx *c, const struct nccl_var *v)
{
	if (!v || !v->computed)
		return false;
	check_add(c, STATUS_SKIP, v->name, "=%s (%s) is computed when the login shell runs: not judged from the file",
		  v->value, v->source);
	return true;
}

/* PCI device IDs of Hopper and later data-centre GPUs start at 0x2300
 * (GH100: 0x2330 H100 SXM5, 0x2335 H200; pci.ids), Ampere's GA100 is
 * 0x20xx. Used only together with NVSwitches on PCI, which only HGX/DGX
 * baseboards carry. */
#define NV_FIRST_HOPPER_DEVICE 0x2300u

void nccl_node_get(const struct inventory *inv, struct nccl_node *n)
{
	const struct pci_dev **gpus = NULL;
	*n = (struct nccl_node){ .gpus = topo_gpus(inv, &gpus) };
	for (size_t i = 0; i < n->gpus; i++)
		n->hopper |= !gpus[i]->ids_err && gpus[i]->device >= NV_FIRST_HOPPER_DEVICE;
	free(gpus);
	n->unidentified = gpu_unidentified(inv, NULL);
	for (size_t i = 0; i < inv->pci.n; i++) {
		const struct pci_dev *p = &inv->pci.v[i];
		if (p->ids_err || p->class_err || p->vendor != VENDOR_NVIDIA || (p->class_code >> 8) != 0x0680)
			continue;
		if (!n->nvswitches++)
			n->nvswitch_bdf = p->bdf;
	}
	for (size_t i = 0; inv->nvml && i < inv->nvml->n; i++) {
		const struct nvml_gpu *g = &inv->nvml->v[i];
		if (g->nvlink_links > 0 && g->nvlink_down < g->nvlink_links)
			n->nvlink_gpus++;
	}
	n->nvlink = n->nvswitches > 0 || n->nvlink_gpus > 1;
	n->nvls = n->nvswitches > 0 && n->hopper;
}

enum nccl_p2p nccl_p2p_state(const struct inventory *inv, const struct nccl_var **by)
{
	static const char *const names[] = { "LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS" };
	const struct nccl_var *d = nccl_get(&inv->nccl, "NCCL_P2P_DISABLE");
	const struct nccl_var *l = nccl_get(&inv->nccl, "NCCL_P2P_LEVEL");
	*by = d;
	if (d && d->computed)
		return NCCL_P2P_UNKNOWN;
	if (d && strtol(d->value, NULL, 0) == 1)
		return NCCL_P2P_OFF;
	*by = l;
	if (!l)
		return NCCL_P2P_DEFAULT;
	if (l->computed)
		return NCCL_P2P_UNKNOWN;
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(l->value, names[i]))
			return i == 0 ? NCCL_P2P_OFF : NCCL_P2P_LEVEL_SET;
	if (l->value[0] >= '0' && l->value[0] <= '9')
		return strtol(l->value, NULL, 0) == 0 ? NCCL_P2P_OFF : NCCL_P2P_LEVEL_SET;
	*by = NULL; /* ignored by NCCL (rdma.nccl_levels says so): the default applies */
	return NCCL_P2P_DEFAULT;
}

const struct nccl_var *nccl_shm_off(const struct inventory *inv)
{
	const struct nccl_var *v = nccl_get(&inv->nccl, "NCCL_SHM_DISABLE");
	long long n;
	if (!v || v->computed || nccl_param_int(v->value, &n, NULL) < 0)
		return NULL;
	return n == 1 ? v : NULL;
}

size_t nccl_port_count(const struct inventory *inv)
{
	struct nccl_list l = { 0 };
	const struct rdma_dev *d;
	const struct rdma_port *p;
	size_t n = 0;
	nccl_hca(inv, &l);
	for_each_rdma_port(&inv->rdma, d, p)
		n += nccl_uses_port(&l, d, p);
	nccl_list_free(&l);
	return n;
}

bool bond_mode_lag_capable(int mode)
{
	return mode == BOND_ACTIVE_BACKUP || mode == BOND_BALANCE_XOR || mode == BOND_8023AD;
}

static bool is_connectx(const struct pci_dev *p)
{
	return p && !p->ids_err && p->vendor == VENDOR_MELLANOX && nic_provider(p->device) != PROVIDER_NONE;
}

/* The slave's PCI function when it is a ConnectX PF, else NULL. */
static const struct pci_dev *slave_pf(const struct inventory *inv, const struct bond_slave *s)
{
	const struct netdev *n = net_find(&inv->net, s->name);
	const struct pci_dev *p = n && n->pci_bdf ? pci_find(&inv->pci, n->pci_bdf) : NULL;
	return is_connectx(p) && !p->is_vf ? p : NULL;
}

/* "dddd:bb:dd" of a BDF "dddd:bb:dd.f" into card (16 bytes). */
static bool bdf_card(const char *bdf, char *card)
{
	const char *dot = bdf ? strrchr(bdf, '.') : NULL;
	if (!dot || dot - bdf >= 16)
		return false;
	memcpy(card, bdf, (size_t)(dot - bdf));
	card[dot - bdf] = '\0';
	return true;
}

static bool on_card(const char *bdf, const char *card)
{
	char c[16];
	return bdf_card(bdf, c) && !strcasecmp(c, card);
}

void bond_lag_describe(const struct inventory *inv, const struct bond *b, struct bond_lag *out)
{
	memset(out, 0, sizeof(*out));
	size_t cx = 0;
	bool same = true;
	for (size_t i = 0; i < b->n_slaves; i++) {
		const struct pci_dev *p = slave_pf(inv, &b->slaves[i]);
		char c[16];
		if (!p || !bdf_card(p->bdf, c)) {
			same = false;
			continue;
		}
		if (cx++ == 0)
			snprintf(out->card, sizeof(out->card), "%s", c);
		else if (strcasecmp(c, out->card))
			same = false;
	}
	if (cx == 0) {
		out->shape = BOND_NOT_CONNECTX;
		return;
	}
	for (size_t i = 0; i < inv->pci.n; i++)
		out->n_pfs += is_connectx(&inv->pci.v[i]) && !inv->pci.v[i].is_vf &&
			      on_card(inv->pci.v[i].bdf, out->card);
	out->shape = same && cx == out->n_pfs ? BOND_ONE_CARD : BOND_OTHER;
	for (size_t i = 0; i < inv->rdma.n; i++) {
		const struct rdma_dev *d = &inv->rdma.v[i];
		if (!d->pci_bdf || !on_card(d->pci_bdf, out->card))
			continue;
		bool lag = strstr(d->name, "_bond_") != NULL;
		for (size_t k = 0; k < d->n_ports && !lag; k++)
			lag = d->ports[k].netdev && !strcmp(d->ports[k].netdev, b->name);
		if (lag && !out->lag)
			out->lag = d;
		else if (out->n_per_port < sizeof(out->per_port) / sizeof(out->per_port[0]))
			out->per_port[out->n_per_port++] = d;
	}
}

bool bond_carries_rdma(const struct inventory *inv, const struct bond *b)
{
	for (size_t i = 0; i < b->n_slaves; i++)
		if (slave_pf(inv, &b->slaves[i]))
			return true;
	/* a ConnectX netdev whose `master` is the bond, should bonding/slaves not list it */
	for (size_t i = 0; i < inv->net.n; i++) {
		const struct netdev *n = &inv->net.v[i];
		struct bond_slave s = { .name = n->name };
		if (n->master && !strcmp(n->master, b->name) && slave_pf(inv, &s))
			return true;
	}
	return bond_rdma_dev(inv, b) != NULL;
}

const struct bond *port_bond(const struct inventory *inv, const struct rdma_port *p)
{
	return p->netdev ? bond_find(&inv->net, p->netdev) : NULL;
}

const struct rdma_dev *bond_rdma_dev(const struct inventory *inv, const struct bond *b)
{
	const struct rdma_dev *d;
	const struct rdma_port *p;
	for_each_rdma_port(&inv->rdma, d, p)
		if (p->netdev && !strcmp(p->netdev, b->name))
			return d;
	return NULL;
}

bool bond_slave_up(const struct bond_slave *s)
{
	return s->mii_status && !strcmp(s->mii_status, "up");
}

int64_t netdev_mbps(const struct inventory *inv, const char *name)
{
	const struct netdev *n = net_find(&inv->net, name);
	return n && n->speed > 0 ? n->speed : 0;
}

bool pf_in_roce_lag(const struct inventory *inv, const struct pci_dev *p)
{
	for (size_t i = 0; i < inv->net.n; i++) {
		const struct netdev *n = &inv->net.v[i];
		if (!n->pci_bdf || !n->master || strcasecmp(n->pci_bdf, p->bdf))
			continue;
		const struct bond *b = bond_find(&inv->net, n->master);
		struct bond_lag l;
		if (!b)
			continue;
		bond_lag_describe(inv, b, &l);
		if (l.shape == BOND_ONE_CARD && l.lag)
			return true;
	}
	return false;
}

bool port_unused(const struct inventory *inv, const struct nccl_list *hca, const struct rdma_dev *d,
		 const struct rdma_port *p)
{
	if (port_active(p) || p->state < 0)
		return false;
	for (size_t i = 0; i < p->n_gids; i++)
		if (!p->gids[i].parsed || !gid_link_local(&p->gids[i]))
			return false;
	const struct netdev *n = p->netdev ? net_find(&inv->net, p->netdev) : NULL;
	if (n && n->master)
		return false;
	for (size_t i = 0; hca && !hca->exclude && i < hca->n; i++)
		if (!strcmp(hca->v[i].name, d->name) && (hca->v[i].port < 0 || hca->v[i].port == (int)p->num))
			return false;
	return true;
}

void bonds_with_rdma(struct check_ctx *c, void (*judge)(struct check_ctx *c, const struct bond *b))
{
	size_t judged = 0;
	for (size_t i = 0; i < c->inv->net.n_bonds; i++) {
		const struct bond *b = &c->inv->net.bonds[i];
		if (!bond_carries_rdma(c->inv, b))
			continue;
		judge(c, b);
		judged++;
	}
	if (judged == 0)
		check_add(c, STATUS_SKIP, SUBJECT_NODE, "no bond carries RDMA");
}

bool container_view(const struct inventory *inv, char *buf, size_t size)
{
	const struct proc_view *v = &inv->view;
	if (size)
		buf[0] = '\0';
	if (!v->evidence.n)
		return false;
	snprintf(buf, size, "in this %s%scontainer (%s)", v->runtime ? v->runtime : "", v->runtime ? " " : "",
		 v->evidence.v[0]);
	return true;
}

const char *bytes_text(uint64_t n, char *buf, size_t size)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB" };
	if (n < 1024) {
		snprintf(buf, size, "%llu bytes", (unsigned long long)n);
		return buf;
	}
	double x = (double)n / 1024;
	size_t u = 0;
	while (x >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
		x /= 1024;
		u++;
	}
	if (x == (double)(uint64_t)x)
		snprintf(buf, size, "%llu %s", (unsigned long long)x, units[u]);
	else
		snprintf(buf, size, "%.1f %s", x, units[u]);
	return buf;
}
