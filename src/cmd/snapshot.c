/* `gpuready snapshot DIR`: record what the checks read.
 *
 * The inventory is loaded once with a recorder on the root (core/root.h)
 * that writes every symlink followed, directory listed, path tested and
 * file read into DIR at the same in-root path (snapshot/writer.h: modes
 * kept, read errors listed in .gpuready/unreadable, the tree marked
 * .gpuready/incomplete until it is all written). Symlinks keep their
 * original target text (relative sysfs links stay relative; absolute links
 * such as systemd's .wants/ entries stay absolute and are clamped into the
 * root when read). Configuration files that may hold secrets (units,
 * scripts, udev rules, nccl.conf, profile.d, /etc/environment) are kept
 * only as far as the inventory parses them (it records what it keeps).
 *
 * From the live process only this is added, in DIR/.gpuready/: `environ`
 * (NUL-separated NCCL_*, UCX_*, CUDA_VISIBLE_DEVICES and
 * KUBERNETES_SERVICE_HOST, which says the view is a pod's, only — no other
 * environment, so no secrets), `meta` (home, user, uid, arch) and
 * `ifaddrs` (the interface addresses, getifaddrs(3)), `dcb` (the RoCE
 * netdevs' PFC and DSCP APP entries, rtnetlink DCB) and `nvlink` (NVML's
 * NVLink counts and version per GPU; docs/snapshot-layout.md). */
#define _GNU_SOURCE
#include "cmd.h"
#include "config.h"
#include "core/cleanup.h"
#include "core/parse.h"
#include "inventory/inventory.h"
#include "inventory/nvlink_rec.h"
#include "probe/probe.h"
#include "snapshot/writer.h"

#include <errno.h>
#include <string.h>

static bool keep_env(const char *kv)
{
	return str_startswith(kv, "NCCL_") || str_startswith(kv, "UCX_") || str_startswith(kv, "CUDA_VISIBLE_DEVICES=") ||
	       str_startswith(kv, "KUBERNETES_SERVICE_HOST=");
}

static void write_live_extras(struct snap_writer *w, const struct inventory *inv)
{
	struct strbuf env = STRBUF_INIT, meta = STRBUF_INIT;
	extern char **environ;
	for (char **e = environ; e && *e; e++)
		if (keep_env(*e) && strchr(*e, '=')) {
			strbuf_adds(&env, *e);
			strbuf_addch(&env, '\0');
		}
	strbuf_addf(&meta, "# written by gpuready %s snapshot\n", GPUREADY_VERSION);
	if (inv->user.home)
		strbuf_addf(&meta, "home = %s\n", inv->user.home);
	if (inv->user.name)
		strbuf_addf(&meta, "user = %s\n", inv->user.name);
	strbuf_addf(&meta, "uid = %ld\n", inv->user.uid);
	if (inv->kernel.arch)
		strbuf_addf(&meta, "arch = %s\n", inv->kernel.arch);
	snap_writer_add(w, "/.gpuready/environ", env.buf, env.len, 0644);
	snap_writer_add(w, "/.gpuready/meta", meta.buf, meta.len, 0644);
	if (inv->net.addrs_known) {
		struct strbuf addrs = STRBUF_INIT;
		strbuf_addf(&addrs, "# interface addresses (getifaddrs), written by gpuready %s snapshot\n",
			    GPUREADY_VERSION);
		ifaddrs_format(&inv->net, &addrs);
		snap_writer_add(w, "/.gpuready/ifaddrs", addrs.buf, addrs.len, 0644);
		strbuf_release(&addrs);
	}
	if (inv->net.dcb.known) {
		struct strbuf dcb = STRBUF_INIT;
		strbuf_addf(&dcb, "# DCB state of the RoCE netdevs (rtnetlink RTM_GETDCB), written by gpuready %s snapshot\n",
			    GPUREADY_VERSION);
		dcb_format(&inv->net.dcb, &dcb);
		snap_writer_add(w, "/.gpuready/dcb", dcb.buf, dcb.len, 0644);
		strbuf_release(&dcb);
	}
	strbuf_release(&env);
	strbuf_release(&meta);
}

/* NVML's NVLink counts and version per GPU (live, in a child under the
 * probes' deadline), for bench copy's peer limits on the tree; nothing
 * when NVML cannot be asked. */
