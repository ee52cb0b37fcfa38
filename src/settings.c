/* The option table and the config file reader (inih). */
#include "settings.h"
#include "core/cleanup.h"
#include "core/readers.h"

#include <errno.h>
#include <ini.h>
#include <stddef.h>
#include <string.h>

#define OFF(f) offsetof(struct settings, f)

const struct opt settings_opts[] = {
	{ "help", 'h', OPT_FLAG, OFF(help), NULL, "Show help for this command and exit.", NULL, NULL, 0, 0, SCOPE_ALL },
	{ "sysroot", 0, OPT_STRING, OFF(sysroot), "DIR",
	  "Read every file under DIR instead of / (a snapshot or a test fixture).", "/", NULL, 0, 0,
	  SCOPE_CHECK | SCOPE_SNAPSHOT },
	{ "json", 0, OPT_FLAG, OFF(json), NULL, "Print the report as JSON on standard output.", NULL, NULL, 0, 0,
	  SCOPE_CHECK },
	{ "prom", 0, OPT_STRING, OFF(prom), "FILE",
	  "Also write the report as Prometheus text exposition to FILE (atomically), for node_exporter's textfile collector.",
	  NULL, "prom", 0, 0, SCOPE_CHECK },
	{ "only", 0, OPT_LIST, OFF(only), "PATTERN",
	  "Run only checks whose ID matches PATTERN (shell glob, comma-separated, repeatable).", NULL, "only", 0, 0,
	  SCOPE_CHECK | SCOPE_LIST },
	{ "skip", 0, OPT_LIST, OFF(skip), "PATTERN",
	  "Do not run checks whose ID matches PATTERN (shell glob, comma-separated, repeatable).", NULL, "skip", 0, 0,
	  SCOPE_CHECK | SCOPE_LIST },
	{ "strict", 0, OPT_FLAG, OFF(strict), NULL, "Count warnings as failures for the exit code.", NULL, "strict", 0,
	  0, SCOPE_CHECK },
	{ "no-color", 0, OPT_FLAG, OFF(no_color), NULL,
	  "Never color the text report (it is colored only on a terminal).", NULL, NULL, 0, 0, SCOPE_CHECK },
	{ "verbose", 'v', OPT_FLAG, OFF(verbose), NULL, "Show the details of passing checks too.", NULL, NULL, 0, 0,
	  SCOPE_CHECK | SCOPE_SNAPSHOT },
	{ "config", 0, OPT_STRING, OFF(config), "FILE",
	  "Read site expectations from FILE instead of /etc/gpuready.conf (inside the sysroot).", NULL, NULL, 0, 0,
	  SCOPE_CHECK },
	{ "tos", 0, OPT_INT, OFF(tos), "TOS",
	  "Expected RoCE traffic class byte (DSCP << 2 | ECN) for RDMA-CM and NCCL_IB_TC; 104 is DSCP 26.", "104",
	  "tos", 0, 255, SCOPE_CHECK },
	{ "mtu", 0, OPT_INT, OFF(mtu), "BYTES", "Expected MTU of every RDMA network interface (0: any).", "0", "mtu",
	  0, 65536, SCOPE_CHECK },
	{ "link-rate", 0, OPT_DOUBLE, OFF(link_rate), "GBPS",
	  "Minimum expected rate of every active RDMA port in Gb/s (0: none).", "0", "link_rate", 0, 100000,
	  SCOPE_CHECK },
	{ "min-sockbuf", 0, OPT_U64, OFF(min_sockbuf), "BYTES",
	  "Smallest acceptable net.core.rmem_max and wmem_max.", "268435456", "min_sockbuf", 0, 0, SCOPE_CHECK },
};
const size_t settings_n_opts = sizeof(settings_opts) / sizeof(settings_opts[0]);

void settings_init(struct settings *s)
{
	memset(s, 0, sizeof(*s));
	s->tos = DEFAULT_TOS;
	s->min_sockbuf = DEFAULT_MIN_SOCKBUF;
}

void settings_free(struct settings *s)
{
	opt_free_values(settings_opts, settings_n_opts, s);
}

struct ini_ctx {
	struct settings *s;
	const bool *cli_set;
	char *err;
};

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

static int on_key(void *ud, const char *section, const char *name, const char *value)
{
	struct ini_ctx *k = ud;
	if (section && *section && strcmp(section, "gpuready"))
		return set_err(k, xasprintf("unknown section [%s] (keys go at the top or under [gpuready])", section));
	for (size_t i = 0; i < settings_n_opts; i++) {
		const struct opt *o = &settings_opts[i];
		if (!o->key || strcmp(o->key, name))
			continue;
		if (k->cli_set && k->cli_set[i])
			return 1;
		char *e = NULL;
		if (opt_assign(o, k->s, value, &e) < 0) {
			/* messages say --name; in a file the key is what matters */
			set_err(k, xasprintf("key '%s': %s", name, e));
			free(e);
			return 0;
		}
		return 1;
	}
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

int settings_load_config(struct settings *s, const bool *cli_set, const struct root *r, char **err)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	const char *shown;
	if (s->config) {
		_cleanup_fclose_ FILE *f = fopen(s->config, "re");
		if (!f) {
			int e = errno;
			*err = xasprintf("cannot read config file %s: %s", s->config, strerror(e));
			return -e;
		}
		char buf[4096];
		size_t n;
		while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
			strbuf_add(&sb, buf, n);
		if (ferror(f)) {
			int e = errno ? errno : EIO;
			*err = xasprintf("cannot read config file %s: %s", s->config, strerror(e));
			return -e;
		}
		shown = s->config;
	} else {
		int ret = read_all(r, &sb, "/etc/gpuready.conf");
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
	struct ini_ctx k = { .s = s, .cli_set = cli_set };
	int line = ini_parse_string(sb.buf, on_key, &k);
	if (line != 0) {
		*err = xasprintf("%s:%d: %s", shown, line, k.err ? k.err : "syntax error (expected key = value)");
		free(k.err);
		return -EINVAL;
	}
	return 0;
}
