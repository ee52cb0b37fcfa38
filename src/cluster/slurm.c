/* Slurm's drain and resume (slurm.h): reasons, scontrol's argv and the
 * strict reading of `scontrol show node -o NAME` (scontrol(1): "-o,
 * --oneliner  Print information one line per record"; the fields are
 * those of slurm_sprint_node_table in Slurm's src/api/node_info.c). */
#include "cluster/slurm.h"
#include "core/cleanup.h"
#include "core/spawn.h"
#include "core/strbuf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static bool reason_byte(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr(" ._,:=/+@()-", c);
}

char *slurm_reason(const char *node_reason)
{
	const char *r = node_reason ? node_reason : "";
	if (!strncmp(r, "gpuready ", 9))
		r += 9;
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "%s ", SLURM_REASON_PREFIX);
	for (const unsigned char *p = (const unsigned char *)r; *p; p++) {
		if (sb.len >= SLURM_REASON_MAX + 1)
			break;
		strbuf_addch(&sb, reason_byte(*p) && *p ? (char)*p : '_');
	}
	if (sb.len > SLURM_REASON_MAX) {
		strbuf_setlen(&sb, SLURM_REASON_MAX - 3);
		strbuf_adds(&sb, "...");
	}
	while (sb.len && sb.buf[sb.len - 1] == ' ')
		strbuf_setlen(&sb, sb.len - 1);
	return strbuf_detach(&sb);
}

static void update_argv(const char *scontrol, const char *node, struct strv *out)
{
	strv_free(out);
	strv_add(out, scontrol);
	strv_add(out, "update");
	strv_push(out, xasprintf("NodeName=%s", node));
}

void slurm_drain_argv(const char *scontrol, const char *node, const char *reason, struct strv *out)
{
	update_argv(scontrol, node, out);
	strv_add(out, "State=DRAIN");
	strv_push(out, xasprintf("Reason=%s", reason));
}

void slurm_resume_argv(const char *scontrol, const char *node, struct strv *out)
{
	update_argv(scontrol, node, out);
	strv_add(out, "State=RESUME");
}

void slurm_show_argv(const char *scontrol, const char *node, struct strv *out)
{
	strv_free(out);
	strv_add(out, scontrol);
	strv_add(out, "show");
	strv_add(out, "node");
	strv_add(out, "-o");
	strv_add(out, node);
}

static bool plain_byte(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || (c && strchr("_./:=+@-", c));
}

static void add_word(struct strbuf *sb, const char *w)
{
	size_t n = strlen(w), plain = 0;
	while (plain < n && plain_byte((unsigned char)w[plain]))
		plain++;
	if (n && plain == n) {
		strbuf_adds(sb, w);
		return;
	}
	const char *eq = strchr(w, '=');
	if (eq && eq > w && (size_t)(eq - w) < plain && !strpbrk(eq + 1, "\"$`\\!")) {
		bool key_plain = true;
		for (const char *p = w; p < eq; p++)
			key_plain = key_plain && plain_byte((unsigned char)*p);
		if (key_plain) {
			strbuf_addf(sb, "%.*s=\"%s\"", (int)(eq - w), w, eq + 1);
			return;
		}
	}
	strbuf_addch(sb, '\'');
	for (const char *p = w; *p; p++)
		if (*p == '\'')
			strbuf_adds(sb, "'\\''");
		else
			strbuf_addch(sb, *p);
	strbuf_addch(sb, '\'');
}

char *slurm_command_line(const struct strv *argv)
{
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < argv->n; i++) {
		if (i)
			strbuf_addch(&sb, ' ');
		add_word(&sb, argv->v[i]);
	}
	return strbuf_detach(&sb);
}

void slurm_node_free(struct slurm_node *n)
{
	free(n->state);
	free(n->reason);
	*n = (struct slurm_node){ 0 };
}

static bool state_byte(char c)
{
	return (c >= 'A' && c <= 'Z') || (c && strchr("_+*~#!%$@^-", c));
}

/* Whether the '+'-separated flags of state include flag. */
static bool has_flag(const char *state, const char *flag)
{
	size_t l = strlen(flag);
	for (const char *p = state; *p;) {
		const char *end = strchr(p, '+');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		if (n == l && !strncmp(p, flag, l))
			return true;
		p += n + (end ? 1 : 0);
	}
	return false;
}

/* The reason text: from after "Reason=" to end, less the " [USER@TIME]"
 * Slurm appends (node_info.c prints "Reason=%s [%s@%s]"). */
