/* `gpuready nccl --explain FILE...`: reads the NCCL logs of real jobs
 * (bench/nccl_explain.c) and says what they show. No GPU, no NCCL, no
 * launcher: FILE is a log, - standard input, or a directory whose regular
 * files are read in name order. Where the log and this node disagree (an
 * HCA the log used that this node's NCCL_IB_HCA excludes; GPUDirect RDMA
 * off in the log while this node can do it), it says so: when --sysroot
 * names a tree, or when the log shows this host's name.
 *
 * Exit status: 0 nothing wrong, 1 a failure signature or a fallback that
 * --require forbids, 2 an input that cannot be read or a usage error. */
#include "cmd.h"
#include "config.h"
#include "bench/nccl_explain.h"
#include "checks/gpudirect/common.h"
#include "checks/rdma/common.h"
#include "core/cleanup.h"
#include "core/fileio.h"
#include "core/strbuf.h"
#include "core/tcp.h"
#include "inventory/inventory.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* One input into x; the path's problem into errs. */
static void feed_path(struct nccl_explain *x, const char *path, struct strv *errs, struct strv *cuts)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	bool cut = false;
	int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY) : STDIN_FILENO;
	int r = fd < 0 ? -errno : 0;
	struct stat st;
	if (!r && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode))
		r = -EISDIR;
	if (!r)
		r = fd_read_capped(fd, NCCL_EXPLAIN_MAX_BYTES, &sb, &cut);
	if (fd > STDIN_FILENO)
		close(fd);
	if (r) {
		strv_push(errs, xasprintf("%s: %s", strcmp(path, "-") ? path : "standard input", strerror(-r)));
		return;
	}
	if (cut)
		strv_push(cuts, xasprintf("%s: only the first %u MiB were read", path, NCCL_EXPLAIN_MAX_BYTES >> 20));
	nccl_explain_feed(x, sb.buf, sb.len);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A directory: its regular files, sorted; subdirectories are not entered. */
static void feed_dir(struct nccl_explain *x, const char *dir, struct strv *errs, struct strv *cuts)
{
	DIR *d = opendir(dir);
	_cleanup_strv_ struct strv names = STRV_INIT;
	struct dirent *e;
	if (!d) {
		strv_push(errs, xasprintf("%s: %s", dir, strerror(errno)));
		return;
	}
	while ((e = readdir(d))) {
		struct stat st;
		if (fstatat(dirfd(d), e->d_name, &st, 0) == 0 && S_ISREG(st.st_mode))
			strv_push(&names, xasprintf("%s/%s", dir, e->d_name));
	}
	closedir(d);
	if (!names.n) {
		strv_push(errs, xasprintf("%s: no regular file in this directory", dir));
		return; /* qsort takes no NULL array, even of none */
	}
	qsort(names.v, names.n, sizeof(*names.v), cmp_str);
	for (size_t i = 0; i < names.n; i++)
		feed_path(x, names.v[i], errs, cuts);
}

/* Does the log show this host (short names compared: "gpu1" is "gpu1.example.com")? */
static bool log_shows_host(const struct nccl_explain *x, const char *host)
{
	size_t n = strcspn(host, ".");
	for (size_t i = 0; i < x->n_procs; i++) {
		const char *h = x->procs[i].host;
		if (h && strcspn(h, ".") == n && !strncmp(h, host, n))
			return true;
	}
	return false;
}

/* The HCAs the log used that this node's NCCL_IB_HCA leaves out. */
static void compare_hca(const struct nccl_explain *x, const struct inventory *inv, struct strv *notes)
{
	struct nccl_list list = { 0 };
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	size_t n = 0;
	const struct nccl_var *v = nccl_hca(inv, &list);
	for (size_t i = 0; v && i < x->all.n_hcas; i++) {
		const struct nccl_hca *h = &x->all.hcas[i];
		if (h->port >= 0 && !nccl_list_selects(&list, h->name, h->port))
			strbuf_addf(&out, "%s%s:%d", n++ ? ", " : "", h->name, h->port);
	}
	if (n)
		strv_push(notes, xasprintf("the log used %s, but this node's NCCL_IB_HCA=%s (%s) leaves %s out: the job "
					   "ran with another NCCL_IB_HCA than this node sets now",
					   out.buf, v->value, v->source, n == 1 ? "it" : "them"));
	nccl_list_free(&list);
}

/* GPUDirect RDMA off in the log (for some HCA) while this node can do it. */
static void compare_gdr(const struct nccl_explain *x, const struct inventory *inv, struct strv *notes)
{
	_cleanup_strbuf_ struct strbuf off = STRBUF_INIT;
	_cleanup_strv_ struct strv names = STRV_INIT;
	for (size_t i = 0; i < x->all.n_hcas; i++)
		if (x->all.hcas[i].gdr == 0 && !strv_contains(&names, x->all.hcas[i].name)) {
			strv_add(&names, x->all.hcas[i].name);
			strbuf_addf(&off, "%s%s", off.len ? ", " : "", x->all.hcas[i].name);
		}
	if (!off.len)
		return;
	struct gdr_state s;
	gdr_state_get(inv, &s);
	if (s.method == GDR_NONE || !s.gpus)
		return; /* cannot tell, or this node cannot either */
	strv_push(notes, xasprintf("the log shows GPU Direct RDMA Disabled for %s, but this node can do it through %s "
				   "(%s): the job's environment lacked it (a container without the module or device, "
				   "NCCL_NET_GDR_LEVEL, NCCL_DMABUF_ENABLE=0); `gpuready gpudirect` shows this node's side",
				   off.buf, gdr_method_name(s.method), s.why));
}

