/* The plan's text, JSON (docs/fix.schema.json) and shell script (fix.h). */
#include "fix/fix.h"

#include "core/cleanup.h"
#include "core/report.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

static const char *effect_name(enum fix_effect e)
{
	static const char *const n[] = { [FIX_NOW] = "now", [FIX_LOGIN] = "next login",
					 [FIX_RELOAD] = "module reload", [FIX_REBOOT] = "reboot" };
	return n[e];
}

static const char *effect_key(enum fix_effect e)
{
	static const char *const n[] = { [FIX_NOW] = "now", [FIX_LOGIN] = "login", [FIX_RELOAD] = "reload",
					 [FIX_REBOOT] = "reboot" };
	return n[e];
}

static void quoted(const char *w, FILE *out)
{
	fputc('\'', out);
	for (const char *p = w; *p; p++)
		if (*p == '\'')
			fputs("'\\''", out);
		else
			fputc(*p, out);
	fputc('\'', out);
}

/* argv as one shell line, each word quoted when it needs it. */
static void shell_words(const struct strv *argv, FILE *out)
{
	for (size_t i = 0; i < argv->n; i++) {
		const char *w = argv->v[i];
		bool plain = *w && strspn(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
					     "_-./=:,+@%") == strlen(w);
		if (i)
			fputc(' ', out);
		if (plain) {
			fputs(w, out);
			continue;
		}
		quoted(w, out);
	}
}

static void targets_text(const struct fix_remedy *r, FILE *out)
{
	for (size_t t = 0; t < r->n_targets; t++)
		fprintf(out, "%s%s %s", t ? ", " : "", r->targets[t].check_id, r->targets[t].subject);
}

static void remedy_text(const struct fix_remedy *r, size_t no, bool sysroot, FILE *out)
{
	fprintf(out, "[%zu] %s%s\n    answers: ", no, r->title, r->disruptive ? " (disruptive)" : "");
	targets_text(r, out);
	fprintf(out, "\n    takes effect: %s\n", effect_name(r->effect));
	if (r->held)
		fprintf(out, "    held: %s\n", r->held);
	for (size_t i = 0; i < r->n_files; i++) {
		const struct fix_file *f = &r->files[i];
		if (f->state)
			continue;
		if (f->link)
			fprintf(out, "    link: %s -> %s\n", f->path, f->new.buf);
		else
			fix_diff(f->path, &f->old, f->existed, &f->new, out);
	}
	for (size_t i = 0; i < r->n_cmds; i++) {
		const struct fix_cmd *c = &r->cmds[i];
		if (sysroot && c->sets_path && strlen(c->sets_value) != c->sets_len) {
			fprintf(out, "    now (in the tree): %s = %zu bytes   (for: ", c->sets_path, c->sets_len);
			shell_words(&c->argv, out);
			fputs(")\n", out);
		} else if (sysroot && c->sets_path) {
			_cleanup_free_ char *v = xstrndup(c->sets_value, strcspn(c->sets_value, "\n"));
			fprintf(out, "    now (in the tree): %s = %s   (for: ", c->sets_path, v);
			shell_words(&c->argv, out);
			fputs(")\n", out);
		} else {
			fputs(sysroot ? "    pending (reboot or reload needed): " : "    now: ", out);
			shell_words(&c->argv, out);
			fputc('\n', out);
		}
	}
	for (size_t i = 0; i < r->notes.n; i++)
		fprintf(out, "    note: %s\n", r->notes.v[i]);
	fputc('\n', out);
}

void fix_plan_text(const struct fix_plan *p, FILE *out, bool color)
{
	(void)color;
	size_t changes = fix_plan_changes(p), held = 0, pending = 0;
	for (size_t i = 0; i < p->n; i++) {
		held += p->v[i].held != NULL;
		pending += p->v[i].pending;
	}
	size_t no = 0;
	for (size_t i = 0; i < p->n; i++)
		if (!p->v[i].pending)
			remedy_text(&p->v[i], ++no, p->sysroot, out);
	if (pending) {
		fputs("Pending (written; waiting for a module reload or a reboot):\n", out);
		for (size_t i = 0; i < p->n; i++) {
			const struct fix_remedy *r = &p->v[i];
			if (!r->pending)
				continue;
			fprintf(out, "  %s: %s (", r->title, effect_name(r->effect));
			targets_text(r, out);
			fputs(")\n", out);
		}
		fputc('\n', out);
	}
	if (p->n_manual) {
		fputs("Manual steps (no safe mechanical change):\n", out);
		for (size_t i = 0; i < p->n_manual; i++) {
			const struct fix_manual *m = &p->manual[i];
			fprintf(out, "  [%s] %s %s: %s\n", m->status == STATUS_FAIL ? "FAIL" : "WARN", m->check_id,
				m->subject, m->message);
			if (m->why)
				fprintf(out, "         not automatic: %s\n", m->why);
			if (m->hint)
				fprintf(out, "         fix: %s\n", m->hint);
		}
		fputc('\n', out);
	}
	fprintf(out, "%zu change%s planned", changes, changes == 1 ? "" : "s");
	if (held)
		fprintf(out, ", %zu held", held);
	if (pending)
		fprintf(out, ", %zu pending", pending);
	fprintf(out, ", %zu manual step%s\n", p->n_manual, p->n_manual == 1 ? "" : "s");
}

