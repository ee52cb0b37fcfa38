/* Reading NCCL's INFO/WARN log into facts; see nccl_log.h.
 *
 * The log is line oriented. Each NCCL line carries a prefix this parser does
 * not trust (`host:pid:tid [dev] `, a `[%F %T] ` timestamp on WARN lines since
 * 2.26, `file:line (func)` before `NCCL WARN`, launcher tags such as
 * `[1,0]<stdout>:` or `host: `); only the text after the first "NCCL INFO "
 * or "NCCL WARN " counts. The message shapes come from the NCCL sources
 * (NCCL src/transport/net_ib, src/debug.cc): `NET/%s : Using%s %s; OOB %s:%s` (each device `[i]name:port/
 * IB|RoCE`, merged devices `[i]={[j] name:port/link, ...}`), `NET/%s : GPU
 * Direct RDMA %s for HCA %d '%s'`, `Using network %s`, `DMA-BUF is available
 * on GPU device %d`, channel lines `Channel %02d/%d : a[b] -> c[d] [send] via
 * NET/<net>/<dev>[(proxy)][/GDRDMA][/Shared]`, `via P2P/<kind>[/read][/CE]`,
 * `via SHM/<send>/<recv>`.
 *
 * Robustness: lines are cut at PARSE_LINE_MAX bytes, NUL bytes become blanks,
 * a CR before the newline is dropped, every stored string is checked against
 * a character set and length, and every list has a cap, so garbage and
 * hostile input cost linear time and bounded memory. */
#include "bench/nccl_log.h"
#include "core/strbuf.h"

#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <json-c/json.h>

/* NCCL formats a line into a 1 KiB buffer but the arguments expand after
 * that (a 32-HCA "Using" list is ~700 bytes); 64 KiB leaves room for any
 * real line and bounds the work per garbage line. */
#define PARSE_LINE_MAX (64 * 1024)
#define MAX_NAME 64         /* HCA, network, interface, transport names */
#define MAX_HCAS 64         /* NCCL has MAX_IB_DEVS 32 */
#define MAX_TRANSPORTS 32
#define MAX_WARNINGS 64
#define MAX_WARN_LEN 1024   /* NCCL's own line buffer */

/* ---- small string helpers ---- */

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static bool name_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.';
}

/* Length of the run of name_char at s, or 0 when it exceeds MAX_NAME. */
static size_t name_len(const char *s)
{
	size_t n = 0;
	while (name_char(s[n]))
		n++;
	return n <= MAX_NAME ? n : 0;
}

/* Parses 1..6 decimal digits at *p into *v and advances; false otherwise. */
static bool take_uint(const char **p, int *v)
{
	const char *s = *p;
	int n = 0, x = 0;
	while (isdigit((unsigned char)s[n]) && n < 7)
		x = x * 10 + (s[n++] - '0');
	if (n == 0 || n > 6)
		return false;
	*v = x;
	*p = s + n;
	return true;
}

/* A copy of s[0..n) with anything outside printable ASCII replaced by '?',
 * trailing blanks removed; NULL when nothing is left. */
static char *clean_dup(const char *s, size_t n)
{
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	if (n == 0)
		return NULL;
	char *d = xstrndup(s, n);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)d[i] < 0x20 || (unsigned char)d[i] >= 0x7f)
			d[i] = '?';
	return d;
}

static void replace(char **slot, char *s)
{
	free(*slot);
	*slot = s;
}

/* ---- HCAs ---- */

static int gdr_merge(int cur, int v)
{
	if (v == 0)
		return 0; /* one "Disabled" verdict wins: that rank stages via host memory */
	return cur == -1 ? v : cur;
}

/* The verdict already known for an HCA name (-1 none). */
static int gdr_for_name(const struct nccl_log *l, const char *name)
{
	int g = -1;
	for (size_t i = 0; i < l->n_hcas; i++)
		if (!strcmp(l->hcas[i].name, name) && l->hcas[i].gdr != -1)
			g = gdr_merge(g, l->hcas[i].gdr);
	return g;
}

