/* .gpuready/nvlink: NVML's NVLink counts and version per GPU, recorded by
 * `gpuready snapshot` on the live machine (see nvlink_rec.h). A tree
 * without the file (an older snapshot, or NVML could not be asked) leaves
 * the facts unknown, and says so. */
#include "inventory/nvlink_rec.h"
#include "core/cleanup.h"
#include "core/parse.h"
#include "core/readers.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

void nvlink_rec_format(const struct nvml_info *nv, struct strbuf *out)
{
	for (size_t i = 0; nv && i < nv->n; i++) {
		const struct nvml_gpu *g = &nv->v[i];
		if (!g->bdf[0])
			continue;
		strbuf_addf(out, "%s %d %d ", g->bdf, g->nvlink_links, g->nvlink_down);
		if (g->nvlink_version == GPU_UNKNOWN)
			strbuf_adds(out, "-\n");
		else
			strbuf_addf(out, "%d\n", g->nvlink_version);
	}
}

/* A count or version: 0..1024 in decimal. */
static bool small_int(const char *s, int *out)
{
	int v = 0;
	if (!s || parse_int(s, 10, &v) < 0 || v < 0 || v > 1024)
		return false;
	*out = v;
	return true;
}

static int parse_line(void *ud, char *line, unsigned no)
{
	struct nvlink_rec_info *info = ud;
	(void)no;
	char *hash = strchr(line, '#');
	if (hash)
		*hash = '\0';
	char *save = NULL, *bdf = strtok_r(line, " \t", &save), *links = strtok_r(NULL, " \t", &save),
	     *down = strtok_r(NULL, " \t", &save), *ver = strtok_r(NULL, " \t", &save),
	     *extra = strtok_r(NULL, " \t", &save);
	if (!bdf)
		return 0;
	struct nvlink_rec r = { .version = GPU_UNKNOWN };
	bool ok = !extra && ver && strlen(bdf) < sizeof(r.bdf) && small_int(links, &r.links) &&
		  small_int(down, &r.down) && r.down <= r.links && (!strcmp(ver, "-") || small_int(ver, &r.version));
	if (!ok) {
		info->bad++;
		return 0;
	}
	memcpy(r.bdf, bdf, strlen(bdf) + 1);
	info->v = xreallocarray(info->v, info->n + 1, sizeof(*info->v));
	info->v[info->n++] = r;
	return 0;
}

void nvlink_rec_parse(const char *text, size_t len, struct nvlink_rec_info *out)
{
	str_foreach_line(text, len, parse_line, out);
}

int nvlink_rec_load(const struct root *r, struct nvlink_rec_info *out)
{
	if (root_is_live(r)) {
		out->why = xstrdup("the live machine: NVML answers");
		return 0;
	}
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int e = read_all(r, &sb, NVLINK_REC_FILE);
	if (e < 0) {
		out->why = xasprintf("no NVLinks recorded in this tree (%s: %s)", &NVLINK_REC_FILE[1], read_strerror(e));
		return 0;
	}
	nvlink_rec_parse(sb.buf, sb.len, out);
	out->known = true;
	return 0;
}

void nvlink_rec_free(struct nvlink_rec_info *info)
{
	free(info->why);
	free(info->v);
	*info = (struct nvlink_rec_info){ 0 };
}

const struct nvlink_rec *nvlink_rec_find(const struct nvlink_rec_info *info, const char *bdf)
{
	for (size_t i = 0; info->known && bdf && i < info->n; i++)
		if (!strcasecmp(info->v[i].bdf, bdf))
			return &info->v[i];
	return NULL;
}
