/* The running kernel's build configuration (Linux drivers/pci/Kconfig, drivers/infiniband/Kconfig,
 * kernel/Kconfig for /proc/config.gz): the file
 * /boot/config-<release>, else /proc/config.gz (gzip, present only with
 * CONFIG_IKCONFIG_PROC). Only the options the checks ask about are kept. */
#include "inventory.h"
#include "core/cleanup.h"
#include "core/parse.h"
#include "core/readers.h"

#include <errno.h>
#include <string.h>
#include <zlib.h>

static const char *const wanted[] = {
	"CONFIG_PCI_P2PDMA",         "CONFIG_INFINIBAND_USER_MEM", "CONFIG_INFINIBAND_ON_DEMAND_PAGING",
	"CONFIG_DMABUF_MOVE_NOTIFY", "CONFIG_ZONE_DEVICE",         "CONFIG_IKCONFIG_PROC",
	"CONFIG_INFINIBAND_ADDR_TRANS_CONFIGFS",
};

void kconfig_parse(const char *text, size_t len, void (*fn)(void *ud, const char *name, const char *value), void *ud)
{
	struct strbuf line = STRBUF_INIT;
	size_t i = 0;
	while (i < len) {
		size_t j = i;
		while (j < len && text[j] != '\n')
			j++;
		strbuf_reset(&line);
		strbuf_add(&line, text + i, j - i);
		strbuf_grow(&line, 1);
		i = j + 1;
		char *s = str_trim(line.buf);
		if (str_startswith(s, "# CONFIG_") && str_endswith(s, " is not set")) {
			s[strlen(s) - strlen(" is not set")] = '\0';
			fn(ud, s + 2, "");
			continue;
		}
		char *eq = strchr(s, '=');
		if (!str_startswith(s, "CONFIG_") || !eq)
			continue;
		*eq = '\0';
		fn(ud, s, eq + 1);
	}
	strbuf_release(&line);
}

static void keep(void *ud, const char *name, const char *value)
{
	struct kconfig_info *k = ud;
	for (size_t i = 0; i < ARRAY_SIZE(wanted); i++)
		if (!strcmp(name, wanted[i]) && !strv_contains(&k->names, name)) {
			strv_add(&k->names, name);
			strv_add(&k->values, value);
		}
}

/* gunzips src into out; 0 or -EINVAL for a broken stream, -EFBIG past max. */
static int gunzip(const struct strbuf *src, size_t max, struct strbuf *out)
{
	z_stream z;
	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
		return -ENOMEM;
	z.next_in = (unsigned char *)src->buf;
	z.avail_in = (unsigned)src->len;
	int ret;
	do {
		strbuf_grow(out, 65536);
		z.next_out = (unsigned char *)out->buf + out->len;
		z.avail_out = (unsigned)(out->alloc - out->len - 1);
		ret = inflate(&z, Z_NO_FLUSH);
		out->len = (size_t)((char *)z.next_out - out->buf);
		out->buf[out->len] = '\0';
		if (out->len > max) {
			inflateEnd(&z);
			return -EFBIG;
		}
	} while (ret == Z_OK);
	inflateEnd(&z);
	return ret == Z_STREAM_END ? 0 : -EINVAL;
}

int kconfig_load(const struct root *r, const char *release, struct kconfig_info *k)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	k->err = -ENOENT;
	if (release) {
		_cleanup_free_ char *p = xasprintf("/boot/config-%s", release);
		if (root_read(r, p, 16u << 20, &sb) == 0) {
			k->source = TAKE_PTR(p);
			k->err = 0;
		}
	}
	if (k->err) {
		_cleanup_strbuf_ struct strbuf gz = STRBUF_INIT;
		int e = root_read(r, "/proc/config.gz", 4u << 20, &gz);
		if (e == 0)
			e = gunzip(&gz, 16u << 20, &sb);
		if (e == 0)
			k->source = xstrdup("/proc/config.gz");
		k->err = e;
	}
	if (k->err == 0)
		kconfig_parse(sb.buf, sb.len, keep, k);
	return 0;
}

const char *kconfig_get(const struct kconfig_info *k, const char *name)
{
	if (k->err)
		return NULL;
	for (size_t i = 0; i < k->names.n; i++)
		if (!strcmp(k->names.v[i], name))
			return k->values.v[i];
	return "";
}

void kconfig_free(struct kconfig_info *k)
{
	free(k->source);
	strv_free(&k->names);
	strv_free(&k->values);
	memset(k, 0, sizeof(*k));
}
