/* libFuzzer target for the file parsers: every format the inventory reads
 * from text (sysfs attribute values, /proc/modules lines, nccl.conf, shell
 * exports, /etc/environment (and what a snapshot keeps of these three:
 * the same NCCL_* assignments), limits.conf, GIDs, NCCL list syntax, config
 * values, NCCL's INFO log (as test-nccl and as nccl --explain read it), the launchers' host lists and addresses, and
 * every message of `bench net`'s control protocol, and cluster mode's node
 * record, the Slurm hostlists of `cluster check --hosts`, and scontrol's
 * node line and the drain reason of `--drain`/`--resume`). The
 * first byte picks the parser so one corpus covers all. */
#include "bench/nccl_explain.h"
#include "bench/nccl_log.h"
#include "cluster/cluster.h"
#include "cluster/slurm.h"
#include "bench/net/proto.h"
#include "bench/net/rdma.h"
#include "checks/rdma/common.h"
#include "job/launch.h"
#include "core/cleanup.h"
#include "core/options.h"
#include "core/parse.h"
#include "core/strbuf.h"
#include "inventory/inventory.h"
#include "inventory/textfmt.h"
#include "opts/settings.h"

#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned sink;

static void on_assign(void *ud, const char *name, const char *value, unsigned lineno)
{
	(void)ud;
	sink += (unsigned)strlen(name) + (unsigned)strlen(value) + lineno;
}

static void on_limit(void *ud, const char *d, const char *t, const char *i, const char *v, unsigned n)
{
	(void)ud;
	sink += (unsigned)(strlen(d) + strlen(t) + strlen(i) + strlen(v)) + n;
}

static void on_kconfig(void *ud, const char *name, const char *value)
{
	(void)ud;
	sink += (unsigned)(strlen(name) + strlen(value));
}

/* What a snapshot keeps of a config file must parse to the same NCCL_*
 * assignments, and keeping it again must change nothing (textfmt.h). */
static bool is_nccl(const char *name)
{
	return strncmp(name, "NCCL_", 5) == 0;
}

static void on_nccl_assign(void *ud, const char *name, const char *value, unsigned lineno)
{
	if (is_nccl(name))
		strbuf_addf(ud, "%s=%s@%u\n", name, value, lineno);
}

static bool same(const struct strbuf *a, const struct strbuf *b)
{
	return a->len == b->len && !memcmp(a->buf, b->buf, a->len);
}

static void keep_exact(void (*parse)(const char *, size_t, assign_fn, void *),
		       void (*keep)(const char *, size_t, textfmt_keep_fn, struct strbuf *), const char *text, size_t len)
{
	struct strbuf kept = STRBUF_INIT, again = STRBUF_INIT, a = STRBUF_INIT, b = STRBUF_INIT;
	keep(text, len, is_nccl, &kept);
	keep(kept.buf, kept.len, is_nccl, &again);
	parse(text, len, on_nccl_assign, &a);
	parse(kept.buf, kept.len, on_nccl_assign, &b);
	if (!same(&a, &b) || !same(&kept, &again))
		abort();
	strbuf_release(&kept);
	strbuf_release(&again);
	strbuf_release(&a);
	strbuf_release(&b);
}