static char *reason_text(const char *p, const char *end)
{
	const char *close = end;
	while (close > p && close[-1] == ' ')
		close--;
	if (close > p && close[-1] == ']') {
		for (const char *q = close - 1; q > p; q--)
			if (q[-1] == ' ' && q[0] == '[') {
				close = q - 1;
				break;
			}
	}
	return xstrndup(p, (size_t)(close - p));
}

int slurm_parse_node(const char *text, size_t len, const char *node, struct slurm_node *ret, char **err)
{
	if (len > SLURM_SHOW_MAX) {
		*err = xasprintf("more than %u bytes", SLURM_SHOW_MAX);
		return -EINVAL;
	}
	if (len && text[len - 1] == '\n')
		len--;
	if (memchr(text, '\0', len) || memchr(text, '\n', len)) {
		*err = xstrdup("not one line");
		return -EINVAL;
	}
	_cleanup_free_ char *line = xstrndup(text, len), *head = xasprintf("NodeName=%s ", node);
	if (strncmp(line, head, strlen(head))) {
		*err = xasprintf("does not start with \"%s\"", head);
		return -EINVAL;
	}
	const char *st = strstr(line, " State=");
	if (!st) {
		*err = xstrdup("no State= field");
		return -EINVAL;
	}
	st += 7;
	size_t n = 0;
	while (state_byte(st[n]))
		n++;
	if (!n || (st[n] && st[n] != ' ') || n > 256) {
		*err = xasprintf("State= is not a Slurm state: \"%.40s\"", st);
		return -EINVAL;
	}
	struct slurm_node r = { .state = xstrndup(st, n) };
	/* the fields Slurm prints after Reason= (node_info.c); a Reason= that
	 * comes after one of them is inside its text (a Comment= saying
	 * "Reason=gpuready: ..." on a node drained without a reason) */
	static const char *const after[] = { " Comment=", " Extra=", " InstanceId=", " InstanceType=",
					     " ReservationName=" };
	const char *rs = strstr(st + n, " Reason="), *end = line + len;
	for (size_t i = 0; rs && i < sizeof(after) / sizeof(after[0]); i++) {
		const char *a = strstr(st + n, after[i]);
		if (a && a < rs)
			rs = NULL;
		else if (a && a < end)
			end = a;
	}
	r.reason = rs ? reason_text(rs + 8, end) : xstrdup("");
	r.drain = has_flag(r.state, "DRAIN") || has_flag(r.state, "DRAINED") || has_flag(r.state, "DRAINING");
	r.by_gpuready = r.drain && !strncmp(r.reason, SLURM_REASON_PREFIX, strlen(SLURM_REASON_PREFIX));
	*ret = r;
	return 0;
}

/* The last non-empty line of s, printable ASCII only, at most 200 bytes. */
static char *last_line(const char *s, size_t len)
{
	while (len && (s[len - 1] == '\n' || s[len - 1] == ' '))
		len--;
	size_t start = len;
	while (start && s[start - 1] != '\n')
		start--;
	if (len - start > 200)
		len = start + 200;
	char *l = xstrndup(s + start, len - start);
	for (char *p = l; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
			*p = '?';
	return l;
}

int slurm_run(const struct strv *argv, char **out, char **err)
{
	struct spawn_result res;
	int r = spawn_run((const char *const *)argv->v, NULL, SLURM_TIMEOUT_MS, &res);
	if (r < 0) {
		*err = xasprintf("cannot run %s: %s", argv->v[0], strerror(-r));
		return -1;
	}
	int ret = -1;
	if (res.timed_out) {
		*err = xasprintf("%s did not end within %d s", argv->v[0], SLURM_TIMEOUT_MS / 1000);
	} else if (res.signal) {
		*err = xasprintf("%s was killed by signal %d", argv->v[0], res.signal);
	} else if (res.exit_code) {
		_cleanup_free_ char *l = last_line(res.err.buf ? res.err.buf : "", res.err.len);
		*err = xasprintf("%s exited with %d%s%s", argv->v[0], res.exit_code, *l ? ": " : "", l);
	} else {
		ret = 0;
		if (out)
			*out = xstrndup(res.out.buf ? res.out.buf : "", res.out.len);
	}
	spawn_result_free(&res);
	return ret;
}

int slurm_query(const char *scontrol, const char *node, struct slurm_node *ret, char **err)
{
	_cleanup_(strv_freep) struct strv argv = STRV_INIT;
	slurm_show_argv(scontrol, node, &argv);
	_cleanup_free_ char *out = NULL, *why = NULL;
	if (slurm_run(&argv, &out, err) < 0)
		return -1;
	if (slurm_parse_node(out, strlen(out), node, ret, &why) < 0) {
		*err = xasprintf("`scontrol show node -o %s` printed no node state: %s", node, why);
		return -1;
	}
	return 0;
}
