/* libFuzzer target for the job's control-plane frames (src/job/wire.c):
 * the bytes a peer sends, read as process 0 reads a HELLO and as every
 * process reads a frame (header, then payload) through a socket, then
 * decoded as the receiver decodes HELLO, the roster, DATA headers and the
 * prefixed ABORT/FAIL/PHASE frames, and shown as peer text is shown. */
#define _GNU_SOURCE
#include "job/job_int.h"
#include "core/clock.h"
#include "core/parse.h"
#include "core/wire.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned sink;

static void decode_payload(enum msg type, const uint8_t *p, size_t len)
{
	struct data_hdr dh;
	struct job_member m;
	struct wire_r r = WIRE_R(p, len);
	switch (type) {
	case MSG_WELCOME:
		for (size_t off = 0; off + JOB_MEMBER_LEN <= len; off += JOB_MEMBER_LEN) {
			job_member_decode(p + off, &m);
			sink += (unsigned)strlen(str_printable(m.host, false)) + (unsigned)m.pid;
		}
		break;
	case MSG_DATA:
		sink += job_data_hdr_decode(p, len, &dh) ? (unsigned)dh.seq : 0;
		break;
	case MSG_ABORT:
	case MSG_FAIL:
	case MSG_PHASE: {
		sink += wire_get_u32(&r);
		wire_skip(&r, 4);
		char *text = strndup((const char *)p + r.off, wire_r_left(&r));
		if (text)
			sink += (unsigned)strlen(str_printable(text, true));
		free(text);
		break;
	}
	default:
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hello h;
	uint8_t raw[JOB_HELLO_LEN] = { 0 };
	memcpy(raw, data, size < sizeof(raw) ? size : sizeof(raw));
	job_hello_decode(raw, &h);
	sink += h.proc + h.flags + (unsigned)strlen(str_printable(h.host, false));

	/* the same bytes as a stream of frames, through a socket */
	int sv[2];
	if (size > 1 << 16 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return 0;
	if (write(sv[0], data, size) != (ssize_t)size) {
		close(sv[0]);
		close(sv[1]);
		return 0;
	}
	shutdown(sv[0], SHUT_WR);
	for (int i = 0; i < 16; i++) {
		enum msg type;
		char *payload = NULL;
		size_t len = 0;
		if (job_read_frame(sv[1], &type, &payload, &len, clock_now() + 0.2) < 0)
			break;
		decode_payload(type, (const uint8_t *)payload, len);
		free(payload);
	}
	close(sv[0]);
	close(sv[1]);
	return 0;
}