static int on_line(void *ud, char *line, unsigned no)
{
	(void)ud;
	sink += (unsigned)strlen(line) + no;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned sel = data[0];
	const char *text = (const char *)data + 1;
	size_t len = size - 1;
	char *s = xstrndup(text, len); /* C-string view (stops at NUL) */

	switch (sel % 33) {
	case 0: {
		uint64_t u;
		int64_t i;
		int n;
		parse_u64(s, 0, &u);
		parse_u64(s, 16, &u);
		parse_s64(s, 10, &i);
		parse_int(s, 0, &n);
		break;
	}
	case 1: {
		double d;
		int n;
		char *name = NULL;
		parse_leading_double(s, &d);
		if (parse_num_colon_name(s, &n, &name) == 0)
			free(name);
		if (bond_parse_mode(s, &n, &name) == 0) /* bonding/mode, "802.3ad 4" */
			free(name);
		break;
	}
	case 2:
		textfmt_nccl_conf(text, len, on_assign, NULL);
		keep_exact(textfmt_nccl_conf, textfmt_nccl_conf_keep, text, len);
		break;
	case 3:
		textfmt_shell_exports(text, len, on_assign, NULL);
		keep_exact(textfmt_shell_exports, textfmt_shell_exports_keep, text, len);
		break;
	case 4:
		textfmt_environment(text, len, on_assign, NULL);
		keep_exact(textfmt_environment, textfmt_environment_keep, text, len);
		break;
	case 5:
		textfmt_limits(text, len, on_limit, NULL);
		break;
	case 6: {
		char ip[32];
		struct rdma_gid g = { .gid = s };
		sink += rdma_gid_parse(&g);
		sink += gid_ipv4(&g, ip, sizeof(ip)) + gid_link_local(&g);
		sink += is_pci_bdf(s);
		break;
	}
	case 7: {
		struct nccl_list l;
		nccl_list_parse(s, &l);
		sink += nccl_list_selects(&l, "mlx5_0", 1) + nccl_list_selects(&l, "ens1f0np0", -1);
		nccl_list_free(&l);
		break;
	}
	case 8: {
		long long v;
		const char *why;
		nccl_param_int(s, &v, &why);
		break;
	}
	case 9: {
		struct settings st;
		settings_init(&st);
		for (const struct opt_table *const *t = settings_tables; *t; t++)
			for (size_t i = 0; i < (*t)->n; i++) {
				char *err = NULL;
				if (opt_assign(&(*t)->rows[i], &st, s, &err) < 0)
					free(err);
			}
		settings_free(&st);
		break;
	}
	case 10:
		str_foreach_line(text, len, on_line, NULL);
		break;
	case 11: {
		char *l = str_first_line(s);
		sink += str_distance(l, "NCCL_SOCKET_IFNAME", 2);
		free(l);
		break;
	}
	case 12: {
		char pci[32];
		int code;
		sink += xid_parse_line(s, pci, sizeof(pci), &code);
		sink += (unsigned)xid_parse_recovery(s);
		break;
	}
	case 13:
		kconfig_parse(text, len, on_kconfig, NULL);
		break;
	case 14: {
		char *v = NULL;
		sink += nv_parse_version_line(s, &v);
		free(v);
		break;
	}
	case 15:
		sink += (unsigned)pci_find_ext_cap((const unsigned char *)text, len, 0x000d);
		break;
	case 16: {
		struct nccl_log l;
		struct strv sum = STRV_INIT, why = STRV_INIT;
		nccl_log_parse(text, len, &l);
		nccl_log_summary(&l, &sum);
		sink += nccl_log_meets(&l, "ib,gdr,dmabuf", &why);
		strv_free(&sum);
		strv_free(&why);
		nccl_log_free(&l);
		/* the same text as the logs of jobs (nccl --explain) */
		struct nccl_explain x;
		struct strbuf out = STRBUF_INIT;
		struct strv why2 = STRV_INIT;
		nccl_explain_init(&x);
		nccl_explain_feed(&x, text, len);
		nccl_explain_finish(&x);
		nccl_explain_text(&x, NULL, &out);
		json_object_put(nccl_explain_json(&x, NULL));
		sink += nccl_explain_meets(&x, "ib,gdr", &why2) + (unsigned)out.len;
		strbuf_release(&out);
		strv_free(&why2);
		nccl_explain_free(&x);
		break;
	}
	case 17: {
		char *h = launch_first_host(s);
		sink += h ? (unsigned)strlen(h) : 0;
		free(h);
		break;
	}
	case 18: {
		char *h = NULL;
		int port = 0;
		if (launch_split_hostport(s, &h, &port) == 0)
			sink += (unsigned)strlen(h) + (unsigned)port;
		free(h);
		break;
	}
	case 19: {
		/* what a server reads from a client it does not know */
		struct net_hello h;
		_cleanup_free_ char *why = NULL;
		if (net_hello_decode((const uint8_t *)text, len, &h, &why) == 0) {
			char *e = net_params_check(&h.p);
			sink += (unsigned)h.p.qps + (e ? 1u : 0u);
			free(e);
		}
		break;
	}
	case 20: {
		struct net_accept a;
		_cleanup_free_ char *why = NULL;
		sink += (unsigned)net_accept_decode((const uint8_t *)text, len, &a, &why);
		break;
	}
	case 21: {
		struct net_start st;
		_cleanup_free_ char *why = NULL;
		sink += (unsigned)net_start_decode((const uint8_t *)text, len, &st, &why);
		break;
	}
	case 22: {
		struct net_samples r;
		_cleanup_free_ char *why = NULL;
		sink += (unsigned)net_result_decode((const uint8_t *)text, len, &r, &why);
		break;
	}
	case 23: {
		struct net_data_hello d;
		_cleanup_free_ char *why = NULL;
		sink += (unsigned)net_data_hello_decode((const uint8_t *)text, len, &d, &why);
		break;
	}
	case 24: {
		/* a peer's QP attributes (RDMA) */
		struct net_rdma_peer p;
		_cleanup_free_ char *why = NULL;
		sink += (unsigned)net_rdma_info_decode(text, len, &p, &why);
		break;
	}
	case 25: {
		struct net_rdma_sync y;
		_cleanup_free_ char *why = NULL;
		sink += (unsigned)net_rdma_sync_decode(text, len, &y, &why);
		break;
	}
	case 27: {
		/* .gpuready/ifaddrs */
		struct net_info ni = { 0 };
		struct strbuf out = STRBUF_INIT;
		ifaddrs_parse(text, len, &ni);
		ifaddrs_format(&ni, &out);
		sink += (unsigned)out.len + ni.addrs_bad;
		strbuf_release(&out);
		net_free(&ni);
		break;
	}
	case 26: {
		/* an NCCL topology file (NCCL_TOPO_FILE) */
		struct nccl_topo_file t = { 0 };
		nccl_topo_parse(text, len, &t.pci, &t.n_pci);
		for (size_t i = 0; i < t.n_pci; i++)
			sink += (unsigned)strlen(t.pci[i].busid) + t.pci[i].class_code;
		nccl_topo_free(&t);
		break;
	}
	case 28: {
		/* /var/lib/dpkg/status */
		char *pkg = NULL, *ver = NULL;
		if (dpkg_find_installed(s, "nvidia-fabricmanager", &pkg, &ver))
			sink += strlen(pkg) + strlen(ver);
		free(pkg);
		free(ver);
		break;
	}
	case 29: {
		/* /proc/self/mountinfo, a tmpfs size=, /proc/self/limits, /proc/self/status */
		struct mountinfo_line m;
		uint64_t a, b;
		char *v = NULL;
		for (char *save = NULL, *line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			_cleanup_free_ char *copy = xstrdup(line);
			if (mountinfo_parse_line(line, &m))
				sink += tmpfs_size_option(m.super_opts, &a) == 0;
			sink += tmpfs_size_option(copy, &a) == 0;
		}
		free(s);
		s = xstrndup(text, len);
		sink += proc_limits_memlock(s, &a, &b) == 0;
		if (proc_status_field(s, "CapEff", &v) == 0)
			sink += strlen(v);
		free(v);
		break;
	}
	case 30: {
		/* .gpuready/dcb: parsed, written back and parsed again */
		struct dcb_info di = { 0 }, again = { 0 };
		struct strbuf out = STRBUF_INIT;
		dcb_parse(text, len, &di);
		dcb_format(&di, &out);
		dcb_parse(out.buf, out.len, &again);
		if (again.bad || again.n != di.n)
			abort(); /* what the writer writes reads back whole */
		sink += (unsigned)out.len + di.bad;
		strbuf_release(&out);
		dcb_free(&di);
		dcb_free(&again);
		break;
	}
	case 31: {
		/* a cluster node record (what rank 0 will read from the network):
		 * the raw bytes, NULs included; one that parses must write out
		 * and parse again to the same record */
		struct node_record r, again;
		char *err = NULL;
		if (record_parse(text, len, &r, &err) == 0) {
			char *out = NULL;
			size_t olen = 0;
			FILE *f = open_memstream(&out, &olen);
			record_write_json(&r, f);
			fclose(f);
			if (record_parse(out, olen, &again, &err) != 0)
				abort();
			if (again.facts.n != r.facts.n || again.n_findings != r.n_findings)
				abort();
			record_free(&again);
			record_free(&r);
			free(out);
		}
		free(err);
		break;
	}
	case 32: {
		/* --hosts: a hostlist (raw bytes) and a hosts file; every name
		 * it gives is a valid host name, and compressing and expanding
		 * again gives the same set */
		struct strv out = STRV_INIT, again = STRV_INIT, dropped = STRV_INIT;
		char *err = NULL;
		if (hostlist_expand(text, len, &out, &err) == 0) {
			hostlist_unique(&out, &dropped);
			struct node_record *r = xcalloc(out.n + 1, sizeof(*r));
			size_t *idx = xcalloc(out.n + 1, sizeof(*idx));
			for (size_t i = 0; i < out.n; i++) {
				if (!host_name_valid(out.v[i]))
					abort();
				r[i].node = out.v[i];
				idx[i] = i;
			}
			char *c = hostlist_compress(r, idx, out.n);
			if (strlen(c) <= HOSTLIST_MAX_TEXT &&
			    (hostlist_expand(c, strlen(c), &again, &err) != 0 || again.n != out.n))
				abort();
			free(c);
			free(r);
			free(idx);
		}
		free(err);
		err = NULL;
		if (hostlist_parse_file(text, len, &again, &err) < 0)
			free(err);
		sink += (unsigned)(out.n + again.n);
		/* scontrol's node line (--resume reads it): the raw bytes; and
		 * the drain reason made of them holds no byte that could leave
		 * the double quotes of the printed command */
		struct slurm_node sn;
		err = NULL;
		if (slurm_parse_node(text, len, "n1", &sn, &err) == 0) {
			sink += (unsigned)strlen(sn.state) + sn.by_gpuready;
			slurm_node_free(&sn);
		}
		free(err);
		char *reason = slurm_reason(s);
		if (strlen(reason) > SLURM_REASON_MAX || strpbrk(reason, "\"$`\\!'\n"))
			abort();
		free(reason);
		strv_free(&out);
		strv_free(&again);
		strv_free(&dropped);
		break;
	}
	}
	free(s);
	return 0;
}
