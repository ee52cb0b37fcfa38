/* What the ranks of `gpuready cluster links` tell each other (see
 * links_wire.h). */
#define _GNU_SOURCE
#include "cluster/links_wire.h"
#include "core/cleanup.h"
#include "core/parse.h"
#include "cluster/node.h"

#include "job/session.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

void links_part_line(struct strbuf *sb, int from, int pass, double gbps, char *err)
{
	if (err)
		strbuf_addf(sb, "%d %d E %.200s\n", from, pass, str_printable(err, false));
	else
		strbuf_addf(sb, "%d %d %.6f\n", from, pass, gbps);
}

void links_rail_line(struct strbuf *sb, int rail, int to, int pass, double gbps, char *err)
{
	strbuf_addf(sb, "r%d ", rail);
	links_part_line(sb, to, pass, gbps, err);
}

/* One rank's lines into measurements (rank 0): "FROM PASS GBPS" or
 * "FROM PASS E why", the receiver is the rank; "rRAIL TO PASS ...", the
 * sender is the rank. Lines that make no sense are counted, not trusted. */
size_t links_parse_part(int me, int n, char *buf, size_t len, struct links_meas **m, size_t *nm)
{
	size_t bad = 0;
	char *save = NULL;
	buf[len] = 0;
	for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *end = line;
		long rail = *line == 'r' ? strtol(line + 1, &end, 10) : -1;
		if (rail >= 0 && (rail >= LINKS_RAILS_MAX || *end != ' ' || end == line + 1)) {
			bad++;
			continue;
		}
		long peer = strtol(rail >= 0 ? end + 1 : line, &end, 10), pass = *end == ' ' ? strtol(end + 1, &end, 10) : 0;
		if (peer < 0 || peer >= n || peer == me || (pass != 1 && pass != 2) || *end != ' ') {
			bad++;
			continue;
		}
		struct links_meas x = { .from = rail >= 0 ? me : (int)peer, .to = rail >= 0 ? (int)peer : me,
					.pass = (int)pass, .gbps = -1, .rail = rail >= 0 ? (int)rail + 1 : LINKS_RAIL_TCP };
		if (end[1] == 'E' && end[2] == ' ')
			x.err = xstrndup(str_printable(end + 3, false), 200); /* as the sender bounds it */
		else if (!(x.gbps = strtod(end + 1, &end), *end == 0 && isfinite(x.gbps) && x.gbps >= 0)) {
			bad++;
			continue;
		}
		*m = links_grow(*m, *nm, sizeof(**m));
		(*m)[(*nm)++] = x;
	}
	return bad;
}

void links_want(unsigned char *want, int n, const struct sched_pair *p, size_t np, int pass)
{
	for (size_t i = 0; i < np && want; i++) {
		want[(size_t)p[i].a * (size_t)n + (size_t)p[i].b] = (unsigned char)pass;
		want[(size_t)p[i].b * (size_t)n + (size_t)p[i].a] = (unsigned char)pass;
	}
}

size_t links_keep_scheduled(struct links_meas *m, size_t first, size_t *nm, int n, int pass, unsigned char *want)
{
	size_t k = first, bad = 0;
	for (size_t i = first; i < *nm; i++) {
		unsigned char *w = &want[(size_t)m[i].from * (size_t)n + (size_t)m[i].to];
		if (m[i].pass == pass && *w == pass) {
			*w = 0;
			m[k++] = m[i];
		} else {
			free(m[i].err);
			bad++;
		}
	}
	*nm = k;
	return bad;
}

void links_want_rails(uint32_t *left, int n, const struct sched_pair *p, size_t np, const uint32_t *mask)
{
	for (size_t i = 0; i < np && left; i++) {
		left[(size_t)p[i].a * (size_t)n + (size_t)p[i].b] = mask[i];
		left[(size_t)p[i].b * (size_t)n + (size_t)p[i].a] = mask[i];
	}
}

size_t links_keep_rails(struct links_meas *m, size_t first, size_t *nm, int n, int pass, const unsigned char *want,
			uint32_t *left)
{
	size_t k = first, bad = 0;
	for (size_t i = first; i < *nm; i++) {
		size_t at = (size_t)m[i].from * (size_t)n + (size_t)m[i].to;
		uint32_t bit = m[i].rail >= 0 && m[i].rail <= LINKS_RAILS_MAX ? 1u << m[i].rail : 0;
		if (m[i].pass == pass && want[at] == pass && (left[at] & bit)) {
			left[at] &= ~bit;
			m[k++] = m[i];
		} else {
			free(m[i].err);
			bad++;
		}
	}
	*nm = k;
	return bad;
}

