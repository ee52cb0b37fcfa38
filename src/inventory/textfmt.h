/* Parsers for the configuration file formats the inventory reads. Pure
 * functions over a buffer (no I/O), so they are unit-tested and fuzzed
 * directly. Each calls `fn` once per assignment found, with the 1-based
 * line number; names and values are passed as NUL-terminated strings that
 * live only for the call. */
#ifndef GPUREADY_TEXTFMT_H
#define GPUREADY_TEXTFMT_H

#include <stdbool.h>
#include <stddef.h>

struct strbuf;

typedef void (*assign_fn)(void *ud, const char *name, const char *value, unsigned lineno);

/* NCCL's own config file (nccl.conf): lines "NAME=value"; lines starting
 * with '#' are skipped; the name is everything before the first '=' and the
 * value everything after it, spaces included, exactly as NCCL's
 * setEnvFile() takes them (nccl src/misc/param.cc). */
void textfmt_nccl_conf(const char *text, size_t len, assign_fn fn, void *ud);

/* Exported assignments of a POSIX shell script as /etc/profile.d files
 * write them: `export NAME=value`, `export NAME="value"`, `NAME=value`
 * followed later by `export NAME`, and `declare -x NAME=value`. Quotes are
 * removed, a trailing ` # comment` is dropped, nothing is expanded. Only
 * the script's text is read; conditionals are not evaluated. */
void textfmt_shell_exports(const char *text, size_t len, assign_fn fn, void *ud);

/* /etc/environment (pam_env): "NAME=value" lines, optional quotes. */
void textfmt_environment(const char *text, size_t len, assign_fn fn, void *ud);

/* What a snapshot keeps of a file in one of the three formats above: the
 * lines that assign (or, in a shell file, export) a name `keep` accepts,
 * each cut after the last byte the parser reads (a shell value ends at a
 * blank or ';': `export NCCL_A=1; export TOKEN=x` keeps its first half);
 * every other line is emptied, so line numbers stay true. Parsing the
 * result gives exactly the kept names' assignments that parsing `text`
 * gives, and keeping again changes nothing. out is reset. */
typedef bool (*textfmt_keep_fn)(const char *name);
void textfmt_nccl_conf_keep(const char *text, size_t len, textfmt_keep_fn keep, struct strbuf *out);
void textfmt_shell_exports_keep(const char *text, size_t len, textfmt_keep_fn keep, struct strbuf *out);
void textfmt_environment_keep(const char *text, size_t len, textfmt_keep_fn keep, struct strbuf *out);

/* limits.conf(5): "<domain> <type> <item> <value>" lines, '#' comments;
 * lines with fewer than four fields are skipped. */
typedef void (*limit_fn)(void *ud, const char *domain, const char *type, const char *item, const char *value,
			 unsigned lineno);
void textfmt_limits(const char *text, size_t len, limit_fn fn, void *ud);

#endif
