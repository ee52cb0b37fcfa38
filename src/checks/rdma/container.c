/* rdma.container: whether this report looks at a container's view.
 *
 * gpuready runs on the host and inside a job's container (a Kubernetes
 * pod, Docker or Podman, Enroot/Pyxis under Slurm). Inside one, the
 * container runtime decides the job's /dev/shm, the RDMA device nodes it
 * passes in, the locked-memory limit and the capabilities; the host's own
 * settings (limits.conf, its /dev/shm) do not apply. This check names the
 * evidence (src/inventory/container.c) so that the report says which view
 * it judged; rdma.dev_shm, rdma.devices and rdma.memlock name it again
 * where it changes their verdict or their fix. It never warns: being in a
 * container is no fault. */
#include "checks/check.h"
#include "common.h"

#include "core/readers.h"

static int run(struct check_ctx *c)
{
	const struct proc_view *v = &c->inv->view;
	if (v->evidence.n) {
		char where[512];
		container_view(c->inv, where, sizeof(where));
		struct finding *f = check_add(c, STATUS_OK, "container",
					      "a container's view: the checks judge what this container gets (its "
					      "/dev/shm, device nodes, memlock limit and capabilities), %s",
					      where);
		for (size_t i = 0; i < v->evidence.n; i++)
			finding_detail(f, "evidence: %s", v->evidence.v[i]);
		f->headline = true; /* the default text report says so first */
		return 0;
	}
	if (!v->looked) {
		check_add(c, STATUS_SKIP, "container",
			  "whether this is a container's view cannot be told: no container marker, and neither "
			  "/proc/self/mountinfo (%s) nor /proc/1/cgroup could be read",
			  read_strerror(v->mountinfo_err));
		return 0;
	}
	check_add(c, STATUS_OK, "container",
		  "the host's own view: no container marker (/.dockerenv, /run/.containerenv, "
		  "Kubernetes service account, Enroot's /.lock), no container cgroup, root filesystem not a "
		  "bind-mounted directory");
	return 0;
}

const struct check_def check_rdma_container = {
	.id = "rdma.container",
	.section = "Container",
	.summary = "says whether the checks look at a container's view (Docker, Podman, Kubernetes, Enroot) "
		   "and names the evidence",
	.run = run,
};
