/* The NCCL findings whose fix is mechanical, in one remedy (one plan edits
 * each file once):
 *   rdma.nccl_debug    NCCL_DEBUG=INFO or TRACE set in a file: removed
 *   rdma.nccl_names    NCCL_IB_GDR_LEVEL: renamed NCCL_NET_GDR_LEVEL (NCCL
 *                      2.4.0), value kept, unless the new name is set; a
 *                      misspelled name ("did you mean"): removed, since it
 *                      has no effect today and renaming would activate an
 *                      unchecked value (a note says what to set if meant)
 *   rdma.nccl_ranges   a value out of range, NCCL_IB_TIMEOUT=0: removed, so
 *                      NCCL's default applies
 *   rdma.nccl_ib_disable  NCCL_IB_DISABLE set non-zero: removed
 *   rdma.nccl_ib_tc    NCCL_IB_TC not the site's class: NCCL_IB_TC=<tos>
 *
 * Where NCCL reads what (NCCL src/misc/param.cc, initEnvFunc() and
 * setEnvFile(); NCCL documentation, Environment Variables): the process
 * environment first, then $NCCL_CONF_FILE or else ~/.nccl.conf, then
 * /etc/nccl.conf, each with setenv(name, value, 0), so the environment wins
 * over the user's file, which wins over /etc/nccl.conf, and within one file
 * the first line wins. A line is NAME=VALUE up to the newline; a line
 * starting with '#' is skipped. /etc/profile.d exports reach only jobs
 * started from a login shell, /etc/nccl.conf every process that loads NCCL
 * (Slurm steps, services, containers that mount it), so settings go there.
 *
 * Removing a definition: a line of an NCCL file (/etc/nccl.conf, the
 * user's file) is deleted; a line of an /etc/profile.d script is commented
 * out ("# disabled by gpuready fix (CHECK): <line>") when it is a plain
 * `export NAME=VALUE` or `NAME=VALUE` outside any compound command; every
 * definition of the name the finding is about goes (a lower one would
 * surface otherwise). Anything else (a computed value, a line inside an
 * `if`, /etc/environment, the recorded environment of a job) makes the
 * finding a manual step naming the file and line. */
#include "fix/fix.h"

#include "core/cleanup.h"
#include "core/parse.h"
#include "inventory/textfmt.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define NCCL_CONF "/etc/nccl.conf"

/* One line of a file to delete (NCCL files) or comment out (scripts). */
struct edit {
	char *path;
	unsigned line;
	const char *check_id;
};

struct nplan {
	struct fix_ctx *c;
	struct fix_remedy *r;
	struct edit *v;
	size_t n;
	struct strv set_names, set_values; /* NAME=VALUE for /etc/nccl.conf */
	const char *set_check;             /* the check of the first setting (file header) */
	struct strv done;                  /* what the title lists */
};

enum kind { KIND_NCCL, KIND_SHELL, KIND_ENVIRONMENT };

static enum kind kind_of(const char *path)
{
	if (!strcmp(path, "/etc/environment"))
		return KIND_ENVIRONMENT;
	if (str_startswith(path, "/etc/profile.d/"))
		return KIND_SHELL;
	return KIND_NCCL;
}

/* The remedy, made when a file is first needed. */
static struct fix_remedy *remedy(struct nplan *p)
{
	if (!p->r)
		p->r = fix_remedy_new(p->c, "nccl-conf", FIX_LOGIN, "NCCL settings");
	return p->r;
}

/* The remedy's file at path (its current content read through the root),
 * added on first use; NULL with *err when it cannot be read. */
static struct fix_file *file_at(struct nplan *p, const char *path, int *err)
{
	struct fix_remedy *r = remedy(p);
	for (size_t i = 0; i < r->n_files; i++)
		if (!strcmp(r->files[i].path, path))
			return &r->files[i];
	struct fix_file *f = fix_file_add(p->c, r, path, 0644, err);
	/* unchanged unless render() changes it: the planner drops it then */
	if (f && f->existed)
		strbuf_add(&f->new, f->old.buf, f->old.len);
	return f;
}

/* ---- reading one line of a shell script ---- */

/* A plain `[export ]NAME=VALUE` line: a single word, quoted without
 * expansions or not quoted, then at most a comment. */
