/* rdma.memlock: non-root users may lock (pin) unlimited memory.
 *
 * Registering RDMA buffers pins them; with a small RLIMIT_MEMLOCK,
 * ibv_reg_mr fails and NCCL reports it (NCCL documentation,
 * Troubleshooting, "memlock"). pam_limits applies
 * limits.conf(5) at login: a `*` entry covers every user but root, who has
 * CAP_IPC_LOCK anyway. Without an entry the kernel default applies (8 MiB
 * since Linux 5.16, 64 KiB before: mm/Kconfig / include/uapi/linux/
 * resource.h MLOCK_LIMIT). When live, the running process's own limit is
 * reported too.
 *
 * Inside a container (rdma.container) limits.conf does not apply: nothing
 * logs in through pam_limits; the container runtime sets RLIMIT_MEMLOCK
 * (docker run --ulimit memlock=..., or what containerd/CRI-O inherit from
 * their service). There the check judges the process's own limit
 * (/proc/self/limits) and capabilities: the kernel lets a process pin
 * beyond RLIMIT_MEMLOCK when it has CAP_IPC_LOCK (drivers/infiniband/core/
 * umem.c ib_umem_get: `new_pinned > lock_limit && !capable(CAP_IPC_LOCK)`
 * gives -ENOMEM), which Docker's default capability set lacks; capable()
 * asks the initial user namespace, so a capability held only inside a
 * user namespace (/proc/self/uid_map, user_namespaces(7)) does not count.
 * NCCL's troubleshooting guide asks containers for --ulimit memlock=-1. */
#include "checks/check.h"
#include "common.h"

#include "core/readers.h"

#include <string.h>
#include <strings.h>

static bool unlimited(const char *v)
{
	return !strcasecmp(v, "unlimited") || !strcasecmp(v, "infinity") || !strcmp(v, "-1");
}

#define CONTAINER_HINT                                                                                            \
	"`ulimit -l` shows it; start the container with --ulimit memlock=-1 or --cap-add=IPC_LOCK (Docker, "      \
	"Podman); on Kubernetes add IPC_LOCK to the container's securityContext.capabilities, or set "            \
	"LimitMEMLOCK=infinity on the container runtime's service (containerd, CRI-O) on the host"

/* Why a finite limit does not stop RDMA registration, or NULL; *unknown
 * gets the file that would tell, when it cannot be told. */
static const char *limit_lifted(const struct proc_view *v, const char **unknown)
{
	*unknown = NULL;
	if (v->caps_err < 0) {
		*unknown = "/proc/self/status (CapEff)";
		return NULL;
	}
	if (!(v->cap_eff & (1ull << CAP_IPC_LOCK_BIT)))
		return NULL;
	if (v->init_userns < 0) {
		*unknown = "/proc/self/uid_map";
		return NULL;
	}
	return v->init_userns ? "the process has CAP_IPC_LOCK, which lifts the limit for RDMA registration" : NULL;
}

static void judge_container(struct check_ctx *c, const char *where)
{
	const struct proc_view *v = &c->inv->view;
	struct finding *f;
	char soft[32], hard[32], ram[32];
	if (v->limits_err < 0) {
		f = check_add(c, STATUS_WARN, "RLIMIT_MEMLOCK",
			      "%s: /proc/self/limits %s, so the locked-memory limit RDMA registration needs cannot be "
			      "told (limits.conf does not apply in a container)",
			      where, read_strerror(v->limits_err));
		finding_hint(f, CONTAINER_HINT);
		return;
	}
	if (v->memlock_soft == UINT64_MAX) {
		check_add(c, STATUS_OK, "RLIMIT_MEMLOCK", "unlimited (/proc/self/limits) %s; limits.conf does not "
							  "apply in a container",
			  where);
		return;
	}
	bytes_text(v->memlock_soft, soft, sizeof(soft));
	if (v->mem_total && v->memlock_soft >= v->mem_total) {
		check_add(c, STATUS_OK, "RLIMIT_MEMLOCK", "%s (/proc/self/limits) %s: at least all of RAM (%s)", soft,
			  where, bytes_text(v->mem_total, ram, sizeof(ram)));
		return;
	}
	const char *unknown, *lifted = limit_lifted(v, &unknown);
	if (lifted) {
		check_add(c, STATUS_OK, "RLIMIT_MEMLOCK", "%s (/proc/self/limits) %s, but %s (CapEff %016llx)", soft,
			  where, lifted, (unsigned long long)v->cap_eff);
		return;
	}
	if (v->memlock_hard == UINT64_MAX || (v->mem_total && v->memlock_hard >= v->mem_total)) {
		f = check_add(c, STATUS_WARN, "RLIMIT_MEMLOCK",
			      "soft limit %s, hard %s (/proc/self/limits) %s: RDMA registration fails until the job "
			      "raises the soft limit",
			      soft, v->memlock_hard == UINT64_MAX ? "unlimited" : bytes_text(v->memlock_hard, hard, sizeof(hard)),
			      where);
		finding_hint(f, "`ulimit -l unlimited` in the job script before it starts the training processes");
		return;
	}
	bytes_text(v->memlock_hard, hard, sizeof(hard));
	if (unknown) {
		f = check_add(c, STATUS_WARN, "RLIMIT_MEMLOCK",
			      "%s (hard %s, /proc/self/limits) %s, and whether CAP_IPC_LOCK lifts it cannot be told: "
			      "%s was not read",
			      soft, hard, where, unknown);
		finding_hint(f, CONTAINER_HINT);
		return;
	}
	f = check_add(c, STATUS_FAIL, "RLIMIT_MEMLOCK",
		      "%s (hard %s, /proc/self/limits) %s, without CAP_IPC_LOCK%s (CapEff %016llx): registering "
		      "NCCL's buffers with the NIC (ibv_reg_mr) fails with \"Cannot allocate memory\"; NCCL's "
		      "troubleshooting guide asks containers for --ulimit memlock=-1, and limits.conf does not apply here",
		      soft, hard, where,
		      (v->cap_eff & (1ull << CAP_IPC_LOCK_BIT)) ? " in the initial user namespace (it holds it only in "
								  "its own, /proc/self/uid_map)"
								: "",
		      (unsigned long long)v->cap_eff);
	finding_hint(f, CONTAINER_HINT);
}

static int run(struct check_ctx *c)
{
	if (!node_has_rdma_hw(c->inv)) {
		check_add(c, STATUS_SKIP, SUBJECT_NODE, "no RDMA hardware on this node: multi-node RDMA tuning not needed");
		return 0;
	}
	char where[512];
	if (container_view(c->inv, where, sizeof(where))) {
		judge_container(c, where);
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
	.summary = "locked-memory limit is unlimited for non-root users (limits.conf; live RLIMIT_MEMLOCK); in a "
		   "container the process's own limit, or CAP_IPC_LOCK",
	.run = run,
};
