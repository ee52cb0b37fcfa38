/* The inventory's copy bandwidth fact (struct inventory copy_bw), for the
 * gpu.copy_bandwidth check. */
#ifndef GPUREADY_INVENTORY_COPY_BW_H
#define GPUREADY_INVENTORY_COPY_BW_H

#include <stdbool.h>
#include <stddef.h>

/* Each GPU's host<->GPU copy bandwidth, measured live by `check --bench`
 * (bench copy's engine: host_to_device_memcpy_ce and
 * device_to_host_memcpy_ce, run by the command, bench/copy/node.h) with
 * the limit of the GPU's PCIe link. */
struct copy_bw_gpu {
	char bdf[16];            /* "0000:18:00.0" */
	int ordinal;             /* CUDA's */
	double h2d, d2h;         /* GB/s (10^9 bytes/s); NAN not measured */
	double expected;         /* GB/s a healthy link reaches; 0 unknown */
	char limit[96];          /* "PCIe Gen5 x16 ..."; when expected is 0, why it is unknown */
	char err[320];           /* why a figure is missing; "" none */
	bool bad_data;           /* a copy to or from it failed the data check (err says which) */
};

struct copy_bw_info {
	char *error;             /* the run could not measure at all; NULL ran */
	unsigned size_mib;       /* buffer per copy */
	size_t n;
	struct copy_bw_gpu *v;
};

#endif
