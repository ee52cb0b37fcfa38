/* Host tuning RDMA bring-up scripts set: socket buffer ceilings
 * (commonly net.core.rmem_max / wmem_max = 268435456) and the locked-memory limit
 * that registering RDMA memory needs (NCCL documentation, Troubleshooting, memlock).
 *
 * memlock comes from limits.conf(5) and limits.d (*.conf) in the tree; when
 * live, also from this process's RLIMIT_MEMLOCK; slurmd's own limit from
 * its unit (slurmd.c). */
#include "inventory.h"
#include "slurmd.h"
#include "textfmt.h"
#include "core/cleanup.h"
#include "core/parse.h"
#include "core/readers.h"

#include <errno.h>
#include <string.h>
#include <sys/resource.h>

struct limits_ctx {
	struct host_info *h;
	const char *file;
};

static void on_limit(void *ud, const char *domain, const char *type, const char *item, const char *value,
		     unsigned lineno)
{
	struct limits_ctx *k = ud;
	if (strcmp(item, "memlock"))
		return;
	struct host_info *h = k->h;
	h->limits = xreallocarray(h->limits, h->n_limits + 1, sizeof(*h->limits));
	struct limit_entry *e = &h->limits[h->n_limits++];
	e->domain = xstrdup(domain);
	e->type = xstrdup(type);
	e->item = xstrdup(item);
	e->value = xstrdup(value);
	e->source = xasprintf("%s:%u", k->file, lineno);
}

static void read_limits(const struct root *r, struct host_info *h, const char *path)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int ret = root_read(r, path, 1u << 20, &sb);
	if (ret < 0) {
		if (ret != -ENOENT && h->limits_err == 0)
			h->limits_err = ret;
		return;
	}
	struct limits_ctx k = { .h = h, .file = path };
	textfmt_limits(sb.buf, sb.len, on_limit, &k);
}

int host_load(const struct root *r, struct host_info *h)
{
	h->rmem_err = read_u64(r, &h->rmem_max, "/proc/sys/net/core/rmem_max");
	h->wmem_err = read_u64(r, &h->wmem_max, "/proc/sys/net/core/wmem_max");

	read_limits(r, h, "/etc/security/limits.conf");
	_cleanup_strv_ struct strv d = STRV_INIT;
	if (root_list(r, "/etc/security/limits.d", &d) == 0)
		for (size_t i = 0; i < d.n; i++) {
			if (!str_endswith(d.v[i], ".conf"))
				continue;
			_cleanup_free_ char *p = xasprintf("/etc/security/limits.d/%s", d.v[i]);
			read_limits(r, h, p);
		}

	h->slurmd = slurmd_load(r);
	if (root_is_live(r)) {
		struct rlimit rl;
		if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0) {
			h->rlimit_known = true;
			h->rlimit_unlimited = rl.rlim_cur == RLIM_INFINITY;
			h->rlimit_soft = rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX : (uint64_t)rl.rlim_cur;
			h->rlimit_hard = rl.rlim_max == RLIM_INFINITY ? UINT64_MAX : (uint64_t)rl.rlim_max;
		}
	}
	return 0;
}

void host_free(struct host_info *h)
{
	for (size_t i = 0; i < h->n_limits; i++) {
		free(h->limits[i].domain);
		free(h->limits[i].type);
		free(h->limits[i].item);
		free(h->limits[i].value);
		free(h->limits[i].source);
	}
	free(h->limits);
	slurmd_free(h->slurmd);
	memset(h, 0, sizeof(*h));
}