static bool plain_assignment(const char *line, const char *name)
{
	const char *s = line + strspn(line, " \t");
	if (str_startswith(s, "export") && (s[6] == ' ' || s[6] == '\t'))
		s += 6 + strspn(s + 6, " \t");
	size_t n = strlen(name);
	if (strncmp(s, name, n) || s[n] != '=')
		return false;
	s += n + 1;
	if (*s == '"' || *s == '\'') {
		const char *end = strchr(s + 1, *s);
		if (!end || (*s == '"' && strcspn(s + 1, "$`\\") < (size_t)(end - s - 1)))
			return false;
		s = end + 1;
	} else {
		s += strcspn(s, " \t;&|<>()$`\\\"'#");
	}
	s += strspn(s, " \t\r");
	return !*s || *s == '#';
}

static const char *const openers[] = { "if", "case", "for", "while", "until", "select", "{" };
static const char *const closers[] = { "fi", "esac", "done", "}" };

static bool word_in(const char *w, size_t n, const char *const *v, size_t nv)
{
	for (size_t i = 0; i < nv; i++)
		if (strlen(v[i]) == n && !strncmp(w, v[i], n))
			return true;
	return false;
}

static const char *const keep_position[] = { "then", "do", "else", "elif", "!", "if", "while", "until", "{" };

/* Counts the compound commands a line opens and closes (reserved words in
 * command position, outside quotes and comments); false for what this
 * reading cannot follow (a here-document, a closer without an opener). */
static bool shell_depth(const char *l, int *depth)
{
	if (strstr(l, "<<"))
		return false;
	bool command = true;
	for (const char *s = l; *s;) {
		if (*s == '"' || *s == '\'') {
			const char *end = strchr(s + 1, *s);
			if (!end)
				return false; /* a string that goes on past the line */
			s = end + 1;
			command = false;
			continue;
		}
		if (strchr(" \t;&|()", *s)) {
			command |= *s != ' ' && *s != '\t';
			s++;
			continue;
		}
		if (*s == '#')
			break;
		size_t n = strcspn(s, " \t;&|()\"'");
		if (command && word_in(s, n, openers, ARRAY_SIZE(openers)))
			(*depth)++;
		else if (command && word_in(s, n, closers, ARRAY_SIZE(closers)) && --(*depth) < 0)
			return false;
		command = command && word_in(s, n, keep_position, ARRAY_SIZE(keep_position));
		s += n ? n : 1;
	}
	return true;
}

/* Whether a line goes on in the next: it ends with a backslash, "&&",
 * "||", "|" or "(" (the shell reads the next line as part of it). */
static bool continues(const char *l)
{
	size_t len = strlen(l);
	while (len && (l[len - 1] == '\r' || l[len - 1] == ' ' || l[len - 1] == '\t'))
		len--;
	return len && strchr("\\&|(", l[len - 1]);
}

/* Whether line `no` of a script stands alone: outside every compound
 * command, not continued from the line before and not going on into the
 * next (commenting it out would change what the next line means). */
static bool top_level(const char *text, unsigned no)
{
	int depth = 0;
	bool cont = false;
	unsigned at = 0;
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		_cleanup_free_ char *l = xstrndup(p, n);
		if (++at == no)
			return depth == 0 && !cont && !continues(l) && shell_depth(l, &depth) && depth == 0;
		cont = continues(l);
		if (!shell_depth(l, &depth))
			return false;
		p += n + (nl ? 1 : 0);
	}
	return false;
}

/* Line `no` of text (1-based), malloc'd; "" past the end. */
static char *line_of(const char *text, unsigned no)
{
	unsigned at = 0;
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		if (++at == no)
			return xstrndup(p, n);
		p += n + (nl ? 1 : 0);
	}
	return xstrdup("");
}

/* ---- the definitions of a name ---- */

struct defs {
	const char *name;
	bool (*want)(const char *value);
	unsigned *lines;
	size_t n;
};

static void on_def(void *ud, const char *name, const char *value, unsigned lineno)
{
	struct defs *d = ud;
	if (strcmp(name, d->name) || (d->want && !d->want(value)))
		return;
	d->lines = xreallocarray(d->lines, d->n + 1, sizeof(*d->lines));
	d->lines[d->n++] = lineno;
}

