#define _GNU_SOURCE
/* The planner: every remedy of the registry over the report, then one pass
 * that drops what is already right, holds what may not be applied now and
 * turns every warn or fail no remedy took into a manual step
 * (fix.h, docs/fix.md). */
#include "fix/fix.h"

#include "core/cleanup.h"
#include "core/root.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const struct finding *fix_next(const struct fix_ctx *c, const char *check_id, const struct finding *prev)
{
	size_t i = 0;
	if (prev) {
		while (i < c->rep->n && c->rep->v[i] != prev)
			i++;
		i++;
	}
	for (; i < c->rep->n; i++) {
		const struct finding *f = c->rep->v[i];
		if ((f->status == STATUS_WARN || f->status == STATUS_FAIL) && !strcmp(f->id, check_id) &&
		    check_selected(c->sel, f->id))
			return f;
	}
	return NULL;
}

static size_t index_of(const struct fix_ctx *c, const struct finding *f)
{
	for (size_t i = 0; i < c->rep->n; i++)
		if (c->rep->v[i] == f)
			return i;
	return c->rep->n;
}

struct fix_remedy *fix_remedy_new(struct fix_ctx *c, const char *id, enum fix_effect effect, const char *fmt, ...)
{
	struct fix_plan *p = c->plan;
	p->v = xreallocarray(p->v, p->n + 1, sizeof(*p->v));
	struct fix_remedy *r = &p->v[p->n++];
	memset(r, 0, sizeof(*r));
	r->id = xstrdup(id);
	r->effect = effect;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&r->title, fmt, ap) < 0)
		abort();
	va_end(ap);
	return r;
}

void fix_answer(struct fix_ctx *c, struct fix_remedy *r, const struct finding *f)
{
	size_t i = index_of(c, f);
	if (i < c->rep->n)
		c->taken[i] = true;
	for (size_t k = 0; k < r->n_targets; k++)
		if (!strcmp(r->targets[k].check_id, f->id) && !strcmp(r->targets[k].subject, f->subject))
			return;
	r->targets = xreallocarray(r->targets, r->n_targets + 1, sizeof(*r->targets));
	r->targets[r->n_targets++] = (struct fix_target){ xstrdup(f->id), xstrdup(f->subject) };
}

void fix_decline(struct fix_ctx *c, const struct finding *f, const char *fmt, ...)
{
	size_t i = index_of(c, f);
	if (i >= c->rep->n || c->declined[i])
		return;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&c->declined[i], fmt, ap) < 0)
		abort();
	va_end(ap);
}

/* Whether the snapshot this tree is recorded only the lines the checks
 * read of path (ROOT_PARTIAL, written by `gpuready snapshot`). */
static bool recorded_partly(const struct root *root, const char *path)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	if (root_is_live(root) || root_read(root, ROOT_PARTIAL, ROOT_READ_MAX, &sb) < 0)
		return false;
	size_t n = strlen(path);
	for (const char *p = sb.buf; *p;) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);
		if (l == n && !memcmp(p, path, n))
			return true;
		p += l + (nl ? 1 : 0);
	}
	return false;
}

/* Why the remedy may not write path (malloc'd), or NULL; *canon gets the
 * file to write: path, or where its link leads inside /etc (a link
 * elsewhere, to a file other nodes may share, is the operator's). */
static char *file_refused(const struct fix_ctx *c, const char *path, char **canon)
{
	_cleanup_strbuf_ struct strbuf t = STRBUF_INIT, res = STRBUF_INIT;
	*canon = xstrdup(path);
	if (root_readlink(c->root, path, &t) == 0) {
		int r = root_resolve_write(c->root, path, &res);
		if ((r < 0 && r != -ENOENT) || strncmp(res.buf, "/etc/", 5))
			return xasprintf("%s is a link to %s, outside /etc: change it there", path, t.buf);
		free(*canon);
		*canon = xstrdup(res.buf);
	}
	if (recorded_partly(c->root, *canon))
		return xasprintf("%s is recorded in this snapshot only as far as the checks read it: plan this change "
				 "on the node itself",
				 *canon);
	return NULL;
}

