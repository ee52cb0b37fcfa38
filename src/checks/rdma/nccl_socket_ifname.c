/* rdma.nccl_socket_ifname: the interfaces NCCL bootstraps over can carry a
 * multi-node job.
 *
 * NCCL uses these interfaces for its bootstrap and out-of-band connections
 * even when data goes over RDMA, and for all data with the socket
 * transport. Same list rules as NCCL_IB_HCA (common.h). NCCL takes, from
 * getifaddrs(3), interfaces that are running (up with carrier) and have an
 * IPv4 or IPv6 address other than IPv6 loopback (NCCL src/misc/socket.cc);
 * the bootstrap uses the first. Unset, NCCL prefers ib* interfaces, then
 * any but docker*, lo and virbr*, then docker*, then lo, then virbr*
 * (same file; NCCL documentation, Environment Variables). A loopback or
 * bridge address (127.0.0.1, a docker0 172.17.0.1 that every node has) is
 * not one other nodes can reach, and an IPv6 link-local address is
 * ambiguous across interfaces and unroutable (RFC 4291 2.5.6). Addresses
 * come from the inventory (live getifaddrs, or .gpuready/ifaddrs); where
 * they are not known, one skip says the address test could not run. */
#include "checks/check.h"
#include "common.h"

#include <stdio.h>
#include <string.h>

static bool is_up(const struct netdev *n)
{
	return n->operstate && (!strcmp(n->operstate, "up") || !strcmp(n->operstate, "unknown"));
}

/* What makes an interface unfit for a multi-node bootstrap, or NULL; *st
 * how sure that is. Loopback and the NAT bridges of Docker (docker0) and
 * libvirt (virbr0) never reach another node; another bridge may be the
 * host's own uplink (br0 over eno1), so it is a warning. */
static const char *virtual_kind(const struct netdev *n, enum status *st)
{
	*st = STATUS_FAIL;
	if (n->type == 772 || !strcmp(n->name, "lo"))
		return "the loopback interface: ranks would advertise 127.0.0.1, which no other node reaches";
	if (!strncmp(n->name, "docker", 6) || !strncmp(n->name, "virbr", 5))
		return "a container or VM bridge behind NAT: its address is local to this host (Docker gives "
		       "every node the same 172.17.0.1), so other nodes cannot reach it";
	if (!strncmp(n->name, "veth", 4))
		return "one end of a virtual Ethernet pair: it reaches only this host's containers";
	*st = STATUS_WARN;
	if (n->is_bridge)
		return "a bridge: other nodes reach it only if it bridges the cluster network (`bridge link show` "
		       "lists its ports)";
	return NULL;
}

/* How many routable addresses, and any addresses at all, an interface has. */
static void addr_count(const struct net_info *ni, const char *name, size_t *routable, size_t *any)
{
	*routable = *any = 0;
	for (size_t i = 0; i < ni->n_addrs; i++)
		if (!strcmp(ni->addrs[i].ifname, name)) {
			(*any)++;
			*routable += net_addr_routable(&ni->addrs[i]);
		}
}

/* An up physical interface with a routable address (any up physical one
 * when addresses are unknown), to name in a hint; NULL if none. */
static const char *physical_example(const struct net_info *ni)
{
	for (size_t i = 0; i < ni->n; i++) {
		const struct netdev *n = &ni->v[i];
		size_t routable, any;
		addr_count(ni, n->name, &routable, &any);
		enum status st;
		if (is_up(n) && n->carrier != 0 && !virtual_kind(n, &st) && !n->is_virtual &&
		    (!ni->addrs_known || routable > 0))
			return n->name;
	}
	return NULL;
}

/* Judges each interface NCCL will use: virtual, no address, only
 * link-local. Returns true when it added a warn or fail. */