static struct nccl_hca *hca_append(struct nccl_log *l, int index, const char *name, size_t n, int port)
{
	if (l->n_hcas >= MAX_HCAS)
		return NULL;
	l->hcas = xreallocarray(l->hcas, l->n_hcas + 1, sizeof(*l->hcas));
	struct nccl_hca *h = &l->hcas[l->n_hcas++];
	*h = (struct nccl_hca){ .index = index, .name = xstrndup(name, n), .port = port, .gdr = -1 };
	return h;
}

/* One "[i]name:port/link" from a Using line: deduplicated by name:port. An
 * entry created earlier from a GDR verdict alone (port -1) is completed. */
static void hca_listed(struct nccl_log *l, int index, const char *name, size_t n, int port, const char *link)
{
	struct nccl_hca *h = NULL;
	for (size_t i = 0; i < l->n_hcas && !h; i++) {
		struct nccl_hca *c = &l->hcas[i];
		if (strlen(c->name) == n && !strncmp(c->name, name, n) && (c->port == port || c->port == -1))
			h = c;
	}
	if (!h) {
		h = hca_append(l, index, name, n, port);
		if (!h)
			return;
		h->gdr = gdr_for_name(l, h->name);
	} else if (h->port == -1) {
		h->port = port;
		h->index = index;
	}
	if (!h->link && link)
		h->link = xstrdup(link);
}

/* A GDR verdict for one physical HCA name. */
static void hca_verdict(struct nccl_log *l, int index, const char *name, size_t n, int gdr)
{
	bool found = false;
	for (size_t i = 0; i < l->n_hcas; i++) {
		struct nccl_hca *c = &l->hcas[i];
		if (strlen(c->name) == n && !strncmp(c->name, name, n)) {
			c->gdr = gdr_merge(c->gdr, gdr);
			found = true;
		}
	}
	struct nccl_hca *h = found ? NULL : hca_append(l, index, name, n, -1);
	if (h)
		h->gdr = gdr;
}

/* ---- NET/<net> : ... messages ---- */

/* " [0]mlx5_0:1/RoCE [1]={[2] mlx5_2:1/IB, [3] mlx5_3:1/IB} [RO]" */
static void parse_hca_list(struct nccl_log *l, const char *p)
{
	while ((p = strchr(p, '['))) {
		p++;
		int index, port;
		if (!take_uint(&p, &index) || *p != ']')
			continue; /* "[RO]", garbage */
		p++;
		if (*p == '=')
			continue; /* a merged device: its members follow as "[j] name" */
		if (*p == ' ')
			p++;
		const char *name = p;
		size_t n = name_len(p);
		if (n == 0 || p[n] != ':')
			continue;
		p += n + 1;
		if (!take_uint(&p, &port))
			continue;
		const char *link = NULL;
		if (starts(p, "/IB") && !isalnum((unsigned char)p[3]))
			link = "IB";
		else if (starts(p, "/RoCE") && !isalnum((unsigned char)p[5]))
			link = "RoCE";
		hca_listed(l, index, name, n, port, link);
	}
}

/* "[0]eth0:10.0.0.1<0>" or "eth0:10.0.0.1<0>" -> "eth0:10.0.0.1" */
static char *parse_if_addr(const char *p)
{
	int idx;
	while (*p == ' ')
		p++;
	if (*p == '[') {
		p++;
		if (!take_uint(&p, &idx) || *p != ']')
			return NULL;
		p++;
	}
	size_t n = strcspn(p, "< \t");
	if (n == 0 || n > 2 * MAX_NAME || p[n] != '<')
		return NULL; /* without "<port>" the line was cut */
	return clean_dup(p, n);
}

static void parse_net_using(struct nccl_log *l, const char *net, char *rest)
{
	if (!strcmp(net, "Socket")) {
		char *s = parse_if_addr(rest);
		if (s && !l->socket_if)
			l->socket_if = s;
		else
			free(s);
		return;
	}
	char *oob = strstr(rest, "; OOB ");
	if (oob) {
		*oob = '\0';
		char *s = parse_if_addr(oob + strlen("; OOB "));
		if (s && !l->oob_if)
			l->oob_if = s;
		else
			free(s);
	}
	parse_hca_list(l, rest);
}

