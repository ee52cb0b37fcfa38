/* What `gpuready fix --apply` wrote that waits for a module reload or a
 * reboot (FIX_PENDING_PATH, docs/fix.md), and this boot's id, so that a
 * check still failing can say "pending" — or, after a reboot, that the
 * change did not take. A line that does not parse is ignored: the file is
 * ours, and a damaged one only loses the note. */
#include "inventory.h"

#include "core/cleanup.h"
#include "core/strbuf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int fix_pending_load(const struct root *r, struct fix_pending_info *out)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT, boot = STRBUF_INIT;
	memset(out, 0, sizeof(*out));
	if (root_read(r, "/proc/sys/kernel/random/boot_id", 256, &boot) == 0) {
		strbuf_rtrim(&boot);
		if (boot.len)
			out->boot_id = xstrdup(boot.buf);
	}
	if (root_read(r, FIX_PENDING_PATH, 1u << 20, &sb) < 0)
		return 0;
	char *save = NULL;
	for (char *line = strtok_r(sb.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *f[5] = { 0 }, *p = line;
		size_t k = 0;
		for (; k < 5 && p; k++) {
			f[k] = p;
			char *tab = k < 4 ? strchr(p, '\t') : NULL;
			if (tab)
				*tab = '\0';
			p = tab ? tab + 1 : NULL;
		}
		if (k != 5 || !f[4] || !*f[0] || !*f[1])
			continue;
		out->v = xreallocarray(out->v, out->n + 1, sizeof(*out->v));
		out->v[out->n++] = (struct fix_pending_entry){ xstrdup(f[0]), xstrdup(f[1]), xstrdup(f[2]),
							       xstrdup(f[3]), xstrdup(f[4]) };
	}
	return 0;
}

void fix_pending_free(struct fix_pending_info *p)
{
	for (size_t i = 0; i < p->n; i++) {
		free(p->v[i].check_id);
		free(p->v[i].subject);
		free(p->v[i].boot_id);
		free(p->v[i].time);
		free(p->v[i].title);
	}
	free(p->v);
	free(p->boot_id);
	memset(p, 0, sizeof(*p));
}
