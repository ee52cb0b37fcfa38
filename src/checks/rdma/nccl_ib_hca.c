/* rdma.nccl_ib_hca: NCCL_IB_HCA selects real, active ports.
 *
 * Parsed with NCCL's rules (common.h: '^' excludes, '=' exact, else name
 * prefixes, so `mlx5_1` also matches `mlx5_10`; ':port' restricts). NCCL
 * only considers ACTIVE ports with an IB or Ethernet link layer and skips
 * the rest silently, so an entry that matches no device, or only down
 * ports, is a fail: the operator asked for NICs NCCL will not use. An
 * exclusion entry that matches nothing is a warn (probably a typo), and a
 * selection that leaves no port is a fail (NCCL falls back to sockets).
 * Every finding says which ports NCCL will actually use, and an entry
 * that matches nothing on a node with bonds says which devices RoCE LAG
 * left (mlx5_bond_<n> for a card's per-port devices, or the reverse).
 *
 * Unset, NCCL opens every active port (src/transport/net_ib/init.cc), and
 * its topology search gives each GPU the NICs ncclTopoGetLocal finds for
 * it: the highest path bandwidth, then the shortest PCIe path
 * (src/graph/topo.cc), listed first by ncclTopoSelectNets (search.cc);
 * other NICs come only after them. So a NIC that is no GPU's nearest
 * (storage or frontend on the CPU's root ports) is not picked for GPU
 * traffic while it is no faster than the rails: information. A RoCE LAG
 * bond that is some GPU's nearest NIC while the other GPUs have plain
 * rails is that GPU's NIC for NCCL, although such a bond usually serves
 * another network (storage, frontend): warn (docs/failure-modes.md F25;
 * NVIDIA/nccl#1412, #719). The network a port reaches is not in any
 * file, so the warning says what NCCL will do and how to exclude it. */
#include "checks/check.h"
#include "common.h"
#include "inventory/topo.h"

#include <stdio.h>
#include <string.h>

struct ports {
	struct strbuf used;   /* ports NCCL will use */
	struct strbuf active; /* every active RDMA port, as an NCCL_IB_HCA value */
	size_t n_used, n_active;
};

static void collect(const struct inventory *inv, const struct nccl_list *l, struct ports *ps)
{
	const struct rdma_dev *d;
	const struct rdma_port *p;
	char lbl[96];
	for_each_rdma_port(&inv->rdma, d, p) {
		if (nccl_uses_port(NULL, d, p)) {
			strbuf_addf(&ps->active, "%s%s:%u", ps->n_active ? "," : "", d->name, p->num);
			ps->n_active++;
		}
		if (nccl_uses_port(l, d, p)) {
			strbuf_addf(&ps->used, "%s%s", ps->n_used ? ", " : "", port_label(d, p, lbl, sizeof(lbl)));
			ps->n_used++;
		}
	}
}

/* An entry that matches nothing on a node with bonds: RoCE LAG replaces a
 * card's per-port devices (mlx5_0, mlx5_1) with one mlx5_bond_<n>, and
 * leaving LAG brings them back, so a value written before the change names
 * devices that are gone (NVIDIA/nccl-tests#191). Says which devices stand
 * for the bonds now. */
static void lag_note(struct check_ctx *c, struct finding *f, const char *entry)
{
	const struct inventory *inv = c->inv;
	struct strbuf lag = STRBUF_INIT, per_port = STRBUF_INIT;
	for (size_t i = 0; i < inv->net.n_bonds; i++) {
		const struct bond *b = &inv->net.bonds[i];
		struct bond_lag l;
		bond_lag_describe(inv, b, &l);
		if (l.shape != BOND_ONE_CARD)
			continue;
		if (l.lag)
			strbuf_addf(&lag, "%s%s (%s)", lag.len ? ", " : "", l.lag->name, b->name);
		for (size_t k = 0; !l.lag && k < l.n_per_port; k++)
			strbuf_addf(&per_port, "%s%s (%s)", per_port.len ? ", " : "", l.per_port[k]->name, b->name);
	}
	bool names_lag = strstr(entry, "_bond_") != NULL;
	if (!names_lag && lag.len)
		finding_detail(f, "RoCE LAG replaced the per-port devices of the bonded cards: the bonds' RDMA devices "
				  "are %s",
			       lag.buf);
	else if (names_lag && per_port.len)
		finding_detail(f, "no RoCE LAG device: the bonds' LAG is not formed (see rdma.roce_lag), their ports "
				  "are %s",
			       per_port.buf);
	strbuf_release(&lag);
	strbuf_release(&per_port);
}