/* "GPU Direct RDMA Enabled for HCA 0 'mlx5_0'"; merged virtual devices are
 * named "mlx5_0+mlx5_1" and give their verdict to each member. */
static void parse_gdr(struct nccl_log *l, const char *net, const char *p)
{
	int gdr, index;
	if (!strcmp(net, "Socket"))
		return; /* a socket interface is no HCA */
	if (starts(p, "Enabled for HCA ")) {
		gdr = 1;
		p += strlen("Enabled for HCA ");
	} else if (starts(p, "Disabled for HCA ")) {
		gdr = 0;
		p += strlen("Disabled for HCA ");
	} else {
		return;
	}
	if (!take_uint(&p, &index) || !starts(p, " '"))
		return;
	p += 2;
	const char *end = strchr(p, '\'');
	if (!end || end == p)
		return;
	for (const char *q = p; q < end;) {
		size_t n = name_len(q);
		if (n == 0 || (q + n != end && q[n] != '+'))
			return;
		q += n + (q + n != end);
	}
	for (const char *q = p; q < end;) {
		size_t n = name_len(q);
		hca_verdict(l, index, q, n, gdr);
		q += n + (q + n != end);
	}
}

/* msg points after "NET/". */
static void parse_net_msg(struct nccl_log *l, char *msg)
{
	char *sep = strstr(msg, " : ");
	if (!sep || sep == msg || sep - msg > MAX_NAME)
		return;
	*sep = '\0';
	const char *net = msg;
	char *rest = sep + 3;
	if (starts(rest, "Using "))
		parse_net_using(l, net, rest + strlen("Using"));
	else if (starts(rest, "No device found") && !strncmp(net, "IB", 2))
		l->ib_no_device = true;
	else if (starts(rest, "GPU Direct RDMA "))
		parse_gdr(l, net, rest + strlen("GPU Direct RDMA "));
}

/* ---- other INFO messages ---- */

static void parse_version(struct nccl_log *l, const char *p)
{
	size_t n = 0;
	while (name_char(p[n]) || p[n] == '+')
		n++;
	if (n == 0 || n > MAX_NAME || !isdigit((unsigned char)p[0]) || l->version)
		return;
	l->version = xstrndup(p, n);
}

