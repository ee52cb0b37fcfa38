/* Data Center Bridging state of netdevs: PFC and the DSCP application
 * table.
 *
 * No file holds it: the kernel answers RTM_GETDCB with DCB_CMD_IEEE_GET
 * over rtnetlink (Linux net/dcb/dcbnl.c dcbnl_ieee_fill: the driver's
 * struct ieee_pfc, its pfc_en bitmap one bit per priority, and the IEEE
 * APP table, whose DSCP-selector entries map a DSCP to a priority), which
 * the live probe asks (src/probe/dcb.c) and `gpuready snapshot` writes to
 * .gpuready/dcb, one record per line (docs/snapshot-layout.md):
 *
 *   IFNAME pfc none | P[,P...]        priorities with PFC on (0..7)
 *   IFNAME dscp-prio D:P [D:P...]     APP entries, DSCP selector (0..63 : 0..7)
 *   IFNAME dcbx 0xNN                  DCB_ATTR_DCBX, DCB_CAP_DCBX_* bits
 *   IFNAME unsupported                EOPNOTSUPP: no DCB operations
 *   IFNAME error ERRNO-NAME           the query failed
 *
 * the spelling of iproute2's `dcb pfc show` and `dcb app show`. A recorded
 * tree without the file has no DCB state to judge, and says so. */
#include "inventory.h"
#include "core/cleanup.h"
#include "core/errname.h"
#include "core/parse.h"
#include "core/readers.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define DCB_FILE "/.gpuready/dcb"

const struct dcb_port *dcb_find(const struct dcb_info *di, const char *ifname)
{
	for (size_t i = 0; ifname && i < di->n; i++)
		if (!strcmp(di->v[i].ifname, ifname))
			return &di->v[i];
	return NULL;
}

struct dcb_port *dcb_port_get(struct dcb_info *di, const char *ifname)
{
	struct dcb_port *p = (struct dcb_port *)dcb_find(di, ifname);
	if (p)
		return p;
	di->v = xreallocarray(di->v, di->n + 1, sizeof(*di->v));
	p = &di->v[di->n++];
	*p = (struct dcb_port){ .ifname = xstrdup(ifname), .pfc_en = -1, .dcbx = -1 };
	return p;
}

/* "none" or "3" or "3,4": the bitmap, or -1. */
static int parse_pfc(const char *s)
{
	if (!strcmp(s, "none"))
		return 0;
	int bits = 0;
	for (const char *q = s; *q; q++) {
		if (*q < '0' || *q > '7' || (q[1] && q[1] != ','))
			return -1;
		bits |= 1 << (*q - '0');
		if (q[1] == ',') {
			q++;
			if (!q[1])
				return -1;
		}
	}
	return bits;
}

/* "26:3": adds the entry; false for anything else. */
static bool parse_dscp_prio(struct dcb_port *p, const char *s)
{
	const char *colon = strchr(s, ':');
	uint64_t d, pr;
	if (!colon || colon == s || !colon[1])
		return false;
	_cleanup_free_ char *ds = xstrndup(s, (size_t)(colon - s));
	if (parse_u64(ds, 10, &d) < 0 || parse_u64(colon + 1, 10, &pr) < 0 || d > 63 || pr > 7)
		return false;
	p->dscp_set |= UINT64_C(1) << d;
	p->dscp_prio[d] = (uint8_t)pr;
	return true;
}

/* The fields after IFNAME KEY: true when they are a valid record. */
static bool parse_record(struct dcb_info *di, const char *name, const char *key, char **f, size_t nf)
{
	if (!strcmp(key, "unsupported") || !strcmp(key, "error")) {
		int e = EOPNOTSUPP;
		if (!strcmp(key, "error") && (nf != 1 || !(e = errno_parse(f[0], strlen(f[0])))))
			return false;
		if (!strcmp(key, "unsupported") && nf != 0)
			return false;
		dcb_port_get(di, name)->err = -e;
		return true;
	}
	if (!strcmp(key, "pfc") || !strcmp(key, "dcbx")) {
		uint64_t v = 0;
		int bits = nf != 1 ? -1 : !strcmp(key, "pfc") ? parse_pfc(f[0]) : parse_u64(f[0], 16, &v) < 0 || v > 0xff ? -1 : (int)v;
		if (bits < 0)
			return false;
		struct dcb_port *p = dcb_port_get(di, name);
		*(!strcmp(key, "pfc") ? &p->pfc_en : &p->dcbx) = bits;
		return true;
	}
	if (!strcmp(key, "dscp-prio") && nf > 0) {
		/* all entries or none: a bad line adds nothing */
		struct dcb_port tmp = { 0 };
		for (size_t i = 0; i < nf; i++)
			if (!parse_dscp_prio(&tmp, f[i]))
				return false;
		struct dcb_port *p = dcb_port_get(di, name);
		for (int d = 0; d < 64; d++)
			if (tmp.dscp_set & (UINT64_C(1) << d))
				p->dscp_prio[d] = tmp.dscp_prio[d];
		p->dscp_set |= tmp.dscp_set;
		return true;
	}
	return false;
}

