/* The NVIDIA kernel driver as its files show it (NVIDIA open-gpu-kernel-modules, kernel-open/nvidia/nv-procfs.c):
 * /proc/driver/nvidia/version (version and open vs proprietary wording),
 * /sys/module/nvidia/{version,taint} (taint P = proprietary licence), and
 * /proc/driver/nvidia/gpus/<bdf>/information per GPU. */
#include "inventory.h"
#include "core/cleanup.h"
#include "core/parse.h"
#include "core/readers.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <stdlib.h>

enum nv_flavour nv_parse_version_line(const char *line, char **version)
{
	enum nv_flavour f = NV_FLAVOUR_UNKNOWN;
	if (strstr(line, "Open Kernel Module"))
		f = NV_FLAVOUR_OPEN;
	else if (strstr(line, "Kernel Module"))
		f = NV_FLAVOUR_PROPRIETARY;
	/* the first token like 570.124.06 (or 570.124) after the prefix */
	const char *s = strstr(line, "Kernel Module");
	s = s ? s : line;
	while (*s) {
		while (*s && !isdigit((unsigned char)*s))
			s++;
		const char *b = s;
		int dots = 0;
		while (isdigit((unsigned char)*s) || (*s == '.' && isdigit((unsigned char)s[1]))) {
			dots += *s == '.';
			s++;
		}
		bool alone = b == line || isspace((unsigned char)b[-1]);
		if (dots >= 1 && alone && (isspace((unsigned char)*s) || !*s)) {
			if (version)
				*version = xstrndup(b, (size_t)(s - b));
			return f;
		}
	}
	if (version)
		*version = NULL;
	return f;
}

/* The GPU instances of a GPU: gi<id> under capabilities/gpu<minor>/mig. */
static void load_mig(const struct root *r, struct nvidia_gpu_info *g)
{
	if (g->minor < 0) {
		g->mig_err = -ENODATA;
		return;
	}
	_cleanup_strv_ struct strv names = STRV_INIT;
	_cleanup_free_ char *dir = xasprintf("/proc/driver/nvidia/capabilities/gpu%d/mig", g->minor);
	g->mig_err = root_list(r, dir, &names);
	for (size_t i = 0; i < names.n; i++)
		if (str_startswith(names.v[i], "gi") && names.v[i][2] >= '0' && names.v[i][2] <= '9')
			strv_add(&g->mig_gis, names.v[i]);
}

static void load_gpu_info(const struct root *r, const char *bdf, struct nvidia_gpu_info *g)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	g->bdf = xstrdup(bdf);
	g->excluded = -1;
	g->minor = -1;
	g->mig_err = -ENODATA;
	g->info_err = read_all(r, &sb, "/proc/driver/nvidia/gpus/%s/information", bdf);
	if (g->info_err == 0 && sb.len == 0)
		g->info_err = -ENODATA;
	if (g->info_err < 0)
		return;
	_cleanup_free_ char *copy = xstrdup(sb.buf);
	char *save = NULL;
	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(l, ':');
		if (!colon)
			continue;
		*colon = '\0';
		const char *k = str_trim(l);
		char *v = str_trim(colon + 1);
		if (!strcmp(k, "Model"))
			g->model = xstrdup(v);
		else if (!strcmp(k, "GPU UUID"))
			g->uuid = xstrdup(v);
		else if (!strcmp(k, "Video BIOS"))
			g->vbios = xstrdup(v);
		else if (!strcmp(k, "GPU Firmware"))
			g->firmware = xstrdup(v);
		else if (!strcmp(k, "Bus Location"))
			g->bus_location = xstrdup(v);
		else if (!strcmp(k, "GPU Excluded"))
			g->excluded = !strcasecmp(v, "Yes") ? 1 : !strcasecmp(v, "No") ? 0 : -1;
		else if (!strcmp(k, "Device Minor"))
			g->minor = parse_int(v, 10, &g->minor) == 0 ? g->minor : -1;
	}
	load_mig(r, g);
}

int nvidia_load(const struct root *r, struct nvidia_info *n)
{
	char *s = NULL;
	n->version_err = read_str(r, &s, "/proc/driver/nvidia/version");
	if (n->version_err == 0) {
		n->proc_present = true;
		n->version_line = s;
		n->flavour_proc = nv_parse_version_line(s, &n->version);
	}
	read_str(r, &n->module_version, "/sys/module/nvidia/version");
	_cleanup_strbuf_ struct strbuf t = STRBUF_INIT;
	/* an empty taint file means "not tainted": keep it as "" */
	if (read_all(r, &t, "/sys/module/nvidia/taint") == 0) {
		strbuf_rtrim(&t);
		n->taint = strbuf_detach(&t);
	}
	if (!n->version && n->module_version)
		n->version = xstrdup(n->module_version);
	static const char *const markers[] = {
		"/sys/kernel/mm/memory_peers/nv_mem/version",
		"/sys/kernel/mm/memory_peers/nv_mem_nc/version",
		"/sys/module/nvidia_peermem/version",
	};
	for (size_t i = 0; i < sizeof(markers) / sizeof(markers[0]) && !n->peermem_marker; i++)
		if (root_exists(r, markers[i]))
			n->peermem_marker = markers[i];

	_cleanup_strv_ struct strv names = STRV_INIT;
	n->gpus_err = root_list(r, "/proc/driver/nvidia/gpus", &names);
	n->gpus_listed = n->gpus_err == 0;
	if (n->gpus_listed && names.n) {
		n->gpus = xcalloc(names.n, sizeof(*n->gpus));
		for (size_t i = 0; i < names.n; i++)
			if (is_pci_bdf(names.v[i]))
				load_gpu_info(r, names.v[i], &n->gpus[n->n_gpus++]);
	}
	return 0;
}

void nvidia_free(struct nvidia_info *n)
{
	for (size_t i = 0; i < n->n_gpus; i++) {
		struct nvidia_gpu_info *g = &n->gpus[i];
		free(g->bdf), free(g->model), free(g->uuid), free(g->vbios), free(g->firmware), free(g->bus_location);
		strv_free(&g->mig_gis);
	}
	free(n->gpus);
	free(n->version_line);
	free(n->version);
	free(n->module_version);
	free(n->taint);
	memset(n, 0, sizeof(*n));
}
