/* gpuready fix: from findings to a reviewed, persistent change
 * (docs/fix.md).
 *
 * The flow continues the node checks' one: root → inventory → checks →
 * report → plan → (apply) → report again. A remedy (struct fix_def, one
 * file per remedy under src/fix/, listed in registry.c) reads the report's
 * warn and fail findings of the checks it answers, the inventory and the
 * files it will change (through the root), and adds to the plan:
 *   - files: the whole new content of each file it writes (drop-ins, never
 *     the operator's own file where a drop-in serves), shown as a unified
 *     diff against the current content;
 *   - commands that make the change take effect now without a reboot,
 *     run live with a deadline; under --sysroot each is replaced by the
 *     value it sets (a sysctl, a netdev MTU, a configfs ToS) written
 *     inside the tree, or stays pending when it sets no file (a module
 *     load, the kernel command line);
 *   - or, where no safe mechanical change exists, a manual step with the
 *     check's hint.
 * Planning changes nothing. Applying (fix_apply(), apply.c) writes each
 * file atomically with a backup of the one it replaces, appends every
 * change to the audit log, and records what stays pending so that the
 * checks say so (inventory fix_pending, checks_run()).
 *
 * Remedies never print and never write: they fill the plan. */
#ifndef GPUREADY_FIX_H
#define GPUREADY_FIX_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "checks/check.h"
#include "core/report.h"
#include "core/strbuf.h"
#include "core/strv.h"
#include "inventory/inventory.h"

#include <stdio.h>

/* Where the audit log, the pending changes and the backups of files in
 * directories that read every file live, inside the root. */
#define FIX_LOG "/var/log/gpuready/fix.log"
#define FIX_STATE_DIR "/var/lib/gpuready"
#define FIX_PENDING FIX_PENDING_PATH /* inventory/inventory.h */
#define FIX_BACKUP_DIR FIX_STATE_DIR "/backup"
#define FIX_BAK_SUFFIX ".gpuready-bak"
/* Layout version of `fix --json` (docs/fix.schema.json). */
#define FIX_SCHEMA_VERSION 1
/* Deadline of one apply-now command. */
#define FIX_CMD_TIMEOUT_MS 30000

/* When a remedy takes effect. */
enum fix_effect {
	FIX_NOW,     /* its commands (or under a sysroot the values they set) make it true at once */
	FIX_LOGIN,   /* new logins and restarted services read it (limits.d); nothing to run */
	FIX_RELOAD,  /* a module load or unload (modprobe): pending under a sysroot */
	FIX_REBOOT,  /* the kernel command line: pending until the node boots again */
};

/* One file the remedy writes: its whole new content. */
struct fix_file {
	char *path;          /* absolute, inside the root: "/etc/sysctl.d/90-gpuready.conf" */
	bool existed;        /* it exists now (old holds it) */
	struct strbuf old;
	mode_t old_mode;
	struct strbuf new;
	mode_t mode;         /* of the new file (existing files keep theirs) */
	/* A kernel state file (/proc/sys, /sys, configfs) written only under
	 * a sysroot, standing for an apply-now command; never a config file. */
	bool state;
	/* A symbolic link (what `systemctl enable` makes in a *.wants/
	 * directory): new holds its target, old the current one. Only made
	 * where nothing is (fix_link_add()). */
	bool link;
};

/* One apply-now command. */
struct fix_cmd {
	struct strv argv;    /* run live (no shell), within FIX_CMD_TIMEOUT_MS */
	/* Under a sysroot: the kernel state file the command sets and its new
	 * content; NULL when it sets none (then it stays pending there). */
	char *sets_path, *sets_value;
	size_t sets_len;     /* bytes of sets_value (binary for a PCI config space) */
	/* Only worth running when the remedy changes a file (daemon-reload,
	 * update-grub): dropped with the files when they are already right. */
	bool after_files;
};

/* One finding a remedy answers. */
struct fix_target {
	char *check_id, *subject;
};

struct fix_remedy {
	char *id;            /* the remedy's name: "sysctl", "mtu", "nccl-conf" (fix_def.id) */
	char *title;         /* what it does, one line: "raise net.core.rmem_max and wmem_max to 268435456" */
	struct fix_target *targets; /* the findings it answers */
	size_t n_targets;
	struct fix_file *files;
	size_t n_files;
	struct fix_cmd *cmds;
	size_t n_cmds;
	enum fix_effect effect;
	bool disruptive;     /* MTU, module unloads and blacklists, ACS, kernel command line */
	struct strv notes;   /* what else the operator should know ("restart slurmd when it is idle") */
	/* Set by the planner's last pass: why it stays planned and is not
	 * applied (disruptive and not named; GPU or RDMA work running); NULL
	 * when --apply applies it. */
	char *held;
	/* Set by the last pass: its files are already right and it waits for a
	 * reload or reboot (a second run plans nothing new). */
	bool pending;
};

/* A warn or fail finding without a mechanical remedy. */
struct fix_manual {
	char *check_id, *subject, *message, *hint;
	enum status status;
	char *why;           /* why it is manual when a remedy looked at it and declined ("cannot parse FILE") */
};

struct fix_plan {
	struct fix_remedy *v;
	size_t n;
	struct fix_manual *manual;
	size_t n_manual;
	bool sysroot;        /* planned for a recorded tree: no command runs */
};

struct site_expect;
struct inventory;
struct root;

