/* rdma.memlock: the locked-memory limit lifted for every user in
 * /etc/security/limits.d/90-gpuready.conf (limits.conf(5): `* soft memlock
 * unlimited`, `* hard memlock unlimited`). pam_limits reads limits.conf
 * first, then limits.d/<name>.conf sorted by file name, and for the same kind
 * of domain a later line wins (Linux-PAM modules/pam_limits/pam_limits.c:
 * pam_sm_open_session(), read_limits_dir(), process_limit()), so a file
 * sorted after ours that sets a lower memlock for `*` would undo it: then
 * it is a manual step naming that line. It takes effect at the next login
 * (FIX_LOGIN); nothing is run.
 *
 * Where slurmd's unit is installed and does not already run slurmd with
 * LimitMEMLOCK=infinity (Slurm's own slurmd.service sets it), a drop-in
 * sets it (systemd.exec(5); slurm.conf(5) PropagateResourceLimits and
 * Slurm's FAQ on locked memory: job steps get at most slurmd's own limit),
 * followed by `systemctl daemon-reload`; slurmd reads it when it is next
 * restarted, which is left to the operator (it would kill no job, but
 * when to do it is a site's call).
 *
 * Inside a container limits.d does not apply (nothing logs in through
 * pam_limits): the container runtime sets the limit, so the finding stays
 * a manual step with the check's hint. */
#include "fix/fix.h"

#include "core/cleanup.h"
#include "core/parse.h"
#include "inventory/slurmd.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define LIMITS_DIR "/etc/security/limits.d/"
#define LIMITS_NAME "90-gpuready.conf"
#define SLURMD_DROPIN_DIR "/etc/systemd/system/" SLURMD_UNIT ".d/"
#define SLURMD_DROPIN_NAME "90-gpuready-memlock.conf"

static bool unlimited(const char *v)
{
	return !strcasecmp(v, "unlimited") || !strcasecmp(v, "infinity") || !strcmp(v, "-1");
}

/* A `*` memlock line of limits.d that pam_limits reads after ours and
 * that lowers the limit again, as "path:line (`* hard memlock 65536`)". */
static char *overridden(const struct host_info *h)
{
	size_t dl = strlen(LIMITS_DIR);
	for (size_t i = 0; i < h->n_limits; i++) {
		const struct limit_entry *e = &h->limits[i];
		if (strncmp(e->source, LIMITS_DIR, dl) || strcmp(e->domain, "*") || unlimited(e->value))
			continue;
		_cleanup_free_ char *name = xstrndup(e->source + dl, strcspn(e->source + dl, ":"));
		if (strcmp(name, LIMITS_NAME) > 0)
			return xasprintf("%s sets `%s %s %s %s` and pam_limits reads it after %s%s: change it there", e->source,
					 e->domain, e->type, e->item, e->value, LIMITS_DIR, LIMITS_NAME);
	}
	return NULL;
}

/* A `*` memlock line (any type) of limits.conf(5) syntax. */
static bool star_memlock(const char *line)
{
	_cleanup_free_ char *copy = xstrdup(line);
	char *hash = strchr(copy, '#'), *save = NULL;
	if (hash)
		*hash = '\0';
	char *domain = strtok_r(copy, " \t\r", &save);
	char *type = domain ? strtok_r(NULL, " \t\r", &save) : NULL;
	char *item = type ? strtok_r(NULL, " \t\r", &save) : NULL;
	return item && !strcmp(domain, "*") && !strcasecmp(item, "memlock");
}

/* Our limits.d file: a new one, or the one there with its `*` memlock
 * lines replaced by ours (every other line kept). */
static void limits_content(struct fix_file *file)
{
	if (!file->existed) {
		fix_header(&file->new, "# ", "rdma.memlock");
		strbuf_adds(&file->new, "# Registering RDMA memory pins it (ibv_reg_mr): no locked-memory limit for any user\n"
					"# (limits.conf(5); root is not limited, it has CAP_IPC_LOCK).\n");
	}
	for (const char *p = file->existed ? file->old.buf : ""; *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		_cleanup_free_ char *l = xstrndup(p, n);
		if (!star_memlock(l))
			strbuf_addf(&file->new, "%s\n", l);
		p += n + (nl ? 1 : 0);
	}
	strbuf_adds(&file->new, "* soft memlock unlimited\n* hard memlock unlimited\n");
}

