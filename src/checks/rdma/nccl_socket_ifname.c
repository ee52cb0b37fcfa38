/* rdma.nccl_socket_ifname: NCCL_SOCKET_IFNAME names interfaces that exist
 * and are up.
 *
 * NCCL uses this interface for its bootstrap and out-of-band connections
 * even when data goes over RDMA, and for all data with the socket
 * transport. Same list rules as NCCL_IB_HCA (common.h). NCCL looks only at
 * interfaces with an IP address; sysfs does not show addresses, so an up
 * interface is the best a file-based check can confirm. Unset: NCCL
 * prefers ib* interfaces, then any but docker*, lo and virbr* (NCCL
 * src/misc/socket.cc; NCCL documentation, Environment Variables); the candidates are reported. */
#include "checks/check.h"
#include "common.h"

#include <stdio.h>
#include <string.h>

static bool is_up(const struct netdev *n)
{
	return n->operstate && (!strcmp(n->operstate, "up") || !strcmp(n->operstate, "unknown"));
}

static int run(struct check_ctx *c)
{
	const struct inventory *inv = c->inv;
	const struct nccl_var *v = nccl_get(&inv->nccl, "NCCL_SOCKET_IFNAME");
	struct finding *f;

	if (inv->net.n == 0) {
		check_add(c, STATUS_SKIP, "NCCL_SOCKET_IFNAME", "no network interfaces readable under the root");
		return 0;
	}
	if (nccl_skip_computed(c, v))
		return 0;
	if (!v) {
		struct strbuf cand = STRBUF_INIT;
		for (int pass = 0; pass < 2; pass++)
			for (size_t i = 0; i < inv->net.n; i++) {
				const struct netdev *n = &inv->net.v[i];
				bool ib = !strncmp(n->name, "ib", 2);
				bool skip = !strncmp(n->name, "docker", 6) || !strcmp(n->name, "lo") ||
					    !strncmp(n->name, "virbr", 5);
				if (!is_up(n) || skip || (pass == 0) != ib)
					continue;
				strbuf_addf(&cand, "%s%s", cand.len ? ", " : "", n->name);
			}
		check_add(c, STATUS_OK, "NCCL_SOCKET_IFNAME",
			  "not set: NCCL picks among up interfaces with an IP, ib* first%s%s", cand.len ? ": " : "",
			  cand.len ? cand.buf : " (none up besides lo/docker/virbr)");
		strbuf_release(&cand);
		return 0;
	}

	struct nccl_list l;
	char place[256];
	nccl_list_parse(v->value, &l);
	nccl_var_place(v, place, sizeof(place));
	struct strbuf sel = STRBUF_INIT, why = STRBUF_INIT;
	for (size_t i = 0; i < inv->net.n; i++) {
		const struct netdev *n = &inv->net.v[i];
		if (is_up(n) && nccl_list_selects(&l, n->name, -1))
			strbuf_addf(&sel, "%s%s", sel.len ? ", " : "", n->name);
	}
	/* per entry: matches nothing (typo) or only interfaces that are down */
	for (size_t e = 0; e < l.n; e++) {
		size_t matched = 0, up = 0;
		for (size_t i = 0; i < inv->net.n; i++)
			if (nccl_entry_matches(&l, &l.v[e], inv->net.v[i].name, -1)) {
				matched++;
				up += is_up(&inv->net.v[i]);
			}
		if (matched == 0)
			strbuf_addf(&why, "%s'%s' matches no interface", why.len ? "; " : "", l.v[e].name);
		else if (!l.exclude && up == 0)
			strbuf_addf(&why, "%s'%s' matches only interfaces that are down", why.len ? "; " : "", l.v[e].name);
	}
	if (!sel.len) {
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
			      v->value, v->source, why.buf, sel.buf);
		finding_hint(f, "fix the list in %s (names from `ip -br link`)", place);
	} else {
		check_add(c, STATUS_OK, "NCCL_SOCKET_IFNAME", "=%s (%s) selects %s", v->value, v->source, sel.buf);
	}
	strbuf_release(&why);
	strbuf_release(&sel);
	nccl_list_free(&l);
	return 0;
}

const struct check_def check_rdma_nccl_socket_ifname = {
	.id = "rdma.nccl_socket_ifname",
	.section = "NCCL Configuration",
	.summary = "NCCL_SOCKET_IFNAME selects existing interfaces that are up",
	.run = run,
	.nccl_vars = true,
};
