/* `fix --apply`: each remedy not held, its files first (a backup of each
 * file replaced, kept from the first time gpuready replaced it), then its
 * commands live, or under a sysroot the values they set; every change in
 * the audit log; what waits for a reload or reboot in FIX_PENDING, which
 * the inventory reads so that the checks say "pending" (fix.h). */
#include "fix/fix_int.h"

#include "core/cleanup.h"
#include "core/root.h"
#include "core/spawn.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static char *checks_of(const struct fix_remedy *r)
{
	struct strbuf sb = STRBUF_INIT;
	for (size_t t = 0; t < r->n_targets; t++) {
		bool seen = false;
		for (size_t k = 0; k < t && !seen; k++)
			seen = !strcmp(r->targets[k].check_id, r->targets[t].check_id);
		if (!seen)
			strbuf_addf(&sb, "%s%s", sb.len ? "," : "", r->targets[t].check_id);
	}
	if (!sb.len)
		strbuf_adds(&sb, r->id);
	return strbuf_detach(&sb);
}

struct run {
	const struct root *root;
	char time[32];
	const char *checks;
	struct fix_result *res;
	/* the audit log since the last revert: which files gpuready created
	 * and which backups it wrote */
	struct fix_log_entry *log;
	size_t n_log;
};

static void logf_(struct run *u, const char *path, const char *kind, const char *before, const char *after,
		  const char *detail)
{
	struct fix_log_entry e = { u->time, "apply", (char *)u->checks, (char *)path, (char *)kind,
				   (char *)before, (char *)after, (char *)detail };
	int r = fix_log_append(u->root, &e);
	if (r < 0)
		strv_push(&u->res->lines, xasprintf("cannot append to %s: %s", FIX_LOG, strerror(-r)));
}

/* Does the log since the last revert have an apply entry of kind for
 * path (and, when detail is given, with that detail)? */
static bool logged(const struct run *u, const char *path, const char *kind, const char *detail)
{
	for (size_t i = 0; i < u->n_log; i++)
		if (!strcmp(u->log[i].action, "apply") && !strcmp(u->log[i].path, path) && !strcmp(u->log[i].kind, kind) &&
		    (!detail || !strcmp(u->log[i].detail, detail)))
			return true;
	return false;
}

/* The backup of an existing file at path: written unless gpuready created
 * the file (nothing to restore: revert removes it) or wrote the backup
 * before (it holds the file as it was before gpuready touched it). A file
 * at the backup's path that gpuready did not write, or anything not a
 * regular file there, is not overwritten: -EEXIST, said in res. */
static int backup(struct run *u, const char *path, const char *bak, const struct strbuf *old, mode_t mode,
		  const struct stat *owner)
{
	struct stat bst;
	_cleanup_strv_ struct strv made = { 0 };
	if (logged(u, path, "created", NULL))
		return 0;
	int r = fix_lstat(u->root, bak, &bst);
	if (r == 0) {
		if (S_ISREG(bst.st_mode) && (logged(u, path, "replaced", bak) || logged(u, path, "state", bak)))
			return 0;
		strv_push(&u->res->lines, xasprintf("FAILED %s: %s exists and gpuready did not write it: move it away "
						    "and run fix again",
						    path, bak));
		return -EEXIST;
	}
	if (r != -ENOENT)
		return r;
	r = fix_write_file_like(u->root, bak, old->buf, old->len, mode, owner, &made);
	for (size_t i = 0; i < made.n; i++)
		logf_(u, made.v[i], "mkdir", "-", "-", "-");
	return r;
}


static void log_made(struct run *u, struct strv *made)
{
	for (size_t i = 0; i < made->n; i++)
		logf_(u, made->v[i], "mkdir", "-", "-", "-");
	strv_free(made);
}