struct fix_file *fix_file_add(struct fix_ctx *c, struct fix_remedy *r, const char *path, mode_t mode, int *err)
{
	char *canon = NULL, *why = file_refused(c, path, &canon);
	if (why) {
		free(canon);
		free(c->failed_path);
		c->failed_path = why;
		*err = -EPERM;
		return NULL;
	}
	struct fix_file f = { .path = canon, .mode = mode };
	strbuf_init(&f.old);
	strbuf_init(&f.new);
	struct stat st;
	int ret = root_read(c->root, f.path, ROOT_READ_MAX, &f.old);
	if (ret == 0 && memchr(f.old.buf, '\0', f.old.len)) {
		free(c->failed_path);
		c->failed_path = xasprintf("%s holds a NUL byte: not a text file gpuready edits", f.path);
		*err = -EPERM;
		free(f.path);
		strbuf_release(&f.old);
		return NULL;
	}
	if (ret == 0) {
		f.existed = true;
		f.old_mode = root_stat(c->root, path, &st) == 0 ? st.st_mode & 07777 : mode;
	} else if (ret != -ENOENT) {
		*err = ret;
		free(c->failed_path);
		c->failed_path = xasprintf("cannot read %s: %s", f.path, strerror(-ret));
		free(f.path);
		strbuf_release(&f.old);
		return NULL;
	}
	r->files = xreallocarray(r->files, r->n_files + 1, sizeof(*r->files));
	r->files[r->n_files] = f;
	return &r->files[r->n_files++];
}

struct fix_file *fix_link_add(struct fix_ctx *c, struct fix_remedy *r, const char *path, const char *target,
			      int *err)
{
	struct fix_file f = { .path = xstrdup(path), .mode = 0777, .link = true };
	strbuf_init(&f.old);
	strbuf_init(&f.new);
	strbuf_adds(&f.new, target);
	int ret = root_readlink(c->root, path, &f.old);
	if (ret == 0)
		f.existed = true;
	else if (ret != -ENOENT || root_exists(c->root, path)) {
		*err = ret == -ENOENT || ret == -EINVAL ? -EEXIST : ret;
		free(f.path);
		strbuf_release(&f.old);
		strbuf_release(&f.new);
		return NULL;
	}
	r->files = xreallocarray(r->files, r->n_files + 1, sizeof(*r->files));
	r->files[r->n_files] = f;
	return &r->files[r->n_files++];
}

struct fix_cmd *fix_cmd_add(struct fix_remedy *r, const char *const *argv)
{
	r->cmds = xreallocarray(r->cmds, r->n_cmds + 1, sizeof(*r->cmds));
	struct fix_cmd *cmd = &r->cmds[r->n_cmds++];
	memset(cmd, 0, sizeof(*cmd));
	for (size_t i = 0; argv[i]; i++)
		strv_add(&cmd->argv, argv[i]);
	return cmd;
}

void fix_cmd_sets(struct fix_cmd *cmd, const char *path, const char *fmt, ...)
{
	free(cmd->sets_path);
	free(cmd->sets_value);
	cmd->sets_path = xstrdup(path);
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&cmd->sets_value, fmt, ap) < 0)
		abort();
	va_end(ap);
	cmd->sets_len = strlen(cmd->sets_value);
}

void fix_cmd_sets_bytes(struct fix_cmd *cmd, const char *path, const void *data, size_t len)
{
	free(cmd->sets_path);
	free(cmd->sets_value);
	cmd->sets_path = xstrdup(path);
	cmd->sets_value = xcalloc(len + 1, 1);
	memcpy(cmd->sets_value, data, len);
	cmd->sets_len = len;
}

void fix_note(struct fix_remedy *r, const char *fmt, ...)
{
	char *s;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		abort();
	va_end(ap);
	strv_push(&r->notes, s);
}

void fix_header(struct strbuf *out, const char *prefix, const char *check_id)
{
	strbuf_addf(out, "%sWritten by `gpuready fix` for %s (see gpuready's docs/fix.md).\n", prefix, check_id);
	strbuf_addf(out, "%s`gpuready fix --revert` restores what was here before.\n", prefix);
}

static void file_free(struct fix_file *f)
{
	free(f->path);
	strbuf_release(&f->old);
	strbuf_release(&f->new);
}

static void cmd_free(struct fix_cmd *c)
{
	strv_free(&c->argv);
	free(c->sets_path);
	free(c->sets_value);
}

