/* Xid errors from the kernel log (NVIDIA XID errors documentation).
 *
 * Live: /dev/kmsg, read without blocking to its current end (needs
 * CAP_SYSLOG when kernel.dmesg_restrict=1). Recorded trees: the file named
 * by .gpuready/meta `kernel_log` (default .gpuready/kmsg, which `gpuready
 * snapshot` writes), else /var/log/kern.log. Lines look like
 *   NVRM: Xid (PCI:0000:17:00): 79, pid=..., name=..., GPU has fallen off the bus.
 * with no PCI function number, optionally " GPU-I:<n>" after the id. */
#define _GNU_SOURCE
#include "inventory.h"
#include "core/cleanup.h"
#include "core/parse.h"
#include "core/readers.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

/* Kernel log bytes kept at most (a busy log; Xids are rare). */
#define KLOG_MAX (64u << 20)

bool xid_parse_line(const char *line, char *pci, size_t pci_size, int *code)
{
	const char *s = strstr(line, "NVRM: Xid (PCI:");
	if (!s)
		return false;
	s += strlen("NVRM: Xid (PCI:");
	size_t n = 0;
	while (isxdigit((unsigned char)s[n]) || s[n] == ':')
		n++;
	if (n < 7 || n >= pci_size)
		return false;
	const char *close = strstr(s + n, "): ");
	if (!close)
		return false;
	const char *c = close + 3;
	if (!isdigit((unsigned char)*c))
		return false;
	long v = 0;
	while (isdigit((unsigned char)*c) && v < 100000)
		v = v * 10 + (*c++ - '0');
	memcpy(pci, s, n);
	pci[n] = '\0';
	for (size_t i = 0; i < n; i++)
		pci[i] = (char)tolower((unsigned char)pci[i]);
	*code = (int)v;
	return true;
}

int xid_parse_recovery(const char *line)
{
	const char *s = strstr(line, "recovery action changed from");
	s = s ? strstr(s, " to 0x") : NULL;
	if (!s || !isxdigit((unsigned char)s[6]))
		return -1;
	long v = 0;
	for (s += 6; isxdigit((unsigned char)*s) && v < 0x10000; s++)
		v = v * 16 + (isdigit((unsigned char)*s) ? *s - '0' : tolower((unsigned char)*s) - 'a' + 10);
	return (int)v;
}

static void add_event(struct xid_info *x, const char *pci, int code, const char *line)
{
	int recovery = code == 154 ? xid_parse_recovery(line) : -1;
	for (size_t i = 0; i < x->n; i++)
		if (x->v[i].code == code && !strcmp(x->v[i].pci, pci)) {
			x->v[i].count++;
			free(x->v[i].last);
			x->v[i].last = xstrdup(line);
			x->v[i].recovery = recovery;
			return;
		}
	x->v = xreallocarray(x->v, x->n + 1, sizeof(*x->v));
	x->v[x->n++] = (struct xid_event){ .pci = xstrdup(pci), .code = code, .count = 1, .last = xstrdup(line),
					   .recovery = recovery };
}

static int on_line(void *ud, char *line, unsigned no)
{
	(void)no;
	struct xid_info *x = ud;
	char pci[32];
	int code;
	if (!xid_parse_line(line, pci, sizeof(pci), &code))
		return 0;
	/* drop a kmsg record prefix "prio,seq,usec,flags;" */
	char *semi = strchr(line, ';');
	const char *msg = semi && strstr(line, "NVRM") > semi ? semi + 1 : line;
	char *t = xstrdup(msg);
	add_event(x, pci, code, str_trim(t));
	free(t);
	return 0;
}

/* Reads /dev/kmsg to its end: one record per read(), EAGAIN at the end,
 * EPIPE when the oldest records were overwritten meanwhile (skip on). */
static int read_kmsg(struct root *r, struct strbuf *out)
{
	_cleanup_close_ int fd = openat(root_dirfd(r), "dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	char rec[8192];
	for (;;) {
		ssize_t n = read(fd, rec, sizeof(rec) - 1);
		if (n < 0) {
			if (errno == EINTR || errno == EPIPE)
				continue;
			if (errno == EAGAIN)
				break;
			return -errno;
		}
		if (n == 0)
			break;
		if (out->len + (size_t)n > KLOG_MAX)
			break;
		strbuf_add(out, rec, (size_t)n);
		if (rec[n - 1] != '\n')
			strbuf_addch(out, '\n');
	}
	/* the kernel log is for root's eyes (kernel.dmesg_restrict) */
	root_record_file(r, "/.gpuready/kmsg", out->buf, out->len, 0600);
	return 0;
}

static char *meta_kernel_log(const struct root *r)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	if (read_all(r, &sb, "/.gpuready/meta") < 0)
		return NULL;
	_cleanup_free_ char *copy = xstrdup(sb.buf);
	char *save = NULL;
	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *eq = strchr(l, '=');
		if (!eq)
			continue;
		*eq = '\0';
		if (!strcmp(str_trim(l), "kernel_log")) {
			char *v = str_trim(eq + 1);
			return *v == '/' ? xstrdup(v) : xasprintf("/%s", v);
		}
	}
	return NULL;
}

int xid_load(struct root *r, struct xid_info *x)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int e = -ENOENT;
	if (root_is_live(r)) {
		e = read_kmsg(r, &sb);
		if (e == 0)
			x->source = xstrdup("/dev/kmsg");
		else
			x->why_unknown = xasprintf("/dev/kmsg: %s%s", strerror(-e),
						   e == -EPERM ? " (reading the kernel log needs root or CAP_SYSLOG)" : "");
	} else {
		_cleanup_free_ char *p = meta_kernel_log(r);
		const char *path = p ? p : "/.gpuready/kmsg";
		e = root_read(r, path, KLOG_MAX, &sb);
		if (e == 0)
			x->source = xstrdup(path);
	}
	if (e < 0) {
		strbuf_reset(&sb);
		if (root_read(r, "/var/log/kern.log", KLOG_MAX, &sb) == 0) {
			e = 0;
			x->source = xstrdup("/var/log/kern.log");
			free(x->why_unknown);
			x->why_unknown = NULL;
		}
	}
	if (e < 0) {
		if (!x->why_unknown)
			x->why_unknown = xstrdup("no kernel log recorded in this tree (.gpuready/kmsg or /var/log/kern.log)");
		return 0;
	}
	x->known = true;
	str_foreach_line(sb.buf, sb.len, on_line, x);
	return 0;
}

void xid_free(struct xid_info *x)
{
	for (size_t i = 0; i < x->n; i++) {
		free(x->v[i].pci);
		free(x->v[i].last);
	}
	free(x->v);
	free(x->source);
	free(x->why_unknown);
	memset(x, 0, sizeof(*x));
}
