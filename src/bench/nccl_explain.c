/* Attributing the lines of NCCL logs to processes and matching their
 * warnings; see nccl_explain.h. The rendering (text, JSON, --require) is in
 * nccl_explain_out.c.
 *
 * Line shapes (NCCL src/debug.cc, 2.12-2.29): INFO "host:pid:tid [dev] NCCL
 * INFO msg", WARN "host:pid:tid [dev] file.cc:line NCCL WARN msg" (after an
 * empty line), since 2.23 an optional "[%F %T] " timestamp before the host;
 * VERSION level prints "NCCL version ..." bare. INFO messages read here
 * besides nccl_log.c's: "%s set by environment to %s" (src/param.cc and
 * the files that read each variable), "Bootstrap : Using%s" (2.12-2.21) / "Bootstrap: Using%s"
 * (2.22+), "NET/Plugin: Loaded net plugin %s (v%d)", "%d coll channels, [%d
 * collnet channels, ][%d nvls channels, ]%d p2p channels, %d p2p channels
 * per peer" (init.cc), "Channel %02d/%02d : <ring>" (graph/connect.cc),
 * "Trees [0] ... [1] ...", "... - Init COMPLETE", "... - Destroy COMPLETE",
 * "... - Abort COMPLETE", "AllReduce: opCount %lx ..." (enqueue.cc, with
 * NCCL_DEBUG_SUBSYS=COLL), "%s:%d -> %d" error traces (include/checks.h),
 * "GPU Direct RDMA Enabled|Disabled for ..." (graph/paths.cc and init.cc).
 * Lines that are not NCCL's (a framework's exception, a launcher's) are
 * matched only against the signatures whose texts frameworks print, except
 * the line after PyTorch's "Last error:", which quotes NCCL's last WARN. */
#include "bench/nccl_explain.h"
#include "bench/nccl_sig.h"
#include "core/cleanup.h"
#include "core/strbuf.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define LINE_MAX_KEEP (64 * 1024) /* as nccl_log.c's PARSE_LINE_MAX */
#define TEXT_KEEP 200             /* last lines and examples are cut here */
#define SIG_PROCS_KEEP 16
#define MAX_ENV 128
/* stopped-after-init (docs/failure-modes.md, section H): no WARN follows,
 * and either every process's last line is its Init COMPLETE or its first
 * collective call (the whole job stopped there), or one process's lines
 * end while another goes on launching at least STOP_MIN_AFTER collectives
 * (peers that finish together differ by a line or two). */
#define STOP_MIN_AFTER 4
#define STOP_MIN_LINES 5
#define OWNER_GOING_ON 0x80000000u /* the line launches a collective after its process's init */
#define OWNER_FINAL 0x40000000u    /* the line is an Init COMPLETE or a first collective call */
#define OWNER_WARN 0x20000000u
#define OWNER_COLL0 0x10000000u    /* the line is a first collective call (opCount 0) */
#define OWNER_PROC 0x0fffffffu