static void remedy_free(struct fix_remedy *r)
{
	free(r->id);
	free(r->title);
	for (size_t i = 0; i < r->n_targets; i++) {
		free(r->targets[i].check_id);
		free(r->targets[i].subject);
	}
	free(r->targets);
	for (size_t i = 0; i < r->n_files; i++)
		file_free(&r->files[i]);
	free(r->files);
	for (size_t i = 0; i < r->n_cmds; i++)
		cmd_free(&r->cmds[i]);
	free(r->cmds);
	strv_free(&r->notes);
	free(r->held);
}

void fix_plan_free(struct fix_plan *p)
{
	for (size_t i = 0; i < p->n; i++)
		remedy_free(&p->v[i]);
	free(p->v);
	for (size_t i = 0; i < p->n_manual; i++) {
		struct fix_manual *m = &p->manual[i];
		free(m->check_id);
		free(m->subject);
		free(m->message);
		free(m->hint);
		free(m->why);
	}
	free(p->manual);
	memset(p, 0, sizeof(*p));
}

size_t fix_plan_changes(const struct fix_plan *p)
{
	size_t n = 0;
	for (size_t i = 0; i < p->n; i++)
		n += !p->v[i].held && !p->v[i].pending;
	return n;
}

static bool file_unchanged(const struct fix_file *f)
{
	return f->existed && f->old.len == f->new.len && !memcmp(f->old.buf, f->new.buf, f->new.len);
}

/* A command still to run: live every command (after_files ones only with
 * a file changed); under a sysroot only those that set a file whose
 * content differs. */
static bool cmd_needed(const struct fix_ctx *c, const struct fix_cmd *cmd, bool files_changed)
{
	if (cmd->after_files && !files_changed)
		return false;
	if (!c->sysroot)
		return true;
	if (!cmd->sets_path)
		return false;
	_cleanup_strbuf_ struct strbuf cur = STRBUF_INIT;
	if (root_read(c->root, cmd->sets_path, ROOT_READ_MAX, &cur) < 0)
		return true;
	return cur.len != cmd->sets_len || memcmp(cur.buf, cmd->sets_value, cur.len) != 0;
}

/* Drops the files already right and the commands not needed; a remedy
 * left with nothing to do waits for a reload or reboot (pending) or is
 * dropped. Returns false when it is to be dropped. */
static bool settle(const struct fix_ctx *c, struct fix_remedy *r)
{
	size_t k = 0;
	for (size_t i = 0; i < r->n_files; i++) {
		if (file_unchanged(&r->files[i]))
			file_free(&r->files[i]);
		else
			r->files[k++] = r->files[i];
	}
	r->n_files = k;
	bool files_changed = k > 0, waits = false;
	size_t real = 0;
	k = 0;
	for (size_t i = 0; i < r->n_cmds; i++) {
		struct fix_cmd *cmd = &r->cmds[i];
		if (c->sysroot && !cmd->sets_path && !cmd->after_files) {
			/* kept to be shown and scripted; it runs on the node itself */
			waits = true;
			r->cmds[k++] = *cmd;
			continue;
		}
		if (cmd_needed(c, cmd, files_changed)) {
			r->cmds[k++] = *cmd;
			real++;
			continue;
		}
		cmd_free(cmd);
	}
	r->n_cmds = k;
	if (r->n_files || real)
		return true;
	r->pending = waits || r->effect == FIX_RELOAD || r->effect == FIX_REBOOT;
	return r->pending;
}

/* Is the remedy named by a pattern of --only (its check IDs)? */
static bool named(const struct fix_remedy *r, const struct strv *only)
{
	for (size_t i = 0; only && i < only->n; i++)
		for (size_t t = 0; t < r->n_targets; t++)
			if (!fnmatch(only->v[i], r->targets[t].check_id, 0))
				return true;
	return false;
}

static void hold(struct fix_remedy *r, const struct fix_opts *o)
{
	if (!r->disruptive || r->pending)
		return;
	if (o->busy)
		r->held = xasprintf("disruptive, and GPU or RDMA work is running: %s", o->busy);
	else if (!o->allow_disruptive && !named(r, o->only))
		r->held = xasprintf("disruptive: applied only with --allow-disruptive or when named with --only %s",
				    r->n_targets ? r->targets[0].check_id : r->id);
}

static void add_manual(struct fix_plan *p, const struct finding *f, const char *why)
{
	p->manual = xreallocarray(p->manual, p->n_manual + 1, sizeof(*p->manual));
	p->manual[p->n_manual++] = (struct fix_manual){
		.check_id = xstrdup(f->id),
		.subject = xstrdup(f->subject),
		.message = xstrdup(f->message),
		.hint = f->hint ? xstrdup(f->hint) : NULL,
		.status = f->status,
		.why = why ? xstrdup(why) : NULL,
	};
}

