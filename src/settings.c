/* The option table and the config file reader (inih). */
#include "settings.h"
#include "core/cleanup.h"
#include "core/readers.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <ini.h>
#include <stddef.h>
#include <string.h>

#define OFF(f) offsetof(struct settings, f)

const struct opt settings_opts[] = {
	{ "help", 'h', OPT_FLAG, OFF(help), NULL, "Show help for this command and exit.", NULL, NULL, 0, 0, SCOPE_ALL },
	{ "sysroot", 0, OPT_STRING, OFF(sysroot), "DIR",
	  "Read every file under DIR instead of / (a snapshot or a test fixture).", "/", NULL, 0, 0,
	  SCOPE_CHECK | SCOPE_SNAPSHOT | SCOPE_TOPO },
	{ "json", 0, OPT_FLAG, OFF(json), NULL, "Print the report as JSON on standard output.", NULL, NULL, 0, 0,
	  SCOPE_CHECK | SCOPE_TOPO },
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
	{ "expect-gpus", 0, OPT_INT, OFF(expect_gpus), "N",
	  "Number of NVIDIA GPUs this node must have; a different count fails (0: the PCI count is the expectation).",
	  "0", "expect_gpus", 0, 1024, SCOPE_CHECK },
	{ "min-cuda", 0, OPT_STRING, OFF(min_cuda), "X.Y",
	  "Oldest CUDA version the installed driver must support (NVML/CUDA driver version).", DEFAULT_MIN_CUDA,
	  "min_cuda", 0, 0, SCOPE_CHECK },
	{ "python", 0, OPT_STRING, OFF(python), "PATH",
	  "Python interpreter for the PyTorch check (default: $VIRTUAL_ENV/bin/python, /opt/pytorch-venv/bin/python, python3).",
	  NULL, "python", 0, 0, SCOPE_CHECK },
	{ "min-bar1", 0, OPT_DOUBLE, OFF(min_bar1_gib), "GIB",
	  "Smallest acceptable GPU BAR1 (the window GPUDirect RDMA maps GPU memory through), in GiB.", "1",
	  "min_bar1", 0, 1048576, SCOPE_CHECK },
};
const size_t settings_n_opts = sizeof(settings_opts) / sizeof(settings_opts[0]);

void settings_init(struct settings *s)
{
	memset(s, 0, sizeof(*s));
	s->tos = DEFAULT_TOS;
	s->min_sockbuf = DEFAULT_MIN_SOCKBUF;
	s->min_cuda = xstrdup(DEFAULT_MIN_CUDA);
	/* Below 1 GiB a BAR1 window is too small to map GPU buffers for
	 * GPUDirect RDMA (issue 3; NVIDIA GPUDirect RDMA docs: BAR1 limits how
	 * much GPU memory peers can map). */
	s->min_bar1_gib = 1.0;
}

void settings_free(struct settings *s)
{
	opt_free_values(settings_opts, settings_n_opts, s);
	free(s->config_note);
	s->config_note = NULL;
}

struct ini_ctx {
	struct settings *s;
	const bool *cli_set;
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

/* A host file given with --config: a regular file of at most 1 MiB (a FIFO
 * or /dev/zero must not hang or eat memory). */
static int read_host_file(const char *path, struct strbuf *out)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if (st.st_size > (1 << 20))
		return -EFBIG;
	char buf[4096];
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		strbuf_add(out, buf, (size_t)n);
		if (out->len > (1 << 20))
			return -EFBIG;
	}
}

int settings_load_config(struct settings *s, const bool *cli_set, const struct root *r, char **err)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	const char *shown;
	int ret;
	if (s->config) {
		ret = read_host_file(s->config, &sb);
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
	struct ini_ctx k = { .s = s, .cli_set = cli_set, .tree = !s->config && !root_is_live(r), .ignored = STRBUF_INIT };
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
