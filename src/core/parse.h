/* Pure text parsers shared by the inventory readers (no I/O, no printing).
 *
 * Each returns 0 or a negative errno (-EINVAL garbage, -ERANGE overflow,
 * -ENODATA empty) and writes its output only on success. Leading and
 * trailing whitespace (including the newline sysfs appends) is ignored;
 * anything else that is not part of the number is garbage. */
#ifndef GPUREADY_PARSE_H
#define GPUREADY_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

int parse_u64(const char *s, int base, uint64_t *ret);
int parse_s64(const char *s, int base, int64_t *ret);
int parse_int(const char *s, int base, int *ret);
/* Leading decimal number of strings such as "8.0 GT/s PCIe" or
 * "100 Gb/sec (4X EDR)"; the rest of the string is not looked at. */
int parse_leading_double(const char *s, double *ret);
/* "<n>: <name>" as in sysfs port state / phys_state / node_type. Writes the
 * number; name may be NULL. */
int parse_num_colon_name(const char *s, int *ret_num, char **ret_name);

/* Trims whitespace in place; returns s. */
char *str_trim(char *s);
/* Text from a peer (a host name, a reason) made safe for a terminal, a log
 * or JSON, in place: every control character (ESC, CR, NUL's neighbours,
 * DEL; a newline too unless keep_newlines) becomes '?'. Returns s. */
char *str_printable(char *s, bool keep_newlines);
bool str_startswith(const char *s, const char *prefix);
bool str_endswith(const char *s, const char *suffix);
/* First line of s (without the newline), trimmed, malloc'd. */
char *str_first_line(const char *s);

/* Splits s into lines (without newlines) and calls fn for each, with its
 * 1-based number. Stops and returns fn's value when it is non-zero. */
int str_foreach_line(const char *s, size_t len, int (*fn)(void *ud, char *line, unsigned lineno), void *ud);

/* Levenshtein distance, capped at cap+1 (for "did you mean"). */
unsigned str_distance(const char *a, const char *b, unsigned cap);

/* "Did you mean": offer each candidate in turn; best ends as the nearest
 * to want within distance 2 (the first of equals), or NULL. Commands,
 * options, config keys and check IDs all suggest through this. best
 * points at the candidate offered, so it lives as long as that does. */
struct str_nearest {
	const char *want;
	const char *best;
	unsigned dist;
};
#define STR_NEAREST_INIT(w) { .want = (w), .best = NULL, .dist = 3 }
void str_nearest_offer(struct str_nearest *n, const char *candidate);

/* Bus/device/function "dddd:bb:dd.f" (hex, domain up to 8 digits). */
bool is_pci_bdf(const char *s);

#endif
