/* The NCCL topology file a job on this node loads, and the PCI devices it
 * describes.
 *
 * NCCL reads the file NCCL_TOPO_FILE names, else
 * /var/run/nvidia-topologyd/virtualTopology.xml when it exists (NCCL
 * src/graph/topo.cc ncclTopoGetSystem; NCCL documentation, Environment
 * Variables, NCCL_TOPO_FILE). A file that cannot be opened is skipped
 * with an INFO line only (src/graph/xml.cc ncclTopoGetXmlFromFile), so a
 * missing file goes unnoticed. NCCL finds the node's own GPUs and NICs in
 * the file by their `busid` attribute, compared as a string with the
 * lower-case "%04x:%02x:%02x.%x" it prints itself (src/graph/xml.cc
 * ncclTopoGetPciNode, src/misc/utils.cc int64ToBusId).
 *
 * The XML is read with a small reader of <pci> elements and their busid
 * and class attributes, not a full XML parser: NCCL's own reader
 * (src/graph/xml.cc) knows no more than tags, attributes in ' or " quotes
 * and <!-- --> comments, and neither does this one. It is bounded by the
 * length it is given and fuzzed (tests/fuzz). The file is read through the
 * root, so `gpuready snapshot` records it (a topology holds no secrets). */
#include "inventory.h"
#include "core/cleanup.h"
#include "core/parse.h"
#include "core/readers.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NCCL_TOPO_DEFAULT "/var/run/nvidia-topologyd/virtualTopology.xml"
/* NCCL topology files are a few kilobytes; far above that is no topology */
#define NCCL_TOPO_MAX (8u << 20)
/* longest attribute value kept; a busid is 12 characters */
#define TOPO_ATTR_MAX 64

static bool name_char(char ch)
{
	return isalnum((unsigned char)ch) || ch == '_' || ch == '-' || ch == ':' || ch == '.';
}

/* Skips one attribute at *i (name, optional ="value"); when its name is
 * `want` and its value fits, copies the value into out (NUL-terminated).
 * Returns false at the end of the element or the text. */
static bool attribute(const char *s, size_t len, size_t *i, char busid[TOPO_ATTR_MAX + 1], char cls[TOPO_ATTR_MAX + 1])
{
	while (*i < len && isspace((unsigned char)s[*i]))
		(*i)++;
	if (*i >= len || s[*i] == '>' || s[*i] == '/' || s[*i] == '<')
		return false;
	size_t n0 = *i;
	while (*i < len && name_char(s[*i]))
		(*i)++;
	size_t nlen = *i - n0;
	if (nlen == 0) {
		(*i)++; /* a stray character: step over it */
		return true;
	}
	while (*i < len && isspace((unsigned char)s[*i]))
		(*i)++;
	if (*i >= len || s[*i] != '=')
		return true;
	(*i)++;
	while (*i < len && isspace((unsigned char)s[*i]))
		(*i)++;
	if (*i >= len || (s[*i] != '"' && s[*i] != '\''))
		return true;
	char q = s[(*i)++];
	size_t v0 = *i;
	while (*i < len && s[*i] != q)
		(*i)++;
	if (*i >= len)
		return false; /* unterminated value: the element ends with the text */
	size_t vlen = (*i)++ - v0;
	char *dst = nlen == 5 && !memcmp(s + n0, "busid", 5) ? busid : nlen == 5 && !memcmp(s + n0, "class", 5) ? cls : NULL;
	if (dst && vlen <= TOPO_ATTR_MAX && !memchr(s + v0, '\0', vlen)) {
		memcpy(dst, s + v0, vlen);
		dst[vlen] = '\0';
	}
	return true;
}

/* One <pci ...> element starting at *i (just after "<pci"). */
static void pci_element(const char *s, size_t len, size_t *i, struct nccl_topo_pci **v, size_t *n)
{
	char busid[TOPO_ATTR_MAX + 1] = "", cls[TOPO_ATTR_MAX + 1] = "";
	while (attribute(s, len, i, busid, cls))
		;
	if (!busid[0])
		return;
	char *end = NULL;
	unsigned long c = cls[0] ? strtoul(cls, &end, 16) : 0;
	*v = xreallocarray(*v, *n + 1, sizeof(**v));
	(*v)[*n] = (struct nccl_topo_pci){
		.busid = xstrdup(busid),
		.class_code = end && end != cls && !*end && c <= 0xffffff ? (uint32_t)c : 0,
	};
	(*n)++;
}

void nccl_topo_parse(const char *s, size_t len, struct nccl_topo_pci **v, size_t *n)
{
	size_t i = 0;
	while (i < len) {
		if (s[i] != '<') {
			i++;
			continue;
		}
		if (len - i >= 4 && !memcmp(s + i, "<!--", 4)) {
			i += 4;
			while (i < len && !(len - i >= 3 && !memcmp(s + i, "-->", 3)))
				i++;
			i += len - i >= 3 ? 3 : len - i;
			continue;
		}
		if (len - i >= 5 && !memcmp(s + i, "<pci", 4) &&
		    (isspace((unsigned char)s[i + 4]) || s[i + 4] == '>' || s[i + 4] == '/')) {
			i += 4;
			pci_element(s, len, &i, v, n);
			continue;
		}
		i++;
	}
}

int nccl_topo_load(const struct root *r, struct nccl_config *c)
{
	struct nccl_topo_file *t = &c->topo;
	const struct nccl_var *v = nccl_get(c, "NCCL_TOPO_FILE");
	if (v && v->computed) {
		t->why = xasprintf("NCCL_TOPO_FILE=%s (%s) is computed when the login shell runs", v->value, v->source);
		return 0;
	}
	if (v && v->value[0] != '/') {
		t->why = xasprintf("NCCL_TOPO_FILE=%s (%s) is %s: NCCL opens it from the job's working directory", v->value,
				   v->source, v->value[0] ? "relative" : "empty");
		return 0;
	}
	const char *path = v ? v->value : NCCL_TOPO_DEFAULT;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int err = root_read(r, path, NCCL_TOPO_MAX, &sb);
	if (!v && err == -ENOENT)
		return 0; /* no default file: NCCL detects the topology itself */
	t->path = xstrdup(path);
	t->by_default = !v;
	t->err = err < 0 ? err : sb.len == 0 ? -ENODATA : 0;
	if (t->err == 0)
		nccl_topo_parse(sb.buf, sb.len, &t->pci, &t->n_pci);
	return 0;
}

void nccl_topo_free(struct nccl_topo_file *t)
{
	for (size_t i = 0; i < t->n_pci; i++)
		free(t->pci[i].busid);
	free(t->pci);
	free(t->path);
	free(t->why);
	memset(t, 0, sizeof(*t));
}