static bool starts(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

static bool host_char(char c)
{
	return isalnum((unsigned char)c) || c == '-' || c == '.' || c == '_';
}

static char *cut_dup(const char *s, size_t max)
{
	size_t n = strlen(s);
	char *d = xstrndup(s, n < max ? n : max);
	for (char *p = d; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
			*p = '?';
	return d;
}

/* ---- prefixes ---- */

struct prefix {
	const char *host;
	size_t host_n;
	int pid;
	char tag[32];
};

/* Digits at *p (at most 10) into *v; advances. */
static bool take_num(const char **p, long *v)
{
	const char *s = *p;
	long x = 0;
	int n = 0;
	while (isdigit((unsigned char)s[n]) && n < 11)
		x = x * 10 + (s[n++] - '0');
	if (n == 0 || n > 10)
		return false;
	*v = x;
	*p = s + n;
	return true;
}

/* A launcher's tag at s ("[rank0]:", "[default3]:", "[1,0]<stdout>:",
 * Slurm's "12: "): its normalized name into tag, the length it spans, 0
 * when none. */
static size_t launcher_tag(const char *s, char *tag, size_t size)
{
	const char *p = s;
	while (*p == ' ')
		p++;
	if (*p == '[') {
		const char *end = strchr(p, ']');
		if (!end || end - p > 24 || end == p + 1)
			return 0;
		const char *after = end + 1;
		if (starts(after, "<stdout>") || starts(after, "<stderr>"))
			after += 8;
		if (*after != ':')
			return 0;
		for (const char *q = p + 1; q < end; q++)
			if (!isalnum((unsigned char)*q) && *q != ',' && *q != '_')
				return 0;
		snprintf(tag, size, "%.*s", (int)(end - p - 1), p + 1);
		return (size_t)(after + 1 - s);
	}
	long v;
	const char *q = p;
	if (take_num(&q, &v) && q - p <= 6 && q[0] == ':' && q[1] == ' ') {
		snprintf(tag, size, "%ld", v);
		return (size_t)(q + 2 - s);
	}
	return 0;
}

/* NCCL's "host:pid:tid [" before end (the level marker), or false. */
static bool nccl_prefix(const char *s, const char *end, struct prefix *px)
{
	for (const char *p = s; p < end; p++) {
		if (*p != ':' || p == s || !host_char(p[-1]))
			continue;
		const char *q = p + 1;
		long pid, tid;
		if (!take_num(&q, &pid) || *q != ':')
			continue;
		q++;
		if (!take_num(&q, &tid) || q[0] != ' ' || q[1] != '[')
			continue;
		const char *h = p;
		while (h > s && host_char(h[-1]))
			h--;
		px->host = h;
		px->host_n = (size_t)(p - h);
		px->pid = pid > INT32_MAX ? -1 : (int)pid;
		if (px->host_n > 255)
			return false;
		return true;
	}
	return false;
}

/* ---- processes ---- */

/* Processes are found by key and by tag through an open-addressed table
 * of NCCL_EXPLAIN_SLOTS entries (each process puts at most its key, one
 * adopted key and its tag), so a line costs the same with 4,000 processes
 * as with one. An entry is (index << 1 | is_tag) + 1; 0 is empty. */
static uint32_t slot_hash(const char *s, bool tag)
{
	uint32_t h = 2166136261u ^ (uint32_t)tag;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static const char *slot_name(const struct nccl_explain *x, uint32_t v)
{
	const struct nccl_proc *p = &x->procs[(v - 1) >> 1];
	return (v - 1) & 1 ? p->tag : p->key;
}

static struct nccl_proc *slot_get(const struct nccl_explain *x, const char *s, bool tag)
{
	for (uint32_t i = slot_hash(s, tag), n = 0; x->slots && n < NCCL_EXPLAIN_SLOTS; i++, n++) {
		uint32_t v = x->slots[i % NCCL_EXPLAIN_SLOTS];
		if (v == 0)
			return NULL;
		if ((bool)((v - 1) & 1) == tag && !strcmp(slot_name(x, v), s))
			return &x->procs[(v - 1) >> 1];
	}
	return NULL;
}

static void slot_put(struct nccl_explain *x, const struct nccl_proc *p, bool tag)
{
	const char *s = tag ? p->tag : p->key;
	if (!x->slots)
		x->slots = xcalloc(NCCL_EXPLAIN_SLOTS, sizeof(*x->slots));
	for (uint32_t i = slot_hash(s, tag), n = 0; n < NCCL_EXPLAIN_SLOTS; i++, n++) {
		uint32_t v = x->slots[i % NCCL_EXPLAIN_SLOTS];
		/* a tag names the process that carried it last: torchrun's
		 * [default0] is the local rank on every node, and a restarted job
		 * reuses its ranks */
		if (v == 0 || (tag && ((v - 1) & 1) && !strcmp(slot_name(x, v), s))) {
			x->slots[i % NCCL_EXPLAIN_SLOTS] = ((uint32_t)(p - x->procs) << 1 | tag) + 1;
			return;
		}
	}
}

static struct nccl_proc *proc_new(struct nccl_explain *x, char *key)
{
	if (x->n_procs >= NCCL_EXPLAIN_MAX_PROCS) {
		x->cut_procs = true;
		free(key);
		return &x->procs[x->n_procs - 1];
	}
	x->procs = xreallocarray(x->procs, x->n_procs + 1, sizeof(*x->procs));
	struct nccl_proc *p = &x->procs[x->n_procs++];
	*p = (struct nccl_proc){ .key = key, .pid = -1, .stream = x->streams, .env = STRV_INIT, .sigs = STRV_INIT,
				 .coll_channels = -1, .nvls_channels = -1, .p2p_channels = -1, .rings = -1, .trees = -1,
				 .gdr_path = -1, .gdr_any = -1, .max_op = -1 };
	nccl_log_init(&p->log);
	slot_put(x, p, false);
	return p;
}

/* The process of a line: by host:pid, else by tag, else the line before's. */
static struct nccl_proc *proc_of(struct nccl_explain *x, const struct prefix *px, struct nccl_proc *prev)
{
	struct nccl_proc *p;
	if (px->host) {
		_cleanup_free_ char *key = xasprintf("%.*s:%d", (int)px->host_n, px->host, px->pid);
		if ((p = slot_get(x, key, false)))
			return p;
		p = px->tag[0] ? slot_get(x, px->tag, false) : NULL;
		if (p && !p->host) {
			free(p->key);
			p->key = TAKE_PTR(key);
			slot_put(x, p, false);
		} else {
			p = proc_new(x, TAKE_PTR(key));
		}
		if (!p->host) {
			p->host = xstrndup(px->host, px->host_n);
			p->pid = px->pid;
		}
	} else if (px->tag[0]) {
		if ((p = slot_get(x, px->tag, true)))
			return p;
		p = slot_get(x, px->tag, false);
		if (!p)
			p = proc_new(x, xstrdup(px->tag));
	} else {
		p = prev ? prev : slot_get(x, "", false);
		if (!p)
			p = proc_new(x, xstrdup(""));
	}
	if (px->tag[0] && px->host && (!p->tag || !strcmp(p->tag, px->tag))) {
		if (!p->tag)
			p->tag = xstrdup(px->tag);
		slot_put(x, p, true);
	} else if (px->tag[0] && !p->tag) {
		p->tag = xstrdup(px->tag);
		slot_put(x, p, true);
	}
	return p;
}

/* ---- INFO extras ---- */

/* "NCCL_IB_HCA set by environment to mlx5_0,mlx5_1" -> "NCCL_IB_HCA=mlx5_0,mlx5_1" */
static void info_env(struct nccl_proc *p, const char *msg)
{
	const char *s = strstr(msg, " set by environment to ");
	if (!s || !starts(msg, "NCCL_") || s - msg > 64 || p->env.n >= MAX_ENV)
		return;
	for (const char *q = msg; q < s; q++)
		if (!isalnum((unsigned char)*q) && *q != '_')
			return;
	const char *v = s + strlen(" set by environment to ");
	size_t n = strlen(v);
	if (n > 0 && v[n - 1] == '.')
		n--; /* "%s set by environment to %lld." */
	_cleanup_free_ char *val = xstrndup(v, n < 256 ? n : 256);
	char *kv = xasprintf("%.*s=%s", (int)(s - msg), msg, val);
	for (char *c = kv; *c; c++)
		if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
			*c = '?';
	if (strv_contains(&p->env, kv))
		free(kv);
	else
		strv_push(&p->env, kv);
}

/* "Bootstrap : Using eth0:10.0.0.1<0>" / "Bootstrap: Using [0]eth0:..." */
static void info_bootstrap(struct nccl_proc *p, const char *v)
{
	while (*v == ' ')
		v++;
	if (*v == '[') {
		const char *e = strchr(v, ']');
		if (!e || e - v > 4)
			return;
		v = e + 1;
	}
	size_t n = strcspn(v, "< ");
	if (n == 0 || n > 128 || v[n] != '<' || p->bootstrap_if)
		return;
	p->bootstrap_if = cut_dup(v, n);
}

/* "16 coll channels, 0 collnet channels, 16 nvls channels, 32 p2p channels, ..." */
static void info_channels(struct nccl_proc *p, const char *msg)
{
	const char *q = msg;
	long v;
	while (take_num(&q, &v)) {
		int iv = v > 100000 ? -1 : (int)v;
		if (starts(q, " coll channels"))
			p->coll_channels = iv;
		else if (starts(q, " nvls channels"))
			p->nvls_channels = iv;
		else if (starts(q, " p2p channels,"))
			p->p2p_channels = iv;
		const char *c = strchr(q, ',');
		if (!c)
			break;
		q = c + 1;
		while (*q == ' ')
			q++;
	}
}

/* "Channel 00/08 :    0   1   2   3" (a ring), not "Channel 00/0 : 0[0] -> 1[1] via ..." */
static void info_ring(struct nccl_proc *p, const char *msg)
{
	const char *q = msg + strlen("Channel ");
	long c, n;
	if (!take_num(&q, &c) || *q++ != '/' || !take_num(&q, &n) || !starts(q, " :"))
		return;
	for (const char *r = q + 2; *r; r++)
		if (!isdigit((unsigned char)*r) && *r != ' ')
			return;
	if (n > 0 && n <= 1024 && n > p->rings)
		p->rings = (int)n;
}

static void info_trees(struct nccl_proc *p, const char *msg)
{
	int n = 0;
	for (const char *q = msg; (q = strchr(q, '[')); q++)
		if (isdigit((unsigned char)q[1]))
			n++;
	if (n > p->trees)
		p->trees = n;
}

/* "enqueue.cc:123 -> 2" */
static bool error_trace(const char *msg)
{
	const char *a = strstr(msg, " -> ");
	if (!a || a == msg || !isdigit((unsigned char)a[-1]) || !isdigit((unsigned char)a[4]))
		return false;
	const char *c = memchr(msg, ':', (size_t)(a - msg));
	return c && c > msg && strchr(msg, ' ') == a;
}

static void info_extras(struct nccl_proc *p, const char *msg)
{
	const char *v;
	if (starts(msg, "NCCL_"))
		info_env(p, msg);
	else if ((v = starts(msg, "Bootstrap : Using") ? msg + 17 : starts(msg, "Bootstrap: Using") ? msg + 16 : NULL))
		info_bootstrap(p, v);
	else if (isdigit((unsigned char)msg[0]) && strstr(msg, " coll channels, "))
		info_channels(p, msg);
	else if (starts(msg, "Channel ") && !strstr(msg, " via "))
		info_ring(p, msg);
	else if (starts(msg, "Trees "))
		info_trees(p, msg);
	else if ((v = strstr(msg, "Loaded net plugin ")) && !p->net_plugin)
		p->net_plugin = cut_dup(v + strlen("Loaded net plugin "), 64);
	else if (error_trace(msg))
		p->error_traces++;
	if (strstr(msg, "GPU Direct RDMA Enabled for "))
		p->gdr_any = 1;
	else if (strstr(msg, "GPU Direct RDMA Disabled for ") && p->gdr_any == -1)
		p->gdr_any = 0;
	if (starts(msg, "GPU Direct RDMA Enabled for "))
		p->gdr_path = 1;
	else if (starts(msg, "GPU Direct RDMA Disabled for ") && p->gdr_path == -1)
		p->gdr_path = 0;
	if (strstr(msg, " - Init COMPLETE"))
		p->init_complete = true;
	if (strstr(msg, " - Destroy COMPLETE") || strstr(msg, " - Abort COMPLETE"))
		p->ended = true;
	const char *op = strstr(msg, ": opCount ");
	if (op) {
		p->collective = true;
		char *end;
		unsigned long long oc = strtoull(op + strlen(": opCount "), &end, 16);
		if (end != op + strlen(": opCount ") && oc < (1ull << 62) && (long long)oc > p->max_op)
			p->max_op = (long long)oc;
	}
}

/* ---- signatures ---- */

static void sig_record(struct nccl_explain *x, struct nccl_proc *p, const char *id, int num, const char *text,
		       const struct nccl_sig *row)
{
	struct nccl_seen_sig *s = NULL;
	for (size_t i = 0; i < x->n_sigs && !s; i++)
		if (!strcmp(x->sigs[i].id, id))
			s = &x->sigs[i];
	if (!s) {
		x->sigs = xreallocarray(x->sigs, x->n_sigs + 1, sizeof(*x->sigs));
		s = &x->sigs[x->n_sigs++];
		*s = (struct nccl_seen_sig){ .id = xstrdup(id), .num = num, .example = cut_dup(text, TEXT_KEEP),
					     .procs = STRV_INIT, .row = row ? row : nccl_sig_find(id) };
	}
	s->count++;
	if (p && p->key[0] && s->procs.n < SIG_PROCS_KEEP && !strv_contains(&s->procs, p->key))
		strv_add(&s->procs, p->key);
	if (p && !strv_contains(&p->sigs, id))
		strv_add(&p->sigs, id);
}

static void unmatched_add(struct nccl_explain *x, const struct nccl_proc *p, const char *text)
{
	x->unmatched_total++;
	for (size_t i = 0; i < x->n_unmatched; i++)
		if (!strcmp(x->unmatched[i].text, text)) {
			x->unmatched[i].count++;
			return;
		}
	if (x->n_unmatched >= NCCL_EXPLAIN_MAX_UNMATCHED)
		return;
	x->unmatched = xreallocarray(x->unmatched, x->n_unmatched + 1, sizeof(*x->unmatched));
	x->unmatched[x->n_unmatched++] = (struct nccl_unmatched){ .text = cut_dup(text, 1024),
								  .first_proc = xstrdup(p ? p->key : ""), .count = 1 };
}

static void match_line(struct nccl_explain *x, struct nccl_proc *p, const char *text, unsigned where)
{
	int num = -1;
	const struct nccl_sig *s = nccl_sig_match(text, where, &num);
	if (s && !strcmp(s->id, "ib-wc")) {
		char id[32];
		if (num >= 0)
			snprintf(id, sizeof(id), "ib-wc-%d", num);
		else
			snprintf(id, sizeof(id), "ib-wc");
		sig_record(x, p, id, num, text, s);
	} else if (s) {
		sig_record(x, p, s->id, -1, text, s);
	} else if (where == NCCL_SIG_WARN && *text) {
		unmatched_add(x, p, text);
	}
}

/* "NCCL version 2.18.3+cuda12.2" anywhere in a line -> "2.18.3" */
static void note_version(struct nccl_explain *x, const char *s)
{
	const char *v = strstr(s, "NCCL version ");
	if (!v)
		return;
	v += strlen("NCCL version ");
	size_t n = strspn(v, "0123456789.");
	if (n < 3 || n > 16 || !memchr(v, '.', n) || !isdigit((unsigned char)v[0]) || v[n - 1] == '.')
		return;
	char *ver = xstrndup(v, n);
	if (strv_contains(&x->versions, ver) || x->versions.n >= 64)
		free(ver);
	else
		strv_push(&x->versions, ver);
}

/* ---- lines and streams ---- */

/* The flags of an NCCL line for stopped-after-init. */
static uint32_t owner_flags(bool past_init, bool warn, const char *msg)
{
	uint32_t f = warn ? OWNER_WARN : 0;
	if (!warn && strstr(msg, ": opCount ")) {
		if (past_init)
			f |= OWNER_GOING_ON;
		if (strstr(msg, ": opCount 0 "))
			f |= OWNER_FINAL | OWNER_COLL0;
	}
	/* 2.23+ prints its init timings right after Init COMPLETE (init.cc) */
	if (!warn && (strstr(msg, " - Init COMPLETE") || strstr(msg, "Init timings")))
		f |= OWNER_FINAL;
	return f;
}

struct stream_state {
	size_t prev;       /* the process of the line before, as an index + 1 (0: none; x->procs moves) */
	size_t lineno;
	uint32_t *owner;   /* the process index of each NCCL line, in order, | OWNER_* flags */
	size_t n_owner, cap_owner;
	bool last_error;   /* the line before was the framework's "Last error:" (PyTorch quotes NCCL's last WARN) */
};

static void read_line(struct nccl_explain *x, struct stream_state *st, char *s)
{
	struct prefix px = { .pid = -1 };
	char *info = strstr(s, "NCCL INFO"), *warn = strstr(s, "NCCL WARN");
	char *mark = warn && (!info || warn < info) ? warn : info;
	size_t tl = launcher_tag(s, px.tag, sizeof(px.tag));
	if (tl && !strcmp(px.tag, "srun"))
		px.tag[0] = '\0';
	if (mark && !nccl_prefix(s, mark, &px))
		px.host = NULL;
	bool launcher_msg = starts(s, "srun: ") || starts(s, "slurmstepd: ");
	x->nccl_lines += mark != NULL;
	struct nccl_proc *p = launcher_msg ? NULL : proc_of(x, &px, st->prev ? &x->procs[st->prev - 1] : NULL);
	bool past_init = p && (p->init_complete || p->collective); /* before this line */
	note_version(x, s);
	_cleanup_free_ char *copy = xstrdup(s);
	nccl_log_line(&x->all, copy);
	if (p) {
		strcpy(copy, s);
		nccl_log_line(&p->log, copy);
		p->lines++;
		if (!p->first_line)
			p->first_line = st->lineno;
		p->last_line = st->lineno;
		free(p->last_text);
		p->last_text = cut_dup(s, TEXT_KEEP);
		st->prev = (size_t)(p - x->procs) + 1;
	}
	if (mark == warn && warn) {
		x->warn_lines++;
		const char *t = warn + strlen("NCCL WARN");
		match_line(x, p, t + (*t == ' '), NCCL_SIG_WARN);
	} else if (mark) {
		const char *t = info + strlen("NCCL INFO");
		t += *t == ' ';
		if (p)
			info_extras(p, t);
		match_line(x, p, t, NCCL_SIG_INFO);
	} else {
		const char *t = s + tl;
		while (*t == ' ')
			t++;
		/* the WARN text quoted after "Last error:" is read as a WARN */
		match_line(x, p, t, st->last_error ? NCCL_SIG_WARN | NCCL_SIG_OTHER : NCCL_SIG_OTHER);
		st->last_error = !strcmp(t, "Last error:");
	}
	if (mark)
		st->last_error = false;
	if (mark && p) {
		if (st->n_owner == st->cap_owner) {
			st->cap_owner = st->cap_owner ? 2 * st->cap_owner : 1024;
			st->owner = xreallocarray(st->owner, st->cap_owner, sizeof(*st->owner));
		}
		const char *msg = mark + strlen("NCCL INFO") + (mark[strlen("NCCL INFO")] == ' ');
		st->owner[st->n_owner++] = (uint32_t)(p - x->procs) | owner_flags(past_init, mark == warn, msg);
	}
}

struct stop_scan {
	size_t *last, *own;  /* per process: index of its last NCCL line, count */
	size_t *most_after;  /* [k]: the most collective launches one process made at k or later */
	size_t last_warn;    /* index + 1 of the last WARN line, 0 none */
};

static void stop_scan(const struct nccl_explain *x, const struct stream_state *st, struct stop_scan *sc)
{
	size_t n = st->n_owner, m = 0;
	size_t *cnt = xcalloc(x->n_procs, sizeof(*cnt));
	sc->last = xcalloc(x->n_procs, sizeof(*sc->last));
	sc->own = xcalloc(x->n_procs, sizeof(*sc->own));
	sc->most_after = xcalloc(n + 1, sizeof(*sc->most_after));
	sc->last_warn = 0;
	for (size_t k = 0; k < n; k++) {
		sc->last[st->owner[k] & OWNER_PROC] = k;
		sc->own[st->owner[k] & OWNER_PROC]++;
		if (st->owner[k] & OWNER_WARN)
			sc->last_warn = k + 1;
	}
	for (size_t k = n; k-- > 0;) {
		uint32_t q = st->owner[k] & OWNER_PROC;
		if ((st->owner[k] & OWNER_GOING_ON) && ++cnt[q] > m)
			m = cnt[q];
		sc->most_after[k] = m;
	}
	free(cnt);
}

static void stopped(struct nccl_explain *x, const struct nccl_proc *p, size_t last, size_t *first_last)
{
	x->n_stopped++;
	if (last < *first_last) {
		*first_last = last;
		free(x->stopped_first);
		x->stopped_first = xstrdup(p->key);
	}
}

/* The two highest opCounts of the processes of one stream (0: of all),
 * and where the highest is: the most any other process launched. */
struct top_ops {
	long long first, second;
	size_t at;
};

static struct top_ops top_ops_of(const struct nccl_explain *x, int stream)
{
	struct top_ops t = { -1, -1, SIZE_MAX };
	for (size_t i = 0; i < x->n_procs; i++) {
		long long v = !stream || x->procs[i].stream == stream ? x->procs[i].max_op : -1;
		if (v > t.first)
			t.second = t.first, t.first = v, t.at = i;
		else if (v > t.second)
			t.second = v;
	}
	return t;
}

/* stopped-after-init within one stream (see STOP_MIN_AFTER). */
static void find_stopped(struct nccl_explain *x, const struct stream_state *st)
{
	if (st->n_owner == 0)
		return;
	struct stop_scan sc;
	size_t first_last = SIZE_MAX;
	stop_scan(x, st, &sc);
	/* a process stopped only when another launched past its own last
	 * collective (lines of several processes may arrive in blocks, stdout
	 * being buffered when piped: a later block is not a later collective) */
	struct top_ops top = top_ops_of(x, x->streams);
	for (size_t i = 0; i < x->n_procs; i++) {
		const struct nccl_proc *p = &x->procs[i];
		if (p->stream != x->streams || !p->host || !sc.own[i])
			continue;
		x->procs[i].end_final = st->owner[sc.last[i]] & OWNER_FINAL;
		x->procs[i].end_coll0 = st->owner[sc.last[i]] & OWNER_COLL0;
		x->procs[i].warn_after = sc.last_warn > sc.last[i];
		x->procs[i].end_index = sc.last[i];
		bool interleaved = sc.last[i] + 1 > sc.own[i]; /* another process wrote before its last line */
		long long others = i == top.at ? top.second : top.first;
		if (!p->ended && sc.own[i] >= STOP_MIN_LINES && interleaved && sc.last_warn <= sc.last[i] &&
		    sc.most_after[sc.last[i] + 1] >= STOP_MIN_AFTER && others >= p->max_op + STOP_MIN_AFTER)
			stopped(x, p, sc.last[i], &first_last);
	}
	free(sc.last);
	free(sc.own);
	free(sc.most_after);
}

void nccl_explain_init(struct nccl_explain *x)
{
	*x = (struct nccl_explain){ .versions = STRV_INIT, .max_lines = NCCL_EXPLAIN_MAX_LINES };
	nccl_log_init(&x->all);
}

void nccl_explain_feed(struct nccl_explain *x, const char *text, size_t len)
{
	struct stream_state st = { .prev = 0 };
	struct strbuf line = STRBUF_INIT;
	size_t pos = 0;
	x->streams++;
	while (text && pos < len) {
		if (x->lines >= x->max_lines) {
			x->cut_lines = true;
			break;
		}
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len, n = end - pos;
		strbuf_reset(&line);
		strbuf_add(&line, text + pos, n < LINE_MAX_KEEP ? n : LINE_MAX_KEEP);
		for (size_t i = 0; i < line.len; i++)
			if (line.buf[i] == '\0')
				line.buf[i] = ' ';
		strbuf_rtrim(&line);
		x->lines++;
		st.lineno++;
		if (line.len) /* WARN's leading newline is no line of a process */
			read_line(x, &st, line.buf);
		pos = end + 1;
	}
	find_stopped(x, &st);
	free(st.owner);
	strbuf_release(&line);
}

/* The whole job stopped after its init or at its first collective: every
 * process's last line is its Init COMPLETE or its first collective call,
 * and no WARN follows (in any input when there are several, whose order
 * cannot be told). When no process reached a collective, a log cut after
 * init looks the same: stopped_weak. */
static void find_stopped_whole(struct nccl_explain *x)
{
	size_t procs = 0, final = 0, coll0 = 0, first_last = SIZE_MAX;
	for (size_t i = 0; i < x->n_procs; i++) {
		const struct nccl_proc *p = &x->procs[i];
		if (!p->host)
			continue;
		procs++;
		final += p->end_final && !p->ended && !p->warn_after;
		coll0 += p->end_coll0;
	}
	if (x->stopped_first || !procs || final != procs || (x->streams > 1 && x->warn_lines))
		return;
	x->stopped_weak = coll0 == 0;
	for (size_t i = 0; i < x->n_procs; i++)
		if (x->procs[i].host)
			stopped(x, &x->procs[i], x->procs[i].end_index, &first_last);
}

/* Per-rank files (several inputs): the order of lines across them is
 * unknown, so a process stopped when another launched at least
 * STOP_MIN_AFTER collectives past its last one (opCounts), none of the
 * files has a WARN (the signatures then say what happened) and it did not
 * end its communicator; the lowest opCount stopped first. */
static void find_stopped_across(struct nccl_explain *x)
{
	if (x->streams < 2 || x->stopped_first || x->warn_lines)
		return;
	struct top_ops top = top_ops_of(x, 0);
	size_t first = SIZE_MAX;
	for (size_t i = 0; i < x->n_procs; i++) {
		const struct nccl_proc *p = &x->procs[i];
		long long others = i == top.at ? top.second : top.first;
		if (p->host && !p->ended && (p->init_complete || p->collective) && others >= p->max_op + STOP_MIN_AFTER)
			stopped(x, p, (size_t)(p->max_op + 1), &first);
	}
}

void nccl_explain_finish(struct nccl_explain *x)
{
	find_stopped_across(x);
	find_stopped_whole(x);
	strv_sort(&x->versions); /* as text, as the corpus labels sort them */
	if (x->versions.n > 1)
		sig_record(x, NULL, "version-mismatch", -1, "processes state different NCCL versions", NULL);
	if (x->stopped_first)
		sig_record(x, NULL, "stopped-after-init", -1, x->stopped_first, NULL);
}

void nccl_explain_free(struct nccl_explain *x)
{
	for (size_t i = 0; i < x->n_procs; i++) {
		struct nccl_proc *p = &x->procs[i];
		free(p->key);
		free(p->host);
		free(p->tag);
		nccl_log_free(&p->log);
		strv_free(&p->env);
		free(p->bootstrap_if);
		free(p->net_plugin);
		free(p->last_text);
		strv_free(&p->sigs);
	}
	free(x->procs);
	free(x->slots);
	for (size_t i = 0; i < x->n_sigs; i++) {
		free(x->sigs[i].id);
		free(x->sigs[i].example);
		strv_free(&x->sigs[i].procs);
	}
	free(x->sigs);
	for (size_t i = 0; i < x->n_unmatched; i++) {
		free(x->unmatched[i].text);
		free(x->unmatched[i].first_proc);
	}
	free(x->unmatched);
	nccl_log_free(&x->all);
	strv_free(&x->versions);
	free(x->stopped_first);
	*x = (struct nccl_explain){ .versions = STRV_INIT };
}