/* The node's side, when --sysroot names a tree or the log shows this host. */
static int compare_node(struct cmd_env *env, const struct nccl_explain *x, struct strv *notes)
{
	char host[256];
	tcp_hostname(host, sizeof(host));
	if (!opt_seen_name(env->cli, "sysroot") && !log_shows_host(x, host))
		return 0;
	_cleanup_root_ struct root *root = NULL;
	_cleanup_inventory_ struct inventory *inv = NULL;
	int r = load_for_command_live(env, INV_FILES, false, &root, &inv);
	if (r)
		return r;
	compare_hca(x, inv, notes);
	compare_gdr(x, inv, notes);
	return 0;
}

static int print_json(const struct settings *s, const struct nccl_explain *x, const struct strv *notes,
		      const struct strv *why, const struct strv *cuts, int code)
{
	json_object *o = nccl_explain_json(x, notes);
	json_object_object_add(o, "tool", json_object_new_string("gpuready"));
	json_object_object_add(o, "version", json_object_new_string(GPUREADY_VERSION));
	json_object_object_add(o, "kind", json_object_new_string("nccl-explain"));
	json_object_object_add(o, "require", s->require ? json_object_new_string(s->require) : NULL);
	json_object *w = json_object_new_array(), *c = json_object_new_array();
	for (size_t i = 0; i < why->n; i++)
		json_object_array_add(w, json_object_new_string(why->v[i]));
	for (size_t i = 0; i < cuts->n; i++)
		json_object_array_add(c, json_object_new_string(cuts->v[i]));
	json_object_object_add(o, "unmet", w);
	json_object_object_add(o, "cut", c);
	json_object_object_add(o, "result", json_object_new_string(code ? "fail" : "ok"));
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
						       JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	return code;
}

static int report(struct cmd_env *env, const struct nccl_explain *x, const struct strv *notes, const struct strv *cuts)
{
	const struct settings *s = env->set;
	_cleanup_strv_ struct strv why = STRV_INIT;
	bool met = !s->require || nccl_explain_meets(x, s->require, &why);
	int code = nccl_explain_failed(x) || !met ? EXIT_CHECK_FAILED : EXIT_OK;
	if (s->json)
		return print_json(s, x, notes, &why, cuts, code);
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	nccl_explain_text(x, notes, &out);
	for (size_t i = 0; i < cuts->n; i++)
		strbuf_addf(&out, "cut: %s\n", cuts->v[i]);
	for (size_t i = 0; i < why.n; i++)
		strbuf_addf(&out, "FAIL: --require %s: %s\n", s->require, why.v[i]);
	strbuf_addf(&out, "Verdict: %s\n", code ? "FAIL" : "OK (no failure signature)");
	fputs(out.buf, stdout);
	return code;
}

int cmd_nccl_explain(struct cmd_env *env)
{
	struct nccl_explain x;
	_cleanup_strv_ struct strv errs = STRV_INIT, cuts = STRV_INIT, notes = STRV_INIT;
	nccl_explain_init(&x);
	for (size_t i = 0; i < env->args.n; i++) {
		const char *a = env->args.v[i];
		struct stat st;
		if (strcmp(a, "-") && stat(a, &st) == 0 && S_ISDIR(st.st_mode))
			feed_dir(&x, a, &errs, &cuts);
		else
			feed_path(&x, a, &errs, &cuts);
	}
	nccl_explain_finish(&x);
	int code = EXIT_OK;
	if (errs.n) {
		for (size_t i = 0; i < errs.n; i++)
			fprintf(stderr, "%s nccl --explain: cannot read %s\n", env->progname, errs.v[i]);
		code = EXIT_TOOL_ERROR;
	} else if (!x.nccl_lines && !x.n_sigs && !x.versions.n) {
		/* an empty file, the wrong file, or a job without NCCL_DEBUG: not "nothing wrong" */
		fprintf(stderr, "%s nccl --explain: no NCCL output in the input (%zu line%s): was the job run with "
				"NCCL_DEBUG=INFO or WARN (NCCL's documentation, Environment Variables)?\n",
			env->progname, x.lines, x.lines == 1 ? "" : "s");
		code = EXIT_TOOL_ERROR;
	} else if ((code = compare_node(env, &x, &notes)) == 0) {
		code = report(env, &x, &notes, &cuts);
	}
	nccl_explain_free(&x);
	return code;
}
