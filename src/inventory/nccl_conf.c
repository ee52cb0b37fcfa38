/* The NCCL configuration a job on this node will see (NCCL documentation, Environment Variables).
 *
 * Order of precedence, highest first:
 *   1. the process environment (live), or the environment recorded in
 *      .gpuready/environ (snapshot);
 *   2. what login shells export: /etc/environment, then /etc/profile.d/<name>.sh
 *      in glob order (a later file overrides an earlier one) — a variable
 *      from here is marked login_only: jobs started outside a login shell
 *      (systemd units, some launchers) do not get it;
 *   3. $NCCL_CONF_FILE if set, else ~/.nccl.conf;
 *   4. /etc/nccl.conf.
 * NCCL applies 3 and 4 with setenv(..., 0), so an earlier definition always
 * wins; lower ones are kept in `shadowed` so a report can show conflicts.
 * Only NCCL_* names are kept. */
#include "inventory.h"
#include "textfmt.h"
#include "core/cleanup.h"
#include "core/parse.h"
#include "core/readers.h"

#include <errno.h>
#include <string.h>

struct collect {
	struct nccl_config *c;
	const char *file;
	bool login_only;
	bool override;      /* later definitions from the same layer win */
	size_t layer_start; /* index of the first variable of this layer */
};

static struct nccl_var *find(struct nccl_config *c, const char *name)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->v[i].name, name))
			return &c->v[i];
	return NULL;
}

static void set(struct collect *k, const char *name, const char *value, const char *source)
{
	struct nccl_config *c = k->c;
	struct nccl_var *v = find(c, name);
	/* a file that sets the effective value (not another one) */
	if (v && !v->file_source && source[0] == '/' && !strcmp(v->value, value))
		v->file_source = xstrdup(source);
	if (v) {
		bool same_layer = (size_t)(v - c->v) >= k->layer_start;
		if (same_layer && k->override) {
			strv_push(&v->shadowed, xasprintf("%s (%s, overridden by %s)", v->value, v->source, source));
			free(v->value);
			free(v->source);
			v->value = xstrdup(value);
			v->source = xstrdup(source);
			v->computed = k->login_only && strpbrk(value, "$`");
		} else {
			strv_push(&v->shadowed, xasprintf("%s (%s)", value, source));
		}
		return;
	}
	c->v = xreallocarray(c->v, c->n + 1, sizeof(*c->v));
	v = &c->v[c->n++];
	memset(v, 0, sizeof(*v));
	v->name = xstrdup(name);
	v->value = xstrdup(value);
	v->source = xstrdup(source);
	v->login_only = k->login_only;
	/* the shell expands these at login; NCCL's own files take text as is */
	v->computed = k->login_only && strpbrk(value, "$`");
	if (source[0] == '/')
		v->file_source = xstrdup(source);
}

static bool is_nccl_name(const char *name)
{
	return str_startswith(name, "NCCL_");
}

static void on_assign(void *ud, const char *name, const char *value, unsigned lineno)
{
	struct collect *k = ud;
	if (!is_nccl_name(name))
		return;
	_cleanup_free_ char *src = xasprintf("%s:%u", k->file, lineno);
	set(k, name, value, src);
}

/* A file format: its parser, and what a snapshot keeps of such a file
 * (textfmt.h). */
struct format {
	void (*parse)(const char *text, size_t len, assign_fn fn, void *ud);
	void (*keep)(const char *text, size_t len, textfmt_keep_fn keep, struct strbuf *out);
};
static const struct format environment_fmt = { textfmt_environment, textfmt_environment_keep };
static const struct format shell_fmt = { textfmt_shell_exports, textfmt_shell_exports_keep };
static const struct format nccl_conf_fmt = { textfmt_nccl_conf, textfmt_nccl_conf_keep };

/* A snapshot keeps only the lines that set NCCL_* variables: these files
 * (/etc/environment, profile.d scripts, a nccl.conf that NCCL_CONF_FILE
 * may point anywhere) often hold proxy credentials and tokens too. */
