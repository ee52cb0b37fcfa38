/* Slurm's node daemon as systemd starts it: its unit file and the locked-
 * memory limit it runs with (host.c loads it into host_info.slurmd).
 *
 * Slurm starts job steps with slurmd's own limits where the submitting
 * shell's are higher than it may give (slurm.conf(5),
 * PropagateResourceLimits; Slurm's FAQ, "locked memory"), so slurmd itself
 * needs LimitMEMLOCK=infinity (systemd.exec(5), "Process Properties").
 * Slurm's own slurmd.service sets it; distribution or site units may not. */
#ifndef GPUREADY_INVENTORY_SLURMD_H
#define GPUREADY_INVENTORY_SLURMD_H

#include <stdbool.h>

#define SLURMD_UNIT "slurmd.service"

struct slurmd_info {
	char *unit;           /* the unit file that wins (systemd search order), NULL when none */
	bool enabled;         /* a *.wants/ or *.requires/ link under /etc/systemd/system */
	/* The last LimitMEMLOCK= of the unit file and then its drop-ins
	 * (slurmd.service.d/<name>.conf of every unit directory, by name, a
	 * name in an earlier directory hiding the same name in a later one:
	 * systemd.unit(5)); NULL when none sets it (or the last one is empty,
	 * which restores the default). */
	char *memlock;
	char *memlock_source; /* "path:line" */
	char *unreadable;     /* a unit file or drop-in that exists but cannot be read: "path (reason)" */
};

struct root;
/* A new slurmd_info (never NULL); the files read keep only their
 * LimitMEMLOCK= lines in a snapshot (units may carry secrets). */
struct slurmd_info *slurmd_load(const struct root *r);
void slurmd_free(struct slurmd_info *s);
/* LimitMEMLOCK's value means no limit: "infinity", or "infinity:infinity". */
bool slurmd_memlock_unlimited(const char *value);

#endif