static bool valid_net_name(const char *p, size_t n)
{
	if (n == 0 || n > MAX_NAME || !isalnum((unsigned char)p[0]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!name_char(p[i]) && p[i] != ' ' && p[i] != '+')
			return false;
	return true;
}

/* "Using network IB". The first network seen is kept, except that a later
 * Socket replaces IB or a plugin: one rank on TCP slows every collective,
 * so that is the fact worth reporting. The HPC-X plugin's "IBext", "IBext_v8"
 * is the same verbs transport as NCCL's internal IB and counts as IB. */
static void parse_network(struct nccl_log *l, const char *p)
{
	size_t n = strlen(p);
	while (n > 0 && p[n - 1] == ' ')
		n--;
	if (!valid_net_name(p, n))
		return;
	enum nccl_net net = NCCL_NET_OTHER;
	if (n == 6 && !strncmp(p, "Socket", 6))
		net = NCCL_NET_SOCKET;
	else if ((n == 2 && !strncmp(p, "IB", 2)) || starts(p, "IBext"))
		net = NCCL_NET_IB;
	if (l->net != NCCL_NET_UNKNOWN && !(net == NCCL_NET_SOCKET && l->net != NCCL_NET_SOCKET))
		return;
	l->net = net;
	replace(&l->net_name, xstrndup(p, n));
}

static void add_unique(struct strv *sv, char *s, size_t cap)
{
	if (!s)
		return;
	if (sv->n >= cap || strv_contains(sv, s))
		free(s);
	else
		strv_push(sv, s);
}

/* "P2P/<kind>[/read][/CE]" -> "P2P/<kind>". A kind NCCL does not have yet
 * is accepted only when a '/' shows it is complete, so a line cut inside
 * "P2P/CUM" adds nothing. */
static char *p2p_transport(const char *t)
{
	static const char *const kinds[] = { "CUMEM", "IPC", "direct pointer", "indirect" };
	const char *k = t + 4;
	size_t n = strcspn(k, "/");
	bool known = false;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		known = known || (strlen(kinds[i]) == n && !strncmp(k, kinds[i], n));
	if (n == 0 || n > MAX_NAME || (!known && k[n] != '/'))
		return NULL;
	return clean_dup(t, 4 + n);
}

/* "SHM/<send>/<recv>", each "direct" or "CE" (shm.cc). */
static char *shm_transport(const char *t)
{
	const char *p = t + 4;
	for (int i = 0; i < 2; i++) {
		if (starts(p, "direct"))
			p += 6;
		else if (starts(p, "CE"))
			p += 2;
		else
			return NULL;
		if (i == 0 && *p++ != '/')
			return NULL;
	}
	if (*p != '\0' && *p != ' ' && *p != '/')
		return NULL;
	return clean_dup(t, (size_t)(p - t));
}

/* The text after " via " of a channel line. */
static void parse_via(struct nccl_log *l, const char *t)
{
	if (starts(t, "NET/")) {
		l->net_channels = true;
		/* "NET/<net>/<dev>[(<proxy rank>)][/GDRDMA[(PCI)]][/Shared]": look
		 * after the device number, so a plugin name cannot fake it */
		const char *g = t + 4;
		while ((g = strchr(g, '/')) && !isdigit((unsigned char)g[1]))
			g++;
		while (g && (g = strstr(g, "/GDRDMA"))) {
			char c = g[7];
			if (c == '\0' || c == '/' || c == ' ' || c == '(')
				l->gdrdma_channels = true;
			g++;
		}
	} else if (starts(t, "P2P/")) {
		add_unique(&l->transports, p2p_transport(t), MAX_TRANSPORTS);
	} else if (starts(t, "SHM/")) {
		add_unique(&l->transports, shm_transport(t), MAX_TRANSPORTS);
	}
}

static void parse_dmabuf(struct nccl_log *l, const char *p)
{
	int dev;
	if (take_uint(&p, &dev) && (*p == '\0' || *p == ' '))
		l->dmabuf++;
}

/* msg: the text after "NCCL INFO ", trailing blanks removed. */
static void parse_info(struct nccl_log *l, char *msg)
{
	if (starts(msg, "NET/"))
		parse_net_msg(l, msg + 4);
	else if (starts(msg, "Using network "))
		parse_network(l, msg + strlen("Using network "));
	else if (starts(msg, "NCCL version "))
		parse_version(l, msg + strlen("NCCL version "));
	else if (starts(msg, "DMA-BUF is available on GPU device "))
		parse_dmabuf(l, msg + strlen("DMA-BUF is available on GPU device "));
	else if (starts(msg, "Channel ") || starts(msg, "Ring ")) {
		const char *via = strstr(msg, " via ");
		if (via)
			parse_via(l, via + 5);
	}
}

static void parse_warn(struct nccl_log *l, const char *msg)
{
	size_t n = strlen(msg);
	add_unique(&l->warnings, clean_dup(msg, n < MAX_WARN_LEN ? n : MAX_WARN_LEN), MAX_WARNINGS);
}

/* A line without an INFO/WARN marker: NCCL at level VERSION (and rank 0 of
 * older releases) prints a bare "NCCL version 2.18.5+cuda12.0", perhaps
 * behind an mpirun "[1,0]<stdout>:" tag. */
static void parse_bare(struct nccl_log *l, const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	if (*s == '[') {
		const char *tag = strstr(s, ">:");
		if (tag && tag - s < 32)
			s = tag + 2;
	}
	if (starts(s, "NCCL version "))
		parse_version(l, s + strlen("NCCL version "));
}

void nccl_log_line(struct nccl_log *l, char *s)
{
	char *info = strstr(s, "NCCL INFO");
	char *warn = strstr(s, "NCCL WARN");
	if (warn && (!info || warn < info)) {
		warn += strlen("NCCL WARN");
		parse_warn(l, warn + (*warn == ' '));
	} else if (info) {
		info += strlen("NCCL INFO");
		parse_info(l, info + (*info == ' '));
	} else {
		parse_bare(l, s);
	}
}

/* Copies one line, cut at PARSE_LINE_MAX, NULs made blanks, trailing CR and
 * blanks dropped. */
static void take_line(struct strbuf *sb, const char *p, size_t n)
{
	strbuf_reset(sb);
	strbuf_add(sb, p, n < PARSE_LINE_MAX ? n : PARSE_LINE_MAX);
	for (size_t i = 0; i < sb->len; i++)
		if (sb->buf[i] == '\0')
			sb->buf[i] = ' ';
	strbuf_rtrim(sb);
}

void nccl_log_init(struct nccl_log *out)
{
	*out = (struct nccl_log){ .net = NCCL_NET_UNKNOWN, .transports = STRV_INIT, .warnings = STRV_INIT };
}

void nccl_log_parse(const char *text, size_t len, struct nccl_log *out)
{
	nccl_log_init(out);
	if (!text)
		return;
	struct strbuf line = STRBUF_INIT;
	size_t pos = 0;
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len;
		take_line(&line, text + pos, end - pos);
		if (out->lines < INT_MAX)
			out->lines++;
		nccl_log_line(out, line.buf);
		pos = end + 1;
	}
	strbuf_release(&line);
}

