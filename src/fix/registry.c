/* The remedies, in the order they are planned and applied (fix.h). */
#include "fix/fix.h"

extern const struct fix_def fix_sysctl;

const struct fix_def *const fix_registry[] = {
	&fix_sysctl,
};
const size_t fix_registry_n = sizeof(fix_registry) / sizeof(*fix_registry);
