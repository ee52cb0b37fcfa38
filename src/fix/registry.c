/* The remedies, in the order they are planned and applied (fix.h). */
#include "fix/fix.h"

extern const struct fix_def fix_sysctl;
extern const struct fix_def fix_memlock;
extern const struct fix_def fix_nccl;
extern const struct fix_def fix_tos;
extern const struct fix_def fix_modules;
extern const struct fix_def fix_peermem;
extern const struct fix_def fix_acs;
extern const struct fix_def fix_iommu;
extern const struct fix_def fix_mtu;

const struct fix_def *const fix_registry[] = {
	&fix_sysctl,
	&fix_memlock,
	&fix_nccl,
	&fix_tos,
	&fix_modules,
	&fix_peermem,
	&fix_acs,
	&fix_iommu,
	&fix_mtu,
};
const size_t fix_registry_n = sizeof(fix_registry) / sizeof(*fix_registry);