void nccl_log_free(struct nccl_log *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n_hcas; i++) {
		free(l->hcas[i].name);
		free(l->hcas[i].link);
	}
	free(l->hcas);
	free(l->version);
	free(l->net_name);
	free(l->socket_if);
	free(l->oob_if);
	strv_free(&l->transports);
	strv_free(&l->warnings);
	*l = (struct nccl_log){ .net = NCCL_NET_UNKNOWN };
}

/* ---- verdicts ---- */

#define HOW_TO_LOG "run NCCL with NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS including INIT,NET"

static void summary_network(const struct nccl_log *l, struct strbuf *sb)
{
	if (l->net == NCCL_NET_UNKNOWN) {
		strbuf_addf(sb, "network: unknown (no \"Using network\" line; %s)", HOW_TO_LOG);
		return;
	}
	strbuf_addf(sb, "network: %s", l->net_name);
	if (l->net == NCCL_NET_SOCKET) {
		if (l->socket_if)
			strbuf_addf(sb, " (%s)", l->socket_if);
		if (l->ib_no_device)
			strbuf_adds(sb, "; NET/IB found no device");
		return;
	}
	for (size_t i = 0; i < l->n_hcas; i++) {
		const struct nccl_hca *h = &l->hcas[i];
		strbuf_adds(sb, i ? ", " : " (");
		strbuf_adds(sb, h->name);
		if (h->port >= 0)
			strbuf_addf(sb, ":%d", h->port);
		if (h->link)
			strbuf_addf(sb, "/%s", h->link);
	}
	if (l->n_hcas)
		strbuf_addch(sb, ')');
}

/* Names of HCAs with the given verdict, each once, comma separated. */
static void names_with_gdr(const struct nccl_log *l, int gdr, struct strbuf *sb)
{
	for (size_t i = 0; i < l->n_hcas; i++) {
		bool dup = false;
		for (size_t j = 0; j < i && !dup; j++)
			dup = !strcmp(l->hcas[j].name, l->hcas[i].name);
		if (l->hcas[i].gdr != gdr || dup)
			continue;
		if (sb->len)
			strbuf_adds(sb, ", ");
		strbuf_adds(sb, l->hcas[i].name);
	}
}

static void summary_gdr(const struct nccl_log *l, struct strbuf *sb)
{
	_cleanup_strbuf_ struct strbuf on = STRBUF_INIT, off = STRBUF_INIT;
	names_with_gdr(l, 1, &on);
	names_with_gdr(l, 0, &off);
	strbuf_adds(sb, "GPUDirect RDMA: ");
	if (off.len)
		strbuf_addf(sb, "off for %s%s%s", off.buf, on.len ? "; on for " : "", on.buf);
	else if (on.len)
		strbuf_addf(sb, "on for %s", on.buf);
	else if (l->net == NCCL_NET_SOCKET)
		strbuf_adds(sb, "not applicable (Socket network)");
	else if (l->gdrdma_channels)
		strbuf_adds(sb, "in use (GDRDMA channels)");
	else if (l->net_channels)
		strbuf_adds(sb, "not used (NET channels without /GDRDMA)");
	else
		strbuf_adds(sb, "not logged (needs NCCL_DEBUG_SUBSYS to include NET)");
}