static bool removed(const struct nplan *p, const char *path, unsigned line)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i].line == line && !strcmp(p->v[i].path, path))
			return true;
	return false;
}

/* Why the definition at path:line cannot be removed, or NULL. */
static char *blocker(const char *path, const char *text, unsigned line, const char *name)
{
	enum kind k = kind_of(path);
	if (k == KIND_NCCL)
		return NULL;
	if (k == KIND_ENVIRONMENT)
		return xasprintf("%s:%u sets it for every login (pam_env): remove that line", path, line);
	_cleanup_free_ char *l = line_of(text, line);
	if (!plain_assignment(l, name))
		return xasprintf("%s:%u is not a plain `export %s=VALUE` line (a computed value or an export of an "
				 "earlier assignment): change it there",
				 path, line, name);
	if (!top_level(text, line))
		return xasprintf("%s:%u is inside a compound command (if, case, a loop or a function) or a "
				 "continued line: change it there",
				 path, line);
	return NULL;
}

/* Collects the lines that define `name` (with a value `want` accepts;
 * NULL: any) in every file the inventory read, into edits; NULL, or why
 * one cannot be removed. */
static char *find_defs(struct nplan *p, const char *name, bool (*want)(const char *), const char *check_id,
		       struct edit **out, size_t *n_out, int *err)
{
	const struct nccl_config *nc = &p->c->inv->nccl;
	for (size_t i = 0; i < nc->files.n; i++) {
		const char *path = nc->files.v[i];
		struct fix_file *f = file_at(p, path, err);
		if (!f)
			return NULL;
		struct defs d = { .name = name, .want = want };
		enum kind k = kind_of(path);
		const char *t = f->old.buf;
		if (k == KIND_NCCL)
			textfmt_nccl_conf(t, f->old.len, on_def, &d);
		else if (k == KIND_SHELL)
			textfmt_shell_exports(t, f->old.len, on_def, &d);
		else
			textfmt_environment(t, f->old.len, on_def, &d);
		for (size_t j = 0; j < d.n; j++) {
			char *why = blocker(path, t, d.lines[j], name);
			if (why) {
				free(d.lines);
				return why;
			}
			*out = xreallocarray(*out, *n_out + 1, sizeof(**out));
			(*out)[(*n_out)++] = (struct edit){ xstrdup(path), d.lines[j], check_id };
		}
		free(d.lines);
	}
	return NULL;
}

static void edits_free(struct edit *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].path);
	free(v);
}

/* Why a variable set in the environment cannot be changed here, or NULL. */
static char *in_environment(const struct nccl_var *v)
{
	if (!v || v->source[0] == '/')
		return NULL;
	return xasprintf("%s=%s is in the %s, which no file gpuready changes reaches%s%s%s: unset it where the jobs' "
			 "environment is set",
			 v->name, v->value, v->source, v->file_source ? " (" : "",
			 v->file_source ? v->file_source : "", v->file_source ? " sets it too)" : "");
}

/* Why nothing NCCL reads can be changed with certainty, or NULL. */
static char *unknown_files(const struct nccl_config *nc)
{
	if (nc->unreadable.n)
		return xasprintf("%s could not be read, so what it sets is unknown", nc->unreadable.v[0]);
	if (nc->notes.n)
		return xstrdup(nc->notes.v[0]);
	return NULL;
}

/* Removes every definition of name (with a value want accepts) for f;
 * false when f was declined. */
static bool remove_defs(struct nplan *p, const struct finding *f, const char *name, bool (*want)(const char *),
			int *err)
{
	const struct nccl_config *nc = &p->c->inv->nccl;
	_cleanup_free_ char *why = unknown_files(nc);
	if (!why)
		why = in_environment(nccl_get(nc, name));
	struct edit *v = NULL;
	size_t n = 0;
	if (!why)
		why = find_defs(p, name, want, f->id, &v, &n, err);
	if (*err < 0 || why || !n) {
		if (*err == 0)
			fix_decline(p->c, f, "%s", why ? why : "no file the inventory read defines it");
		edits_free(v, n);
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		if (removed(p, v[i].path, v[i].line)) {
			free(v[i].path);
			continue;
		}
		p->v = xreallocarray(p->v, p->n + 1, sizeof(*p->v));
		p->v[p->n++] = v[i];
	}
	free(v);
	return true;
}

