/* The process's own view of the machine: whether it is a container's, the
 * /dev/shm it has, and its locked-memory limit and capabilities.
 *
 * gpuready also runs inside a job's container (a Kubernetes pod, Docker,
 * Podman, Enroot/Pyxis under Slurm). There the container runtime decides
 * what the job gets: its own /dev/shm (Docker's is 64 MiB unless
 * --shm-size or --ipc=host says otherwise; docker-run(1)), the device nodes
 * passed in, RLIMIT_MEMLOCK (set by the runtime, not by limits.conf, which
 * only pam_limits applies at a login) and the capability set (Docker's
 * default lacks CAP_IPC_LOCK). Everything here is read from files through
 * the root, so `gpuready snapshot` records it:
 *
 * - markers: /.dockerenv (Docker creates it in every container), Podman's
 *   /run/.containerenv (podman-run(1)), the service-account directory the
 *   kubelet mounts at /var/run/secrets/kubernetes.io/serviceaccount,
 *   Enroot's /.lock (enroot src/runtime.sh creates it in the container's
 *   root; `enroot list` finds containers by it), and KUBERNETES_SERVICE_HOST
 *   in the environment (the kubelet sets it in every container);
 * - /proc/1/cgroup and /proc/self/cgroup (cgroups(7)): a path of a runtime's
 *   cgroup (docker-<id>.scope, kubepods, libpod-<id>, crio-, lxc);
 * - /proc/self/mountinfo (proc(5)): the root mount's `root` field (a bind
 *   mounted directory, as Enroot's switchroot leaves it, is not "/"), the
 *   files runtimes bind-mount over /etc (hostname, hosts, resolv.conf), and
 *   the /dev/shm mount with its size= option;
 * - /proc/meminfo MemTotal: tmpfs without size= gets half of RAM
 *   (Documentation/filesystems/tmpfs.rst);
 * - /proc/self/limits, /proc/self/status CapEff and /proc/self/uid_map
 *   (user_namespaces(7)). */
#include "inventory.h"
#include "core/cleanup.h"
#include "core/parse.h"
#include "core/readers.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

bool mountinfo_parse_line(char *line, struct mountinfo_line *m)
{
	/* id parent major:minor root mount-point options [optional...] - fstype source super-options */
	char *f[6] = { 0 };
	char *save = NULL, *tok = strtok_r(line, " \t", &save);
	int n = 0;
	while (tok && n < 6) {
		f[n++] = tok;
		tok = strtok_r(NULL, " \t", &save);
	}
	if (n < 6)
		return false;
	while (tok && strcmp(tok, "-"))
		tok = strtok_r(NULL, " \t", &save);
	if (!tok)
		return false;
	char *fstype = strtok_r(NULL, " \t", &save);
	char *source = fstype ? strtok_r(NULL, " \t", &save) : NULL;
	char *opts = source ? strtok_r(NULL, " \t", &save) : NULL;
	if (!opts || f[3][0] != '/' || f[4][0] != '/')
		return false;
	*m = (struct mountinfo_line){ .root = f[3], .mount_point = f[4], .fstype = fstype, .source = source,
				      .super_opts = opts };
	return true;
}

int tmpfs_size_option(const char *opts, uint64_t *ret)
{
	for (const char *p = opts; p && *p;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len > 5 && !strncmp(p, "size=", 5)) {
			_cleanup_free_ char *v = xstrndup(p + 5, len - 5);
			size_t n = strlen(v);
			unsigned shift = 0;
			char last = n ? v[n - 1] : 0;
			const char *units = "kKmMgGtT";
			const char *u = last ? strchr(units, last) : NULL;
			if (u) {
				shift = 10 * (unsigned)((u - units) / 2 + 1);
				v[--n] = '\0';
			}
			uint64_t x;
			int e = parse_u64(v, 10, &x);
			if (e < 0)
				return e == -ENODATA ? -EINVAL : e;
			if (shift && x > (UINT64_MAX >> shift))
				return -ERANGE;
			*ret = x << shift;
			return 0;
		}
		p = end ? end + 1 : NULL;
	}
	return -ENOENT;
}

static int limit_value(const char *s, uint64_t *ret)
{
	if (!strcmp(s, "unlimited")) {
		*ret = UINT64_MAX;
		return 0;
	}
	return parse_u64(s, 10, ret);
}

