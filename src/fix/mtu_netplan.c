/* netplan files for the MTU remedy (mtu.h), read with libyaml, never by
 * string surgery. netplan's YAML reference: the top-level `network:`
 * mapping holds `version: 2`, an optional `renderer:` (networkd or
 * NetworkManager; also allowed for a device type and for one device) and
 * the device types (ethernets, bonds, bridges, vlans, ...), each a mapping
 * of IDs to definitions. A definition configures the interface named by
 * its ID unless it has `match:` (ethernets only), which selects devices by
 * name (a glob), macaddress or driver, and `set-name:` renames them.
 * netplan reads the .yaml files of /lib/netplan, /etc/netplan and
 * /run/netplan (one of the same name in /run hides /etc's, which hides
 * /lib's) in the order of their names; a later file's scalar (mtu:)
 * overrides an earlier one's for the same ID (netplan-generate(8),
 * "Handling multiple files"). */
#include "fix/mtu.h"

#include "core/cleanup.h"
#include "core/parse.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

static const char *const dev_types[] = {
	"ethernets", "bonds", "bridges", "vlans", "wifis", "modems", "tunnels", "vrfs",
	"dummy-devices", "virtual-ethernets", "nm-devices",
};

void mtu_netplan_dev_free(struct mtu_netplan_dev *d)
{
	free(d->type);
	free(d->id);
	free(d->renderer);
	memset(d, 0, sizeof(*d));
}

static const char *scalar(yaml_document_t *doc, yaml_node_t *n)
{
	(void)doc;
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* The value of key in a mapping node; NULL when absent or not a mapping. */
static yaml_node_t *get(yaml_document_t *doc, yaml_node_t *map, const char *key)
{
	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		const char *k = scalar(doc, yaml_document_get_node(doc, p->key));
		if (k && !strcmp(k, key))
			return yaml_document_get_node(doc, p->value);
	}
	return NULL;
}

/* Parses text into doc; -EINVAL with *err naming the line. */
static int load(const char *text, yaml_document_t *doc, char **err)
{
	yaml_parser_t parser;
	if (!yaml_parser_initialize(&parser))
		abort();
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, strlen(text));
	int ok = yaml_parser_load(&parser, doc);
	if (!ok)
		*err = xasprintf("does not parse as YAML (line %zu: %s)", parser.problem_mark.line + 1,
				 parser.problem ? parser.problem : "error");
	yaml_parser_delete(&parser);
	if (!ok)
		return -EINVAL;
	return 0;
}

/* 1 the definition configures iface, 0 not, -EINVAL unsure. */
static int configures(yaml_document_t *doc, const char *id, yaml_node_t *def, const char *iface)
{
	yaml_node_t *match = get(doc, def, "match");
	const char *set_name = scalar(doc, get(doc, def, "set-name"));
	if (!match)
		return !strcmp(id, iface);
	if (match->type != YAML_MAPPING_NODE)
		return -EINVAL;
	const char *name = scalar(doc, get(doc, match, "name"));
	bool other = match->data.mapping.pairs.top - match->data.mapping.pairs.start > (name ? 1 : 0);
	if (set_name) /* whatever it matches is renamed to set-name */
		return !strcmp(set_name, iface);
	if (name && fnmatch(name, iface, 0))
		return 0;
	return other ? -EINVAL : 1;
}

static void take_renderer(yaml_document_t *doc, yaml_node_t *n, int level, struct mtu_netplan_dev *d)
{
	const char *r = scalar(doc, get(doc, n, "renderer"));
	if (r) {
		free(d->renderer);
		d->renderer = xstrdup(r);
		d->renderer_level = level;
	}
}

/* Looks at each definition of a type; fills d for the one that configures iface. */
static int scan_type(yaml_document_t *doc, const char *type, yaml_node_t *defs, const char *iface,
		     struct mtu_netplan_dev *d, char **err)
{
	int found = 0;
	for (yaml_node_pair_t *p = defs->data.mapping.pairs.start; p < defs->data.mapping.pairs.top; p++) {
		const char *id = scalar(doc, yaml_document_get_node(doc, p->key));
		yaml_node_t *def = yaml_document_get_node(doc, p->value);
		if (!id || !def)
			continue;
		int r = configures(doc, id, def, iface);
		if (r < 0) {
			*err = xasprintf("%s %s may configure %s (match: by other than name)", type, id, iface);
			return r;
		}
		if (r == 0)
			continue;
		if (found || d->id) {
			*err = xasprintf("more than one definition configures %s (%s %s)", iface, type, id);
			return -EINVAL;
		}
		found = 1;
		d->type = xstrdup(type);
		d->id = xstrdup(id);
		int64_t m;
		const char *mtu = scalar(doc, get(doc, def, "mtu"));
		d->mtu = mtu && parse_s64(mtu, 10, &m) == 0 ? m : 0;
		take_renderer(doc, defs, 1, d);
		take_renderer(doc, def, 2, d);
	}
	return found;
}

