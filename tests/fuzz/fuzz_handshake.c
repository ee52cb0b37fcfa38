/* libFuzzer target for `bench net`'s handshake, as the server meets it:
 * the first frame read at the door (bench/net/gate.c's header check),
 * then HELLO decoded and its parameters checked, and the client's side of
 * the same exchange: ACCEPT, a REFUSE's text, START, DATA_HELLO, the
 * job token's CHALLENGE, all through net_msg_expect over a socket. */
#define _GNU_SOURCE
#include "bench/net/engine.h"
#include "bench/net/proto.h"
#include "core/clock.h"
#include "core/strbuf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned sink;

static void decode_as_server(const uint8_t *p, size_t len)
{
	struct net_hello h;
	struct net_start st;
	struct net_data_hello dh;
	char *err = NULL;
	if (net_hello_decode(p, len, &h, &err) == 0) {
		char *why = net_params_check(&h.p);
		sink += h.flags + (why ? 1u : 0u);
		free(why);
	}
	free(err);
	err = NULL;
	sink += net_start_decode(p, len, &st, &err) == 0 ? (unsigned)st.size : 0;
	free(err);
	err = NULL;
	sink += net_data_hello_decode(p, len, &dh, &err) == 0 ? dh.stream : 0;
	free(err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t type;
	size_t len;
	if (size >= NET_FRAME_HDR && net_frame_hdr_decode(data, &type, &len) == 0 && len <= size - NET_FRAME_HDR)
		decode_as_server(data + NET_FRAME_HDR, len);
	decode_as_server(data, size);

	int sv[2];
	if (size > 1 << 16 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return 0;
	if (write(sv[0], data, size) == (ssize_t)size) {
		shutdown(sv[0], SHUT_WR);
		static const uint32_t wants[] = { NETMSG_ACCEPT, NETMSG_CHALLENGE, NETMSG_READY, NETMSG_RESULT };
		for (size_t i = 0; i < sizeof(wants) / sizeof(wants[0]); i++) {
			uint8_t *pl = NULL;
			size_t n = 0;
			char *err = NULL;
			if (net_msg_expect(sv[1], wants[i], &pl, &n, clock_now() + 0.2, &err) == 0) {
				struct net_accept a;
				char *e2 = NULL;
				sink += net_accept_decode(pl, n, &a, &e2) == 0 ? (unsigned)strlen(a.host) : 0;
				free(e2);
			}
			sink += err ? (unsigned)strlen(err) : 0;
			free(err);
			free(pl);
		}
	}
	close(sv[0]);
	close(sv[1]);
	return 0;
}