static void add_failed(struct links_meas **m, size_t *nm, int f, int t, int pass, int rail)
{
	*m = links_grow(*m, *nm, sizeof(**m));
	(*m)[(*nm)++] = (struct links_meas){ .from = f, .to = t, .pass = pass, .gbps = -1, .rail = rail,
					     .err = xasprintf("rank %d sent no result for it", rail ? f : t) };
}

void links_add_missing(struct links_meas **m, size_t *nm, int n, int pass, unsigned char *want, uint32_t *left)
{
	for (int f = 0; f < n; f++)
		for (int t = 0; t < n; t++) {
			size_t at = (size_t)f * (size_t)n + (size_t)t;
			if (want[at] != pass)
				continue;
			want[at] = 0;
			for (int r = 0; r <= LINKS_RAILS_MAX; r++)
				if (left ? left[at] & (1u << r) : r == LINKS_RAIL_TCP)
					add_failed(m, nm, f, t, pass, r);
			if (left)
				left[at] = 0;
		}
}

size_t links_plan_len(int n_rounds, int n_pairs)
{
	return (size_t)n_rounds + 1 + 2 * (size_t)n_pairs;
}

int32_t *links_plan_encode(const struct links_rounds *r)
{
	int32_t *v = xcalloc(links_plan_len(r->n_rounds, (int)r->n_pairs), sizeof(*v));
	for (int k = 0; k <= r->n_rounds; k++)
		v[k] = (int32_t)r->start[k];
	for (size_t i = 0; i < r->n_pairs; i++) {
		v[r->n_rounds + 1 + 2 * i] = r->pairs[i].a;
		v[r->n_rounds + 2 + 2 * i] = r->pairs[i].b;
	}
	return v;
}

void links_plan_decode(const int32_t *v, int n_rounds, int n_pairs, int n, struct links_rounds *out)
{
	*out = (struct links_rounds){ .n_rounds = n_rounds, .n_pairs = (size_t)n_pairs };
	out->start = xcalloc((size_t)n_rounds + 2, sizeof(size_t));
	out->pairs = xcalloc((size_t)n_pairs + 1, sizeof(*out->pairs));
	for (int k = 0; k <= n_rounds; k++)
		out->start[k] = v[k] < 0 || v[k] > n_pairs ? (size_t)n_pairs : (size_t)v[k];
	for (int i = 0; i < n_pairs; i++) {
		int a = v[n_rounds + 1 + 2 * i], b = v[n_rounds + 2 + 2 * i];
		bool ok = a >= 0 && b >= 0 && a < n && b < n && a != b;
		out->pairs[i] = ok ? (struct sched_pair){ a, b } : (struct sched_pair){ -1, -1 };
	}
}

/* The Mellanox RDMA device behind netdev ifname (mlx5_core), for the
 * hint's `mlxlink -d`; "" when none. */
void links_mellanox_device(const char *ifname, char *out, size_t len)
{
	char path[PATH_MAX], link[PATH_MAX];
	out[0] = 0;
	if (!ifname[0])
		return;
	snprintf(path, sizeof(path), "/sys/class/net/%s/device/driver", ifname);
	ssize_t k = readlink(path, link, sizeof(link) - 1);
	if (k <= 0)
		return;
	link[k] = 0;
	const char *base = strrchr(link, '/');
	if (strcmp(base ? base + 1 : link, "mlx5_core"))
		return;
	snprintf(path, sizeof(path), "/sys/class/net/%s/device/infiniband", ifname);
	_cleanup_closedir_ DIR *d = opendir(path);
	for (struct dirent *e; d && (e = readdir(d));)
		if (e->d_name[0] != '.') {
			snprintf(out, len, "%s", e->d_name);
			return;
		}
}

void links_nodes_clean(struct links_node *nodes, int n)
{
	for (int i = 0; i < n; i++) {
		struct links_node *x = &nodes[i];
		x->name[sizeof(x->name) - 1] = x->addr[sizeof(x->addr) - 1] = 0;
		x->ifname[sizeof(x->ifname) - 1] = x->rdma[sizeof(x->rdma) - 1] = 0;
		str_printable(x->ifname, false);
		str_printable(x->rdma, false);
		x->rails[sizeof(x->rails) - 1] = x->rail_ifs[sizeof(x->rail_ifs) - 1] = 0;
		str_printable(x->rails, false);
		str_printable(x->rail_ifs, false);
		if (x->rport < 0 || x->rport > 65535)
			x->rport = 0; /* no listener: its rails fail */
		_cleanup_free_ char *clean = node_name_clean(x->name);
		bool dup = false;
		for (int j = 0; j < i && !dup; j++)
			dup = !strcmp(nodes[j].name, clean);
		if (dup)
			snprintf(x->name, sizeof(x->name), "%.40s#%d", clean, i);
		else
			snprintf(x->name, sizeof(x->name), "%s", clean);
	}
}