/* What a remedy is given. */
struct fix_ctx {
	const struct root *root;
	const struct inventory *inv;
	const struct report *rep;
	const struct site_expect *expect;
	const struct check_select *sel;
	struct fix_plan *plan;
	bool sysroot;
	/* Findings a remedy took or declined (parallel to rep->v): what no
	 * remedy took becomes a manual step. */
	bool *taken;
	char **declined;
	char *failed_path;   /* the file fix_file_add() could not read, for the manual step */
};

struct fix_def {
	const char *id;
	const char *const *checks; /* the check IDs whose findings it answers, NULL-terminated */
	/* Adds its remedies (fix_remedy_new()) for the selected findings of
	 * its checks; 0 or -errno (a bug or an unreadable tree; the plan says it). */
	int (*plan)(struct fix_ctx *c);
};

extern const struct fix_def *const fix_registry[];
extern const size_t fix_registry_n;

/* ---- for remedies (plan.c) ---- */

/* The warn and fail findings of check_id that --only/--skip select, one by
 * one: pass NULL first, then the previous one. */
const struct finding *fix_next(const struct fix_ctx *c, const char *check_id, const struct finding *prev);
/* Adds a remedy of def `id` to the plan and returns it. */
struct fix_remedy *fix_remedy_new(struct fix_ctx *c, const char *id, enum fix_effect effect, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* The remedy answers f (marks it taken). */
void fix_answer(struct fix_ctx *c, struct fix_remedy *r, const struct finding *f);
/* No remedy for f, and why (printf): it becomes a manual step saying so. */
void fix_decline(struct fix_ctx *c, const struct finding *f, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* A file of the remedy, its current content read through the root (absent
 * is fine: existed false). mode is the new file's mode. Returns it, or
 * NULL with *err (-errno) when it exists but cannot be read. */
struct fix_file *fix_file_add(struct fix_ctx *c, struct fix_remedy *r, const char *path, mode_t mode, int *err);
/* A kernel state file set by a command, for sysroot plans. */
struct fix_cmd *fix_cmd_add(struct fix_remedy *r, const char *const *argv);
void fix_cmd_sets(struct fix_cmd *cmd, const char *path, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The same with binary content (a PCI function's config space). */
void fix_cmd_sets_bytes(struct fix_cmd *cmd, const char *path, const void *data, size_t len);
/* A symbolic link of the remedy at path pointing to target (what
 * `systemctl enable` makes). Returns it, or NULL with *err: -EEXIST when
 * something that is not a link is there, or another -errno. */
struct fix_file *fix_link_add(struct fix_ctx *c, struct fix_remedy *r, const char *path, const char *target,
			      int *err);
void fix_note(struct fix_remedy *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The header every file gpuready writes starts with: a comment in the
 * file's syntax (prefix "# " or "; ") naming the check and docs/fix.md. */
void fix_header(struct strbuf *out, const char *prefix, const char *check_id);

/* ---- the planner ---- */

struct fix_opts {
	bool allow_disruptive;
	const struct strv *only;   /* --only as given: disruptive remedies it names are allowed */
	const char *busy;          /* GPU or RDMA work running (fix_busy()): disruptive remedies are held */
};

/* Plans the remedies for rep's findings; 0 or -errno with *err. */
int fix_plan_make(const struct root *root, const struct inventory *inv, const struct report *rep,
		  const struct site_expect *expect, const struct check_select *sel, const struct fix_opts *o,
		  struct fix_plan *plan, char **err);
void fix_plan_free(struct fix_plan *p);
/* Remedies that would change something (not held, not pending). */
size_t fix_plan_changes(const struct fix_plan *p);

/* Processes holding /dev/nvidia* or /dev/infiniband/... (the /proc/PID/fd
 * links under the root): NULL when none, else "pid 123 (python3) holds
 * /dev/nvidia0, ..." (malloc'd). */
char *fix_busy(const struct root *root);

/* ---- output (render.c) ---- */

/* The plan as text (unified diffs, commands, held and pending, manual steps). */
void fix_plan_text(const struct fix_plan *p, FILE *out, bool color);
/* The plan as JSON (docs/fix.schema.json): a new object. */
struct json_object *fix_plan_json(const struct fix_plan *p);
/* The plan as a POSIX sh script that makes the same changes (--script). */
int fix_plan_script(const struct fix_plan *p, FILE *out);
/* A unified diff of a and b labelled with path ("--- path", "+++ path"),
 * three lines of context; nothing when equal. */
void fix_diff(const char *path, const struct strbuf *a, bool a_exists, const struct strbuf *b, FILE *out);

/* ---- applying (apply.c) ---- */

struct fix_result {
	size_t applied, failed;
	struct strv lines;   /* what was done, one line each ("wrote /etc/...", "ran: sysctl -w ...: exit 0") */
	bool *remedy_failed; /* fix_apply: per remedy of the plan, whether it failed */
};

/* Applies every remedy not held: files (backups, atomic), then its
 * commands (live) or the state files (sysroot); appends to the audit log
 * and records pending remedies. 0, or -errno (nothing changed) when the
 * audit log cannot be written: no change without a record to revert it. */
int fix_apply(const struct root *root, struct fix_plan *p, double now, struct fix_result *res);
/* Restores every file the audit log says gpuready changed from its backup
 * (removes those it created, when unchanged since), then clears the
 * pending list. */
int fix_revert(const struct root *root, double now, struct fix_result *res);
void fix_result_free(struct fix_result *r);

/* Where the backup of path goes: beside it (path + FIX_BAK_SUFFIX), or
 * under FIX_BACKUP_DIR for directories whose every file is read
 * (/etc/network/interfaces.d, NetworkManager's system-connections). */
char *fix_backup_path(const char *path);

#endif
