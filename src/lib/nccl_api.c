/* Loads libnccl.so.2 into struct nccl_api and names its errors; see
 * nccl_api.h for where the library is looked for and which NCCL release
 * each declaration comes from. */
#define _GNU_SOURCE
#include "lib/nccl_api.h"
#include "core/cleanup.h"
#include "core/spawn.h"

#include <dlfcn.h>
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The Python interpreter started to read sys.path; a short limit, since
 * this only runs when no system NCCL was found. */
#define NCCL_PY_TIMEOUT_MS 5000
#define NCCL_WHEEL_PATH "nvidia/nccl/lib/libnccl.so.2"
#define NCCL_HOWTO                                                                                             \
	"install NCCL: apt install libnccl2 from NVIDIA's CUDA repository, or pip install nvidia-nccl-cu12, "    \
	"or give --nccl-lib PATH"

#define NCCL_SYM(sym, member, opt) { .name = #sym, .optional = (opt), .offset = offsetof(struct nccl_api, member) }

static const struct dl_sym nccl_syms[] = {
	NCCL_SYM(ncclGetVersion, get_version, false),
	NCCL_SYM(ncclGetUniqueId, get_unique_id, false),
	NCCL_SYM(ncclCommInitRank, comm_init_rank, false),
	NCCL_SYM(ncclCommDestroy, comm_destroy, false),
	NCCL_SYM(ncclCommAbort, comm_abort, false),
	NCCL_SYM(ncclCommGetAsyncError, comm_get_async_error, false),
	NCCL_SYM(ncclGetErrorString, get_error_string, false),
	NCCL_SYM(ncclGroupStart, group_start, false),
	NCCL_SYM(ncclGroupEnd, group_end, false),
	NCCL_SYM(ncclAllReduce, all_reduce, false),
	NCCL_SYM(ncclBroadcast, broadcast, false),
	NCCL_SYM(ncclReduce, reduce, false),
	NCCL_SYM(ncclAllGather, all_gather, false),
	NCCL_SYM(ncclReduceScatter, reduce_scatter, false),
	NCCL_SYM(ncclSend, send, false),
	NCCL_SYM(ncclRecv, recv, false),
	NCCL_SYM(ncclCommInitRankConfig, comm_init_rank_config, true),
	NCCL_SYM(ncclGetLastError, get_last_error, true),
	NCCL_SYM(ncclMemAlloc, mem_alloc, true),
	NCCL_SYM(ncclMemFree, mem_free, true),
	NCCL_SYM(ncclCommRegister, comm_register, true),
	NCCL_SYM(ncclCommDeregister, comm_deregister, true),
	NCCL_SYM(ncclCommWindowRegister, comm_window_register, true),
	NCCL_SYM(ncclCommWindowDeregister, comm_window_deregister, true),
	NCCL_SYM(ncclCommSplit, comm_split, true),
	NCCL_SYM(ncclCommCount, comm_count, true),
	NCCL_SYM(ncclCommUserRank, comm_user_rank, true),
};


static void add_wheel(struct strv *out, const char *site)
{
	_cleanup_free_ char *p = xasprintf("%s/" NCCL_WHEEL_PATH, site);
	if (access(p, F_OK) == 0 && !strv_contains(out, p))
		strv_push(out, TAKE_PTR(p));
}

/* Every sys.path entry of the interpreter; a failure to run it is noted. */
static void wheels_from_python(struct strv *out, struct strbuf *searched)
{
	_cleanup_free_ char *py = spawn_find_python(NULL);
	const char *argv[] = { py, "-c", "import sys; print('\\n'.join(sys.path))", NULL };
	struct spawn_result res;

	int r = spawn_run(argv, NULL, NCCL_PY_TIMEOUT_MS, &res);
	if (r < 0) {
		strbuf_addf(searched, "%s could not be started (%s)", py, strerror(-r));
		spawn_result_free(&res);
		return;
	}
	if (res.exit_code != 0 || res.timed_out) {
		strbuf_addf(searched, "%s failed to print sys.path (%s)", py,
			    res.timed_out ? "timed out" : "nonzero exit");
		spawn_result_free(&res);
		return;
	}
	int n = 0;
	for (char *line = res.out.buf, *nl; *line; line = nl ? nl + 1 : line + strlen(line)) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		if (line[0] == '/') {
			add_wheel(out, line);
			n++;
		}
		if (!nl)
			break;
	}
	strbuf_addf(searched, "%s sys.path (%d entries)", py, n);
	spawn_result_free(&res);
}

static void wheels_from_venv(struct strv *out, struct strbuf *searched)
{
	const char *venv = getenv("VIRTUAL_ENV");
	if (!venv || !*venv)
		return;
	_cleanup_free_ char *pattern = xasprintf("%s/lib/python3*/site-packages", venv);
	glob_t g;
	if (glob(pattern, 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++)
			add_wheel(out, g.gl_pathv[i]);
		globfree(&g);
	}
	strbuf_addf(searched, ", $VIRTUAL_ENV %s", venv);
}

void nccl_api_wheels(struct strv *out, struct strbuf *searched)
{
	wheels_from_python(out, searched);
	wheels_from_venv(out, searched);
}