static struct json_object *str_or_null(const char *s)
{
	return s ? utf8_json_string(s) : NULL;
}

static struct json_object *file_json(const struct fix_file *f)
{
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "path", utf8_json_string(f->path));
	json_object_object_add(o, "action", json_object_new_string(f->link ? "link" : f->existed ? "modify" : "create"));
	json_object_object_add(o, "state", json_object_new_boolean(f->state));
	json_object_object_add(o, "content", utf8_json_string(f->new.buf));
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (m) {
		fix_diff(f->path, &f->old, f->existed, &f->new, m);
		fclose(m);
		json_object_object_add(o, "diff", utf8_json_string(buf ? buf : ""));
	}
	free(buf);
	return o;
}

static struct json_object *remedy_json(const struct fix_remedy *r)
{
	struct json_object *o = json_object_new_object(), *a;
	json_object_object_add(o, "id", json_object_new_string(r->id));
	json_object_object_add(o, "title", utf8_json_string(r->title));
	json_object_object_add(o, "effect", json_object_new_string(effect_key(r->effect)));
	json_object_object_add(o, "disruptive", json_object_new_boolean(r->disruptive));
	json_object_object_add(o, "held", str_or_null(r->held));
	json_object_object_add(o, "pending", json_object_new_boolean(r->pending));
	json_object_object_add(o, "targets", a = json_object_new_array());
	for (size_t t = 0; t < r->n_targets; t++) {
		struct json_object *x = json_object_new_object();
		json_object_object_add(x, "check", json_object_new_string(r->targets[t].check_id));
		json_object_object_add(x, "subject", utf8_json_string(r->targets[t].subject));
		json_object_array_add(a, x);
	}
	json_object_object_add(o, "files", a = json_object_new_array());
	for (size_t i = 0; i < r->n_files; i++)
		json_object_array_add(a, file_json(&r->files[i]));
	json_object_object_add(o, "commands", a = json_object_new_array());
	for (size_t i = 0; i < r->n_cmds; i++) {
		struct json_object *x = json_object_new_object(), *argv = json_object_new_array();
		for (size_t k = 0; k < r->cmds[i].argv.n; k++)
			json_object_array_add(argv, utf8_json_string(r->cmds[i].argv.v[k]));
		json_object_object_add(x, "argv", argv);
		json_object_object_add(x, "sets_path", str_or_null(r->cmds[i].sets_path));
		/* a binary value (a PCI config space) is not shown */
		json_object_object_add(x, "sets_value", strlen(r->cmds[i].sets_value ? r->cmds[i].sets_value : "") ==
									  r->cmds[i].sets_len
								  ? str_or_null(r->cmds[i].sets_value)
								  : NULL);
		json_object_array_add(a, x);
	}
	json_object_object_add(o, "notes", a = json_object_new_array());
	for (size_t i = 0; i < r->notes.n; i++)
		json_object_array_add(a, utf8_json_string(r->notes.v[i]));
	return o;
}

struct json_object *fix_plan_json(const struct fix_plan *p)
{
	struct json_object *o = json_object_new_object(), *a;
	json_object_object_add(o, "schema_version", json_object_new_int(FIX_SCHEMA_VERSION));
	json_object_object_add(o, "sysroot", json_object_new_boolean(p->sysroot));
	json_object_object_add(o, "changes", json_object_new_int64((int64_t)fix_plan_changes(p)));
	json_object_object_add(o, "remedies", a = json_object_new_array());
	for (size_t i = 0; i < p->n; i++)
		json_object_array_add(a, remedy_json(&p->v[i]));
	json_object_object_add(o, "manual", a = json_object_new_array());
	for (size_t i = 0; i < p->n_manual; i++) {
		const struct fix_manual *m = &p->manual[i];
		struct json_object *x = json_object_new_object();
		json_object_object_add(x, "check", json_object_new_string(m->check_id));
		json_object_object_add(x, "subject", utf8_json_string(m->subject));
		json_object_object_add(x, "status", json_object_new_string(status_name(m->status)));
		json_object_object_add(x, "message", utf8_json_string(m->message));
		json_object_object_add(x, "hint", str_or_null(m->hint));
		json_object_object_add(x, "why", str_or_null(m->why));
		json_object_array_add(a, x);
	}
	return o;
}