static void read_file(const struct root *r, struct collect *k, const char *path, const struct format *fmt)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	_cleanup_strbuf_ struct strbuf kept = STRBUF_INIT;
	int err = root_read_unrecorded(r, path, 1u << 20, &sb);
	if (err == -ENOENT)
		return;
	if (err < 0) {
		strv_push(&k->c->unreadable, xasprintf("%s (%s)", path, read_strerror(err)));
		return;
	}
	fmt->keep(sb.buf, sb.len, is_nccl_name, &kept);
	root_record_kept(r, path, kept.buf, kept.len);
	strv_add(&k->c->files, path);
	k->file = path;
	fmt->parse(sb.buf, sb.len, on_assign, k);
}

int nccl_config_load(const struct root *r, const struct user_info *u, struct nccl_config *c)
{
	struct collect k = { .c = c };
	_cleanup_strv_ struct strv env = STRV_INIT;
	bool recorded = false;

	/* 1. environment */
	if (env_load(r, &env, &recorded) == 0) {
		c->env_known = true;
		c->env_recorded = recorded;
		for (size_t i = 0; i < env.n; i++) {
			char *eq = strchr(env.v[i], '=');
			if (!eq || !str_startswith(env.v[i], "NCCL_"))
				continue;
			*eq = '\0';
			set(&k, env.v[i], eq + 1, recorded ? "recorded environment" : "environment");
		}
	}

	/* 2. login shells */
	k.login_only = true;
	k.override = true;
	k.layer_start = c->n;
	read_file(r, &k, "/etc/environment", &environment_fmt);
	_cleanup_strv_ struct strv prof = STRV_INIT;
	int perr = root_list(r, "/etc/profile.d", &prof);
	if (perr < 0 && perr != -ENOENT)
		strv_push(&c->unreadable, xasprintf("/etc/profile.d (%s)", read_strerror(perr)));
	if (perr == 0)
		for (size_t i = 0; i < prof.n; i++) {
			if (!str_endswith(prof.v[i], ".sh"))
				continue;
			_cleanup_free_ char *p = xasprintf("/etc/profile.d/%s", prof.v[i]);
			read_file(r, &k, p, &shell_fmt);
		}

	/* 3 and 4: NCCL's own files, never overriding */
	k.login_only = false;
	k.override = false;
	k.layer_start = c->n;
	const struct nccl_var *cf = find(c, "NCCL_CONF_FILE");
	_cleanup_free_ char *user_conf = NULL;
	if (cf && cf->value[0] == '/')
		user_conf = xstrdup(cf->value);
	else if (cf && cf->value[0])
		strv_push(&c->notes, xasprintf("NCCL_CONF_FILE=%s is relative: NCCL opens it from the job's working "
					       "directory (and then skips ~/.nccl.conf); not read here",
					       cf->value));
	else if (u->home)
		user_conf = xasprintf("%s/.nccl.conf", strcmp(u->home, "/") ? u->home : "");
	if (user_conf)
		read_file(r, &k, user_conf, &nccl_conf_fmt);
	k.layer_start = c->n;
	read_file(r, &k, "/etc/nccl.conf", &nccl_conf_fmt);
	return nccl_topo_load(r, c);
}

const struct nccl_var *nccl_get(const struct nccl_config *c, const char *name)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->v[i].name, name))
			return &c->v[i];
	return NULL;
}

void nccl_config_free(struct nccl_config *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->v[i].name);
		free(c->v[i].value);
		free(c->v[i].source);
		free(c->v[i].file_source);
		strv_free(&c->v[i].shadowed);
	}
	free(c->v);
	strv_free(&c->files);
	strv_free(&c->notes);
	strv_free(&c->unreadable);
	nccl_topo_free(&c->topo);
	memset(c, 0, sizeof(*c));
}
