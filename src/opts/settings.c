/* The list of option tables, the defaults and the config file reader (inih). */
#include "opts/settings.h"
#include "core/cleanup.h"
#include "core/fileio.h"
#include "core/parse.h"
#include "core/readers.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <ini.h>
#include <stddef.h>
#include <string.h>

const struct opt_table *const settings_tables[] = { &output_opts, &site_opts, &bench_opts, &job_opts, &nccl_opts,
						     &net_opts, &cluster_opts, &fix_opts, &copy_opts, NULL };

void settings_init(struct settings *s)
{
	memset(s, 0, sizeof(*s));
	opt_set_defaults(settings_tables, s);
}

void settings_free(struct settings *s)
{
	opt_free_values(settings_tables, s);
	free(s->config_note);
	s->config_note = NULL;
}

struct ini_ctx {
	struct settings *s;
	const struct opt_seen *cli;
	char *err;
	bool tree;          /* the file came from a recorded tree's /etc */
	struct strbuf ignored;
};

/* A recorded tree (someone else's machine) may state what its site expects,
 * but not where this run writes files, which program it starts or which
 * checks it hides: only these keys are read from a tree's config. */
static const char *const tree_keys[] = { "tos", "mtu", "link_rate", "min_sockbuf", "expect_gpus", "min_cuda",
					 "min_bar1" };

/* inih goes on after an error and reports the first bad line's number, so
 * only the first message is kept. */
static int set_err(struct ini_ctx *k, char *msg)
{
	if (k->err)
		free(msg);
	else
		k->err = msg;
	return 0;
}

/* A key of the file that names option o. */
static int on_option(struct ini_ctx *k, const struct opt *o, const char *name, const char *value)
{
	if (opt_seen_has(k->cli, o))
		return 1;
	bool allowed = !k->tree;
	for (size_t t = 0; t < sizeof(tree_keys) / sizeof(tree_keys[0]) && !allowed; t++)
		allowed = !strcmp(tree_keys[t], name);
	if (!allowed) {
		strbuf_addf(&k->ignored, "%s%s", k->ignored.len ? ", " : "", name);
		return 1;
	}
	char *e = NULL;
	if (opt_assign(o, k->s, value, &e) < 0) {
		/* messages say --name; in a file the key is what matters */
		set_err(k, xasprintf("key '%s': %s", name, e));
		free(e);
		return 0;
	}
	return 1;
}

static int on_key(void *ud, const char *section, const char *name, const char *value)
{
	struct ini_ctx *k = ud;
	if (section && *section && strcmp(section, "gpuready"))
		return set_err(k, xasprintf("unknown section [%s] (keys go at the top or under [gpuready])", section));
	struct str_nearest near = STR_NEAREST_INIT(name);
	for (const struct opt_table *const *t = settings_tables; *t; t++)
		for (const struct opt *o = (*t)->rows; o < (*t)->rows + (*t)->n; o++) {
			if (o->key && !strcmp(o->key, name))
				return on_option(k, o, name, value);
			if (o->key)
				str_nearest_offer(&near, o->key);
		}
	if (near.best)
		return set_err(k, xasprintf("unknown key '%s' (did you mean '%s'?)", name, near.best));
	return set_err(k, xasprintf("unknown key '%s'", name));
}

/* inih (as Debian builds it) reads lines into a 200-byte buffer and splits
 * longer ones, and stops at a NUL byte: refuse both instead of misreading.
 * Returns the offending 1-based line, or 0. */
#define CONFIG_MAX_LINE 199
static unsigned config_bad_line(const struct strbuf *sb, const char **why)
{
	unsigned line = 1;
	size_t start = 0;
	for (size_t i = 0; i <= sb->len; i++) {
		if (i < sb->len && sb->buf[i] == '\0') {
			*why = "contains a NUL byte (a damaged file?)";
			return line;
		}
		if (i == sb->len || sb->buf[i] == '\n') {
			if (i - start > CONFIG_MAX_LINE) {
				*why = "line longer than 199 characters";
				return line;
			}
			line++;
			start = i + 1;
		}
	}
	return 0;
}

int settings_load_config(struct settings *s, const struct opt_seen *cli, const struct root *r, char **err)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	const char *shown;
	int ret;
	if (s->config) {
		ret = file_read_host(s->config, 1u << 20, &sb);
		if (ret < 0) {
			*err = xasprintf("cannot read config file %s: %s", s->config, strerror(-ret));
			return ret;
		}
		shown = s->config;
	} else {
		ret = read_all(r, &sb, "/etc/gpuready.conf");
		if (ret == -ENOENT)
			return 0;
		if (ret < 0) {
			*err = xasprintf("cannot read /etc/gpuready.conf: %s", strerror(-ret));
			return ret;
		}
		shown = "/etc/gpuready.conf";
	}
	const char *why = NULL;
	unsigned bad = config_bad_line(&sb, &why);
	if (bad) {
		*err = xasprintf("%s:%u: %s", shown, bad, why);
		return -EINVAL;
	}
	struct ini_ctx k = { .s = s, .cli = cli, .tree = !s->config && !root_is_live(r), .ignored = STRBUF_INIT };
	int line = ini_parse_string(sb.buf, on_key, &k);
	if (line != 0) {
		*err = xasprintf("%s:%d: %s", shown, line, k.err ? k.err : "syntax error (expected key = value)");
		free(k.err);
		strbuf_release(&k.ignored);
		return -EINVAL;
	}
	free(s->config_note);
	s->config_note = k.ignored.len ? xasprintf("ignoring %s from the recorded tree's %s: only site expectations are "
						   "read from a tree (give them on the command line or with --config)",
						   k.ignored.buf, shown)
				       : NULL;
	strbuf_release(&k.ignored);
	return 0;
}

struct site_expect settings_expect(const struct settings *s)
{
	return (struct site_expect){
		.tos = s->tos, .mtu = s->mtu, .link_rate = s->link_rate, .min_sockbuf = s->min_sockbuf,
		.expect_gpus = s->expect_gpus, .min_cuda = s->min_cuda, .min_bar1_gib = s->min_bar1_gib,
	};
}
