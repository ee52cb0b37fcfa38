/* nccl-tests' own JSON file (-J FILE, --output_file FILE): the document
 * nccl-tests 2.19.6 writes (its src/util.cu, JSON file version 3), so
 * tools that read nccl-tests' JSON read gpuready's. gpuready's own JSON
 * document is --json (output.h, docs/bench.schema.json).
 *
 * As nccl-tests: the file is created exclusively, and when FILE exists
 * FILE.0, FILE.1, ... is taken instead, named on stdout by a
 * "# Writing JSON output to PATH" line; the document is one line without
 * a newline at the end; booleans are the strings "true"
 * and "false"; numbers are printed with %f; strings keep printable ASCII
 * (other bytes become '?'). Unlike nccl-tests, the values of environment
 * variables that look like secrets (*TOKEN*, *SECRET*, *PASSWORD*, ...)
 * are not copied into "env", and "errors" is empty after a run without
 * one. */
#ifndef GPUREADY_BENCH_NCCLTESTS_JSON_H
#define GPUREADY_BENCH_NCCLTESTS_JSON_H

#include "output.h"

struct nccltests_json {
	int argc;
	char *const *argv;             /* the command line, for "args" */
	char start_time[32];           /* "%Y-%m-%d %H:%M:%S", local time */
	int fd;                        /* -1 until opened */
	char *path;                    /* the file taken (malloc'd) */
};

/* Notes the command line and the start time; opens nothing. */
void nccltests_json_init(struct nccltests_json *j, int argc, char *const *argv);
/* Creates FILE (or FILE.N) and prints the "# Writing JSON output to" line
 * to out. 0 or -errno with *err. */
int nccltests_json_open(struct nccltests_json *j, const char *path, FILE *out, char **err);
/* Writes the document and closes the file: res NULL for a run that ended
 * before its rows (error then says why), info->devs NULL before the
 * devices were known. 0 or -errno. */
int nccltests_json_write(struct nccltests_json *j, const struct bench_info *info, const struct bench_result *res,
			 const struct bench_verdict *v, const char *error);
void nccltests_json_close(struct nccltests_json *j);

#endif