int nccl_version_decode(int code, int *major, int *minor, int *patch)
{
	if (code >= NCCL_VERSION_CODE(2, 9, 0)) {
		*major = code / 10000;
		*minor = code % 10000 / 100;
		*patch = code % 100;
	} else if (code >= 1000 && code < 10000) {
		*major = code / 1000;
		*minor = code % 1000 / 100;
		*patch = code % 100;
	} else {
		return -EINVAL;
	}
	return 0;
}

/* Marks the loaded object RTLD_NODELETE (promoted through RTLD_NOLOAD). */
static void nccl_pin(const struct dl_lib *lib)
{
	void *h = dlopen(lib->path, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
	if (h)
		dlclose(h);
}

static int nccl_read_version(struct nccl_api *api, char **ret_err)
{
	ncclResult_t r = api->get_version(&api->code);
	if (r != ncclSuccess) {
		*ret_err = xasprintf("%s: ncclGetVersion failed: %s (%d)", api->lib.path, api->get_error_string(r),
				     (int)r);
		return -EIO;
	}
	if (nccl_version_decode(api->code, &api->major, &api->minor, &api->patch) < 0) {
		*ret_err = xasprintf("%s: ncclGetVersion returned %d, not an NCCL 2 version code", api->lib.path,
				     api->code);
		return -EIO;
	}
	snprintf(api->version, sizeof(api->version), "NCCL %d.%d.%d", api->major, api->minor, api->patch);
	return 0;
}

/* The soname first; only when that fails is Python asked for its wheels. */
static int nccl_open(struct nccl_api *api, char **ret_err)
{
	static const char *const soname[] = { "libnccl.so.2", NULL };
	_cleanup_strv_ struct strv wheels = STRV_INIT;
	_cleanup_strbuf_ struct strbuf searched = STRBUF_INIT;

	int r = dl_open(&api->lib, soname, nccl_syms, ARRAY_SIZE(nccl_syms), api);
	if (r == 0)
		return 0;
	_cleanup_free_ char *first = TAKE_PTR(api->lib.error);
	nccl_api_wheels(&wheels, &searched);
	if (wheels.n) {
		dl_close(&api->lib);
		r = dl_open(&api->lib, (const char *const *)wheels.v, nccl_syms, ARRAY_SIZE(nccl_syms), api);
		if (r == 0)
			return 0;
	}
	*ret_err = xasprintf("NCCL (libnccl.so.2) could not be loaded; tried %s%s%s; the pip wheel's %s was looked "
			     "for in %s; %s",
			     first, wheels.n ? "; " : "", wheels.n ? api->lib.error : "", NCCL_WHEEL_PATH,
			     searched.len ? searched.buf : "no Python environment", NCCL_HOWTO);
	return r;
}

/* The loaded file: dladdr on one of its symbols gives the path the
 * dynamic linker resolved the soname to; the name dlopen was given where
 * that fails. */
static void nccl_file(struct nccl_api *api)
{
	void *sym = dlsym(api->lib.handle, "ncclGetVersion");
	Dl_info info;

	if (sym && dladdr(sym, &info) && info.dli_fname && info.dli_fname[0])
		snprintf(api->file, sizeof(api->file), "%s", info.dli_fname);
	else
		snprintf(api->file, sizeof(api->file), "%s", api->lib.path);
}

int nccl_api_load(struct nccl_api *api, const char *explicit_path, char **ret_err)
{
	memset(api, 0, sizeof(*api));
	if (explicit_path) {
		const char *const one[] = { explicit_path, NULL };
		int r = dl_open(&api->lib, one, nccl_syms, ARRAY_SIZE(nccl_syms), api);
		if (r < 0) {
			*ret_err = xasprintf("NCCL could not be loaded from --nccl-lib %s: %s; %s", explicit_path,
					     api->lib.error, NCCL_HOWTO);
			return r;
		}
	} else {
		int r = nccl_open(api, ret_err);
		if (r < 0)
			return r;
	}
	nccl_pin(&api->lib);
	nccl_file(api);
	return nccl_read_version(api, ret_err);
}

void nccl_api_unload(struct nccl_api *api)
{
	dl_close(&api->lib);
	memset(api, 0, sizeof(*api));
}

bool nccl_api_has_nonblocking_init(const struct nccl_api *api)
{
	return api->comm_init_rank_config && api->code >= NCCL_VERSION_CODE(2, 14, 0);
}

/* ncclGetLastError is optional (NCCL 2.13+). NCCL's documentation: it
 * returns "a human-readable string corresponding to the last error that
 * occurred in NCCL" (the text of its last WARN), "could be unrelated to the
 * current call", and "comm is currently unused and can be set to NULL":
 * so it is asked even without a communicator, which is how a failed
 * ncclCommInitRank, before any communicator exists, keeps NCCL's own
 * reason. The text is labelled as NCCL's, trailing blanks dropped. */
void nccl_api_format(const struct nccl_api *api, ncclComm_t comm, const char *fn, ncclResult_t r, char *out,
		     size_t size)
{
	const char *text = api->get_error_string ? api->get_error_string(r) : NULL;
	const char *last = api->get_last_error ? api->get_last_error(comm) : NULL;
	size_t n = last ? strlen(last) : 0;

	while (n > 0 && (last[n - 1] == '\n' || last[n - 1] == ' ' || last[n - 1] == '\r'))
		n--;
	snprintf(out, size, "%s: %s (%d)%s%.*s", fn, text ? text : "unknown NCCL error", (int)r,
		 n ? "; NCCL's last error: " : "", (int)n, n ? last : "");
}
