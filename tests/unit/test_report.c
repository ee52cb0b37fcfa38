/* Unit tests for the report model and its renderers (core/report): counts
 * and exit codes, the exact text layout, JSON that parses back with json-c
 * and escapes everything, and the Prometheus exposition (label escaping,
 * duplicate series collapsed, atomic file replacement). */
#define _GNU_SOURCE
#include "testutil.h"
#include "core/report.h"
#include "core/strbuf.h"
#include "core/strv.h"

#include <dirent.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Output of a renderer into a malloc'd string. */
struct cap {
	char *buf;
	size_t len;
	FILE *f;
};

static void cap_open(struct cap *c)
{
	c->buf = NULL;
	c->len = 0;
	c->f = open_memstream(&c->buf, &c->len);
	assert_non_null(c->f);
}

static char *cap_close(struct cap *c)
{
	assert_int_equal(fclose(c->f), 0);
	return c->buf;
}

static char *render_text(const struct report *r, bool color, bool verbose)
{
	struct cap c;
	cap_open(&c);
	const struct render_opts o = { .color = color, .verbose = verbose };
	assert_int_equal(report_write_text(r, c.f, &o), 0);
	return cap_close(&c);
}

static char *render_json(const struct report *r)
{
	struct cap c;
	cap_open(&c);
	assert_int_equal(report_write_json(r, c.f), 0);
	return cap_close(&c);
}

static char *render_prom(const struct report *r, double now)
{
	struct cap c;
	cap_open(&c);
	assert_int_equal(report_write_prom_stream(r, c.f, now), 0);
	return cap_close(&c);
}

static void assert_text(const char *got, const char *want)
{
	if (strcmp(got, want)) {
		print_message("--- got ---\n%s--- want ---\n%s---\n", got, want);
		fail_msg("output differs");
	}
}

/* The sample report: two sections, every status, hints and details. */
static void sample(struct report *r)
{
	report_init(r, "0.1.0", "node1", "/");
	struct finding *f = report_add(r, "rdma.devices", "RDMA devices", STATUS_OK, "mlx5_0", "present (%s)", "CX-7");
	finding_detail(f, "fw %s", "28.39.1002");
	finding_hint(f, "not shown for ok");
	f = report_add(r, "rdma.mtu", "RDMA devices", STATUS_WARN, "mlx5_0/1", "MTU %d, expected %d", 1500, 9000);
	finding_hint(f, "ip link set %s mtu 9000", "eth0");
	finding_detail(f, "line a");
	finding_detail(f, "line b");
	f = report_add(r, "nccl.env", "NCCL", STATUS_FAIL, "NCCL_IB_HCA", "mlx5_9 not found");
	finding_hint(f, "h1");
	finding_hint(f, "h%d", 2);
	report_add(r, "nccl.debug", "NCCL", STATUS_SKIP, "NCCL_DEBUG", "not set");
}

#define RULE "==========================================\n"

static void test_model(void **state)
{
	(void)state;
	struct report r;
	sample(&r);
	assert_int_equal(r.n, 4);
	assert_int_equal(r.counts[STATUS_OK], 1);
	assert_int_equal(r.counts[STATUS_WARN], 1);
	assert_int_equal(r.counts[STATUS_FAIL], 1);
	assert_int_equal(r.counts[STATUS_SKIP], 1);
	assert_string_equal(r.v[0]->message, "present (CX-7)");
	assert_string_equal(r.v[1]->message, "MTU 1500, expected 9000");
	assert_string_equal(r.v[1]->hint, "ip link set eth0 mtu 9000");
	assert_string_equal(r.v[2]->hint, "h1; h2");
	assert_null(r.v[3]->hint);
	assert_int_equal(r.v[1]->details.n, 2);
	assert_string_equal(r.v[0]->details.v[0], "fw 28.39.1002");
	assert_string_equal(r.host, "node1");
	assert_string_equal(status_name(STATUS_OK), "ok");
	assert_string_equal(status_name(STATUS_WARN), "warn");
	assert_string_equal(status_name(STATUS_FAIL), "fail");
	assert_string_equal(status_name(STATUS_SKIP), "skip");
	assert_string_equal(status_name(STATUS__COUNT), "?");
	report_free(&r);
	assert_int_equal(r.n, 0);
	assert_null(r.v);
	report_free(&r); /* a freed report can be freed again */

	/* an empty message and a long one */
	report_init(&r, "v", "h", "/");
	struct strbuf big = STRBUF_INIT;
	for (int i = 0; i < 1000; i++)
		strbuf_adds(&big, "0123456789");
	report_add(&r, "a.b", "S", STATUS_OK, "s", "%s", "");
	report_add(&r, "a.b", "S", STATUS_OK, "s", "%s", big.buf);
	assert_string_equal(r.v[0]->message, "");
	assert_int_equal(strlen(r.v[1]->message), 10000);
	strbuf_release(&big);
	report_free(&r);
}