static void push_sb(struct strv *out, struct strbuf *sb)
{
	strv_push(out, strbuf_detach(sb));
}

void nccl_log_summary(const struct nccl_log *l, struct strv *out)
{
	struct strbuf sb = STRBUF_INIT;
	summary_network(l, &sb);
	push_sb(out, &sb);
	summary_gdr(l, &sb);
	push_sb(out, &sb);
	strbuf_adds(&sb, l->dmabuf > 0 ? "DMA-BUF: available" : "DMA-BUF: not reported");
	push_sb(out, &sb);
	strbuf_adds(&sb, "intra-node: ");
	for (size_t i = 0; i < l->transports.n; i++)
		strbuf_addf(&sb, "%s%s", i ? ", " : "", l->transports.v[i]);
	if (!l->transports.n)
		strbuf_adds(&sb, "none seen");
	push_sb(out, &sb);
	if (l->version)
		strv_push(out, xasprintf("NCCL %s", l->version));
	for (size_t i = 0; i < l->warnings.n && i < 5; i++)
		strv_push(out, xasprintf("NCCL WARN %s", l->warnings.v[i]));
	if (l->warnings.n > 5)
		strv_push(out, xasprintf("... and %zu more NCCL warnings", l->warnings.n - 5));
}

static bool meets_ib(const struct nccl_log *l, struct strv *why)
{
	if (l->net == NCCL_NET_IB)
		return true;
	if (l->net == NCCL_NET_UNKNOWN)
		strv_push(why, xasprintf("ib: the log has no \"Using network\" line; %s", HOW_TO_LOG));
	else if (l->net == NCCL_NET_SOCKET)
		strv_push(why, xasprintf("ib: NCCL used the Socket network (TCP), not IB%s",
					 l->ib_no_device ? "; NET/IB : No device found" : ""));
	else
		strv_push(why, xasprintf("ib: NCCL used the network \"%s\", not IB", l->net_name));
	return false;
}

/* GDR holds when some HCA has it (or a channel shows /GDRDMA) and no HCA in
 * use runs without it. With the Socket network no HCA is in use, whatever
 * another rank listed. */
static bool meets_gdr(const struct nccl_log *l, struct strv *why)
{
	_cleanup_strbuf_ struct strbuf on = STRBUF_INIT, off = STRBUF_INIT;
	names_with_gdr(l, 1, &on);
	names_with_gdr(l, 0, &off);
	if (l->net == NCCL_NET_SOCKET) {
		strv_push(why, xstrdup("gdr: NCCL used the Socket network; GPUDirect RDMA needs IB/RoCE"));
		return false;
	}
	if (off.len) {
		strv_push(why, xasprintf("gdr: GPU Direct RDMA Disabled for HCA %s", off.buf));
		return false;
	}
	if (on.len || l->gdrdma_channels)
		return true;
	if (l->net_channels)
		strv_push(why, xstrdup("gdr: NET channels run without /GDRDMA (data staged through host memory)"));
	else
		strv_push(why, xasprintf("gdr: no \"GPU Direct RDMA Enabled for HCA\" line; %s", HOW_TO_LOG));
	return false;
}

static bool meets_dmabuf(const struct nccl_log *l, struct strv *why)
{
	if (l->dmabuf > 0)
		return true;
	if (l->net == NCCL_NET_UNKNOWN)
		strv_push(why, xasprintf("dmabuf: no \"DMA-BUF is available on GPU device\" line; %s", HOW_TO_LOG));
	else
		strv_push(why, xstrdup("dmabuf: NCCL did not report DMA-BUF on any GPU (needs the open GPU kernel "
				       "modules, CUDA >= 11.7, Linux >= 5.12, NCCL_DMABUF_ENABLE not 0)"));
	return false;
}

