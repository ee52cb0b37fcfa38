/* Helpers shared by the unit tests. */
#define _GNU_SOURCE
#include "testutil.h"
#include "core/report.h"
#include "core/strbuf.h"
#include "core/strv.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *tu_mkdtemp(void)
{
	const char *t = getenv("TMPDIR");
	char *p = xasprintf("%s/gpuready-test-XXXXXX", t && *t ? t : "/tmp");
	assert_non_null(mkdtemp(p));
	return p;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)flag;
	(void)f;
	return remove(p);
}

void tu_rmtree(const char *dir)
{
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void mkparents(const char *full)
{
	char *p = xstrdup(full);
	for (char *c = p + 1; *c; c++)
		if (*c == '/') {
			*c = '\0';
			mkdir(p, 0755);
			*c = '/';
		}
	free(p);
}

void tu_write_bytes(const char *dir, const char *path, const void *data, size_t len)
{
	char *full = xasprintf("%s/%s", dir, path[0] == '/' ? path + 1 : path);
	mkparents(full);
	int fd = open(full, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
	free(full);
}

void tu_write(const char *dir, const char *path, const char *content)
{
	tu_write_bytes(dir, path, content, strlen(content));
}

void tu_symlink(const char *dir, const char *path, const char *target)
{
	char *full = xasprintf("%s/%s", dir, path[0] == '/' ? path + 1 : path);
	mkparents(full);
	assert_int_equal(symlink(target, full), 0);
	free(full);
}

void tu_mkdir(const char *dir, const char *path)
{
	char *full = xasprintf("%s/%s/", dir, path[0] == '/' ? path + 1 : path);
	mkparents(full);
	free(full);
}

char *tu_fixture(const char *name)
{
	const char *f = getenv("GPUREADY_FIXTURES");
	assert_non_null(f);
	return xasprintf("%s/%s/root", f, name);
}

const char *tu_source_dir(void)
{
	const char *s = getenv("GPUREADY_SOURCE_DIR");
	assert_non_null(s);
	return s;
}

char *tu_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	struct strbuf sb = STRBUF_INIT;
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		strbuf_add(&sb, buf, n);
	fclose(f);
	if (len)
		*len = sb.len;
	return strbuf_detach(&sb);
}

void tu_expect_strv(const struct strv *got, const char *const *want, size_t n, const char *what)
{
	bool ok = got->n == n;
	for (size_t i = 0; ok && i < n; i++)
		ok = !strcmp(got->v[i], want[i]);
	if (ok)
		return;
	for (size_t i = 0; i < got->n; i++)
		print_message("  got [%zu] \"%s\"\n", i, got->v[i]);
	for (size_t i = 0; i < n; i++)
		print_message("  want[%zu] \"%s\"\n", i, want[i]);
	fail_msg("%s differ", what);
}

void tu_random_tokens(struct strbuf *out, const char *const *tokens, size_t n, size_t count, unsigned *seed)
{
	strbuf_reset(out);
	for (size_t i = 0; i < count; i++) {
		*seed = *seed * 1103515245u + 12345u;
		size_t t = (*seed >> 16) % (n + 1);
		if (t == n)
			strbuf_addch(out, '\0');
		else
			strbuf_adds(out, tokens[t]);
	}
}

int tu_worst(const struct report *r, const char *id, const char *subject)
{
	static const int rank[STATUS__COUNT] = { [STATUS_INFO] = -1, [STATUS_OK] = 0, [STATUS_SKIP] = 1,
						 [STATUS_WARN] = 2, [STATUS_FAIL] = 3 };
	int best = -1;
	for (size_t i = 0; i < r->n; i++) {
		const struct finding *f = r->v[i];
		if (!strcmp(f->id, id) && !strcmp(f->subject, subject) && (best < 0 || rank[f->status] > rank[best]))
			best = (int)f->status;
	}
	return best;
}

const struct finding *tu_finding(const struct report *r, const char *id, const char *subject)
{
	const struct finding *got = NULL;
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->v[i]->id, id) && !strcmp(r->v[i]->subject, subject))
			got = r->v[i];
	if (!got)
		fail_msg("no finding %s about %s", id, subject);
	return got;
}

void tu_assert_has(const char *s, const char *part)
{
	if (!s || !strstr(s, part))
		fail_msg("\"%s\" lacks \"%s\"", s ? s : "(null)", part);
}