/* ---- the findings ---- */

static bool loud(const char *value)
{
	return !strcasecmp(value, "INFO") || !strcasecmp(value, "TRACE");
}

static void answer(struct nplan *p, const struct finding *f, const char *fmt, const char *a)
{
	fix_answer(p->c, remedy(p), f);
	strv_push(&p->done, xasprintf(fmt, a));
}

static int plan_debug(struct nplan *p)
{
	int err = 0;
	for (const struct finding *f = fix_next(p->c, "rdma.nccl_debug", NULL); f && !err;
	     f = fix_next(p->c, "rdma.nccl_debug", f))
		if (!strcmp(f->subject, "NCCL_DEBUG") && strstr(f->message, "set permanently") &&
		    remove_defs(p, f, "NCCL_DEBUG", loud, &err))
			answer(p, f, "remove %s=INFO/TRACE", f->subject);
	return err;
}

/* Values of NCCL_NET_GDR_LEVEL that rdma.nccl_levels accepts: a path type
 * (NCCL src/graph/paths.cc, case-sensitive) or a legacy number. */
static bool gdr_level_ok(const char *v)
{
	static const char *const names[] = { "LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS" };
	if (isdigit((unsigned char)v[0]))
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(v, names[i]))
			return true;
	return false;
}

static void set_value(struct nplan *p, const char *check_id, const char *name, const char *value)
{
	if (strv_contains(&p->set_names, name))
		return;
	strv_add(&p->set_names, name);
	strv_add(&p->set_values, value);
	if (!p->set_check)
		p->set_check = check_id;
}

static int rename_gdr(struct nplan *p, const struct finding *f)
{
	const struct nccl_config *nc = &p->c->inv->nccl;
	const struct nccl_var *old = nccl_get(nc, "NCCL_IB_GDR_LEVEL"), *cur = nccl_get(nc, "NCCL_NET_GDR_LEVEL");
	int err = 0;
	if (!old)
		return 0;
	if (cur) {
		fix_decline(p->c, f, "NCCL_NET_GDR_LEVEL is already set (=%s, %s) and is what NCCL reads: remove "
				     "NCCL_IB_GDR_LEVEL (%s) once you know which value is meant",
			    cur->value, cur->source, old->source);
		return 0;
	}
	if (!gdr_level_ok(old->value)) {
		fix_decline(p->c, f, "its value '%s' is not a path type NCCL knows (LOC, PIX, PXB, PHB, SYS, ...): "
				     "renaming it would not make it work",
			    old->value);
		return 0;
	}
	_cleanup_free_ char *value = xstrdup(old->value);
	if (!remove_defs(p, f, "NCCL_IB_GDR_LEVEL", NULL, &err))
		return err;
	set_value(p, f->id, "NCCL_NET_GDR_LEVEL", value);
	answer(p, f, "rename NCCL_IB_GDR_LEVEL to NCCL_NET_GDR_LEVEL=%s", value);
	return 0;
}

static int plan_names(struct nplan *p)
{
	int err = 0;
	for (const struct finding *f = fix_next(p->c, "rdma.nccl_names", NULL); f && !err;
	     f = fix_next(p->c, "rdma.nccl_names", f)) {
		const char *mean = strstr(f->message, "; did you mean ");
		if (!strcmp(f->subject, "NCCL_IB_GDR_LEVEL") && strstr(f->message, "renamed to NCCL_NET_GDR_LEVEL")) {
			err = rename_gdr(p, f);
		} else if (mean && remove_defs(p, f, f->subject, NULL, &err)) {
			_cleanup_free_ char *near = xstrndup(mean + 15, strcspn(mean + 15, "?"));
			const struct nccl_var *v = nccl_get(&p->c->inv->nccl, f->subject);
			fix_note(remedy(p), "%s had no effect (NCCL reads no such name) and is removed; if %s=%s was "
					    "meant, check that value and set it in %s",
				 f->subject, near, v ? v->value : "...", NCCL_CONF);
			answer(p, f, "remove the misspelled %s", f->subject);
		}
	}
	return err;
}