/* Writes one file: refuses when it changed since it was planned. */
static int put(struct run *u, const char *path, const struct strbuf *old, bool existed, mode_t old_mode,
	       const struct strbuf *new, mode_t mode, bool state)
{
	_cleanup_strbuf_ struct strbuf now = STRBUF_INIT;
	_cleanup_strv_ struct strv made = { 0 };
	int r = root_read(u->root, path, ROOT_READ_MAX, &now);
	if (r < 0 && r != -ENOENT)
		return r;
	if ((r == 0) != existed || (existed && (now.len != old->len || memcmp(now.buf, old->buf, old->len))))
		return -ESTALE;
	char before[FIX_DIGEST_LEN], after[FIX_DIGEST_LEN];
	fix_digest(old->buf, old->len, existed, before);
	fix_digest(new->buf, new->len, true, after);
	_cleanup_free_ char *bak = existed ? fix_backup_path(path) : NULL;
	struct stat st;
	bool owned = existed && root_stat(u->root, path, &st) == 0;
	if (bak && (r = backup(u, path, bak, old, old_mode, owned ? &st : NULL)) < 0)
		return r;
	r = fix_write_file_like(u->root, path, new->buf, new->len, existed ? old_mode : mode, owned ? &st : NULL,
				&made);
	log_made(u, &made);
	if (r < 0)
		return r;
	/* a file gpuready created and now rewrites stays "created" for revert */
	const char *kind = logged(u, path, "created", NULL) ? "created" : state ? "state" : existed ? "replaced" : "created";
	logf_(u, path, kind, before, after, bak && strcmp(kind, "created") ? bak : "-");
	strv_push(&u->res->lines, xasprintf("%s %s", existed ? "wrote" : "created", path));
	return 0;
}

/* Makes a link where nothing is (fix_link_add()): refuses when something
 * appeared since it was planned. Logged as kind "link", its target's
 * digest as AFTER. */
static int put_link(struct run *u, const struct fix_file *f)
{
	_cleanup_strbuf_ struct strbuf now = STRBUF_INIT;
	_cleanup_strv_ struct strv made = { 0 };
	if (f->existed || root_readlink(u->root, f->path, &now) == 0 || root_exists(u->root, f->path))
		return -ESTALE;
	int r = fix_write_link(u->root, f->path, f->new.buf, &made);
	log_made(u, &made);
	if (r < 0)
		return r;
	char after[FIX_DIGEST_LEN];
	fix_digest(f->new.buf, f->new.len, true, after);
	logf_(u, f->path, "link", "-", after, "-");
	strv_push(&u->res->lines, xasprintf("linked %s -> %s", f->path, f->new.buf));
	return 0;
}

static int run_cmd(struct run *u, const struct fix_cmd *c)
{
	struct spawn_result sr = { 0 };
	_cleanup_strbuf_ struct strbuf line = STRBUF_INIT;
	for (size_t i = 0; i < c->argv.n; i++)
		strbuf_addf(&line, "%s%s", i ? " " : "", c->argv.v[i]);
	int r = spawn_run((const char *const *)c->argv.v, NULL, FIX_CMD_TIMEOUT_MS, &sr);
	char how[96];
	if (r < 0)
		snprintf(how, sizeof(how), "not started: %s", strerror(-r));
	else if (sr.timed_out)
		snprintf(how, sizeof(how), "stopped after %d s", FIX_CMD_TIMEOUT_MS / 1000);
	else if (sr.signal)
		snprintf(how, sizeof(how), "killed by signal %d", sr.signal);
	else
		snprintf(how, sizeof(how), "exit %d", sr.exit_code);
	bool ok = r == 0 && !sr.timed_out && !sr.signal && sr.exit_code == 0;
	strbuf_rtrim(&sr.err);
	strv_push(&u->res->lines, xasprintf("ran: %s: %s%s%.200s", line.buf, how, ok || !sr.err.len ? "" : ": ",
					    ok ? "" : sr.err.buf));
	logf_(u, "-", "ran", "-", "-", line.buf);
	spawn_result_free(&sr);
	return ok ? 0 : -EIO;
}

static int set_state(struct run *u, const struct fix_cmd *c)
{
	_cleanup_strbuf_ struct strbuf old = STRBUF_INIT, new = STRBUF_INIT;
	int r = root_read(u->root, c->sets_path, ROOT_READ_MAX, &old);
	if (r < 0 && r != -ENOENT)
		return r;
	strbuf_add(&new, c->sets_value, c->sets_len);
	return put(u, c->sets_path, &old, r == 0, 0644, &new, 0644, true);
}

/* What stays pending after the remedy is applied: its effect, or under a
 * sysroot a command that sets no file. */
static bool waits(const struct fix_remedy *r, bool sysroot)
{
	if (r->effect == FIX_RELOAD || r->effect == FIX_REBOOT)
		return true;
	for (size_t i = 0; sysroot && i < r->n_cmds; i++)
		if (!r->cmds[i].sets_path && !r->cmds[i].after_files)
			return true;
	return false;
}

/* Test-only (tests/cli/fix_netns_mtu.sh): GPUREADY_TEST_FIX_LIVE_CMDS=1
 * runs a sysroot plan's commands live instead of writing the values they
 * set into the tree, so that a test in a network namespace changes the
 * namespace's interfaces while the configuration goes to a temporary
 * tree. Not for use on a node. */
