/* rdma.memlock: non-root users may lock (pin) unlimited memory.
 *
 * Registering RDMA buffers pins them; with a small RLIMIT_MEMLOCK,
 * ibv_reg_mr fails and NCCL reports it (NCCL documentation,
 * Troubleshooting, "memlock"). pam_limits applies
 * limits.conf(5) at login: a `*` entry covers every user but root, who has
 * CAP_IPC_LOCK anyway. Without an entry the kernel default applies (8 MiB
 * since Linux 5.16, 64 KiB before: mm/Kconfig / include/uapi/linux/
 * resource.h MLOCK_LIMIT). When live, the running process's own limit is
 * reported too. */
#include "checks/check.h"
#include "common.h"

#include <string.h>
#include <strings.h>

static bool unlimited(const char *v)
{
	return !strcasecmp(v, "unlimited") || !strcasecmp(v, "infinity") || !strcmp(v, "-1");
}

static int run(struct check_ctx *c)
{
	if (!node_has_rdma_hw(c->inv)) {
		check_add(c, STATUS_SKIP, SUBJECT_NODE, "no RDMA hardware on this node: multi-node RDMA tuning not needed");
		return 0;
	}
	const struct host_info *h = &c->inv->host;
	const struct limit_entry *soft = NULL, *hard = NULL, *other = NULL;
	struct finding *f;
	if (h->limits_err < 0) {
		check_add(c, STATUS_SKIP, "memlock", "limits.conf unreadable: %s", strerror(-h->limits_err));
		return 0;
	}

	/* the last matching line wins in pam_limits */
	for (size_t i = 0; i < h->n_limits; i++) {
		const struct limit_entry *e = &h->limits[i];
		if (strcmp(e->domain, "*")) {
			other = e;
			continue;
		}
		if (!strcmp(e->type, "soft") || !strcmp(e->type, "-"))
			soft = e;
		if (!strcmp(e->type, "hard") || !strcmp(e->type, "-"))
			hard = e;
	}
	if (soft && hard && unlimited(soft->value) && unlimited(hard->value)) {
		check_add(c, STATUS_OK, "memlock", "unlimited for all users (%s, %s)", soft->source, hard->source);
	} else {
		if (soft || hard)
			f = check_add(c, STATUS_WARN, "memlock", "limits for all users: soft %s, hard %s (need unlimited)",
				      soft ? soft->value : "not set", hard ? hard->value : "not set");
		else
			f = check_add(c, STATUS_WARN, "memlock",
				      "no memlock line for all users in limits.conf: non-root jobs get the kernel "
				      "default (8 MiB, or 64 KiB before Linux 5.16) and RDMA registration fails%s%s",
				      other ? "; only for " : "", other ? other->domain : "");
		finding_hint(f, "printf '* soft memlock unlimited\\n* hard memlock unlimited\\n' > "
				"/etc/security/limits.d/90-rdma-memlock.conf (takes effect at the next login; "
				"services need LimitMEMLOCK=infinity)");
	}
	if (h->rlimit_known) {
		long uid = c->inv->user.uid;
		if (h->rlimit_unlimited)
			check_add(c, STATUS_OK, "RLIMIT_MEMLOCK", "this process: unlimited");
		else if (uid == 0)
			check_add(c, STATUS_OK, "RLIMIT_MEMLOCK",
				  "this process: %llu bytes, but root has CAP_IPC_LOCK and is not limited",
				  (unsigned long long)h->rlimit_soft);
		else {
			f = check_add(c, STATUS_WARN, "RLIMIT_MEMLOCK", "this process (uid %ld): %llu bytes", uid,
				      (unsigned long long)h->rlimit_soft);
			finding_hint(f, "log in again after fixing limits.conf, or `ulimit -l unlimited` in the job script");
		}
	}
	return 0;
}

const struct check_def check_rdma_memlock = {
	.id = "rdma.memlock",
	.section = "Host Tuning",
	.summary = "locked-memory limit is unlimited for non-root users (limits.conf; live RLIMIT_MEMLOCK)",
	.run = run,
};