static int plan_ranges(struct nplan *p)
{
	int err = 0;
	for (const struct finding *f = fix_next(p->c, "rdma.nccl_ranges", NULL); f && !err;
	     f = fix_next(p->c, "rdma.nccl_ranges", f)) {
		bool bad = f->status == STATUS_FAIL && strstr(f->message, "): not a valid ");
		bool no_timeout = !strcmp(f->subject, "NCCL_IB_TIMEOUT") && strstr(f->message, "no ACK timeout");
		if ((bad || no_timeout) && remove_defs(p, f, f->subject, NULL, &err))
			answer(p, f, "remove %s (NCCL's default applies)", f->subject);
	}
	return err;
}

static int plan_ib_disable(struct nplan *p)
{
	int err = 0;
	for (const struct finding *f = fix_next(p->c, "rdma.nccl_ib_disable", NULL); f && !err;
	     f = fix_next(p->c, "rdma.nccl_ib_disable", f))
		if (!strcmp(f->subject, "NCCL_IB_DISABLE") && remove_defs(p, f, f->subject, NULL, &err))
			answer(p, f, "remove %s", f->subject);
	return err;
}

/* Whether a definition at source ("path:line") is removed by this plan. */
static bool source_removed(const struct nplan *p, const char *source)
{
	const char *colon = strrchr(source, ':');
	if (!colon)
		return false;
	_cleanup_free_ char *path = xstrndup(source, (size_t)(colon - source));
	return removed(p, path, (unsigned)strtoul(colon + 1, NULL, 10));
}

/* RDMA-CM's class (configfs default_roce_tos; -1: none, the kernel's 0)
 * on RoCE ports where it is not NCCL's new DSCP: rdma.nccl_ib_tc says so
 * once NCCL's class is right, and rdma.roce_tos is the finding to fix. */
static void roce_tos_note(struct nplan *p, int tos)
{
	_cleanup_strbuf_ struct strbuf other = STRBUF_INIT;
	const struct rdma_info *ri = &p->c->inv->rdma;
	for (size_t d = 0; d < ri->n; d++)
		for (size_t k = 0; k < ri->v[d].n_ports; k++) {
			const struct rdma_port *pt = &ri->v[d].ports[k];
			int t = pt->roce_tos >= 0 ? pt->roce_tos : 0;
			if (pt->link_layer && !strcmp(pt->link_layer, "Ethernet") && t >> 2 != tos >> 2)
				strbuf_addf(&other, "%s%s/%u", other.len ? ", " : "", ri->v[d].name, pt->num);
		}
	if (other.len)
		fix_note(remedy(p), "RDMA-CM marks another class than DSCP %d on %s: rdma.nccl_ib_tc warns about "
				    "default_roce_tos until rdma.roce_tos is fixed",
			 tos >> 2, other.buf);
}

static int plan_ib_tc(struct nplan *p)
{
	const struct nccl_config *nc = &p->c->inv->nccl;
	char want[16];
	snprintf(want, sizeof(want), "%d", p->c->expect->tos);
	for (const struct finding *f = fix_next(p->c, "rdma.nccl_ib_tc", NULL); f; f = fix_next(p->c, "rdma.nccl_ib_tc", f)) {
		if (strcmp(f->subject, "NCCL_IB_TC"))
			continue;
		const struct nccl_var *v = nccl_get(nc, "NCCL_IB_TC");
		_cleanup_free_ char *why = unknown_files(nc);
		if (!why)
			why = in_environment(v);
		if (!why && v && !str_startswith(v->source, NCCL_CONF ":") && !source_removed(p, v->source))
			why = xasprintf("NCCL_IB_TC=%s is set in %s, which NCCL reads before %s: set it to %s there", v->value,
					v->source, NCCL_CONF, want);
		if (why) {
			fix_decline(p->c, f, "%s", why);
			continue;
		}
		set_value(p, f->id, "NCCL_IB_TC", want);
		answer(p, f, "NCCL_IB_TC=%s", want);
		fix_note(remedy(p), "NCCL programs each queue pair with the peer's NCCL_IB_TC: set the same value on every "
				    "node");
		roce_tos_note(p, p->c->expect->tos);
	}
	return 0;
}

/* ---- the new content of each file ---- */

static const struct edit *edit_at(const struct nplan *p, const char *path, unsigned line)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i].line == line && !strcmp(p->v[i].path, path))
			return &p->v[i];
	return NULL;
}