static void test_exit_code(void **state)
{
	(void)state;
	struct report r;
	report_init(&r, "v", "h", "/");
	assert_int_equal(report_exit_code(&r, false), 0);
	assert_int_equal(report_exit_code(&r, true), 0);
	report_add(&r, "a", "S", STATUS_OK, "x", "ok");
	report_add(&r, "b", "S", STATUS_SKIP, "x", "skip");
	assert_int_equal(report_exit_code(&r, false), 0);
	assert_int_equal(report_exit_code(&r, true), 0);
	report_add(&r, "c", "S", STATUS_WARN, "x", "warn");
	assert_int_equal(report_exit_code(&r, false), 0);
	assert_int_equal(report_exit_code(&r, true), 1);
	report_add(&r, "d", "S", STATUS_FAIL, "x", "fail");
	assert_int_equal(report_exit_code(&r, false), 1);
	assert_int_equal(report_exit_code(&r, true), 1);
	report_free(&r);
}

static char *render_opts_text(const struct report *r, const struct render_opts *o)
{
	struct cap c;
	cap_open(&c);
	assert_int_equal(report_write_text(r, c.f, o), 0);
	return cap_close(&c);
}

/* -v: every finding under its section, details of passing ones too, no
 * hint for ok. */
static void test_text_layout(void **state)
{
	(void)state;
	struct report r;
	sample(&r);
	char *t = render_text(&r, false, true);
	assert_text(t, RULE "RDMA devices\n" RULE
			"[OK] mlx5_0: present (CX-7)\n"
			"       fw 28.39.1002\n"
			"[WARN] mlx5_0/1: MTU 1500, expected 9000\n"
			"       fix: ip link set eth0 mtu 9000\n"
			"       line a\n"
			"       line b\n"
			"\n" RULE "NCCL\n" RULE
			"[FAIL] NCCL_IB_HCA: mlx5_9 not found\n"
			"       fix: h1; h2\n"
			"[SKIP] NCCL_DEBUG: not set\n"
			"\n" RULE "Results\n" RULE
			"OK: 1  WARN: 1  FAIL: 1  SKIP: 1\n");
	assert_null(strstr(t, "not shown for ok"));
	free(t);

	/* color: the tag only, reset after it */
	t = render_text(&r, true, true);
	assert_non_null(strstr(t, "\033[32m[OK]\033[0m mlx5_0: present (CX-7)\n"));
	assert_non_null(strstr(t, "\033[33m[WARN]\033[0m mlx5_0/1:"));
	assert_non_null(strstr(t, "\033[1;31m[FAIL]\033[0m NCCL_IB_HCA:"));
	assert_non_null(strstr(t, "\033[36m[SKIP]\033[0m NCCL_DEBUG:"));
	assert_non_null(strstr(t, "OK: 1  WARN: 1  FAIL: 1  SKIP: 1\n"));
	free(t);
	report_free(&r);
}

/* A headline finding (a container's view) comes first in the default
 * report, whatever its status, and still counts in its area; --quiet
 * drops it like every other line that is no problem. */
static void test_text_headline(void **state)
{
	(void)state;
	struct report r;
	report_init(&r, "0.1.0", "node1", "/");
	report_add(&r, "rdma.devices", "RDMA devices", STATUS_OK, "mlx5_0", "present");
	struct finding *f = report_add(&r, "rdma.container", "Container", STATUS_OK, "container", "a container's view");
	f->headline = true;
	char *t = render_text(&r, false, false);
	assert_text(t, "[OK] rdma.container  a container's view\n"
		       "[OK] rdma  2 checks pass\n"
		       "OK: 2  WARN: 0  FAIL: 0  SKIP: 0\n");
	free(t);
	struct render_opts q = { .quiet = true };
	t = render_opts_text(&r, &q);
	assert_null(strstr(t, "container"));
	free(t);
	report_free(&r);
}

/* The default: an area that passes is one line; each warn and fail is a
 * line with its check ID and its fix once; checks that only skip are one
 * line per cause; info is not shown. --quiet keeps only the problems. */
