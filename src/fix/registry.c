/* The remedies, in the order they are planned and applied (fix.h). */
#include "fix/fix.h"

extern const struct fix_def fix_sysctl;
extern const struct fix_def fix_memlock;
extern const struct fix_def fix_nccl;

const struct fix_def *const fix_registry[] = {
	&fix_sysctl,
	&fix_memlock,
	&fix_nccl,
};
const size_t fix_registry_n = sizeof(fix_registry) / sizeof(*fix_registry);
