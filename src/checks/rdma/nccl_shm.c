/* rdma.nccl_shm: NCCL_SHM_DISABLE does not send intra-node traffic over
 * the network.
 *
 * NCCL uses its shared-memory (SHM) transport between GPUs of one node
 * when P2P cannot join them; with NCCL_SHM_DISABLE=1 (only the value 1
 * acts: src/transport/shm.cc shmCanConnect) "NCCL will use the network
 * (i.e. InfiniBand or IP sockets) to communicate between the CPU sockets"
 * (NCCL documentation, Environment Variables, NCCL_SHM_DISABLE). So:
 *   - with P2P off too (rdma.nccl_p2p) and several GPUs: fail, every GPU
 *     pair goes through the NIC or TCP;
 *   - NVLink through NVSwitches with P2P on: no effect, P2P joins every
 *     pair (ok, said so);
 *   - other nodes with several GPUs: warn, pairs beyond NCCL's P2P level
 *     (default PXB: across host bridges and CPU sockets) use the network;
 *   - one GPU: no effect. */
#include "checks/check.h"
#include "common.h"

static int run(struct check_ctx *c)
{
	const struct inventory *inv = c->inv;
	const struct nccl_var *v = nccl_get(&inv->nccl, "NCCL_SHM_DISABLE"), *by = NULL;
	const struct nccl_var *shm = nccl_shm_off(inv);
	struct nccl_node n;
	struct finding *f;
	char place[256];
	if (!v) {
		check_add(c, STATUS_OK, "NCCL_SHM_DISABLE", "not set: NCCL may use host shared memory between GPUs that "
							    "P2P does not join");
		return 0;
	}
	if (nccl_skip_computed(c, v))
		return 0;
	if (!shm) {
		check_add(c, STATUS_OK, v->name, "=%s (%s): NCCL acts only on the value 1, so shared memory stays on", v->value,
			  v->source);
		return 0;
	}
	nccl_node_get(inv, &n);
	enum nccl_p2p p2p = nccl_p2p_state(inv, &by);
	nccl_var_place(v, place, sizeof(place));
	if (n.gpus + n.unidentified <= 1) {
		check_add(c, STATUS_OK, v->name, "=%s (%s): no effect on this node with %zu GPU", v->value, v->source, n.gpus);
		return 0;
	}
	if (p2p == NCCL_P2P_OFF) {
		f = check_add(c, STATUS_FAIL, v->name, "=%s (%s) with P2P off too (%s=%s, %s): every pair of this node's %zu "
						       "GPUs goes through the network transport (NIC loopback or TCP "
						       "sockets) instead of NVLink, PCIe or host memory",
			      v->value, v->source, by->name, by->value, by->source, n.gpus);
		finding_hint(f, "remove %s from %s, and %s (see rdma.nccl_p2p); if it was set because shared memory "
				"failed (a small /dev/shm in containers), give the job a larger /dev/shm instead",
			     v->name, place, by->name);
		return 0;
	}
	if (p2p == NCCL_P2P_UNKNOWN) {
		check_add(c, STATUS_SKIP, v->name, "=%s (%s): whether P2P joins the GPUs is not known (%s=%s is computed at "
						   "login), so neither is what shared memory would carry",
			  v->value, v->source, by->name, by->value);
		return 0;
	}
	if (n.nvswitches) {
		check_add(c, STATUS_OK, v->name, "=%s (%s): no effect while P2P is on: NVLink through the NVSwitches joins "
						 "every pair of the %zu GPUs (it would send them over the network if P2P "
						 "were turned off)",
			  v->value, v->source, n.gpus);
		return 0;
	}
	f = check_add(c, STATUS_WARN, v->name, "=%s (%s): GPU pairs that P2P does not join (beyond NCCL's P2P level, "
					       "default PXB: across host bridges or CPU sockets) go through the network "
					       "transport instead of host shared memory, on this node with %zu GPUs",
		      v->value, v->source, n.gpus);
	finding_hint(f, "remove %s from %s; if it was set because shared memory failed (a small /dev/shm in "
			"containers), give the job a larger /dev/shm instead",
		     v->name, place);
	return 0;
}

const struct check_def check_rdma_nccl_shm = {
	.id = "rdma.nccl_shm",
	.section = "NCCL Configuration",
	.summary = "NCCL_SHM_DISABLE does not push GPU-to-GPU traffic inside the node onto the network",
	.run = run,
	.nccl_vars = true,
};