static void test_text_compact(void **state)
{
	(void)state;
	struct report r;
	report_init(&r, "v", "h", "/");
	report_add(&r, "gpu.pci", "G", STATUS_OK, "0000:18:00.0", "H100");
	report_add(&r, "gpu.xid", "G", STATUS_OK, "kernel log", "no Xid");
	report_add(&r, "gpu.nvml", "G", STATUS_SKIP, "gpu", "needs the live machine: a recorded tree cannot be queried");
	struct finding *f = report_add(&r, "rdma.mtu", "M", STATUS_WARN, "mlx5_0/1", "MTU 1500");
	finding_hint(f, "ip link set dev eth0 mtu 9000");
	f = report_add(&r, "rdma.mtu", "M", STATUS_WARN, "mlx5_1/1", "MTU 1500");
	finding_hint(f, "ip link set dev eth0 mtu 9000");
	report_add(&r, "rdma.mtu", "M", STATUS_OK, "mlx5_2/1", "MTU 9000");
	f = report_add(&r, "rdma.devices", "D", STATUS_FAIL, "rdma", "no RDMA device");
	finding_hint(f, "modprobe mlx5_ib");
	report_add(&r, "rdma.nccl_env", "N", STATUS_INFO, "NCCL_DEBUG", "=WARN");
	report_add(&r, "rdma.port_state", "P", STATUS_SKIP, "rdma", "no RDMA device (see rdma.devices)");
	report_add(&r, "rdma.link_rate", "P", STATUS_SKIP, "rdma", "no RDMA device (see rdma.devices)");
	report_add(&r, "gpudirect.cuda_attrs", "C", STATUS_SKIP, "gpudirect", "needs the live machine: x");
	report_add(&r, "gpudirect.method", "C", STATUS_OK, "gpudirect", "DMA-BUF");
	char *t = render_text(&r, false, false);
	assert_text(t, "[OK] gpu  2 checks pass, 1 skipped\n"
		       "[WARN] rdma.mtu  mlx5_0/1: MTU 1500\n"
		       "       fix: ip link set dev eth0 mtu 9000\n"
		       "[WARN] rdma.mtu  mlx5_1/1: MTU 1500\n"
		       "[FAIL] rdma.devices  no RDMA device\n"
		       "       fix: modprobe mlx5_ib\n"
		       "[OK] gpudirect  1 check passes, 1 skipped\n"
		       "[SKIP] 2 checks  needs the live machine: gpu.nvml, gpudirect.cuda_attrs\n"
		       "[SKIP] 2 checks  no RDMA device: rdma.port_state, rdma.link_rate\n"
		       "OK: 4  WARN: 2  FAIL: 1  SKIP: 4  INFO: 1\n");
	free(t);
	t = render_opts_text(&r, &(struct render_opts){ .quiet = true });
	assert_text(t, "[WARN] rdma.mtu  mlx5_0/1: MTU 1500\n"
		       "       fix: ip link set dev eth0 mtu 9000\n"
		       "[WARN] rdma.mtu  mlx5_1/1: MTU 1500\n"
		       "[FAIL] rdma.devices  no RDMA device\n"
		       "       fix: modprobe mlx5_ib\n"
		       "OK: 4  WARN: 2  FAIL: 1  SKIP: 4  INFO: 1\n");
	free(t);
	/* -v shows the listing */
	t = render_text(&r, false, true);
	assert_non_null(strstr(t, "[INFO] NCCL_DEBUG: =WARN\n"));
	free(t);
	report_free(&r);
}

/* --reason: one line, at most 200 bytes of printable ASCII without quotes. */
static void test_reason(void **state)
{
	(void)state;
	struct report r;
	char buf[REPORT_REASON_MAX + 1];
	report_init(&r, "v", "h", "/");
	report_add(&r, "gpu.pci", "G", STATUS_OK, "0000:18:00.0", "H100");
	report_reason(&r, buf, sizeof(buf));
	assert_string_equal(buf, "gpuready ok: 1 ok, 0 skip");
	report_add(&r, "rdma.mtu", "M", STATUS_WARN, "mlx5_0/1", "m");
	report_reason(&r, buf, sizeof(buf));
	assert_string_equal(buf, "gpuready 0 fail 1 warn: rdma.mtu mlx5_0/1");
	report_add(&r, "rdma.port_state", "P", STATUS_FAIL, "mlx5_\"3\n/1", "m");
	report_reason(&r, buf, sizeof(buf));
	assert_string_equal(buf, "gpuready 1 fail 1 warn: rdma.port_state mlx5__3_/1");
	for (int i = 0; i < 40; i++)
		report_add(&r, "rdma.roce_tos", "T", STATUS_FAIL, "mlx5_10/1", "m");
	report_reason(&r, buf, sizeof(buf));
	assert_true(strlen(buf) <= REPORT_REASON_MAX);
	assert_non_null(strstr(buf, " (+"));
	assert_non_null(strstr(buf, " more)"));
	assert_true(buf[strlen(buf) - 1] == ')');
	for (const char *p = buf; *p; p++)
		assert_true(*p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\'');
	/* a small buffer is never overrun */
	char small[16];
	report_reason(&r, small, sizeof(small));
	assert_true(strlen(small) < sizeof(small));
	report_free(&r);
}