static bool judge_selected(struct check_ctx *c, const struct netdev *const *sel, size_t n, const char *where)
{
	const struct net_info *ni = &c->inv->net;
	bool loud = false;
	for (size_t i = 0; i < n; i++) {
		enum status st;
		const char *kind = virtual_kind(sel[i], &st);
		size_t routable, any;
		struct finding *f = NULL;
		addr_count(ni, sel[i]->name, &routable, &any);
		if (kind)
			f = check_add(c, st, sel[i]->name, "NCCL bootstraps over %s, %s", sel[i]->name, kind);
		else if (ni->addrs_known && any == 0)
			f = check_add(c, STATUS_FAIL, sel[i]->name,
				      "%s has no IP address (%s): NCCL skips it and finds no interface to bootstrap over",
				      sel[i]->name, ni->addrs_source);
		else if (ni->addrs_known && routable == 0)
			f = check_add(c, STATUS_FAIL, sel[i]->name,
				      "%s has only link-local or loopback addresses (%s): NCCL would advertise one, and "
				      "other nodes cannot route to it",
				      sel[i]->name, ni->addrs_source);
		if (!f)
			continue;
		loud = true;
		const char *eg = physical_example(ni);
		if (eg && strcmp(eg, sel[i]->name))
			finding_hint(f, "name the interface on the cluster network exactly in %s, e.g. "
					"NCCL_SOCKET_IFNAME==%s (`ip -br addr show %s` shows its addresses)",
				     where, eg, eg);
		else
			finding_hint(f, "give the cluster network interface a routable address and name it exactly in %s "
					"(`ip -br addr` lists each interface's addresses)",
				     where);
	}
	return loud;
}

/* The interface NCCL's automatic choice takes first, or NULL. */
static const struct netdev *auto_choice(const struct inventory *inv)
{
	static const char *const order[] = { "ib", "", "docker", "lo", "virbr" };
	for (size_t pass = 0; pass < sizeof(order) / sizeof(order[0]); pass++)
		for (size_t i = 0; i < inv->net.n; i++) {
			const struct netdev *n = &inv->net.v[i];
			bool other = strncmp(n->name, "ib", 2) && strncmp(n->name, "docker", 6) && strcmp(n->name, "lo") &&
				     strncmp(n->name, "virbr", 5);
			bool match = *order[pass] ? !strncmp(n->name, order[pass], strlen(order[pass])) &&
							    (pass != 3 || !strcmp(n->name, "lo"))
						  : other;
			size_t routable, any;
			addr_count(&inv->net, n->name, &routable, &any);
			if (match && is_up(n) && n->carrier != 0 && (!inv->net.addrs_known || any > 0))
				return n;
		}
	return NULL;
}

static void run_unset(struct check_ctx *c)
{
	const struct inventory *inv = c->inv;
	const struct netdev *first = auto_choice(inv);
	if (!first) {
		struct finding *f = check_add(c, STATUS_FAIL, "NCCL_SOCKET_IFNAME",
					      "not set, and no interface is up with %s: NCCL finds none to bootstrap over",
					      inv->net.addrs_known ? "an address" : "a link");
		finding_hint(f, "bring up the cluster network interface with an address (`ip -br addr`), then set "
				"NCCL_SOCKET_IFNAME to it in /etc/nccl.conf");
		return;
	}
	const struct netdev *sel[1] = { first };
	if (judge_selected(c, sel, 1, "/etc/nccl.conf (NCCL_SOCKET_IFNAME is not set)"))
		return;
	check_add(c, STATUS_OK, "NCCL_SOCKET_IFNAME",
		  "not set: NCCL's automatic choice (ib* first, then any but docker*, lo and virbr*) bootstraps over %s",
		  first->name);
}

