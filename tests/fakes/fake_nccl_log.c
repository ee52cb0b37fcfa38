/* The fake NCCL's debug log, in NCCL's own formats (src/debug.cc;
 * NCCL documentation, Environment Variables): NCCL_DEBUG picks the level, NCCL_DEBUG_SUBSYS the INFO
 * subsystems (a leading ^ inverts; default INIT,BOOTSTRAP,ENV), and
 * NCCL_DEBUG_FILE the file (%h host, %p pid, %% a percent sign; used only
 * above VERSION), all read once per process as NCCL does. */
#define _GNU_SOURCE
#include "fake_nccl.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { LVL_NONE, LVL_VERSION, LVL_WARN, LVL_INFO };

struct debug {
	int level;
	unsigned mask;
	FILE *f;
	char host[256];
};

static struct debug dbg;
static pthread_once_t dbg_once = PTHREAD_ONCE_INIT;

static unsigned parse_subsys(const char *s)
{
	static const struct { const char *name; unsigned bit; } names[] = {
		{ "INIT", 0x1 }, { "COLL", 0x2 }, { "P2P", 0x4 }, { "SHM", 0x8 }, { "NET", 0x10 }, { "GRAPH", 0x20 },
		{ "TUNING", 0x40 }, { "ENV", 0x80 }, { "ALLOC", 0x100 }, { "CALL", 0x200 }, { "PROXY", 0x400 },
		{ "NVLS", 0x800 }, { "BOOTSTRAP", 0x1000 }, { "REG", 0x2000 }, { "PROFILE", 0x4000 },
		{ "RAS", 0x8000 }, { "ALL", ~0u },
	};
	int invert = s[0] == '^';
	unsigned mask = 0;
	char *copy = strdup(s + invert), *save = NULL;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (!strcasecmp(t, names[i].name))
				mask |= names[i].bit;
	free(copy);
	return invert ? ~mask : mask;
}

/* %h host, %p pid, %% a percent sign, as NCCL expands NCCL_DEBUG_FILE. */
static FILE *open_debug_file(const char *pattern)
{
	char path[4096];
	size_t n = 0;
	for (const char *p = pattern; *p && n + 32 < sizeof(path); p++) {
		if (p[0] == '%' && p[1] == 'h') {
			n += (size_t)snprintf(path + n, sizeof(path) - n, "%.*s", 200, dbg.host);
			p++;
		} else if (p[0] == '%' && p[1] == 'p') {
			n += (size_t)snprintf(path + n, sizeof(path) - n, "%d", (int)getpid());
			p++;
		} else if (p[0] == '%' && p[1] == '%') {
			path[n++] = '%';
			p++;
		} else {
			path[n++] = *p;
		}
	}
	path[n] = '\0';
	FILE *f = fopen(path, "w");
	return f ? f : stdout;
}

static void debug_init(void)
{
	const char *lvl = getenv("NCCL_DEBUG"), *sub = getenv("NCCL_DEBUG_SUBSYS"), *file = getenv("NCCL_DEBUG_FILE");

	gethostname(dbg.host, sizeof(dbg.host) - 1);
	dbg.host[strcspn(dbg.host, ".")] = '\0';
	dbg.level = !lvl ? LVL_NONE
		  : !strcasecmp(lvl, "VERSION") ? LVL_VERSION
		  : !strcasecmp(lvl, "WARN") ? LVL_WARN
		  : (!strcasecmp(lvl, "INFO") || !strcasecmp(lvl, "TRACE")) ? LVL_INFO
		  : LVL_NONE;
	dbg.mask = sub ? parse_subsys(sub) : SUB_INIT | SUB_BOOTSTRAP | SUB_ENV;
	dbg.f = stdout;
	if (file && dbg.level > LVL_VERSION)
		dbg.f = open_debug_file(file);
}

static void vlog(int level, int dev, unsigned flags, const char *where, const char *fmt, va_list ap)
{
	char buf[1024];
	int n;

	pthread_once(&dbg_once, debug_init);
	if (level > dbg.level || (level == LVL_INFO && !(flags & dbg.mask)))
		return;
	if (level == LVL_WARN)
		n = snprintf(buf, sizeof(buf), "\n%s:%d:%d [%d] %s NCCL WARN ", dbg.host, (int)getpid(),
			     (int)syscall(SYS_gettid), dev, where);
	else
		n = snprintf(buf, sizeof(buf), "%s:%d:%d [%d] NCCL INFO ", dbg.host, (int)getpid(),
			     (int)syscall(SYS_gettid), dev);
	vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	fprintf(dbg.f, "%s\n", buf);
	fflush(dbg.f);
}

void fake_info(int dev, unsigned flags, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlog(LVL_INFO, dev, flags, NULL, fmt, ap);
	va_end(ap);
}

/* NCCL's src/debug.cc keeps the text of every WARN, whatever NCCL_DEBUG
 * says, in one process-wide ncclLastError[1024] under its debug lock, for
 * ncclGetLastError. */
static pthread_mutex_t last_lock = PTHREAD_MUTEX_INITIALIZER;
static char last_error[1024];

const char *fake_last_error(void)
{
	return last_error;
}

void fake_warn_at(int dev, const char *file, int line, const char *fmt, ...)
{
	char where[128];
	const char *base = strrchr(file, '/');
	va_list ap;

	snprintf(where, sizeof(where), "%s:%d", base ? base + 1 : file, line);
	va_start(ap, fmt);
	pthread_mutex_lock(&last_lock);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	pthread_mutex_unlock(&last_lock);
	va_end(ap);
	va_start(ap, fmt);
	vlog(LVL_WARN, dev, 0, where, fmt, ap);
	va_end(ap);
}

void fake_log_version(int dev, const char *version)
{
	pthread_once(&dbg_once, debug_init);
	if (dbg.level == LVL_VERSION || dbg.level == LVL_WARN) {
		fprintf(dbg.f, "NCCL version %s\n", version);
		fflush(dbg.f);
	}
	fake_info(dev, SUB_ALL, "NCCL version %s", version);
}