/* A here-document delimiter that no line of text equals. */
static void delimiter(const char *text, char *buf, size_t size)
{
	for (unsigned n = 0;; n++) {
		snprintf(buf, size, "GPUREADY_EOF_%u", n);
		size_t l = strlen(buf);
		bool clash = false;
		for (const char *p = text; *p && !clash; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p))
			clash = !strncmp(p, buf, l) && (p[l] == '\n' || !p[l]);
		if (!clash)
			return;
	}
}

/* fmt with each %q replaced by the next argument, shell-quoted. */
static void sh_line(FILE *out, const char *fmt, const char *const *args)
{
	for (const char *p = fmt; *p; p++) {
		if (p[0] == '%' && p[1] == 'q') {
			quoted(*args++, out);
			p++;
		} else {
			fputc(*p, out);
		}
	}
}

/* Writes content to path under "$ROOT" (empty on the node itself) as
 * `fix --apply` does: the previous file kept once as its backup, then the
 * new one renamed over it. */
static void script_write(const char *path, const char *content, size_t len, mode_t mode, FILE *out)
{
	const char *slash = strrchr(path, '/');
	_cleanup_free_ char *bak = fix_backup_path(path),
			    *tmp = xasprintf("%.*s/.%s.gpuready-tmp", (int)(slash - path), path, slash + 1);
	char delim[32], m[16];
	delimiter(content, delim, sizeof(delim));
	snprintf(m, sizeof(m), "%o", (unsigned)mode);
	sh_line(out, "mkdir -p \"$(dirname \"$ROOT\"%q)\"\n", (const char *const[]){ path });
	sh_line(out, "if [ -e \"$ROOT\"%q ] && [ ! -e \"$ROOT\"%q ]; then\n", (const char *const[]){ path, bak });
	sh_line(out, "\tmkdir -p \"$(dirname \"$ROOT\"%q)\" && cp -p \"$ROOT\"%q \"$ROOT\"%q\nfi\n",
		(const char *const[]){ bak, path, bak });
	if (len && content[len - 1] == '\n' && !memchr(content, '\0', len)) {
		sh_line(out, "cat > \"$ROOT\"%q <<'", (const char *const[]){ tmp });
		fprintf(out, "%s'\n%.*s%s\n", delim, (int)len, content, delim);
	} else {
		/* binary (a PCI config space) or no final newline: printf's octal escapes */
		fputs("printf '", out);
		for (size_t i = 0; i < len; i++) {
			unsigned char c = (unsigned char)content[i];
			if (c >= 0x20 && c < 0x7f && c != '\\' && c != '\'' && c != '%')
				fputc(c, out);
			else
				fprintf(out, "\\%03o", c);
		}
		sh_line(out, "' > \"$ROOT\"%q\n", (const char *const[]){ tmp });
	}
	sh_line(out, "chmod %q \"$ROOT\"%q && mv -f \"$ROOT\"%q \"$ROOT\"%q\n",
		(const char *const[]){ m, tmp, tmp, path });
}

int fix_plan_script(const struct fix_plan *p, FILE *out)
{
	fputs("#!/bin/sh\n# The changes `gpuready fix` planned on this node, for configuration management.\n"
	      "# Each file's previous content is kept as a backup first, as `gpuready fix --apply` does.\n"
	      "# With ROOT set to a directory standing for / (a snapshot), the files go under it and each\n"
	      "# command is replaced by the value it sets there; without ROOT the commands run.\n"
	      "set -eu\nROOT=\"${ROOT:-}\"\n\n", out);
	for (size_t i = 0; i < p->n; i++) {
		const struct fix_remedy *r = &p->v[i];
		if (r->pending)
			continue;
		fprintf(out, "# [%zu] %s (", i + 1, r->title);
		targets_text(r, out);
		fputs(")\n", out);
		if (r->held) {
			/* what --apply would not do now is not in the script either */
			fprintf(out, "# not in this script: %s\n\n", r->held);
			continue;
		}
		for (size_t k = 0; k < r->n_files; k++) {
			const struct fix_file *f = &r->files[k];
			if (f->link)
				sh_line(out, "mkdir -p \"$(dirname \"$ROOT\"%q)\" && ln -sfn %q \"$ROOT\"%q\n",
					(const char *const[]){ f->path, f->new.buf, f->path });
			else if (!f->state)
				script_write(f->path, f->new.buf, f->new.len, f->existed ? f->old_mode : f->mode, out);
		}
		for (size_t k = 0; k < r->n_cmds; k++) {
			const struct fix_cmd *c = &r->cmds[k];
			fputs("if [ -z \"$ROOT\" ]; then\n\t", out);
			shell_words(&c->argv, out);
			fputc('\n', out);
			if (c->sets_path) {
				fputs("else\n", out);
				script_write(c->sets_path, c->sets_value, c->sets_len, 0644, out);
			}
			fputs("fi\n", out);
		}
		fputc('\n', out);
	}
	return ferror(out) ? -EIO : 0;
}