int mtu_netplan_find(const char *text, const char *iface, struct mtu_netplan_dev *dev, char **err)
{
	yaml_document_t doc;
	int r = load(text, &doc, err);
	if (r < 0)
		return r;
	memset(dev, 0, sizeof(*dev));
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	yaml_node_t *net = get(&doc, root, "network");
	struct mtu_netplan_dev d = { 0 };
	take_renderer(&doc, net, 0, &d);
	int found = 0;
	for (size_t i = 0; net && i < sizeof(dev_types) / sizeof(*dev_types) && r >= 0; i++) {
		yaml_node_t *defs = get(&doc, net, dev_types[i]);
		if (defs && defs->type == YAML_MAPPING_NODE && (r = scan_type(&doc, dev_types[i], defs, iface, &d, err)) > 0)
			found = 1;
	}
	if (root && !net && root->type != YAML_MAPPING_NODE) {
		*err = xasprintf("has no network: mapping");
		r = -EINVAL;
	}
	yaml_document_delete(&doc);
	if (r < 0 || !found) {
		mtu_netplan_dev_free(&d);
		return r < 0 ? r : 0;
	}
	*dev = d;
	return 1;
}

int mtu_netplan_ours(const char *text, struct mtu_netplan_dev **v, size_t *n, char **err)
{
	yaml_document_t doc;
	int r = load(text, &doc, err);
	if (r < 0)
		return r;
	*v = NULL;
	*n = 0;
	yaml_node_t *net = get(&doc, yaml_document_get_root_node(&doc), "network");
	const char *global = scalar(&doc, get(&doc, net, "renderer"));
	for (size_t i = 0; net && i < sizeof(dev_types) / sizeof(*dev_types); i++) {
		yaml_node_t *defs = get(&doc, net, dev_types[i]);
		if (!defs || defs->type != YAML_MAPPING_NODE)
			continue;
		for (yaml_node_pair_t *p = defs->data.mapping.pairs.start; p < defs->data.mapping.pairs.top; p++) {
			const char *id = scalar(&doc, yaml_document_get_node(&doc, p->key));
			yaml_node_t *def = yaml_document_get_node(&doc, p->value);
			int64_t m = 0;
			const char *mtu = scalar(&doc, get(&doc, def, "mtu"));
			if (!id || !mtu || parse_s64(mtu, 10, &m) < 0) {
				*err = xasprintf("holds %s %s without a number for mtu:", dev_types[i], id ? id : "?");
				r = -EINVAL;
				continue;
			}
			*v = xreallocarray(*v, *n + 1, sizeof(**v));
			struct mtu_netplan_dev *d = &(*v)[(*n)++];
			*d = (struct mtu_netplan_dev){ .type = xstrdup(dev_types[i]), .id = xstrdup(id), .mtu = m };
			if (global) {
				d->renderer = xstrdup(global);
				d->renderer_level = 0;
			}
			take_renderer(&doc, defs, 1, d);
			take_renderer(&doc, def, 2, d);
		}
	}
	yaml_document_delete(&doc);
	return r;
}

/* An ID as a YAML scalar: plain when it is an interface name, else quoted. */
static void put_id(struct strbuf *out, const char *id)
{
	static const char plain[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.@-";
	if (id[0] && id[0] != '-' && strspn(id, plain) == strlen(id)) {
		strbuf_adds(out, id);
		return;
	}
	strbuf_addch(out, '"');
	for (; *id; id++)
		strbuf_addf(out, "%s%c", *id == '"' || *id == '\\' ? "\\" : "", *id);
	strbuf_addch(out, '"');
}

/* The first renderer set at level for type (NULL: any type). */
static const char *first_renderer(const struct mtu_netplan_dev *v, size_t n, int level, const char *type)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].renderer && v[i].renderer_level == level && (!type || !strcmp(v[i].type, type)))
			return v[i].renderer;
	return NULL;
}

void mtu_netplan_write(const struct mtu_netplan_dev *v, size_t n, const char *header, struct strbuf *out)
{
	const char *global = first_renderer(v, n, 0, NULL);
	strbuf_adds(out, header);
	strbuf_adds(out, "network:\n  version: 2\n");
	if (global)
		strbuf_addf(out, "  renderer: %s\n", global);
	for (size_t t = 0; t < sizeof(dev_types) / sizeof(*dev_types); t++) {
		const char *typer = first_renderer(v, n, 1, dev_types[t]);
		bool any = false;
		for (size_t i = 0; i < n; i++) {
			if (strcmp(v[i].type, dev_types[t]))
				continue;
			if (!any)
				strbuf_addf(out, "  %s:\n", dev_types[t]);
			if (!any && typer)
				strbuf_addf(out, "    renderer: %s\n", typer);
			any = true;
			strbuf_adds(out, "    ");
			put_id(out, v[i].id);
			strbuf_adds(out, ":\n");
			/* a renderer the levels above do not say: on the device itself */
			const char *above = v[i].renderer_level == 0 ? global : v[i].renderer_level == 1 ? typer : NULL;
			if (v[i].renderer && (!above || strcmp(above, v[i].renderer)))
				strbuf_addf(out, "      renderer: %s\n", v[i].renderer);
			strbuf_addf(out, "      mtu: %lld\n", (long long)v[i].mtu);
		}
	}
}