static void test_text_edge_cases(void **state)
{
	(void)state;
	struct report r;
	report_init(&r, "v", "h", "/");
	char *t = render_text(&r, false, true);
	assert_text(t, RULE "Results\n" RULE "OK: 0  WARN: 0  FAIL: 0  SKIP: 0\n");
	free(t);
	t = render_text(&r, false, false);
	assert_text(t, "OK: 0  WARN: 0  FAIL: 0  SKIP: 0\n");
	free(t);

	/* a section coming back gets its title again */
	struct finding *f = report_add(&r, "a.x", "A", STATUS_OK, "s1", "m1");
	f = report_add(&r, "b.x", "B", STATUS_SKIP, "s2", "m2");
	finding_detail(f, "skip detail");
	finding_hint(f, "skip hint");
	report_add(&r, "a.y", "A", STATUS_OK, "s3", "m3");
	t = render_text(&r, false, true);
	assert_text(t, RULE "A\n" RULE "[OK] s1: m1\n"
			"\n" RULE "B\n" RULE "[SKIP] s2: m2\n"
			"       skip detail\n"
			"\n" RULE "A\n" RULE "[OK] s3: m3\n"
			"\n" RULE "Results\n" RULE "OK: 2  WARN: 0  FAIL: 0  SKIP: 1\n");
	free(t);
	report_free(&r);

	/* a write error is reported, not ignored */
	report_init(&r, "v", "h", "/");
	FILE *ro = fopen("/dev/null", "r");
	assert_non_null(ro);
	const struct render_opts o = { .color = false };
	assert_int_equal(report_write_text(&r, ro, &o), -EIO);
	assert_int_equal(report_write_json(&r, ro), -EIO);
	assert_int_equal(report_write_prom_stream(&r, ro, 0), -EIO);
	fclose(ro);
	report_free(&r);
}

static const char *jget_str(json_object *o, const char *key)
{
	json_object *v = NULL;
	if (!json_object_object_get_ex(o, key, &v))
		fail_msg("JSON key \"%s\" missing", key);
	assert_true(json_object_is_type(v, json_type_string));
	return json_object_get_string(v);
}

static int jget_int(json_object *o, const char *key)
{
	json_object *v = NULL;
	if (!json_object_object_get_ex(o, key, &v))
		fail_msg("JSON key \"%s\" missing", key);
	assert_true(json_object_is_type(v, json_type_int));
	return json_object_get_int(v);
}

static void test_json(void **state)
{
	(void)state;
	struct report r;
	sample(&r);
	char *t = render_json(&r);
	json_object *root = json_tokener_parse(t);
	if (!root)
		fail_msg("JSON does not parse:\n%s", t);
	assert_string_equal(jget_str(root, "version"), "0.1.0");
	assert_string_equal(jget_str(root, "host"), "node1");
	assert_string_equal(jget_str(root, "sysroot"), "/");
	json_object *checks = NULL, *sum = NULL;
	assert_true(json_object_object_get_ex(root, "checks", &checks));
	assert_true(json_object_is_type(checks, json_type_array));
	assert_int_equal(json_object_array_length(checks), 4);
	assert_true(json_object_object_get_ex(root, "summary", &sum));
	assert_int_equal(jget_int(sum, "ok"), 1);
	assert_int_equal(jget_int(sum, "warn"), 1);
	assert_int_equal(jget_int(sum, "fail"), 1);
	assert_int_equal(jget_int(sum, "skip"), 1);

	json_object *c0 = json_object_array_get_idx(checks, 0);
	assert_string_equal(jget_str(c0, "id"), "rdma.devices");
	assert_string_equal(jget_str(c0, "section"), "RDMA devices");
	assert_string_equal(jget_str(c0, "status"), "ok");
	assert_string_equal(jget_str(c0, "subject"), "mlx5_0");
	assert_string_equal(jget_str(c0, "message"), "present (CX-7)");
	json_object *c1 = json_object_array_get_idx(checks, 1);
	assert_string_equal(jget_str(c1, "status"), "warn");
	assert_string_equal(jget_str(c1, "hint"), "ip link set eth0 mtu 9000");
	json_object *d = NULL;
	assert_true(json_object_object_get_ex(c1, "details", &d));
	assert_int_equal(json_object_array_length(d), 2);
	assert_string_equal(json_object_get_string(json_object_array_get_idx(d, 1)), "line b");
	json_object *c3 = json_object_array_get_idx(checks, 3);
	assert_string_equal(jget_str(c3, "status"), "skip");
	/* no hint, no details: the keys are absent, not null */
	assert_false(json_object_object_get_ex(c3, "hint", NULL));
	assert_false(json_object_object_get_ex(c3, "details", NULL));
	/* the whole text is one value followed by a newline */
	assert_int_equal(t[strlen(t) - 1], '\n');
	json_object_put(root);
	free(t);
	report_free(&r);

	/* empty report */
	report_init(&r, "v", "h", "/snap");
	t = render_json(&r);
	root = json_tokener_parse(t);
	assert_non_null(root);
	assert_true(json_object_object_get_ex(root, "checks", &checks));
	assert_int_equal(json_object_array_length(checks), 0);
	assert_true(json_object_object_get_ex(root, "summary", &sum));
	assert_int_equal(jget_int(sum, "ok"), 0);
	json_object_put(root);
	free(t);
	report_free(&r);
}

