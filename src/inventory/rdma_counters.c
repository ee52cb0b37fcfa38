/* What an RDMA port counter rising means (rdma_counter_meaning, declared in
 * inventory.h), for the port checks' hints and bench net's counter deltas:
 * PMA counters in ports/N/counters and mlx5 hw_counters in
 * ports/N/hw_counters (Linux drivers/infiniband/core/sysfs.c; meanings from the mlx5 counter
 * documentation and the InfiniBand PMA PortCounters attribute). */
#include "inventory.h"
#include "core/cleanup.h"

#include <string.h>

static const struct {
	const char *name, *meaning;
} counter_meanings[] = {
	{ "symbol_error", "symbol errors on the link: a bad cable, transceiver or port" },
	{ "port_rcv_errors", "packets received with errors: cable, transceiver or the switch port" },
	{ "port_xmit_discards", "packets dropped on send: the link was down or congested" },
	{ "link_downed", "the link went down: a flapping cable or port" },
	{ "link_error_recovery", "the link retrained after errors: a marginal cable or transceiver" },
	{ "local_link_integrity_errors", "link integrity errors: a marginal physical link" },
	{ "excessive_buffer_overrun_errors", "receive buffer overruns: flow control is not holding" },
	{ "port_rcv_remote_physical_errors", "packets that arrived marked bad: an error upstream" },
	{ "port_rcv_switch_relay_errors", "packets the switch could not relay: a routing problem" },
	{ "port_rcv_constraint_errors", "packets dropped by partition or raw constraints" },
	{ "port_xmit_constraint_errors", "packets not sent because of partition or raw constraints" },
	{ "out_of_sequence", "packets lost on the way: a lossy fabric (check PFC/ECN)" },
	{ "packet_seq_err", "sequence-error NAKs: packets were lost and retransmitted (check PFC)" },
	{ "implied_nak_seq_err", "read responses out of sequence: packets were lost" },
	{ "local_ack_timeout_err", "transport timeouts: the peer did not ack in time (a lossy path or a stalled peer)" },
	{ "rnr_nak_retry_err", "receiver-not-ready retries exhausted: the receiver ran out of buffers" },
	{ "duplicate_request", "requests that arrived twice: the sender retransmitted (lost acks)" },
	{ "out_of_buffer", "packets dropped for lack of posted receive buffers" },
	{ "roce_adp_retrans", "adaptive retransmissions: packets were lost" },
	{ "roce_slow_restart", "slow restarts after retransmission timeouts: packets were lost" },
	{ "np_cnp_sent", "congestion notifications sent: ECN-marked packets arrived (fabric congestion)" },
	{ "np_ecn_marked_roce_packets", "packets ECN-marked by switches: congestion on the path" },
	{ "rp_cnp_handled", "congestion notifications received: this sender was slowed down (DCQCN)" },
	{ "rp_cnp_ignored", "congestion notifications ignored" },
	{ "req_cqe_error", "requests completed in error" },
	{ "resp_cqe_error", "responses completed in error" },
	{ "req_remote_access_errors", "remote access errors on requests (rkey or permissions)" },
	{ "resp_remote_access_errors", "remote access errors on responses (rkey or permissions)" },
	{ "req_remote_invalid_request", "the peer rejected requests as invalid" },
	{ "resp_local_length_error", "receives too small for the message" },
};

const char *rdma_counter_meaning(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(counter_meanings); i++)
		if (!strcmp(counter_meanings[i].name, name))
			return counter_meanings[i].meaning;
	return NULL;
}

