/* The options of `gpuready fix` and `cluster fix` (docs/fix.md); --apply
 * is cluster.c's row, shared with --drain. Table rows: core/options.h. */
#include "opts/settings.h"

#include <stddef.h>

#define OFF(f) offsetof(struct settings, f)

static const struct opt fix_rows[] = {
	{ .name = "allow-disruptive", .type = OPT_FLAG, .offset = OFF(fix.allow_disruptive),
	  .help = "Also apply the disruptive remedies (an MTU, a module unload or blacklist, ACS, the kernel command "
		  "line), which are otherwise applied only when their check is named with --only; never while a "
		  "process holds /dev/nvidia* or /dev/infiniband/*.",
	  .scope = SCOPE_FIXES },
	{ .name = "script", .type = OPT_STRING, .offset = OFF(fix.script), .metavar = "FILE",
	  .help = "Also write the plan as a POSIX shell script to FILE (- for standard output), for configuration "
		  "management: the same files, backups and commands.",
	  .scope = SCOPE_FIX },
	{ .name = "revert", .type = OPT_FLAG, .offset = OFF(fix.revert),
	  .help = "Undo what earlier `fix --apply` runs wrote, from the audit log (/var/log/gpuready/fix.log): "
		  "replaced files come back from their backups, created ones are removed.",
	  .scope = SCOPE_FIX },
	{ .name = "batch", .type = OPT_INT, .offset = OFF(fix.batch), .metavar = "N", .def = OPT_DEF_INT(1),
	  .min = 1, .max = 100000,
	  .help = "cluster fix --apply: apply on N nodes at a time, the first batch a canary; stop at the first "
		  "batch where a node failed.",
	  .scope = SCOPE_CLUSTER_FIX },
};
const struct opt_table fix_opts = OPT_TABLE("fix", fix_rows);