static void test_json_escaping(void **state)
{
	(void)state;
	static const char *nasty[] = {
		"quote \" backslash \\ slash /",
		"new\nline\ttab\rcr",
		"ctrl \x01\x1f end",
		"unicode é ✓ 日本 \xf0\x9f\x9a\x80",
		"</script>",
		"",
	};
	struct report r;
	report_init(&r, "1.0 \"beta\"", "host\nname", "/path/with \"quotes\"");
	for (size_t i = 0; i < sizeof(nasty) / sizeof(nasty[0]); i++) {
		struct finding *f = report_add(&r, nasty[i], nasty[i], STATUS_FAIL, nasty[i], "%s", nasty[i]);
		finding_hint(f, "%s", nasty[i]);
		finding_detail(f, "%s", nasty[i]);
	}
	char *t = render_json(&r);
	/* raw control characters never appear inside the JSON text */
	for (const char *c = t; *c; c++)
		if ((unsigned char)*c < 0x20 && *c != '\n')
			fail_msg("raw control byte 0x%02x in JSON", (unsigned char)*c);
	assert_non_null(strstr(t, "\"/path/with \\\"quotes\\\"\""));
	assert_null(strstr(t, "\\/")); /* slashes are not escaped */
	json_object *root = json_tokener_parse(t);
	if (!root)
		fail_msg("JSON does not parse:\n%s", t);
	assert_string_equal(jget_str(root, "version"), "1.0 \"beta\"");
	assert_string_equal(jget_str(root, "host"), "host\nname");
	json_object *checks = NULL;
	assert_true(json_object_object_get_ex(root, "checks", &checks));
	for (size_t i = 0; i < sizeof(nasty) / sizeof(nasty[0]); i++) {
		json_object *c = json_object_array_get_idx(checks, i);
		assert_string_equal(jget_str(c, "id"), nasty[i]);
		assert_string_equal(jget_str(c, "subject"), nasty[i]);
		assert_string_equal(jget_str(c, "message"), nasty[i]);
		assert_string_equal(jget_str(c, "hint"), nasty[i]);
		json_object *d = NULL;
		assert_true(json_object_object_get_ex(c, "details", &d));
		assert_string_equal(json_object_get_string(json_object_array_get_idx(d, 0)), nasty[i]);
	}
	json_object_put(root);
	free(t);
	report_free(&r);
}

