/* errno names; see errname.h. The table lists every name Linux's
 * <asm-generic/errno-base.h> and <asm-generic/errno.h> define (the ones
 * glibc's strerrorname_np() knows), each once; aliases (EWOULDBLOCK,
 * EDEADLOCK, ENOTSUP) are read but never written. */
#include "errname.h"
#include "cleanup.h"

#include <errno.h>
#include <string.h>

#define E(x) { x, #x }
static const struct {
	int err;
	const char *name;
} names[] = {
	E(EPERM), E(ENOENT), E(ESRCH), E(EINTR), E(EIO), E(ENXIO), E(E2BIG), E(ENOEXEC), E(EBADF), E(ECHILD),
	E(EAGAIN), E(ENOMEM), E(EACCES), E(EFAULT), E(ENOTBLK), E(EBUSY), E(EEXIST), E(EXDEV), E(ENODEV),
	E(ENOTDIR), E(EISDIR), E(EINVAL), E(ENFILE), E(EMFILE), E(ENOTTY), E(ETXTBSY), E(EFBIG), E(ENOSPC),
	E(ESPIPE), E(EROFS), E(EMLINK), E(EPIPE), E(EDOM), E(ERANGE), E(EDEADLK), E(ENAMETOOLONG), E(ENOLCK),
	E(ENOSYS), E(ENOTEMPTY), E(ELOOP), E(ENOMSG), E(EIDRM), E(ECHRNG), E(EL2NSYNC), E(EL3HLT), E(EL3RST),
	E(ELNRNG), E(EUNATCH), E(ENOCSI), E(EL2HLT), E(EBADE), E(EBADR), E(EXFULL), E(ENOANO), E(EBADRQC),
	E(EBADSLT), E(EBFONT), E(ENOSTR), E(ENODATA), E(ETIME), E(ENOSR), E(ENONET), E(ENOPKG), E(EREMOTE),
	E(ENOLINK), E(EADV), E(ESRMNT), E(ECOMM), E(EPROTO), E(EMULTIHOP), E(EDOTDOT), E(EBADMSG), E(EOVERFLOW),
	E(ENOTUNIQ), E(EBADFD), E(EREMCHG), E(ELIBACC), E(ELIBBAD), E(ELIBSCN), E(ELIBMAX), E(ELIBEXEC),
	E(EILSEQ), E(ERESTART), E(ESTRPIPE), E(EUSERS), E(ENOTSOCK), E(EDESTADDRREQ), E(EMSGSIZE), E(EPROTOTYPE),
	E(ENOPROTOOPT), E(EPROTONOSUPPORT), E(ESOCKTNOSUPPORT), E(EOPNOTSUPP), E(EPFNOSUPPORT), E(EAFNOSUPPORT),
	E(EADDRINUSE), E(EADDRNOTAVAIL), E(ENETDOWN), E(ENETUNREACH), E(ENETRESET), E(ECONNABORTED),
	E(ECONNRESET), E(ENOBUFS), E(EISCONN), E(ENOTCONN), E(ESHUTDOWN), E(ETOOMANYREFS), E(ETIMEDOUT),
	E(ECONNREFUSED), E(EHOSTDOWN), E(EHOSTUNREACH), E(EALREADY), E(EINPROGRESS), E(ESTALE), E(EUCLEAN),
	E(ENOTNAM), E(ENAVAIL), E(EISNAM), E(EREMOTEIO), E(EDQUOT), E(ENOMEDIUM), E(EMEDIUMTYPE), E(ECANCELED),
	E(ENOKEY), E(EKEYEXPIRED), E(EKEYREVOKED), E(EKEYREJECTED), E(EOWNERDEAD), E(ENOTRECOVERABLE),
	E(ERFKILL), E(EHWPOISON),
	/* aliases: read only (the first entry of a value is its name) */
	E(EWOULDBLOCK), E(EDEADLOCK), E(ENOTSUP),
};
#undef E

#define ERRNO_MAX 4095

const char *errno_name(int err)
{
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (names[i].err == err)
			return names[i].name;
	return NULL;
}

int errno_parse(const char *s, size_t n)
{
	if (n == 0 || n > 16)
		return 0;
	if (s[0] >= '1' && s[0] <= '9') {
		int v = 0;
		for (size_t i = 0; i < n; i++) {
			if (s[i] < '0' || s[i] > '9' || v > ERRNO_MAX)
				return 0;
			v = v * 10 + (s[i] - '0');
		}
		return v <= ERRNO_MAX ? v : 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (strlen(names[i].name) == n && !memcmp(names[i].name, s, n))
			return names[i].err;
	return 0;
}