static void write_nvlinks(struct snap_writer *w)
{
	struct nvml_info nv = { 0 };
	nvml_probe_deadline(&nv, probe_call_timeout());
	if (nv.loaded && nv.n > 0) {
		struct strbuf sb = STRBUF_INIT;
		strbuf_addf(&sb, "# NVLinks per GPU: BDF LINKS DOWN VERSION (NVML nvmlDeviceGetNvLinkState, "
				 "nvmlDeviceGetNvLinkVersion), written by gpuready %s snapshot\n", GPUREADY_VERSION);
		nvlink_rec_format(&nv, &sb);
		snap_writer_add(w, NVLINK_REC_FILE, sb.buf, sb.len, 0644);
		strbuf_release(&sb);
	}
	nvml_info_free(&nv);
}

/* Loads the inventory with the writer as the root's recorder. */
static int record(struct root *root, struct snap_writer *w)
{
	_cleanup_inventory_ struct inventory *inv = NULL;
	struct root_recorder rec = snap_writer_recorder(w);
	root_set_recorder(root, &rec);
	struct load_opts lo = { .parts = INV_FILES };
	int r = inventory_load(root, &lo, &inv);
	if (r == 0) {
		/* the site config is read by the check commands, not the
		 * inventory; the host name, live, comes from gethostname(),
		 * and in a recorded tree from this file */
		struct strbuf sb = STRBUF_INIT;
		root_read(root, "/etc/gpuready.conf", 1u << 20, &sb);
		if (root_is_live(root))
			root_read(root, "/proc/sys/kernel/hostname", 4096, &sb);
		strbuf_release(&sb);
	}
	root_set_recorder(root, NULL);
	if (r == 0 && root_is_live(root)) {
		ifaddrs_live(&inv->net);
		dcb_live(inv);
		write_live_extras(w, inv);
		write_nvlinks(w);
	}
	return r;
}

int cmd_snapshot(struct cmd_env *env)
{
	const char *src = env->set->sysroot ? env->set->sysroot : "/";
	const char *dir = env->args.v[0];
	_cleanup_root_ struct root *root = NULL;
	_cleanup_snap_writer_ struct snap_writer *w = NULL;
	_cleanup_free_ char *err = NULL;
	int r;

	if ((r = root_open(src, &root)) < 0) {
		fprintf(stderr, "%s snapshot: cannot open %s: %s\n", env->progname, src, strerror(-r));
		return EXIT_TOOL_ERROR;
	}
	/* a copy of an incomplete tree is no more complete */
	bool src_incomplete = root_incomplete(root);
	if (src_incomplete && !env->set->force) {
		fprintf(stderr, "%s snapshot: %s is an incomplete snapshot (%s%s): take it again, or copy it anyway "
				"with --force (the copy is marked incomplete too)\n",
			env->progname, src, src, ROOT_INCOMPLETE);
		return EXIT_TOOL_ERROR;
	}
	if (snap_writer_open(dir, &w, &err) < 0) {
		fprintf(stderr, "%s snapshot: %s\n", env->progname, err);
		return EXIT_TOOL_ERROR;
	}
	if ((r = record(root, w)) < 0) {
		fprintf(stderr, "%s snapshot: reading the machine failed: %s; %s is incomplete\n", env->progname,
			strerror(-r), dir);
		return EXIT_TOOL_ERROR;
	}
	if (snap_writer_finish(w, !src_incomplete, &err) < 0) {
		fprintf(stderr, "%s snapshot: %s\n", env->progname, err);
		return EXIT_TOOL_ERROR;
	}
	const struct snap_stats *st = snap_writer_stats(w);
	fprintf(stderr, "%s snapshot: %zu files, %zu links, %zu directories recorded in %s\n", env->progname,
		st->files, st->links, st->dirs, dir);
	if (st->unreadable)
		fprintf(stderr, "%s snapshot: %zu files could not be read: %s%s lists them with their errors\n",
			env->progname, st->unreadable, dir, ROOT_UNREADABLE);
	if (src_incomplete)
		fprintf(stderr, "%s snapshot: %s is marked incomplete, as its source was\n", env->progname, dir);
	fprintf(stderr, "check it elsewhere with: gpuready check --sysroot %s\n", dir);
	return EXIT_OK;
}