static const struct {
	const char *word;
	bool (*check)(const struct nccl_log *, struct strv *);
} nccl_reqs[] = { { "ib", meets_ib }, { "gdr", meets_gdr }, { "dmabuf", meets_dmabuf } };
#define N_REQS (sizeof(nccl_reqs) / sizeof(nccl_reqs[0]))

/* The next word of a --require list from *p (advanced past it): its index
 * in nccl_reqs, N_REQS for an unknown word (w, n say which), -1 at the
 * end. Empty words between commas are passed over. */
static int next_req(const char **p, const char **ret_w, size_t *ret_n)
{
	while (**p) {
		const char *w = *p;
		size_t n = strcspn(w, ",");
		*p += n + (w[n] == ',');
		while (n && isspace((unsigned char)*w))
			w++, n--;
		while (n && isspace((unsigned char)w[n - 1]))
			n--;
		if (n == 0)
			continue;
		size_t k = 0;
		while (k < N_REQS && !(strlen(nccl_reqs[k].word) == n && !strncasecmp(w, nccl_reqs[k].word, n)))
			k++;
		*ret_w = w;
		*ret_n = n;
		return (int)k;
	}
	return -1;
}

const char *nccl_require_form(const char *require)
{
	const char *p = require, *w;
	size_t n;
	for (int k; (k = next_req(&p, &w, &n)) >= 0;)
		if (k == (int)N_REQS)
			return "a comma-separated list of ib, gdr, dmabuf";
	return NULL;
}

bool nccl_log_meets(const struct nccl_log *l, const char *require, struct strv *why)
{
	bool ok = true, done[N_REQS] = { false };
	const char *p = require ? require : "", *w;
	size_t n;
	for (int k; (k = next_req(&p, &w, &n)) >= 0;) {
		if (k == (int)N_REQS) {
			strv_push(why, xasprintf("unknown requirement \"%.*s\" (known: ib, gdr, dmabuf)",
						 (int)(n < MAX_NAME ? n : MAX_NAME), w));
			ok = false;
		} else if (!done[k]) {
			done[k] = true;
			ok = nccl_reqs[k].check(l, why) && ok;
		}
	}
	return ok;
}

/* What the NCCL log says, as fields of o: the HCAs NCCL listed (with
 * GPUDirect RDMA true/false, null when not logged), DMA-BUF, the socket
 * interface, intra-node transports and NCCL's warnings. */
void nccl_log_facts_json(struct json_object *o, const struct nccl_log *log)
{
	json_object *hcas = json_object_new_array(), *tr = json_object_new_array(), *warn = json_object_new_array();
	for (size_t i = 0; i < log->n_hcas; i++) {
		const struct nccl_hca *h = &log->hcas[i];
		json_object *x = json_object_new_object();
		json_object_object_add(x, "name", json_object_new_string(h->name));
		json_object_object_add(x, "port", h->port >= 0 ? json_object_new_int(h->port) : NULL);
		json_object_object_add(x, "link", h->link ? json_object_new_string(h->link) : NULL);
		json_object_object_add(x, "gdr", h->gdr >= 0 ? json_object_new_boolean(h->gdr) : NULL);
		json_object_array_add(hcas, x);
	}
	for (size_t i = 0; i < log->transports.n; i++)
		json_object_array_add(tr, json_object_new_string(log->transports.v[i]));
	for (size_t i = 0; i < log->warnings.n; i++)
		json_object_array_add(warn, json_object_new_string(log->warnings.v[i]));
	json_object_object_add(o, "hcas", hcas);
	json_object_object_add(o, "gdrdma_channels", json_object_new_boolean(log->gdrdma_channels));
	json_object_object_add(o, "dmabuf", json_object_new_boolean(log->dmabuf > 0));
	json_object_object_add(o, "socket_if", log->socket_if ? json_object_new_string(log->socket_if) : NULL);
	json_object_object_add(o, "intra_node", tr);
	json_object_object_add(o, "nccl_warnings", warn);
}