/* One entry: 0 fine, else the finding it produced. */
static struct finding *entry(struct check_ctx *c, const struct nccl_list *l, const struct nccl_list_entry *e)
{
	const struct inventory *inv = c->inv;
	size_t matched = 0, active = 0, unused = 0;
	struct strbuf down = STRBUF_INIT;
	char lbl[96], et[96];
	struct finding *f = NULL;
	const struct rdma_dev *d;
	const struct rdma_port *p;
	for_each_rdma_port(&inv->rdma, d, p) {
		if (!nccl_entry_matches(l, e, d->name, (int)p->num))
			continue;
		matched++;
		if (port_active(p))
			active++;
		else if (port_unused(inv, l, d, p))
			unused++;
		else
			strbuf_addf(&down, "%s%s (%s)", down.len ? ", " : "", port_label(d, p, lbl, sizeof(lbl)),
				    p->state_name ? p->state_name : "state unknown");
	}
	if (e->port >= 0)
		snprintf(et, sizeof(et), "%s:%d", e->name, e->port);
	else
		snprintf(et, sizeof(et), "%s", e->name);
	if (matched == 0)
		f = check_add(c, l->exclude ? STATUS_WARN : STATUS_FAIL, "NCCL_IB_HCA",
			      "entry '%s' matches no RDMA device or port%s", et,
			      l->exclude ? " (excluding it changes nothing: a typo?)" : "");
	if (matched == 0)
		lag_note(c, f, e->name);
	else if (!l->exclude && active == 0 && down.len)
		f = check_add(c, STATUS_FAIL, "NCCL_IB_HCA", "entry '%s' names only ports that are down: %s", et,
			      down.buf);
	else if (!l->exclude && down.len)
		f = check_add(c, STATUS_WARN, "NCCL_IB_HCA", "entry '%s' includes ports that are down: %s", et, down.buf);
	strbuf_release(&down);
	return f;
}

/* A device NCCL would use with NCCL_IB_HCA unset: its first active port,
 * whether it is a RoCE LAG bond, and the GPUs it is nearest to. */
struct cand {
	const struct rdma_dev *d;
	const struct rdma_port *p;
	bool lag;
	struct strbuf near; /* "0000:18:00.0 (PIX)" of the GPUs it is nearest to */
	size_t n_near;
};

static size_t cands_collect(const struct inventory *inv, struct cand **ret)
{
	struct cand *v = NULL;
	size_t n = 0;
	const struct rdma_dev *d;
	const struct rdma_port *p;
	for_each_rdma_port(&inv->rdma, d, p) {
		if (!nccl_uses_port(NULL, d, p) || (n && v[n - 1].d == d))
			continue;
		v = xreallocarray(v, n + 1, sizeof(*v));
		v[n++] = (struct cand){ .d = d, .p = p, .lag = port_bond(inv, p) || strstr(d->name, "_bond_"),
					.near = STRBUF_INIT };
	}
	*ret = v;
	return n;
}

/* Marks, for each GPU, the candidates at its shortest PCIe path. */
static void cands_near(const struct inventory *inv, struct cand *v, size_t n)
{
	const struct pci_dev **gpus = NULL;
	size_t ng = topo_gpus(inv, &gpus);
	for (size_t g = 0; g < ng; g++) {
		enum path_class best = PATH_UNKNOWN, *cls = xcalloc(n + 1, sizeof(*cls));
		for (size_t i = 0; i < n; i++) {
			const struct pci_dev *nic = v[i].d->pci_bdf ? pci_find(&inv->pci, v[i].d->pci_bdf) : NULL;
			cls[i] = nic ? pci_path_class(gpus[g], nic, NULL) : PATH_UNKNOWN;
			if (cls[i] < best)
				best = cls[i];
		}
		for (size_t i = 0; best != PATH_UNKNOWN && i < n; i++)
			if (cls[i] == best) {
				strbuf_addf(&v[i].near, "%s%s (%s)", v[i].n_near ? ", " : "", gpus[g]->bdf, path_class_name(best));
				v[i].n_near++;
			}
		free(cls);
	}
	free(gpus);
}

