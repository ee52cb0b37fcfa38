/* rdma.sockbuf: socket buffer ceilings allow large TCP windows.
 *
 * net.core.rmem_max / wmem_max cap what a socket may ask for; RoCE bring-up
 * scripts commonly raise both to 268435456 for NCCL's socket paths and MPI over TCP. The
 * threshold is --min-sockbuf (default that value). */
#include "checks/check.h"
#include "common.h"
#include "core/readers.h"

static void one(struct check_ctx *c, const char *name, uint64_t v, int err)
{
	uint64_t want = c->expect->min_sockbuf;
	if (err) {
		check_add(c, STATUS_SKIP, name, "unreadable under the root: %s", read_strerror(err));
		return;
	}
	if (v >= want) {
		struct finding *ok = check_add(c, STATUS_OK, name, "%llu (at least %llu)", (unsigned long long)v,
					       (unsigned long long)want);
		finding_compare_num(ok, (double)v, (double)want);
		return;
	}
	struct finding *f = check_add(c, STATUS_WARN, name, "%llu, below %llu: TCP fallback and bootstrap traffic "
							    "cannot use large windows",
				      (unsigned long long)v, (unsigned long long)want);
	finding_compare_num(f, (double)v, (double)want);
	finding_hint(f, "`sysctl -w %s=%llu && echo '%s=%llu' >> /etc/sysctl.d/90-rdma-tuning.conf`", name,
		     (unsigned long long)want, name, (unsigned long long)want);
}

static int run(struct check_ctx *c)
{
	if (!node_has_rdma_hw(c->inv)) {
		check_add(c, STATUS_SKIP, SUBJECT_NODE, "no RDMA hardware on this node: multi-node RDMA tuning not needed");
		return 0;
	}
	const struct host_info *h = &c->inv->host;
	one(c, "net.core.rmem_max", h->rmem_max, h->rmem_err);
	one(c, "net.core.wmem_max", h->wmem_max, h->wmem_err);
	return 0;
}

const struct check_def check_rdma_sockbuf = {
	.id = "rdma.sockbuf",
	.section = "Host Tuning",
	.summary = "net.core.rmem_max and wmem_max are at least --min-sockbuf (default 268435456)",
	.run = run,
};