/* True if s is well-formed UTF-8 (no overlongs, surrogates or bytes > F4). */
static bool valid_utf8(const unsigned char *s)
{
	while (*s) {
		unsigned char c = *s;
		int n;
		unsigned cp;
		if (c < 0x80) {
			s++;
			continue;
		} else if (c >= 0xc2 && c <= 0xdf) {
			n = 1;
			cp = c & 0x1f;
		} else if (c >= 0xe0 && c <= 0xef) {
			n = 2;
			cp = c & 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			n = 3;
			cp = c & 0x07;
		} else {
			return false;
		}
		for (int i = 1; i <= n; i++) {
			if ((s[i] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i] & 0x3f);
		}
		if ((n == 2 && cp < 0x800) || (n == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		s += n + 1;
	}
	return true;
}

static void test_json_invalid_utf8(void **state)
{
	(void)state;
	struct report r;
	report_init(&r, "v", "h", "/");
	/* bytes read from a file (a Latin-1 NCCL conf, a corrupt sysfs
	 * string) end up in messages */
	report_add(&r, "nccl.env", "NCCL", STATUS_WARN, "NCCL_X", "value 'caf\xe9' \xff\xfe");
	char *t = render_json(&r);
	/* Regression (fixed): report.c report_write_json() hands non-UTF-8 bytes to json-c,
	 * which copies them into the output unchanged: `--json` then prints
	 * text that is not valid JSON (RFC 8259 requires UTF-8; python's
	 * json.loads and jq reject it). Expected the bytes replaced (U+FFFD)
	 * or escaped. */
	bool ok = valid_utf8((const unsigned char *)t);
	free(t);
	report_free(&r);
	assert_true(ok);
}

/* observed/expected: numbers as JSON numbers, text as strings; the run's
 * scope, time and layout version; a changed status keeps the counts. */
static void test_json_compare(void **state)
{
	(void)state;
	struct report r;
	report_init(&r, "v", "h", "/");
	report_set_run(&r, "rdma", 1700000000.9);
	struct finding *f = report_add(&r, "rdma.mtu", "S", STATUS_WARN, "mlx5_0/1", "m");
	finding_compare_num(f, 1024, 4096);
	f = report_add(&r, "gpu.count", "S", STATUS_OK, "gpu count", "m");
	finding_compare(f, "PCI 8, driver 6", "8");
	report_set_status(&r, f, STATUS_FAIL);
	f = report_add(&r, "rdma.link_rate", "S", STATUS_OK, "mlx5_1/1", "m");
	finding_compare_num(f, 99.5, 400);
	assert_int_equal(r.counts[STATUS_OK], 1);
	assert_int_equal(r.counts[STATUS_FAIL], 1);
	char *t = render_json(&r);
	assert_non_null(strstr(t, "\"schema_version\": 2,"));
	assert_non_null(strstr(t, "\"scope\": \"rdma\","));
	assert_non_null(strstr(t, "\"timestamp\": \"2023-11-14T22:13:20Z\","));
	assert_non_null(strstr(t, "\"observed\": 1024,"));
	assert_non_null(strstr(t, "\"expected\": 4096"));
	assert_non_null(strstr(t, "\"observed\": \"PCI 8, driver 6\","));
	assert_non_null(strstr(t, "\"expected\": 8\n"));
	assert_non_null(strstr(t, "\"observed\": 99.5,"));
	assert_non_null(strstr(t, "\"status\": \"fail\""));
	assert_non_null(strstr(t, "\"fail\": 1"));
	free(t);
	report_free(&r);
}

/* facts: set, replaced by key, read back; requires kept in order; both
 * as JSON arrays only when present. */
static void test_facts(void **state)
{
	(void)state;
	struct report r;
	report_init(&r, "v", "h", "/");
	struct finding *f = report_add(&r, "gpudirect.nic", "S", STATUS_FAIL, "mlx4_0", "m");
	finding_fact_bool(f, "gdr_possible.mlx4_0", true);
	finding_fact(f, "gdr_possible", "true");
	finding_fact_bool(f, "gdr_possible.mlx4_0", false);
	assert_int_equal(f->facts.n, 2);
	assert_string_equal(finding_fact_get(f, "gdr_possible.mlx4_0"), "false");
	assert_string_equal(finding_fact_get(f, "gdr_possible"), "true");
	assert_null(finding_fact_get(f, "gdr"));
	f = report_add(&r, "gpudirect.path", "S", STATUS_WARN, "0000:02:00.0", "m");
	finding_requires(f, "gdr_possible.mlx4_0");
	finding_requires(f, "rdma_nic_hardware=present");
	report_add(&r, "gpu.pci", "S", STATUS_OK, "0000:02:00.0", "m");
	char *t = render_json(&r);
	assert_non_null(strstr(t, "\"facts\": [\n        \"gdr_possible.mlx4_0=false\",\n        \"gdr_possible=true\"\n"));
	assert_non_null(strstr(t, "\"requires\": [\n        \"gdr_possible.mlx4_0\",\n        \"rdma_nic_hardware=present\"\n"));
	const char *last = strstr(t, "\"gpu.pci\"");
	assert_non_null(last);
	assert_null(strstr(last, "\"facts\""));
	assert_null(strstr(last, "\"requires\""));
	free(t);
	report_free(&r);
}

static void test_prom_exact(void **state)
{
	(void)state;
	struct report r;
	sample(&r);
	char *t = render_prom(&r, 1700000000.25);
	assert_text(t, "# HELP gpuready_finding One gpuready finding (value 1): its check ID, subject and status (ok, "
		       "warn, fail, skip).\n"
		       "# TYPE gpuready_finding gauge\n"
		       "gpuready_finding{scope=\"check\",host=\"node1\",id=\"rdma.devices\",subject=\"mlx5_0\",status=\"ok\"} 1\n"
		       "gpuready_finding{scope=\"check\",host=\"node1\",id=\"rdma.mtu\",subject=\"mlx5_0/1\",status=\"warn\"} 1\n"
		       "gpuready_finding{scope=\"check\",host=\"node1\",id=\"nccl.env\",subject=\"NCCL_IB_HCA\",status=\"fail\"} 1\n"
		       "gpuready_finding{scope=\"check\",host=\"node1\",id=\"nccl.debug\",subject=\"NCCL_DEBUG\",status=\"skip\"} 1\n"
		       "# HELP gpuready_check_status Deprecated (use gpuready_finding): the worst status of one gpuready "
		       "check and subject: 0 ok, 1 warn, 2 fail, 3 skip.\n"
		       "# TYPE gpuready_check_status gauge\n"
		       "gpuready_check_status{scope=\"check\",host=\"node1\",id=\"rdma.devices\",subject=\"mlx5_0\"} 0\n"
		       "gpuready_check_status{scope=\"check\",host=\"node1\",id=\"rdma.mtu\",subject=\"mlx5_0/1\"} 1\n"
		       "gpuready_check_status{scope=\"check\",host=\"node1\",id=\"nccl.env\",subject=\"NCCL_IB_HCA\"} 2\n"
		       "gpuready_check_status{scope=\"check\",host=\"node1\",id=\"nccl.debug\",subject=\"NCCL_DEBUG\"} 3\n"
		       "# HELP gpuready_checks Number of gpuready findings per status.\n"
		       "# TYPE gpuready_checks gauge\n"
		       "gpuready_checks{scope=\"check\",host=\"node1\",status=\"ok\"} 1\n"
		       "gpuready_checks{scope=\"check\",host=\"node1\",status=\"warn\"} 1\n"
		       "gpuready_checks{scope=\"check\",host=\"node1\",status=\"fail\"} 1\n"
		       "gpuready_checks{scope=\"check\",host=\"node1\",status=\"skip\"} 1\n"
		       "gpuready_checks{scope=\"check\",host=\"node1\",status=\"info\"} 0\n"
		       "# HELP gpuready_last_run_timestamp_seconds When gpuready last ran, as Unix time.\n"
		       "# TYPE gpuready_last_run_timestamp_seconds gauge\n"
		       "gpuready_last_run_timestamp_seconds{scope=\"check\",host=\"node1\"} 1700000000.250\n"
		       "# HELP gpuready_info Version of gpuready and the root it read.\n"
		       "# TYPE gpuready_info gauge\n"
		       "gpuready_info{scope=\"check\",host=\"node1\",version=\"0.1.0\",sysroot=\"/\"} 1\n");
	free(t);
	report_free(&r);
}

static void test_prom_escaping(void **state)
{
	(void)state;
	struct report r;
	report_init(&r, "1.0\"x", "h", "C:\\root\n");
	report_add(&r, "a.b", "S", STATUS_OK, "back\\slash \"q\" new\nline", "m");
	report_add(&r, "id\"\\\n", "S", STATUS_OK, "tab\there é", "m");
	char *t = render_prom(&r, 0);
	assert_non_null(strstr(t, "gpuready_check_status{scope=\"check\",host=\"h\",id=\"a.b\",subject=\"back\\\\slash \\\"q\\\" new\\nline\"} 0\n"));
	assert_non_null(strstr(t, "gpuready_check_status{scope=\"check\",host=\"h\",id=\"id\\\"\\\\\\n\",subject=\"tab\there é\"} 0\n"));
	assert_non_null(strstr(t, "gpuready_info{scope=\"check\",host=\"h\",version=\"1.0\\\"x\",sysroot=\"C:\\\\root\\n\"} 1\n"));
	assert_non_null(strstr(t, "gpuready_last_run_timestamp_seconds{scope=\"check\",host=\"h\"} 0.000\n"));
	/* every sample is on one line: count lines that are not comments */
	size_t samples = 0;
	for (char *line = t; *line;) {
		char *nl = strchr(line, '\n');
		assert_non_null(nl);
		if (line[0] != '#')
			samples++;
		line = nl + 1;
	}
	assert_int_equal(samples, 2 + 2 + 5 + 1 + 1);
	free(t);
	report_free(&r);
}

static size_t count_str(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static void test_prom_duplicates(void **state)
{
	(void)state;
	struct report r;
	report_init(&r, "v", "h", "/");
	/* (x, s): ok, fail, warn -> fail */
	report_add(&r, "x", "S", STATUS_OK, "s", "1");
	report_add(&r, "x", "S", STATUS_FAIL, "s", "2");
	report_add(&r, "x", "S", STATUS_WARN, "s", "3");
	/* (y, s): ok, ok -> one ok */
	report_add(&r, "y", "S", STATUS_OK, "s", "1");
	report_add(&r, "y", "S", STATUS_OK, "s", "2");
	/* (z, s): ok, skip -> skip ranks above ok */
	report_add(&r, "z", "S", STATUS_OK, "s", "1");
	report_add(&r, "z", "S", STATUS_SKIP, "s", "2");
	/* (w, s): skip, warn -> warn */
	report_add(&r, "w", "S", STATUS_WARN, "s", "1");
	report_add(&r, "w", "S", STATUS_SKIP, "s", "2");
	/* same id, other subject: separate series */
	report_add(&r, "x", "S", STATUS_OK, "t", "1");
	/* same subject, other id: separate series */
	report_add(&r, "q", "S", STATUS_OK, "s", "1");
	/* (f, s): fail twice -> one fail */
	report_add(&r, "f", "S", STATUS_FAIL, "s", "1");
	report_add(&r, "f", "S", STATUS_FAIL, "s", "2");
	char *t = render_prom(&r, 0);
	assert_int_equal(count_str(t, "gpuready_check_status{scope=\"check\",host=\"h\",id=\"x\",subject=\"s\"}"), 1);
	assert_non_null(strstr(t, "gpuready_check_status{scope=\"check\",host=\"h\",id=\"x\",subject=\"s\"} 2\n"));
	assert_int_equal(count_str(t, "gpuready_check_status{scope=\"check\",host=\"h\",id=\"y\",subject=\"s\"}"), 1);
	assert_non_null(strstr(t, "gpuready_check_status{scope=\"check\",host=\"h\",id=\"y\",subject=\"s\"} 0\n"));
	assert_int_equal(count_str(t, "gpuready_check_status{scope=\"check\",host=\"h\",id=\"z\",subject=\"s\"}"), 1);
	assert_non_null(strstr(t, "gpuready_check_status{scope=\"check\",host=\"h\",id=\"z\",subject=\"s\"} 3\n"));
	assert_int_equal(count_str(t, "gpuready_check_status{scope=\"check\",host=\"h\",id=\"w\",subject=\"s\"}"), 1);
	assert_non_null(strstr(t, "gpuready_check_status{scope=\"check\",host=\"h\",id=\"w\",subject=\"s\"} 1\n"));
	assert_non_null(strstr(t, "gpuready_check_status{scope=\"check\",host=\"h\",id=\"x\",subject=\"t\"} 0\n"));
	assert_non_null(strstr(t, "gpuready_check_status{scope=\"check\",host=\"h\",id=\"q\",subject=\"s\"} 0\n"));
	assert_int_equal(count_str(t, "gpuready_check_status{scope=\"check\",host=\"h\",id=\"f\",subject=\"s\"}"), 1);
	assert_int_equal(count_str(t, "gpuready_check_status{"), 7);
	/* gpuready_finding: one series per (id, subject, status) */
	assert_int_equal(count_str(t, "gpuready_finding{scope=\"check\",host=\"h\",id=\"x\",subject=\"s\""), 3);
	assert_int_equal(count_str(t, "gpuready_finding{scope=\"check\",host=\"h\",id=\"f\",subject=\"s\",status=\"fail\"} 1\n"), 1);
	assert_int_equal(count_str(t, "gpuready_finding{"), 11);
	/* the per-status counts still count every finding */
	assert_non_null(strstr(t, "gpuready_checks{scope=\"check\",host=\"h\",status=\"ok\"} 6\n"));
	assert_non_null(strstr(t, "gpuready_checks{scope=\"check\",host=\"h\",status=\"warn\"} 2\n"));
	assert_non_null(strstr(t, "gpuready_checks{scope=\"check\",host=\"h\",status=\"fail\"} 3\n"));
	assert_non_null(strstr(t, "gpuready_checks{scope=\"check\",host=\"h\",status=\"skip\"} 2\n"));
	free(t);
	report_free(&r);
}

static char *slurp(const char *path)
{
	return tu_read_file(path, NULL);
}

static void dir_entries(const char *dir, struct strv *out)
{
	DIR *d = opendir(dir);
	assert_non_null(d);
	struct dirent *de;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			strv_add(out, de->d_name);
	closedir(d);
	strv_sort(out);
}

static void test_prom_file_atomic(void **state)
{
	(void)state;
	struct report r;
	sample(&r);
	char *d = tu_mkdtemp();
	char *path = xasprintf("%s/gpuready.prom", d);
	char *old = xasprintf("%s/old-inode", d);

	/* an existing file is replaced by rename: a hard link to the old
	 * inode keeps the old content (no in-place truncation) */
	tu_write(d, "/gpuready.prom", "old content\n");
	assert_int_equal(link(path, old), 0);
	assert_int_equal(report_write_prom(&r, path, 1700000000), 0);
	char *got = slurp(path);
	char *want = render_prom(&r, 1700000000);
	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
	got = slurp(old);
	assert_string_equal(got, "old content\n");
	free(got);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);

	/* no temporary file is left next to it */
	struct strv ents = STRV_INIT;
	dir_entries(d, &ents);
	assert_int_equal(ents.n, 2);
	assert_string_equal(ents.v[0], "gpuready.prom");
	assert_string_equal(ents.v[1], "old-inode");
	strv_free(&ents);

	/* writing again over its own output */
	assert_int_equal(report_write_prom(&r, path, 1700000001), 0);
	got = slurp(path);
	assert_non_null(strstr(got, "} 1700000001.000\n"));
	free(got);

	/* failures: a missing directory, a directory in place of the file;
	 * an error code, and still no temporary file left behind */
	char *missing = xasprintf("%s/nodir/x.prom", d);
	assert_int_equal(report_write_prom(&r, missing, 0), -ENOENT);
	free(missing);
	tu_mkdir(d, "/isdir");
	char *isdir = xasprintf("%s/isdir", d);
	int e = report_write_prom(&r, isdir, 0);
	assert_true(e == -EISDIR || e == -ENOTEMPTY || e == -EEXIST);
	dir_entries(d, &ents);
	assert_int_equal(ents.n, 3);
	assert_string_equal(ents.v[0], "gpuready.prom");
	assert_string_equal(ents.v[1], "isdir");
	assert_string_equal(ents.v[2], "old-inode");
	strv_free(&ents);
	free(isdir);

	free(want);
	free(old);
	free(path);
	tu_rmtree(d);
	free(d);
	report_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_model),
		cmocka_unit_test(test_exit_code),
		cmocka_unit_test(test_text_layout),
		cmocka_unit_test(test_text_compact),
		cmocka_unit_test(test_text_headline),
		cmocka_unit_test(test_reason),
		cmocka_unit_test(test_text_edge_cases),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_json_compare),
		cmocka_unit_test(test_json_escaping),
		cmocka_unit_test(test_json_invalid_utf8),
		cmocka_unit_test(test_facts),
		cmocka_unit_test(test_prom_exact),
		cmocka_unit_test(test_prom_escaping),
		cmocka_unit_test(test_prom_duplicates),
		cmocka_unit_test(test_prom_file_atomic),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