/* Two remedies writing one file would undo each other: a bug. */
static int check_overlap(const struct fix_plan *p, char **err)
{
	for (size_t a = 0; a < p->n; a++)
		for (size_t i = 0; i < p->v[a].n_files; i++)
			for (size_t b = a + 1; b < p->n; b++)
				for (size_t j = 0; j < p->v[b].n_files; j++)
					if (!strcmp(p->v[a].files[i].path, p->v[b].files[j].path)) {
						*err = xasprintf("remedies %s and %s both write %s", p->v[a].id,
								 p->v[b].id, p->v[a].files[i].path);
						return -EINVAL;
					}
	return 0;
}

/* One remedy's planning. When it fails (a file it must read is a
 * directory, a FIFO, unreadable), what it added is taken back and the
 * findings of its checks become manual steps saying why: the rest of the
 * plan stands. */
static void plan_one(struct fix_ctx *c, const struct fix_def *d)
{
	size_t n0 = c->plan->n, nrep = c->rep->n;
	bool *taken0 = xcalloc(nrep + 1, sizeof(*taken0));
	memcpy(taken0, c->taken, nrep * sizeof(*taken0));
	free(c->failed_path);
	c->failed_path = NULL;
	int r = d->plan(c);
	if (r >= 0) {
		free(taken0);
		return;
	}
	for (size_t i = n0; i < c->plan->n; i++)
		remedy_free(&c->plan->v[i]);
	c->plan->n = n0;
	memcpy(c->taken, taken0, nrep * sizeof(*taken0));
	free(taken0);
	for (size_t i = 0; i < nrep; i++)
		for (size_t k = 0; d->checks[k]; k++)
			if (!strcmp(c->rep->v[i]->id, d->checks[k]) && !c->taken[i] && !c->declined[i])
				c->declined[i] = c->failed_path ? xstrdup(c->failed_path)
								: xasprintf("planning its remedy failed: %s", strerror(-r));
}

/* A remedy with nothing left to do whose findings still warn or fail
 * (the change is in place, yet the check says otherwise): its findings
 * become manual steps rather than vanish from the plan. */
static void still_failing(struct fix_ctx *c, const struct fix_remedy *r)
{
	for (size_t t = 0; t < r->n_targets; t++)
		for (size_t i = 0; i < c->rep->n; i++)
			if (!strcmp(c->rep->v[i]->id, r->targets[t].check_id) &&
			    !strcmp(c->rep->v[i]->subject, r->targets[t].subject) && !c->declined[i]) {
				c->taken[i] = false;
				c->declined[i] = xasprintf("\"%s\" is already in place, yet the check still says this",
							   r->title);
			}
}

int fix_plan_make(const struct root *root, const struct inventory *inv, const struct report *rep,
		  const struct site_expect *expect, const struct check_select *sel, const struct fix_opts *o,
		  struct fix_plan *plan, char **err)
{
	memset(plan, 0, sizeof(*plan));
	plan->sysroot = !root_is_live(root);
	struct fix_ctx c = { .root = root, .inv = inv, .rep = rep, .expect = expect, .sel = sel, .plan = plan,
			     .sysroot = plan->sysroot };
	c.taken = xcalloc(rep->n + 1, sizeof(*c.taken));
	c.declined = xcalloc(rep->n + 1, sizeof(*c.declined));
	for (size_t i = 0; i < fix_registry_n; i++)
		plan_one(&c, fix_registry[i]);
	size_t k = 0;
	for (size_t i = 0; i < plan->n; i++) {
		if (settle(&c, &plan->v[i])) {
			hold(&plan->v[i], o);
			plan->v[k++] = plan->v[i];
		} else {
			still_failing(&c, &plan->v[i]);
			remedy_free(&plan->v[i]);
		}
	}
	plan->n = k;
	for (size_t i = 0; i < rep->n; i++) {
		const struct finding *f = rep->v[i];
		if ((f->status == STATUS_WARN || f->status == STATUS_FAIL) && !c.taken[i] && check_selected(sel, f->id))
			add_manual(plan, f, c.declined[i]);
		free(c.declined[i]);
	}
	free(c.taken);
	free(c.declined);
	free(c.failed_path);
	return check_overlap(plan, err);
}
