/* Parsers for the configuration file formats the inventory reads. Pure
 * functions over a buffer (no I/O), so they are unit-tested and fuzzed
 * directly. Each calls `fn` once per assignment found, with the 1-based
 * line number; names and values are passed as NUL-terminated strings that
 * live only for the call. */
#ifndef GPUREADY_TEXTFMT_H
#define GPUREADY_TEXTFMT_H

#include <stddef.h>

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

/* limits.conf(5): "<domain> <type> <item> <value>" lines, '#' comments;
 * lines with fewer than four fields are skipped. */
typedef void (*limit_fn)(void *ud, const char *domain, const char *type, const char *item, const char *value,
			 unsigned lineno);
void textfmt_limits(const char *text, size_t len, limit_fn fn, void *ud);

#endif