/* NCCL_IB_HCA unset: NICs beside the GPU rails that NCCL may take (F25). */
static void unset_candidates(struct check_ctx *c)
{
	struct cand *v = NULL;
	size_t n = cands_collect(c->inv, &v);
	cands_near(c->inv, v, n);
	/* rails: every GPU's nearest NICs; plain: those that are no LAG bond */
	struct strbuf rails = STRBUF_INIT, plain = STRBUF_INIT;
	double rail_rate = 0;
	for (size_t i = 0; i < n; i++)
		if (v[i].n_near) {
			strbuf_addf(&rails, "%s%s", rails.len ? "," : "", v[i].d->name);
			if (!v[i].lag)
				strbuf_addf(&plain, "%s%s", plain.len ? "," : "", v[i].d->name);
			rail_rate = v[i].p->rate_gbps > rail_rate ? v[i].p->rate_gbps : rail_rate;
		}
	for (size_t i = 0; rails.len && i < n; i++) {
		const char *name = v[i].d->name;
		struct finding *f = NULL;
		if (v[i].n_near && v[i].lag && plain.len) {
			f = check_add(c, STATUS_WARN, name, "NCCL_IB_HCA not set: the RoCE LAG device %s is the nearest NIC of "
							    "GPU %s, so NCCL uses it for that GPU's traffic beside the rails; "
							    "if its bond serves another network (storage, frontend), "
							    "inter-node collectives hang or fail",
				      name, v[i].near.buf);
		} else if (!v[i].n_near && rail_rate > 0 && v[i].p->rate_gbps > rail_rate) {
			f = check_add(c, STATUS_WARN, name, "NCCL_IB_HCA not set: %s is no GPU's nearest NIC but faster than "
							    "the rails (%g vs %g Gb/s): NCCL prefers path bandwidth over "
							    "distance (ncclTopoGetLocal) and may send GPU traffic through it",
				      name, v[i].p->rate_gbps, rail_rate);
		} else if (!v[i].n_near) {
			check_add(c, STATUS_INFO, name, "NCCL_IB_HCA not set: NCCL opens %s, which is no GPU's nearest NIC; "
							"its topology search tries each GPU's nearest NICs (%s) first, so it "
							"carries GPU traffic only if they cannot; NCCL_IB_HCA=^=%s leaves it out",
				  name, rails.buf, name);
		}
		if (f) {
			const char *keep = v[i].n_near ? plain.buf : rails.buf;
			finding_detail(f, "the other GPUs' nearest NICs: %s", keep);
			finding_hint(f, "exclude it, `echo 'export NCCL_IB_HCA=^=%s' >> /etc/profile.d/nccl-rdma.sh` (the same "
					"on every node), or list the rails exactly (NCCL_IB_HCA==%s)",
				     name, keep);
		}
	}
	for (size_t i = 0; i < n; i++)
		strbuf_release(&v[i].near);
	free(v);
	strbuf_release(&rails);
	strbuf_release(&plain);
}

static int run(struct check_ctx *c)
{
	const struct inventory *inv = c->inv;
	const struct nccl_var *v = nccl_get(&inv->nccl, "NCCL_IB_HCA");
	struct nccl_list l;
	struct ports ps = { .used = STRBUF_INIT, .active = STRBUF_INIT };
	char place[256];

	if (inv->rdma.n == 0) {
		check_add(c, STATUS_SKIP, "NCCL_IB_HCA", "no RDMA devices to select from");
		return 0;
	}
	if (nccl_skip_computed(c, v))
		return 0;
	nccl_list_parse(v ? v->value : NULL, &l);
	collect(inv, v ? &l : NULL, &ps);

	bool bad = false;
	for (size_t e = 0; v && e < l.n; e++) {
		struct finding *f = entry(c, &l, &l.v[e]);
		if (!f)
			continue;
		bad = true;
		finding_detail(f, "NCCL_IB_HCA=%s (%s): NCCL will use %zu of %zu active ports: %s", v->value, v->source,
			       ps.n_used, ps.n_active, ps.n_used ? ps.used.buf : "none");
		finding_hint(f, "set NCCL_IB_HCA to ports that exist and are ACTIVE (`rdma link show`), e.g. "
				"NCCL_IB_HCA=%s, in %s; or unset it to use every active port",
			     ps.n_active ? ps.active.buf : "mlx5_0:1", nccl_var_place(v, place, sizeof(place)));
	}
	const struct rdma_dev *d;
	const struct rdma_port *p;
	size_t unknown = 0;
	for_each_rdma_port(&inv->rdma, d, p)
		unknown += p->state < 0;
	if (ps.n_used == 0 && unknown) {
		check_add(c, STATUS_SKIP, "NCCL_IB_HCA", "%zu port state%s unreadable: cannot tell which ports NCCL will use",
			  unknown, unknown == 1 ? "" : "s");
	} else if (ps.n_used == 0) {
		struct finding *f;
		if (v)
			f = check_add(c, STATUS_FAIL, "NCCL_IB_HCA",
				      "=%s selects no active port: NCCL falls back to TCP sockets", v->value);
		else
			f = check_add(c, STATUS_FAIL, "NCCL_IB_HCA",
				      "not set, but no RDMA port is active: NCCL falls back to TCP sockets");
		finding_hint(f, "bring a port up (see rdma.port_state)%s%s", v ? " or fix NCCL_IB_HCA in " : "",
			     v ? nccl_var_place(v, place, sizeof(place)) : "");
	} else if (!bad) {
		check_add(c, STATUS_OK, "NCCL_IB_HCA", "%s%s%s: NCCL will use %s", v ? "=" : "not set",
			  v ? v->value : " (every active port)", v && ps.n_used < ps.n_active ? " (a subset)" : "",
			  ps.used.buf);
	}
	if (!v && ps.n_used)
		unset_candidates(c);
	strbuf_release(&ps.used);
	strbuf_release(&ps.active);
	nccl_list_free(&l);
	return 0;
}

const struct check_def check_rdma_nccl_ib_hca = {
	.id = "rdma.nccl_ib_hca",
	.section = "NCCL Configuration",
	.summary = "NCCL_IB_HCA, read with NCCL's matching rules, selects existing active ports",
	.run = run,
	.needs = NEEDS_RDMA_DEVICE,
	.nccl_vars = true,
};