/* The slurmd drop-in, where slurmd's unit is installed and needs it. */
static int slurmd_part(struct fix_ctx *c, struct fix_remedy *r)
{
	const struct slurmd_info *s = c->inv->host.slurmd;
	if (!s || !s->unit)
		return 0;
	const char *ours = SLURMD_DROPIN_DIR SLURMD_DROPIN_NAME;
	if (s->unreadable) {
		fix_note(r, "slurmd's locked-memory limit was not judged: %s", s->unreadable);
		return 0;
	}
	bool from_ours = s->memlock_source && str_startswith(s->memlock_source, ours) &&
			 s->memlock_source[strlen(ours)] == ':';
	if (slurmd_memlock_unlimited(s->memlock) && !from_ours)
		return 0;
	const char *slash = s->memlock_source ? strrchr(s->memlock_source, '/') : NULL;
	if (slash && strstr(s->memlock_source, ".service.d/") && strcmp(slash + 1, SLURMD_DROPIN_NAME) > 0 && !from_ours) {
		fix_note(r, "slurmd keeps LimitMEMLOCK=%s from %s, a drop-in systemd applies after %s: set "
			    "LimitMEMLOCK=infinity there, or job steps get at most that limit",
			 s->memlock, s->memlock_source, SLURMD_DROPIN_NAME);
		return 0;
	}
	int err = 0;
	struct fix_file *f = fix_file_add(c, r, ours, 0644, &err);
	if (!f)
		return err;
	fix_header(&f->new, "# ", "rdma.memlock");
	strbuf_adds(&f->new, "# Slurm starts job steps with at most slurmd's own locked-memory limit (slurm.conf(5),\n"
			     "# PropagateResourceLimits; Slurm FAQ, locked memory); systemd.exec(5).\n"
			     "[Service]\nLimitMEMLOCK=infinity\n");
	struct fix_cmd *cmd = fix_cmd_add(r, (const char *const[]){ "systemctl", "daemon-reload", NULL });
	cmd->after_files = true;
	_cleanup_free_ char *now = s->memlock ? xasprintf("runs with LimitMEMLOCK=%s (%s)", s->memlock, s->memlock_source)
					      : xstrdup("sets no LimitMEMLOCK, so systemd's default applies");
	fix_note(r, "slurmd (%s%s) %s; it reads the new limit when it is restarted: restart it when no job runs "
		    "(`systemctl restart slurmd`); gpuready does not",
		 s->unit, s->enabled ? ", enabled" : "", now);
	return 0;
}

static int plan(struct fix_ctx *c)
{
	const struct inventory *inv = c->inv;
	struct fix_remedy *r = NULL;
	for (const struct finding *f = fix_next(c, "rdma.memlock", NULL); f; f = fix_next(c, "rdma.memlock", f)) {
		if (inv->view.evidence.n) {
			fix_decline(c, f, "inside a container (%s) limits.d does not apply, since nothing logs in through "
					  "pam_limits: the container runtime sets the limit (see the hint)",
				    inv->view.evidence.v[0]);
			continue;
		}
		if (strcmp(f->subject, "memlock")) {
			fix_decline(c, f, "the limit of the running gpuready process: a new login gets the limit "
					  "limits.conf and limits.d give");
			continue;
		}
		_cleanup_free_ char *why = overridden(&inv->host);
		if (why) {
			fix_decline(c, f, "%s", why);
			continue;
		}
		if (!r) {
			r = fix_remedy_new(c, "memlock", FIX_LOGIN, "no locked-memory limit for any user (%s%s)", LIMITS_DIR,
					   LIMITS_NAME);
			int err = 0;
			struct fix_file *file = fix_file_add(c, r, LIMITS_DIR LIMITS_NAME, 0644, &err);
			if (!file)
				return err;
			limits_content(file);
			fix_note(r, "pam_limits applies it at the next login: running sessions and services keep their limit");
			if ((err = slurmd_part(c, r)) < 0)
				return err;
		}
		fix_answer(c, r, f);
	}
	return 0;
}

const struct fix_def fix_memlock = {
	.id = "memlock",
	.checks = (const char *const[]){ "rdma.memlock", NULL },
	.plan = plan,
};