/* The name an nccl.conf line defines (as NCCL's setEnvFile() reads it),
 * malloc'd, or NULL. */
static char *conf_name(const char *line)
{
	const char *eq = strchr(line, '=');
	if (line[0] == '#' || !eq || eq == line)
		return NULL;
	return xstrndup(line, (size_t)(eq - line));
}

/* The new content of one file: each line deleted, commented out, given a
 * new value (the first definition of a setting in /etc/nccl.conf, the one
 * NCCL reads) or kept as it is; settings not placed are appended. */
static void render(struct nplan *p, struct fix_file *f)
{
	_cleanup_free_ bool *placed = xcalloc(p->set_names.n + 1, sizeof(*placed));
	bool is_conf = !strcmp(f->path, NCCL_CONF);
	unsigned no = 0;
	strbuf_reset(&f->new);
	if (is_conf && !f->existed)
		fix_header(&f->new, "# ", p->set_check ? p->set_check : "rdma.nccl_names");
	for (const char *s = f->existed ? f->old.buf : ""; *s;) {
		const char *nl = strchr(s, '\n');
		size_t n = nl ? (size_t)(nl - s) : strlen(s);
		_cleanup_free_ char *l = xstrndup(s, n);
		const struct edit *e = edit_at(p, f->path, ++no);
		_cleanup_free_ char *name = is_conf && !e ? conf_name(l) : NULL;
		bool done = false;
		for (size_t i = 0; name && i < p->set_names.n && !done; i++)
			if (!placed[i] && !strcmp(name, p->set_names.v[i])) {
				strbuf_addf(&f->new, "%s=%s\n", name, p->set_values.v[i]);
				placed[i] = done = true;
			}
		if (e && kind_of(f->path) == KIND_SHELL)
			strbuf_addf(&f->new, "# disabled by gpuready fix (%s): %s%s", e->check_id, l, nl ? "\n" : "");
		else if (!e && !done)
			strbuf_addf(&f->new, "%s%s", l, nl ? "\n" : "");
		s += n + (nl ? 1 : 0);
	}
	for (size_t i = 0; is_conf && i < p->set_names.n; i++)
		if (!placed[i]) {
			if (f->new.len && f->new.buf[f->new.len - 1] != '\n')
				strbuf_addch(&f->new, '\n');
			strbuf_addf(&f->new, "%s=%s\n", p->set_names.v[i], p->set_values.v[i]);
		}
}

static void finish(struct nplan *p, int *err)
{
	if (!p->r)
		return;
	if (p->set_names.n && !file_at(p, NCCL_CONF, err))
		return;
	for (size_t i = 0; i < p->r->n_files; i++)
		render(p, &p->r->files[i]);
	struct strbuf title = STRBUF_INIT;
	for (size_t i = 0; i < p->done.n; i++)
		strbuf_addf(&title, "%s%s", i ? "; " : "", p->done.v[i]);
	free(p->r->title);
	p->r->title = strbuf_detach(&title);
	bool shell = false;
	for (size_t i = 0; i < p->n; i++)
		shell |= kind_of(p->v[i].path) == KIND_SHELL;
	fix_note(p->r, "NCCL reads these settings when a job starts: jobs running now keep theirs%s",
		 shell ? "; shells that logged in before keep what /etc/profile.d exported until they log in again" : "");
}

static int plan(struct fix_ctx *c)
{
	struct nplan p = { .c = c };
	int err = plan_debug(&p);
	if (!err)
		err = plan_names(&p);
	if (!err)
		err = plan_ranges(&p);
	if (!err)
		err = plan_ib_disable(&p);
	if (!err)
		err = plan_ib_tc(&p);
	if (!err && p.done.n)
		finish(&p, &err);
	edits_free(p.v, p.n);
	strv_free(&p.set_names);
	strv_free(&p.set_values);
	strv_free(&p.done);
	return err;
}

const struct fix_def fix_nccl = {
	.id = "nccl-conf",
	.checks = (const char *const[]){ "rdma.nccl_debug", "rdma.nccl_names", "rdma.nccl_ranges",
					 "rdma.nccl_ib_disable", "rdma.nccl_ib_tc", NULL },
	.plan = plan,
};
