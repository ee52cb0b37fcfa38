/* What every backend shares: the error message slot, and choosing a
 * backend by name. */
#include "backend.h"
#include "core/strbuf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void backend_set_error(struct backend *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(b->error, sizeof(b->error), fmt, ap);
	va_end(ap);
}
