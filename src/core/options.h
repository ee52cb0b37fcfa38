/* Declarative command-line options.
 *
 * A table of `struct opt` rows describes options once: name, type, where the
 * value goes (an offset into the caller's settings struct), help text, the
 * default (typed: it is both the initial value, opt_set_defaults, and the
 * text --help and the man page show), the config-file key if it has one,
 * its valid range (numbers) or form (strings, a pure function), and which
 * commands take it (a scope bit mask). Each
 * consumer owns its table (`struct opt_table`), and a command lists the
 * tables it reads, NULL-terminated. The parser, --help, the man page and
 * the config-file reader all work from those tables.
 *
 * Parsing never prints or exits: errors come back as a message. */
#ifndef GPUREADY_OPTIONS_H
#define GPUREADY_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "strv.h"

enum opt_type {
	OPT_FLAG,   /* bool, no value */
	OPT_STRING, /* char * (malloc'd; replaced on repeat) */
	OPT_INT,    /* int, base 0 (decimal, 0x hex), range min..max */
	OPT_U64,    /* uint64_t, base 0, optional K/M/G suffix (binary) */
	OPT_DOUBLE, /* double, range min..max */
	OPT_LIST,   /* struct strv, repeatable, comma-separated */
};

/* An option's default, in the member of its type. Without .set the initial
 * value is zero (false, NULL, empty) and no default is shown; with .hidden
 * the value is set but not shown (the help text says what it means). */
struct opt_default {
	bool set, hidden;
	int i;
	uint64_t u;
	double d;
	const char *s;
};
#define OPT_DEF_INT(x) { .set = true, .i = (x) }
#define OPT_DEF_U64(x) { .set = true, .u = (x) }
#define OPT_DEF_DOUBLE(x) { .set = true, .d = (x) }
#define OPT_DEF_STR(x) { .set = true, .s = (x) }
#define OPT_DEF_HIDDEN_INT(x) { .set = true, .hidden = true, .i = (x) }

struct opt {
	const char *name;     /* long name without "--" */
	const char *alias;    /* a second long name, NULL if none (perftest's --qp for --qps) */
	char short_name;      /* 0 if none */
	enum opt_type type;
	size_t offset;
	const char *metavar;  /* "DIR", "N" */
	const char *help;
	struct opt_default def;
	const char *key;      /* config-file key, NULL if CLI only */
	double min, max;      /* valid range for numbers */
	unsigned scope;       /* commands that accept it */
	/* OPT_STRING: the form a value must have. NULL when value has it,
	 * else the form in words ("MAJOR.MINOR, e.g. 12.8"), for the message;
	 * pure. NULL for any string. */
	const char *(*valid)(const char *value);
};

/* The options one consumer owns (the site's expectations, the benchmarks,
 * bench net ...). */
struct opt_table {
	const char *name;
	const struct opt *rows;
	size_t n;
};
#define OPT_TABLE(nm, arr) { .name = (nm), .rows = (arr), .n = sizeof(arr) / sizeof((arr)[0]) }

/* The rows given on a command line, in the order first given. When
 * opt_parse refuses an option it also says, for the caller's hint, the
 * row of another scope that the option names (`gpu --tos`: the caller
 * knows which commands take it), or else the row in scope nearest to an
 * unknown name (`--sysrot`: did you mean --sysroot). */
#define OPT_SEEN_MAX 128
struct opt_seen {
	const struct opt *v[OPT_SEEN_MAX];
	size_t n;
	const struct opt *other;   /* refused: the option is another scope's */
	const struct opt *nearest; /* refused: unknown; the nearest name in scope, or NULL */
};
bool opt_seen_has(const struct opt_seen *seen, const struct opt *o);
/* The row named `name` that was given, or NULL. */
const struct opt *opt_seen_name(const struct opt_seen *seen, const char *name);

/* Parses argv[0..argc) (argv[0] is the first argument, not the program)
 * against the rows of `tables` (NULL-terminated) in `scope`. Options of
 * other scopes are errors; "--" ends options. Positional arguments are
 * appended to pos. Each row given is added to *seen (may be NULL), and a
 * refused option's other or nearest row set there.
 * Returns 0, or -EINVAL with *err set (malloc'd). */
int opt_parse(const struct opt_table *const *tables, unsigned scope, int argc, char **argv, void *target,
	      struct opt_seen *seen, struct strv *pos, char **err);

/* The row named `name` (long name, without "--") in scope, or NULL. */
const struct opt *opt_find(const struct opt_table *const *tables, unsigned scope, const char *name);

/* Assigns a textual value to option o (used by the parser and the config
 * file reader). Returns 0 or -EINVAL with *err set. */
int opt_assign(const struct opt *o, void *target, const char *value, char **err);

/* Sets every row's default in target (strings are copied). */
void opt_set_defaults(const struct opt_table *const *tables, void *target);
/* The default as --help shows it ("32M", "104", "tcp_bw") into buf, or
 * NULL when none is shown. Sizes that are whole KiB, MiB or GiB take the
 * K/M/G suffix the parser reads. */
const char *opt_format_default(const struct opt *o, char *buf, size_t len);

/* Option lines for --help, for options in scope. */
void opt_print_help(FILE *out, const struct opt_table *const *tables, unsigned scope);
/* roff .TP entries for the man page. */
void opt_print_man(FILE *out, const struct opt_table *const *tables, unsigned scope);
/* Frees strings and lists the tables point into. */
void opt_free_values(const struct opt_table *const *tables, void *target);

#endif