static bool test_live_cmds(void)
{
	const char *v = getenv("GPUREADY_TEST_FIX_LIVE_CMDS");
	return v && !strcmp(v, "1");
}

static int apply_one(struct run *u, const struct fix_remedy *r, bool sysroot)
{
	int ret;
	for (size_t i = 0; i < r->n_files; i++) {
		const struct fix_file *f = &r->files[i];
		ret = f->link ? put_link(u, f)
			      : put(u, f->path, &f->old, f->existed, f->old_mode, &f->new, f->mode, f->state);
		if (ret == -EEXIST && !f->link)
			return ret; /* said by backup() */
		if (ret < 0) {
			strv_push(&u->res->lines, xasprintf("FAILED %s: %s", f->path,
							    ret == -ESTALE ? "changed since it was planned; run fix again"
									   : strerror(-ret)));
			return ret;
		}
	}
	for (size_t i = 0; i < r->n_cmds; i++) {
		const struct fix_cmd *c = &r->cmds[i];
		if (sysroot && !test_live_cmds()) {
			if (c->sets_path && (ret = set_state(u, c)) < 0) {
				strv_push(&u->res->lines, xasprintf("FAILED %s: %s", c->sets_path, strerror(-ret)));
				return ret;
			}
			continue;
		}
		if ((ret = run_cmd(u, c)) < 0)
			return ret;
	}
	return 0;
}

/* FIX_PENDING: "CHECK\tSUBJECT\tBOOT_ID\tTIME\tTITLE" per finding that waits. */
static void record_pending(struct run *u, const struct fix_plan *p, const bool *done)
{
	_cleanup_strbuf_ struct strbuf cur = STRBUF_INIT, boot = STRBUF_INIT, out = STRBUF_INIT;
	if (root_read(u->root, FIX_PENDING, ROOT_READ_MAX, &cur) < 0)
		strbuf_reset(&cur);
	if (root_read(u->root, "/proc/sys/kernel/random/boot_id", 256, &boot) < 0)
		strbuf_reset(&boot);
	strbuf_rtrim(&boot);
	strbuf_adds(&out, cur.buf);
	size_t added = 0;
	for (size_t i = 0; i < p->n; i++) {
		const struct fix_remedy *r = &p->v[i];
		if (!done[i] || !waits(r, p->sysroot))
			continue;
		for (size_t t = 0; t < r->n_targets; t++) {
			_cleanup_free_ char *key = xasprintf("%s\t%s\t", r->targets[t].check_id, r->targets[t].subject);
			_cleanup_free_ char *nlkey = xasprintf("\n%s", key);
			if (!strncmp(out.buf, key, strlen(key)) || strstr(out.buf, nlkey))
				continue;
			strbuf_addf(&out, "%s%s\t%s\t%s\n", key, boot.len ? boot.buf : "-", u->time, r->title);
			added++;
		}
	}
	if (!added)
		return;
	_cleanup_strv_ struct strv made = { 0 };
	int ret = fix_write_file(u->root, FIX_PENDING, out.buf, out.len, 0644, &made);
	log_made(u, &made);
	if (ret < 0)
		strv_push(&u->res->lines, xasprintf("cannot write %s: %s", FIX_PENDING, strerror(-ret)));
}

int fix_apply(const struct root *root, struct fix_plan *p, double now, struct fix_result *res)
{
	struct run u = { .root = root, .res = res };
	fix_time(now, u.time);
	/* no change without the audit log that reverts it */
	int fd = fix_open_append(root, FIX_LOG, 0640), e;
	if (fd < 0)
		return fd;
	close(fd);
	if ((e = fix_log_read(root, &u.log, &u.n_log)) < 0)
		return e;
	res->remedy_failed = xcalloc(p->n + 1, sizeof(*res->remedy_failed));
	bool *done = xcalloc(p->n + 1, sizeof(*done));
	for (size_t i = 0; i < p->n; i++) {
		const struct fix_remedy *r = &p->v[i];
		if (r->held || r->pending)
			continue;
		_cleanup_free_ char *checks = checks_of(r);
		u.checks = checks;
		if (apply_one(&u, r, p->sysroot) < 0) {
			res->failed++;
			res->remedy_failed[i] = true;
			continue;
		}
		done[i] = true;
		res->applied++;
	}
	u.checks = "-";
	record_pending(&u, p, done);
	free(done);
	fix_log_free(u.log, u.n_log);
	return 0;
}

void fix_result_free(struct fix_result *r)
{
	strv_free(&r->lines);
	free(r->remedy_failed);
	memset(r, 0, sizeof(*r));
}