int proc_limits_memlock(const char *text, uint64_t *soft, uint64_t *hard)
{
	static const char key[] = "Max locked memory";
	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		if (len > sizeof(key) - 1 && !strncmp(p, key, sizeof(key) - 1)) {
			_cleanup_free_ char *line = xstrndup(p + sizeof(key) - 1, len - (sizeof(key) - 1));
			char *save = NULL, *s = strtok_r(line, " \t", &save), *h = s ? strtok_r(NULL, " \t", &save) : NULL;
			uint64_t a, b;
			if (!h || limit_value(s, &a) < 0 || limit_value(h, &b) < 0)
				return -EINVAL;
			*soft = a;
			*hard = b;
			return 0;
		}
		p = nl ? nl + 1 : NULL;
	}
	return -ENODATA;
}

int proc_status_field(const char *text, const char *key, char **ret)
{
	size_t k = strlen(key);
	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		if (len > k && !strncmp(p, key, k) && p[k] == ':') {
			_cleanup_free_ char *v = xstrndup(p + k + 1, len - k - 1);
			*ret = xstrdup(str_trim(v));
			return 0;
		}
		p = nl ? nl + 1 : NULL;
	}
	return -ENODATA;
}

static void add_evidence(struct proc_view *v, const char *runtime, char *what)
{
	if (!v->runtime && runtime)
		v->runtime = xstrdup(runtime);
	strv_push(&v->evidence, what);
}

/* Files and directories that only a container has. */
static void load_markers(const struct root *r, struct proc_view *v)
{
	static const struct {
		const char *path, *runtime;
	} markers[] = {
		{ "/.dockerenv", "Docker" },
		{ "/run/.containerenv", "Podman" },
		{ "/var/run/secrets/kubernetes.io/serviceaccount", "Kubernetes" },
		{ "/.lock", "Enroot" },
	};
	for (size_t i = 0; i < sizeof(markers) / sizeof(markers[0]); i++)
		if (root_exists(r, markers[i].path))
			add_evidence(v, markers[i].runtime, xasprintf("%s exists", markers[i].path));
	_cleanup_strv_ struct strv env = STRV_INIT;
	bool recorded = false;
	if (env_load(r, &env, &recorded) == 0)
		for (size_t i = 0; i < env.n; i++)
			if (str_startswith(env.v[i], "KUBERNETES_SERVICE_HOST="))
				add_evidence(v, "Kubernetes",
					     xasprintf("KUBERNETES_SERVICE_HOST is set%s",
						       recorded ? " (/.gpuready/environ)" : ""));
}

/* The runtime a cgroup path belongs to, or NULL. */
static const char *cgroup_runtime(const char *path)
{
	static const struct {
		const char *word, *runtime;
	} words[] = {
		{ "kubepods", "Kubernetes" }, { "/docker/", "Docker" }, { "/docker-", "Docker" },
		{ "/libpod-", "Podman" },     { "/crio-", "CRI-O" },     { "/cri-containerd-", "containerd" },
		{ "/lxc/", "LXC" },           { "/lxc.payload", "LXC" },
	};
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strstr(path, words[i].word))
			return words[i].runtime;
	return NULL;
}

/* Adds the first runtime cgroup path of `file` as evidence unless `add`
 * is false (the file is read, and so recorded, either way). */
static bool load_cgroup(const struct root *r, struct proc_view *v, const char *file, bool add)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	if (read_all(r, &sb, "%s", file) < 0)
		return false;
	v->looked = true;
	for (char *save = NULL, *line = strtok_r(sb.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		/* hierarchy-ID:controllers:path */
		char *path = strchr(line, ':');
		path = path ? strchr(path + 1, ':') : NULL;
		const char *rt = path ? cgroup_runtime(path + 1) : NULL;
		if (rt) {
			if (add)
				add_evidence(v, rt, xasprintf("cgroup %s in %s", path + 1, file));
			return true;
		}
	}
	return false;
}

static void take_shm(struct proc_view *v, const struct mountinfo_line *m)
{
	v->shm_mounted = true;
	free(v->shm_fstype);
	free(v->shm_source);
	v->shm_fstype = xstrdup(m->fstype);
	v->shm_source = xstrdup(m->source);
	uint64_t size = 0;
	int e = tmpfs_size_option(m->super_opts, &size);
	v->shm_size_set = e == 0;
	v->shm_size = e == 0 ? size : 0;
	v->shm_size_err = e == -ENOENT ? 0 : e;
}

