/* Declarative command-line options.
 *
 * A table of `struct opt` describes every option once: name, type, where its
 * value goes (an offset into the caller's settings struct), help text,
 * default for the docs, the config-file key if it has one, its valid range,
 * and which commands take it (a scope bit mask). The parser, the --help
 * text, the man page and the config-file reader all work from that table.
 *
 * Parsing never prints or exits: errors come back as a message. */
#ifndef GPUREADY_OPTIONS_H
#define GPUREADY_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
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

struct opt {
	const char *name;     /* long name without "--" */
	char short_name;      /* 0 if none */
	enum opt_type type;
	size_t offset;
	const char *metavar;  /* "DIR", "N" */
	const char *help;
	const char *def;      /* default shown in docs, NULL if none */
	const char *key;      /* config-file key, NULL if CLI only */
	double min, max;      /* valid range for numbers */
	unsigned scope;       /* commands that accept it */
};

/* Parses argv[0..argc) (argv[0] is the first argument, not the program).
 * Options of other scopes are errors; "--" ends options. Positional
 * arguments are appended to pos. set[i] becomes true for each option i
 * given. Returns 0, or -EINVAL with *err set (malloc'd). */
int opt_parse(const struct opt *opts, size_t n, unsigned scope, int argc, char **argv, void *target, bool *set,
	      struct strv *pos, char **err);

/* Assigns a textual value to option o (used by the parser and the config
 * file reader). Returns 0 or -EINVAL with *err set. */
int opt_assign(const struct opt *o, void *target, const char *value, char **err);

/* Option lines for --help, for options in scope. */
void opt_print_help(FILE *out, const struct opt *opts, size_t n, unsigned scope);
/* roff .TP entries for the man page. */
void opt_print_man(FILE *out, const struct opt *opts, size_t n, unsigned scope);
/* Frees strings and lists the table points into. */
void opt_free_values(const struct opt *opts, size_t n, void *target);

#endif
