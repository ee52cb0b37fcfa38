/* The report model: what every check produces and every renderer prints.
 *
 * A finding has a stable dotted id ("rdma.port_state"), the section title it
 * is shown under, a subject (what it is about: "mlx5_0/1", "NCCL_IB_HCA"),
 * a status, a one-line message with the observed and expected values, and
 * for warn/fail a hint: the exact command or file content that fixes it.
 * Details are extra lines (tables, values) shown for problems, and for ok
 * findings only in verbose mode.
 *
 * A finding can also export facts about what it saw ("gdr_possible.mlx4_0=
 * false") and state what its hint requires ("gdr_possible.mlx4_0"), so a
 * test can prove that no hint proposes what another finding on the same
 * node says is impossible (tests/cli/hints.py joins the two).
 *
 * The report owns its findings and their strings. Renderers (text, JSON,
 * Prometheus) only read it. */
#ifndef GPUREADY_REPORT_H
#define GPUREADY_REPORT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "strv.h"

enum status {
	STATUS_OK,
	STATUS_WARN,
	STATUS_FAIL,
	STATUS_SKIP,
	STATUS_INFO, /* an inventory listing, not a verdict: shown with -v and in JSON */
	STATUS__COUNT,
};

struct finding {
	char *id;
	char *section;
	char *subject;
	char *message;
	char *hint;
	enum status status;
	struct strv details;
	/* A finding that compares a value with an expectation keeps both,
	 * as text (a plain number is rendered as a JSON number); NULL when
	 * it compares nothing. */
	char *observed, *expected;
	/* Facts it exports, "key=value" ("gdr_possible.mlx4_0=false"), and
	 * what its hint or commands rely on: "key" (no finding may set key to
	 * false) or "key=value" (no finding may set key to another value). */
	struct strv facts, requires;
	/* A change `gpuready fix` wrote that waits for a module reload or a
	 * reboot and answers this finding (NULL none): shown with it. */
	char *pending;
	/* Shown first in the default text report whatever its status: what
	 * every other line is to be read with (a container's view). */
	bool headline;
};

struct report {
	struct finding **v;
	size_t n;
	char *version;
	char *host;
	char *sysroot;
	char *scope;        /* the command that made it: "check", "gpu", "rdma", "gpudirect" */
	double timestamp;   /* when it ran, Unix time; 0 unknown */
	unsigned counts[STATUS__COUNT];
};

/* Version of the JSON report's layout (docs/report-schema.md). */
#define REPORT_SCHEMA_VERSION 2

const char *status_name(enum status s); /* "ok", "warn", "fail", "skip" */
/* Severity order for "the worst of": info < ok < skip < warn < fail. */
int status_rank(enum status s);

void report_init(struct report *r, const char *version, const char *host, const char *sysroot);
void report_free(struct report *r);
/* What ran and when (defaults: scope "check", timestamp 0). */
void report_set_run(struct report *r, const char *scope, double timestamp);

/* Appends a finding; returns it so the caller can add a hint and details. */
struct finding *report_add(struct report *r, const char *id, const char *section, enum status st,
			   const char *subject, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
struct finding *report_vadd(struct report *r, const char *id, const char *section, enum status st,
			    const char *subject, const char *fmt, va_list ap);
void finding_hint(struct finding *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void finding_detail(struct finding *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Records what the finding compared: the observed and the expected value. */
void finding_compare(struct finding *f, const char *observed, const char *expected);
/* finding_compare() with numbers (printed with %g). */
void finding_compare_num(struct finding *f, double observed, double expected);
/* Exports a fact: key is a dotted name, with the subject it is about as
 * the last part where it is per device ("gdr_possible.mlx4_0"); value a
 * word ("true", "false", "present"). Setting a key again replaces it. */
void finding_fact(struct finding *f, const char *key, const char *value);
void finding_fact_bool(struct finding *f, const char *key, bool value);
/* Declares that the finding's hint (or its commands) needs "key" not to be
 * false anywhere on the node, or "key=value" to hold where key is set. */
void finding_requires(struct finding *f, const char *requirement);
/* The value of a fact the finding exports, or NULL. */
const char *finding_fact_get(const struct finding *f, const char *key);
/* Says the finding waits for a change gpuready fix wrote (printf). */
void finding_pending(struct finding *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Changes a finding's status, keeping the report's counts right. */
void report_set_status(struct report *r, struct finding *f, enum status st);

/* 1 if the report fails (any fail, or any warn when strict), else 0. */
int report_exit_code(const struct report *r, bool strict);

struct render_opts {
	bool color;
	bool verbose; /* every finding under its section, details too (the full report) */
	bool quiet;   /* only warn and fail, and the summary */
};

/* Renderers return 0 or -errno (a failed write to the stream or file). */
int report_write_text(const struct report *r, FILE *out, const struct render_opts *o);
int report_write_json(const struct report *r, FILE *out);
/* One line for Slurm's drain reason and NHC (--reason): at most
 * REPORT_REASON_MAX bytes of printable ASCII without quotes, naming the
 * failing (else warning) check IDs and subjects, "(+N more)" when cut. */
#define REPORT_REASON_MAX 200
void report_reason(const struct report *r, char *buf, size_t size);
/* Prometheus text exposition, written to path atomically (temp + rename).
 * `now` is the run's Unix time, for gpuready_last_run_timestamp_seconds. */
int report_write_prom(const struct report *r, const char *path, double now);
/* The same exposition into a stream (for tests and stdout). */
int report_write_prom_stream(const struct report *r, FILE *out, double now);

/* Writes raw as the text of a Prometheus label value: UTF-8 cleaned,
 * backslash, double quote and newline escaped (the exposition format). */
void report_prom_label(FILE *out, const char *raw);

/* s with every byte that is not part of valid UTF-8 replaced by U+FFFD
 * (malloc'd): JSON and the Prometheus format require UTF-8. */
char *utf8_clean(const char *s);

/* A new JSON string of utf8_clean(s): for any text read from the machine
 * or given by the user. The caller owns the object. */
struct json_object;
struct json_object *utf8_json_string(const char *s);

#endif