#define DCB_MAX_FIELDS 70 /* 64 dscp-prio entries and a margin */

static int parse_line(void *ud, char *line, unsigned no)
{
	struct dcb_info *di = ud;
	(void)no;
	char *hash = strchr(line, '#');
	if (hash)
		*hash = '\0';
	char *save = NULL, *name = strtok_r(line, " \t", &save), *key = strtok_r(NULL, " \t", &save);
	char *f[DCB_MAX_FIELDS];
	size_t nf = 0;
	if (!name)
		return 0;
	char *t;
	while (nf < DCB_MAX_FIELDS && (t = strtok_r(NULL, " \t", &save)))
		f[nf++] = t;
	bool too_many = nf == DCB_MAX_FIELDS && strtok_r(NULL, " \t", &save) != NULL;
	if (!key || too_many || strlen(name) > 15 || !parse_record(di, name, key, f, nf))
		di->bad++;
	return 0;
}

void dcb_parse(const char *text, size_t len, struct dcb_info *di)
{
	str_foreach_line(text, len, parse_line, di);
}

void dcb_format(const struct dcb_info *di, struct strbuf *out)
{
	for (size_t i = 0; i < di->n; i++) {
		const struct dcb_port *p = &di->v[i];
		if (p->err == -EOPNOTSUPP) {
			strbuf_addf(out, "%s unsupported\n", p->ifname);
			continue;
		}
		if (p->err < 0) {
			const char *n = errno_name(-p->err);
			if (n)
				strbuf_addf(out, "%s error %s\n", p->ifname, n);
			else
				strbuf_addf(out, "%s error %d\n", p->ifname, -p->err);
			continue;
		}
		if (p->dcbx >= 0)
			strbuf_addf(out, "%s dcbx 0x%02x\n", p->ifname, (unsigned)p->dcbx);
		if (p->pfc_en >= 0) {
			strbuf_addf(out, "%s pfc ", p->ifname);
			for (int k = 0, n = 0; k < 8; k++)
				if (p->pfc_en & (1 << k))
					strbuf_addf(out, "%s%d", n++ ? "," : "", k);
			strbuf_adds(out, p->pfc_en ? "\n" : "none\n");
		}
		if (p->dscp_set) {
			strbuf_addf(out, "%s dscp-prio", p->ifname);
			for (int d = 0; d < 64; d++)
				if (p->dscp_set & (UINT64_C(1) << d))
					strbuf_addf(out, " %d:%u", d, p->dscp_prio[d]);
			strbuf_addch(out, '\n');
		}
	}
}

int dcb_load(const struct root *r, struct dcb_info *di)
{
	if (root_is_live(r)) {
		di->why = xstrdup("the live DCB state was not queried (rtnetlink probe not run)");
		return 0;
	}
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int e = read_all(r, &sb, DCB_FILE);
	if (e < 0) {
		di->why = xasprintf("no DCB state recorded in this tree (%s: %s)", &DCB_FILE[1], read_strerror(e));
		return 0;
	}
	dcb_parse(sb.buf, sb.len, di);
	di->known = true;
	di->source = xstrdup(DCB_FILE);
	return 0;
}

void dcb_free(struct dcb_info *di)
{
	for (size_t i = 0; i < di->n; i++)
		free(di->v[i].ifname);
	free(di->v);
	free(di->source);
	free(di->why);
	memset(di, 0, sizeof(*di));
}
