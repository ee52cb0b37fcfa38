/* gpudirect.nic: each RDMA NIC can do GPUDirect RDMA. ConnectX-3 (mlx4)
 * cannot: NCCL stages every transfer through host memory, which a published V100 +
 * ConnectX-3 Pro build-out measured as ~2 GB/s busbw against ~4.5 GB/s
 * raw RDMA on 40 GbE. */
#include "checks/check.h"
#include "common.h"

static int run(struct check_ctx *c)
{
	const struct inventory *inv = c->inv;
	struct gdr_state s;
	gdr_state_get(inv, &s);
	if (s.gpus == 0 || s.nics == 0) {
		check_add(c, STATUS_SKIP, "gpudirect", "%s", s.why);
		return 0;
	}
	char key[96];
	for (size_t i = 0; i < inv->rdma.n; i++) {
		const struct rdma_dev *d = &inv->rdma.v[i];
		struct finding *f;
		gdr_nic_key(d->name, key, sizeof(key));
		if (nic_gdr_capable(inv, d)) {
			f = check_add(c, STATUS_OK, d->name, "can do GPUDirect RDMA");
			finding_fact_bool(f, key, true);
			continue;
		}
		f = check_add(c, STATUS_FAIL, d->name,
					      "ConnectX-3 (mlx4) cannot do GPUDirect RDMA: NCCL stages every transfer "
					      "through host memory (measured on a 40GbE link: ~2 GB/s busbw instead of ~4.5 GB/s)");
		finding_hint(f, "replace it with ConnectX-4 or later (mlx5), e.g. MCX416A-CCAT");
		finding_fact_bool(f, key, false);
	}
	return 0;
}

const struct check_def check_gpudirect_nic = {
	.id = "gpudirect.nic",
	.section = "GPUDirect RDMA Method",
	.summary = "every RDMA NIC can do GPUDirect RDMA (ConnectX-3/mlx4 cannot)",
	.run = run,
	.needs = NEEDS_GPU,
};