/* Per entry of the list: matches nothing (typo) or only interfaces that are down. */
static void entry_problems(const struct inventory *inv, const struct nccl_list *l, struct strbuf *why)
{
	for (size_t e = 0; e < l->n; e++) {
		size_t matched = 0, up = 0;
		for (size_t i = 0; i < inv->net.n; i++)
			if (nccl_entry_matches(l, &l->v[e], inv->net.v[i].name, -1)) {
				matched++;
				up += is_up(&inv->net.v[i]);
			}
		if (matched == 0)
			strbuf_addf(why, "%s'%s' matches no interface", why->len ? "; " : "", l->v[e].name);
		else if (!l->exclude && up == 0)
			strbuf_addf(why, "%s'%s' matches only interfaces that are down", why->len ? "; " : "",
				    l->v[e].name);
	}
}

static void run_set(struct check_ctx *c, const struct nccl_var *v)
{
	const struct inventory *inv = c->inv;
	struct nccl_list l;
	char place[256];
	nccl_list_parse(v->value, &l);
	nccl_var_place(v, place, sizeof(place));
	struct strbuf names = STRBUF_INIT, why = STRBUF_INIT;
	const struct netdev **sel = xcalloc(inv->net.n + 1, sizeof(*sel));
	size_t n = 0;
	for (size_t i = 0; i < inv->net.n; i++)
		if (is_up(&inv->net.v[i]) && nccl_list_selects(&l, inv->net.v[i].name, -1)) {
			sel[n++] = &inv->net.v[i];
			strbuf_addf(&names, "%s%s", names.len ? ", " : "", inv->net.v[i].name);
		}
	entry_problems(inv, &l, &why);
	struct finding *f;
	if (!n) {
		f = check_add(c, STATUS_FAIL, "NCCL_SOCKET_IFNAME", "=%s (%s) selects no interface that is up%s%s%s: "
								    "NCCL cannot bootstrap",
			      v->value, v->source, why.len ? " (" : "", why.buf, why.len ? ")" : "");
		const char *eg = NULL;
		for (size_t i = 0; i < inv->net.n && !eg; i++)
			if (is_up(&inv->net.v[i]) && !inv->net.v[i].is_virtual)
				eg = inv->net.v[i].name;
		finding_hint(f, "set NCCL_SOCKET_IFNAME in %s to the interface on the cluster network (`ip -br addr`)%s%s",
			     place, eg ? ", e.g. NCCL_SOCKET_IFNAME=" : "", eg ? eg : "");
	} else if (why.len) {
		f = check_add(c, l.exclude ? STATUS_WARN : STATUS_FAIL, "NCCL_SOCKET_IFNAME", "=%s (%s): %s; NCCL uses %s",
			      v->value, v->source, why.buf, names.buf);
		finding_hint(f, "fix the list in %s (names from `ip -br link`)", place);
	} else if (!judge_selected(c, sel, n, place)) {
		check_add(c, STATUS_OK, "NCCL_SOCKET_IFNAME", "=%s (%s) selects %s", v->value, v->source, names.buf);
	}
	free(sel);
	strbuf_release(&why);
	strbuf_release(&names);
	nccl_list_free(&l);
}

static int run(struct check_ctx *c)
{
	const struct inventory *inv = c->inv;
	const struct nccl_var *v = nccl_get(&inv->nccl, "NCCL_SOCKET_IFNAME");

	if (inv->net.n == 0) {
		check_add(c, STATUS_SKIP, "NCCL_SOCKET_IFNAME", "no network interfaces readable under the root");
		return 0;
	}
	if (nccl_skip_computed(c, v))
		return 0;
	if (v)
		run_set(c, v);
	else
		run_unset(c);
	if (!inv->net.addrs_known)
		check_add(c, STATUS_SKIP, "addresses", "whether NCCL's interfaces have a usable address cannot be told: %s",
			  inv->net.addrs_why ? inv->net.addrs_why : "addresses unknown");
	return 0;
}

const struct check_def check_rdma_nccl_socket_ifname = {
	.id = "rdma.nccl_socket_ifname",
	.section = "NCCL Configuration",
	.summary = "NCCL_SOCKET_IFNAME (or NCCL's automatic choice) names interfaces that are up, not loopback or "
		   "a bridge, with an address other nodes can reach",
	.run = run,
	.nccl_vars = true,
};