static void load_mountinfo(const struct root *r, struct proc_view *v)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	v->mountinfo_err = read_all(r, &sb, "/proc/self/mountinfo");
	if (v->mountinfo_err == 0 && sb.len == 0)
		v->mountinfo_err = -ENODATA;
	if (v->mountinfo_err < 0)
		return;
	v->looked = true;
	_cleanup_free_ char *root_src = NULL, *etc = NULL;
	for (char *save = NULL, *line = strtok_r(sb.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct mountinfo_line m;
		if (!mountinfo_parse_line(line, &m))
			continue;
		if (!strcmp(m.mount_point, "/")) {
			free(root_src);
			root_src = strcmp(m.root, "/") ? xasprintf("%s of %s", m.root, m.source) : NULL;
		} else if (!etc && (!strcmp(m.mount_point, "/etc/hostname") || !strcmp(m.mount_point, "/etc/hosts") ||
				    !strcmp(m.mount_point, "/etc/resolv.conf"))) {
			etc = xasprintf("%s is a bind mount of %s in /proc/self/mountinfo", m.mount_point, m.root);
		} else if (!strcmp(m.mount_point, "/dev/shm")) {
			take_shm(v, &m);
		}
	}
	if (root_src)
		add_evidence(v, NULL, xasprintf("the root filesystem is the directory %s in /proc/self/mountinfo", root_src));
	if (etc)
		add_evidence(v, NULL, TAKE_PTR(etc));
}

static void load_meminfo(const struct root *r, struct proc_view *v)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	_cleanup_free_ char *val = NULL;
	v->meminfo_err = read_all(r, &sb, "/proc/meminfo");
	if (v->meminfo_err < 0)
		return;
	if ((v->meminfo_err = proc_status_field(sb.buf, "MemTotal", &val)) < 0)
		return;
	/* "2113456789 kB" */
	char *unit = strchr(val, ' ');
	uint64_t kb;
	if (unit)
		*unit++ = '\0';
	if ((unit && strcmp(str_trim(unit), "kB")) || (v->meminfo_err = parse_u64(val, 10, &kb)) < 0 ||
	    kb > UINT64_MAX / 1024) {
		v->meminfo_err = v->meminfo_err < 0 ? v->meminfo_err : -EINVAL;
		return;
	}
	v->mem_total = kb * 1024;
}

static void load_self(const struct root *r, struct proc_view *v)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	v->limits_err = read_all(r, &sb, "/proc/self/limits");
	if (v->limits_err == 0)
		v->limits_err = proc_limits_memlock(sb.buf, &v->memlock_soft, &v->memlock_hard);
	_cleanup_free_ char *cap = NULL;
	v->caps_err = read_all(r, &sb, "/proc/self/status");
	if (v->caps_err == 0 && (v->caps_err = proc_status_field(sb.buf, "CapEff", &cap)) == 0)
		v->caps_err = parse_u64(cap, 16, &v->cap_eff);
	v->init_userns = -1;
	if (read_all(r, &sb, "/proc/self/uid_map") == 0 && sb.len) {
		/* the initial namespace maps 0..2^32-2 onto itself, in one line */
		char *line = str_trim(sb.buf);
		char *save = NULL, *a = strtok_r(line, " \t\n", &save), *b = a ? strtok_r(NULL, " \t\n", &save) : NULL;
		char *c = b ? strtok_r(NULL, " \t\n", &save) : NULL, *more = c ? strtok_r(NULL, " \t\n", &save) : NULL;
		v->init_userns = a && b && c && !more && !strcmp(a, "0") && !strcmp(b, "0") && !strcmp(c, "4294967295");
	}
}

int proc_view_load(const struct root *r, struct proc_view *v)
{
	load_markers(r, v);
	bool pid1 = load_cgroup(r, v, "/proc/1/cgroup", true);
	load_cgroup(r, v, "/proc/self/cgroup", !pid1);
	load_mountinfo(r, v);
	load_meminfo(r, v);
	load_self(r, v);
	return 0;
}

void proc_view_free(struct proc_view *v)
{
	strv_free(&v->evidence);
	free(v->runtime);
	free(v->shm_fstype);
	free(v->shm_source);
	memset(v, 0, sizeof(*v));
}