/* "::ffff:10.0.0.2" (an IPv4 peer of a dual-stack socket) is 10.0.0.2. */
static const char *unmapped(const char *a)
{
	return !strncmp(a, "::ffff:", 7) && strchr(a + 7, '.') ? a + 7 : a;
}

int links_nodes_verify(struct links_node *nodes, int n, const char *const *seen, struct strbuf *notes)
{
	int changed = 0;
	for (int i = 0; i < n; i++) {
		struct links_node *x = &nodes[i];
		const char *s = seen && seen[i] ? unmapped(seen[i]) : "";
		unsigned char buf[sizeof(struct in6_addr)];
		bool numeric = inet_pton(AF_INET, x->addr, buf) == 1 || inet_pton(AF_INET6, x->addr, buf) == 1;
		if (s[0] && strcmp(s, x->addr)) {
			str_printable(x->addr, false);
			strbuf_addf(notes, "%s%s announced %s%s%s, but its control connection came from %s: using %s",
				    notes->len ? "; " : "", x->name, numeric ? "" : "'", x->addr, numeric ? "" : "'", s, s);
			snprintf(x->addr, sizeof(x->addr), "%s", s);
			changed++;
		} else if (!numeric) {
			str_printable(x->addr, false);
			strbuf_addf(notes, "%s%s announced '%s', not a numeric address: its pairs fail", notes->len ? "; " : "",
				    x->name, x->addr);
			x->addr[0] = 0;
			changed++;
		}
	}
	return changed;
}

void links_nodes_check(struct session *ss, struct links_node *nodes, int n)
{
	const struct job_member *m = job_members(ss->cl);
	const char **seen = xcalloc((size_t)n, sizeof(*seen));
	for (int i = 1; i < n; i++)
		seen[i] = m[i].addr;
	_cleanup_strbuf_ struct strbuf notes = STRBUF_INIT;
	if (links_nodes_verify(nodes, n, seen, &notes))
		session_error(ss, "%s", notes.buf);
	free(seen);
}

uint64_t links_draw_seed(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t st = ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) ^ ((uint64_t)getpid() << 32);
	return sched_splitmix64(&st) | 1;
}

uint64_t links_draw_nonce(void)
{
	uint64_t v;
	return getrandom(&v, sizeof(v), 0) == sizeof(v) ? v : links_draw_seed();
}

void links_peers_pack(const struct links_node *nodes, int n, struct links_peer_wire *w)
{
	for (int i = 0; i < n; i++) {
		memcpy(w[i].name, nodes[i].name, sizeof(w[i].name));
		memcpy(w[i].addr, nodes[i].addr, sizeof(w[i].addr));
		memcpy(w[i].rails, nodes[i].rails, sizeof(w[i].rails));
		memcpy(w[i].rail_ifs, nodes[i].rail_ifs, sizeof(w[i].rail_ifs));
		w[i].port = nodes[i].port;
		w[i].rport = nodes[i].rport;
	}
}

void links_peers_unpack(const struct links_peer_wire *w, int n, struct links_node *nodes)
{
	for (int i = 0; i < n; i++) {
		struct links_node *x = &nodes[i];
		snprintf(x->name, sizeof(x->name), "%.*s", (int)sizeof(w[i].name) - 1, w[i].name);
		snprintf(x->addr, sizeof(x->addr), "%.*s", (int)sizeof(w[i].addr) - 1, w[i].addr);
		snprintf(x->rails, sizeof(x->rails), "%.*s", (int)sizeof(w[i].rails) - 1, w[i].rails);
		snprintf(x->rail_ifs, sizeof(x->rail_ifs), "%.*s", (int)sizeof(w[i].rail_ifs) - 1, w[i].rail_ifs);
		str_printable(x->rail_ifs, false);
		str_printable(x->name, false);
		str_printable(x->addr, false);
		str_printable(x->rails, false);
		x->port = w[i].port;
		x->rport = w[i].rport < 0 || w[i].rport > 65535 ? 0 : w[i].rport;
	}
}
