/* Unit tests for `gpuready nccl --explain`'s reader (bench/nccl_explain,
 * bench/nccl_sig): one test per signature, built from lines in NCCL's own
 * formats (the format strings of NVIDIA/nccl v2.12 .. v2.29, quoted in
 * src/bench/nccl_sig.c), the prefixes (bare, host:pid:tid, a timestamp,
 * Slurm, torchrun, Open MPI), interleaved processes, stopped-after-init,
 * version mismatch, unmatched warnings, the caps. */
#include "testutil.h"
#include "bench/nccl_explain.h"
#include "bench/nccl_sig.h"
#include "core/fileio.h"
#include "core/strbuf.h"
#include "core/strv.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void explain(const char *text, struct nccl_explain *x)
{
	nccl_explain_init(x);
	nccl_explain_feed(x, text, strlen(text));
	nccl_explain_finish(x);
}

/* The failure (or harmless) IDs, space separated. */
static char *ids(const struct nccl_explain *x, bool harmless)
{
	struct strv v = STRV_INIT;
	struct strbuf sb = STRBUF_INIT;
	nccl_explain_ids(x, harmless, &v);
	for (size_t i = 0; i < v.n; i++)
		strbuf_addf(&sb, "%s%s", i ? " " : "", v.v[i]);
	strv_free(&v);
	return strbuf_detach(&sb);
}

/* text must give exactly the failure IDs want and the harmless IDs want_h. */
static void expect_ids(const char *text, const char *want, const char *want_h)
{
	struct nccl_explain x;
	explain(text, &x);
	char *got = ids(&x, false), *got_h = ids(&x, true);
	assert_string_equal(got, want);
	assert_string_equal(got_h, want_h);
	free(got);
	free(got_h);
	nccl_explain_free(&x);
}

#define P "node-a:4242:4300 [0] "
#define W P "transport/net_ib.cc:1295 NCCL WARN "
#define I P "NCCL INFO "

/* ---- completions, each version's form ---- */

static void test_wc_versions(void **state)
{
	(void)state;
	/* 2.12 net_ib.cc */
	expect_ids(W "NET/IB : Got completion from peer 10.0.0.2<43210> with error 12, opcode 0, len 0, vendor err 129\n",
		   "ib-wc-12", "");
	/* 2.18 net_ib.cc: (%s) and the GIDs */
	expect_ids(W "NET/IB : Got completion from peer 10.0.0.2<43210> with error 5, opcode 128, len 0, vendor err 249 "
		     "(Recv) localGid ::ffff:10.0.0.1 remoteGids::ffff:10.0.0.2\n",
		   "ib-wc-5", "");
	/* 2.29 net_ib/p2p.cc: the status's name and number */
	expect_ids(W "NET/IB: Got completion from peer 10.0.0.2<43210> with status=remote access error(10) "
		     "opcode=RDMA_WRITE(0) vendor_err=136 (Send) localGid fe80::1 remoteGids fe80::2 hca mlx5_0\n",
		   "ib-wc-10", "");
	/* 2.29 net_ib/gin.cc */
	expect_ids(W "NET/IB/GIN: Got completion from peer 10.0.0.2<43210> with status=11 opcode=0 len=0 vendor err 0 "
		     "(Send) hca mlx5_1\n",
		   "ib-wc-11", "");
	/* a status NCCL could not print */
	expect_ids(W "NET/IB : Got completion from peer 10.0.0.2<43210> with error x\n", "ib-wc", "");
	assert_string_equal(nccl_wc_status_name(12), "IBV_WC_RETRY_EXC_ERR");
	assert_string_equal(nccl_wc_status_str(12), "transport retry counter exceeded");
	assert_string_equal(nccl_wc_status_str(5), "Work Request Flushed Error");
	assert_string_equal(nccl_wc_status_name(13), "IBV_WC_RNR_RETRY_EXC_ERR");
	assert_null(nccl_wc_status_name(24));
	assert_null(nccl_wc_status_name(-1));
}

/* ---- the verbs calls ---- */

static void test_verbs_calls(void **state)
{
	(void)state;
	expect_ids(W "Call to ibv_reg_mr failed with error Cannot allocate memory\n", "ib-reg-mr", "");
	expect_ids(W "Call to ibv_reg_mr_iova2 failed with error Bad address\n", "ib-reg-mr", "");
	expect_ids(W "Call to ibv_reg_dmabuf_mr failed with error Operation not supported\n", "ib-reg-dmabuf-mr", "");
	/* "timed out" in a QP transition is the QP's, not bootstrap's */
	expect_ids(W "Call to ibv_modify_qp failed with error Connection timed out errno 110\n", "ib-modify-qp", "");
	/* INFO-level probes of the same calls are not failures */
	expect_ids(I "Call to ibv_reg_dmabuf_mr failed with error Protocol not supported errno 93\n", "", "");
}

static void test_fallbacks(void **state)
{
	(void)state;
	expect_ids(I "NET/IB : No device found.\n", "ib-no-device", "");
	/* no ID in docs/failure-modes.md section H: a WARN up to 2.11 shown verbatim, an INFO since */
	expect_ids("ai:480850:480850 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]\n", "", "");
	expect_ids(I "NET/IB : GPU Direct RDMA Disabled for HCA 1 'mlx5_1'\n", "ib-gdr-disabled", "");
	/* graph/paths.cc: the GPU-NIC distance (2.12-2.23 and 2.29 forms), printed for every pair too far
	 * apart on healthy multi-NIC nodes: no signature */
	expect_ids(I "GPU Direct RDMA Disabled for GPU 1b000 / HCA 0 (distance 5 > 4)\n", "", "");
	expect_ids(I "GPU Direct RDMA Disabled for GPU/0-1b000 (rank 0) - NET/0-0 (distance 5 > 4)\n", "", "");
	struct nccl_explain y;
	explain(I "GPU Direct RDMA Disabled for GPU 1b000 / HCA 0 (distance 5 > 4)\n", &y);
	assert_int_equal(nccl_explain_gdr(&y), 0);
	nccl_explain_free(&y);
	explain(I "GPU Direct RDMA Disabled for GPU 1b000 / HCA 0 (distance 5 > 4)\n" P
		  "NCCL INFO GPU Direct RDMA Enabled for GPU 3d000 / HCA 0 (distance 4 <= 4), read 1\n",
		&y);
	assert_int_equal(nccl_explain_gdr(&y), 1);
	nccl_explain_free(&y);
	/* a socket "HCA" is not one, but its Disabled line counts for the gdr label (section H) */
	explain(I "NET/Socket : GPU Direct RDMA Disabled for HCA 0 'lo'\n", &y);
	assert_int_equal(nccl_explain_gdr(&y), 0);
	nccl_explain_free(&y);
	expect_ids(I "NET/Socket : GPU Direct RDMA Disabled for HCA 0 'eth0'\n", "", "");
	struct nccl_explain x;
	explain(I "NET/IB : No device found.\n", &x);
	assert_false(nccl_explain_failed(&x)); /* a fallback fails only under --require */
	nccl_explain_free(&x);
}

static void test_sockets_and_shm(void **state)
{
	(void)state;
	/* 2.19 misc/socket.cc */
	expect_ids(W "socketStartConnect: Connect to 10.0.0.2<41377> failed : Connection refused\n", "bootstrap-refused", "");
	/* 2.27 */
	expect_ids(W "socketPollConnect: connect to 10.0.0.2<41377> returned Connection timed out, exceeded error retry "
		     "count after 35 attempts\n",
		   "bootstrap-timeout", "");
	expect_ids(W "socketPollConnect: exceeded timeouts (3)\n", "bootstrap-timeout", "");
	expect_ids(W "Call to posix_fallocate failed : No space left on device\n", "shm-failed", "");
	expect_ids("[2026-04-22 21:34:20] a-very-long-kubernetes-pod-name-of-a-workflow-runner-g4sfw-workflow:202016:202235 "
		   "[0] misc/shmutils.cc:88 NCCL WARN Error: failed to extend /dev/shm/nccl-WU88OE to 9637892 bytes, error: No "
		   "space left on device (28)\n",
		   "shm-failed", "");
	/* a peer's socket closed */
	expect_ids(W "socketProgress: Connection closed by remote peer node-b<43210>\n", "socket-closed", "");
	expect_ids(W "Net : Connection closed by remote peer 10.0.0.2<46077>\n", "socket-closed", "");
	expect_ids(W "socketProgressOpt: Call to recv from 10.0.0.2<51828> failed : Connection reset by peer\n",
		   "socket-io-failed", "");
	/* a connect failing with another errno (2.12, 2.16, 2.24, 2.27 forms) */
	expect_ids(W "Net : Connect to 10.0.0.2<4321> failed : Software caused connection abort\n", "socket-connect-failed", "");
	expect_ids(W "socketStartConnect: Connect to [fe80::1%ib0]:4321 failed : Network is unreachable\n",
		   "socket-connect-failed", "");
	expect_ids(W "socketConnectCheck: connect to 10.0.0.2<4321> failed : No route to host\n", "socket-connect-failed", "");
	expect_ids(W "socketPollConnect to 10.0.0.2<4321> failed with error No route to host\n", "socket-connect-failed", "");
	expect_ids(W "socketPollConnect poll() returned 0, no POLLOUT events\n", "bootstrap-timeout", "");
	expect_ids(W "socketStartConnect: exceeded retries (34)\n", "bootstrap-refused", "");
	/* the proxy's failure after the real one */
	expect_ids(W "[Proxy Service 1] Failed to execute operation Connect from rank 1, retcode 3\n", "proxy-failed", "");
	expect_ids(W "[Service thread] Error encountered progressing operation=Connect, res=3, closing connection\n",
		   "proxy-failed", "");
	/* the NIC's events, the AWS plugin */
	/* before 2.23 every event as "Got async event : %s"; from 2.23 the fatal ones as "async fatal event",
	 * the others "Got async error event" (2.23-2.28) and "Got non-fatal async event" (2.28.7+) */
	expect_ids(W "NET/IB : mlx5_0:1 Got async event : local access violation work queue error\n", "ib-async-event", "");
	expect_ids(W "NET/IB : Got async event : GID table change\n", "", "ib-async-nonfatal");
	expect_ids(W "NET/IB : mlx5_0:1 async fatal event on QP (0x55d0c0a0): local work queue catastrophic error\n",
		   "ib-async-event", "");
	expect_ids(W "NET/IB : mlx5_0:1 async fatal event: local catastrophic error\n", "ib-async-event", "");
	expect_ids(W "NET/IB : mlx5_0:1 Got async error event: client reregistration\n", "", "ib-async-nonfatal");
	expect_ids(W "NET/IB : mlx5_0:1 Got non-fatal async event: port active(9)\n", "", "ib-async-nonfatal");
	/* 2.24+: a connect that kept failing until the retries ran out */
	expect_ids(W "socketPollConnect: connect to 10.0.0.2<43151> returned No route to host, exceeded error retry "
		     "count after 35 attempts\n",
		   "socket-connect-failed", "");
	/* PyTorch's watchdog: the usual face of a hang */
	expect_ids("[rank3]:[E ProcessGroupNCCL.cpp:563] [Rank 3] Watchdog caught collective operation timeout: "
		   "WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600090 "
		   "milliseconds before timing out.\n",
		   "torch-watchdog-timeout", "");
	expect_ids("node-a:1:1 [0] int nccl_net_ofi_create_plugin(nccl_net_ofi_plugin_t**):353 NCCL WARN NET/OFI "
		   "aws-ofi-nccl initialization failed\n",
		   "net-plugin-failed", "");
	expect_ids(W "NET/OFI Request 0x7f14cc5b60c0 completed with error. RC: 113. Error: 2 (UNDELIVERABLE). Completed "
		     "length: 0\n",
		   "ofi-completion-error", "");
	/* 2.19 misc/shmutils.cc, 2.29 */
	expect_ids(W "Error while creating shared memory segment /dev/shm/nccl-8fG7xA (size 9637888)\n", "shm-failed", "");
	expect_ids(W "Error: failed to create shared memory file /dev/shm/nccl-x, error No space left on device (28)\n",
		   "shm-failed", "");
}

static void test_errors(void **state)
{
	(void)state;
	expect_ids(W "Cuda failure 'out of memory'\n", "cuda-error", "");
	expect_ids(W "Cuda failure 2 'out of memory'\n", "cuda-error", "");
	/* the framework's exception, no NCCL prefix */
	expect_ids("RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1275, unhandled "
		   "system error, NCCL version 2.14.3\n",
		   "system-error", "");
	expect_ids("torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled cuda error "
		   "(run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3\n",
		   "cuda-error", "");
	expect_ids("ncclInternalError: Internal check failed.\nRuntimeError: internal error - please report this issue "
		   "to the NCCL developers\n",
		   "internal-error", "");
	expect_ids("RuntimeError: NCCL error: invalid usage (run with NCCL_DEBUG=WARN for details)\n", "invalid-usage", "");
	expect_ids("RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1191, internal error, NCCL version 2.14.3\n",
		   "internal-error", "");
	expect_ids("NCCL error: remote process exited or there was a network error, NCCL version 2.21.5\n", "remote-error",
		   "");
	/* PyTorch quotes NCCL's last WARN after "Last error:": read as a WARN, not counted as unmatched */
	expect_ids("[rank3]: torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:3763, remote process "
		   "exited or there was a network error, NCCL version 2.28.8\n[rank3]: Last error:\n[rank3]: NET/OFI Request "
		   "0x7f14 completed with error. RC: 113. Error: 2 (UNDELIVERABLE). Completed length: 0\n",
		   "ofi-completion-error remote-error", "");
	expect_ids("Last error:\nsocketProgressOpt: Call to recv from 10.0.0.1<33759> failed : Connection reset by peer\n",
		   "socket-io-failed", "");
	/* the same text without "Last error:" before it is no WARN */
	expect_ids("socketProgressOpt: Call to recv from 10.0.0.1<33759> failed : Connection reset by peer\n", "", "");
	/* the version in the exception counts */
	struct nccl_explain x;
	explain("RuntimeError: NCCL error in: x.cpp:1, unhandled system error, NCCL version 2.14.3\n", &x);
	assert_int_equal(x.versions.n, 1);
	assert_string_equal(x.versions.v[0], "2.14.3");
	nccl_explain_free(&x);
}

static void test_harmless(void **state)
{
	(void)state;
	expect_ids(I "NET/Plugin : No plugin found (libnccl-net.so), using internal implementation\n", "", "plugin-absent");
	expect_ids(I "NET/Plugin : dlerror=libnccl-net.so: cannot open shared object file: No such file or directory No "
		     "plugin found (libnccl-net.so), using internal implementation\n",
		   "", "plugin-absent");
	expect_ids(I "NET/Plugin: Could not find: libnccl-net.so. Using internal net plugin.\n", "", "plugin-absent");
	expect_ids(I "TUNER/Plugin: Could not find: libnccl-tuner.so libnccl-net.so. Using internal tuner plugin.\n", "",
		   "plugin-absent");
	expect_ids(I "NET/Plugin: Failed to find ncclNetPlugin_v8 symbol.\n", "", "plugin-version-probe");
	expect_ids(I "NET/Plugin: Using internal network plugin.\n", "", "plugin-absent");
	expect_ids(I "Could not get speed from /sys/class/net/lo/speed. Defaulting to 10 Gbps.\n", "", "topo-harmless");
	expect_ids(I "Topology detection: network path /sys/devices/virtual/net/lo is not a PCI device (NULL). Attaching to "
		     "first CPU\n",
		   "", "topo-harmless");
	/* these can mean a device missing from a container's /sys: shown, not called harmless */
	expect_ids(W "Could not find real path of /sys/class/net/ib0/device\n", "", "");
	struct nccl_explain x;
	explain(I "Could not get speed from /sys/class/net/lo/speed. Defaulting to 10 Gbps.\n", &x);
	assert_false(nccl_explain_failed(&x));
	assert_int_equal(x.unmatched_total, 0);
	nccl_explain_free(&x);
}

/* Every row of the table has what the output needs. */
static void test_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < n_nccl_sigs; i++) {
		const struct nccl_sig *s = &nccl_sigs[i];
		assert_non_null(s->meaning);
		assert_non_null(s->causes);
		assert_non_null(s->source);
		assert_non_null(s->next);
		if (s->kind != NCCL_SIG_HARMLESS)
			assert_non_null(strchr(s->next, '`'));
		assert_true(nccl_sig_find(s->id) != NULL);
	}
	assert_non_null(nccl_sig_find("ib-wc-12"));
	assert_non_null(nccl_sig_find("version-mismatch"));
	assert_null(nccl_sig_find("no-such"));
}

/* ---- prefixes ---- */

static void test_prefixes(void **state)
{
	(void)state;
	struct nccl_explain x;
	explain("node-a:11:11 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.1<0>\n"
		"[2025-03-01 10:00:00] node-a:12:12 [1] NCCL INFO NET/IB : Using [0]mlx5_1:1/IB ; OOB ib0:10.0.0.1<0>\n"
		"0: node-b:21:21 [0] NCCL INFO NET/IB : Using [0]mlx5_2:1/IB ; OOB ib0:10.0.0.2<0>\n"
		"[rank3]:node-b:22:22 [1] NCCL INFO NET/IB : Using [0]mlx5_3:1/IB ; OOB ib0:10.0.0.2<0>\n"
		"[default4]:node-c:31:31 [0] NCCL INFO Using network IB\n"
		"[1,5]<stdout>:node-c:32:32 [1] NCCL INFO Using network IB\n"
		"[rank3]: Traceback (most recent call last):\n"
		"srun: error: node-b: task 3: Exited with exit code 1\n",
		&x);
	assert_int_equal(x.n_procs, 6);
	const char *keys[] = { "node-a:11", "node-a:12", "node-b:21", "node-b:22", "node-c:31", "node-c:32" };
	const char *tags[] = { NULL, NULL, "0", "rank3", "default4", "1,5" };
	for (size_t i = 0; i < 6; i++) {
		assert_string_equal(x.procs[i].key, keys[i]);
		if (tags[i])
			assert_string_equal(x.procs[i].tag, tags[i]);
		else
			assert_null(x.procs[i].tag);
	}
	assert_string_equal(x.procs[1].log.hcas[0].name, "mlx5_1");
	assert_int_equal(x.procs[3].lines, 2); /* its traceback joined it by the tag */
	assert_int_equal(x.procs[2].lines, 1); /* srun's own message belongs to no process */
	nccl_explain_free(&x);

	/* bare lines: one anonymous process */
	explain("NCCL INFO Using network Socket\nNCCL version 2.12.12+cuda11.7\n", &x);
	assert_int_equal(x.n_procs, 1);
	assert_string_equal(x.procs[0].key, "");
	assert_string_equal(x.all.net_name, "Socket");
	assert_string_equal(x.versions.v[0], "2.12.12");
	nccl_explain_free(&x);
}

/* Two processes' lines interleaved, and a bare "NCCL version" of rank 0. */
static void test_interleaved(void **state)
{
	(void)state;
	struct nccl_explain x;
	explain("node-a:100:100 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"
		"NCCL version 2.21.5+cuda12.4\n"
		"node-b:200:200 [0] NCCL INFO Bootstrap: Using [0]eth0:10.0.0.2<0>\n"
		"node-b:200:200 [0] NCCL INFO NCCL_IB_HCA set by environment to mlx5_0\n"
		"node-a:100:100 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE ; OOB eth0:10.0.0.1<0>\n"
		"node-b:200:200 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE ; OOB eth0:10.0.0.2<0>\n"
		"node-a:100:100 [0] NCCL INFO NET/IB : GPU Direct RDMA Enabled for HCA 0 'mlx5_0'\n"
		"node-b:200:200 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'\n"
		"node-b:200:200 [0] NCCL INFO NCCL_IB_TIMEOUT set by environment to 22.\n"
		"node-a:100:100 [0] NCCL INFO 16 coll channels, 0 collnet channels, 16 nvls channels, 32 p2p channels, 32 "
		"p2p channels per peer\n"
		"node-a:100:100 [0] NCCL INFO Channel 00/02 :    0   1\n"
		"node-a:100:100 [0] NCCL INFO Channel 01/02 :    0   1\n"
		"node-a:100:100 [0] NCCL INFO Trees [0] 1/-1/-1->0->-1 [1] -1/-1/-1->0->1\n"
		"node-a:100:100 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0/GDRDMA\n"
		"node-a:100:100 [0] NCCL INFO NET/Plugin: Loaded net plugin IBext_v8 (v8)\n",
		&x);
	assert_int_equal(x.n_procs, 2);
	const struct nccl_proc *a = &x.procs[0], *b = &x.procs[1];
	assert_string_equal(a->log.version, "2.21.5+cuda12.4");
	assert_null(b->log.version);
	assert_string_equal(a->bootstrap_if, "eth0:10.0.0.1");
	assert_string_equal(b->bootstrap_if, "eth0:10.0.0.2");
	assert_int_equal(a->log.n_hcas, 2);
	assert_int_equal(b->log.n_hcas, 1);
	assert_int_equal(b->env.n, 2);
	assert_string_equal(b->env.v[0], "NCCL_IB_HCA=mlx5_0");
	assert_string_equal(b->env.v[1], "NCCL_IB_TIMEOUT=22");
	assert_int_equal(a->coll_channels, 16);
	assert_int_equal(a->nvls_channels, 16);
	assert_int_equal(a->p2p_channels, 32);
	assert_int_equal(a->rings, 2);
	assert_int_equal(a->trees, 2);
	assert_string_equal(a->net_plugin, "IBext_v8 (v8)");
	assert_int_equal(b->rings, -1);
	/* labels: any Enabled makes gdr true */
	assert_int_equal(nccl_explain_gdr(&x), 1);
	struct strv h = STRV_INIT;
	nccl_explain_hcas(&x, &h);
	assert_int_equal(h.n, 2);
	assert_string_equal(h.v[0], "mlx5_0:1");
	assert_string_equal(nccl_explain_link(&x), "RoCE");
	strv_free(&h);
	char *ha = ids(&x, false);
	assert_string_equal(ha, "ib-gdr-disabled");
	free(ha);
	assert_string_equal(x.sigs[0].procs.v[0], "node-b:200");
	nccl_explain_free(&x);
}

/* torchrun's [default0] is local rank 0 on every node: a tagged line
 * without NCCL's prefix belongs to the process that carried the tag last. */
static void test_tag_last_carrier(void **state)
{
	(void)state;
	struct nccl_explain x;
	explain("[default0]:nodeA:100:100 [0] NCCL INFO comm 0x1 rank 0 nranks 2 - Init COMPLETE\n"
		"[default0]:nodeB:200:200 [0] NCCL INFO comm 0x2 rank 1 nranks 2 - Init COMPLETE\n"
		"[default0]:RuntimeError: NCCL error in: x.cpp:1, unhandled system error, NCCL version 2.19.3\n",
		&x);
	assert_true(x.n_sigs >= 1);
	assert_string_equal(x.sigs[0].id, "system-error");
	assert_string_equal(x.sigs[0].procs.v[0], "nodeB:200");
	nccl_explain_free(&x);
}

/* ---- the whole log ---- */

static char *init_lines(const char *who, int n)
{
	struct strbuf sb = STRBUF_INIT;
	for (int i = 0; i < n; i++)
		strbuf_addf(&sb, "%s NCCL INFO Channel %02d/0 : 0[0] -> 1[0] via P2P/CUMEM\n", who, i);
	return strbuf_detach(&sb);
}

/* node's collectives from..to-1 (opCount in hexadecimal, as NCCL prints it) */
static void colls(struct strbuf *sb, const char *who, int from, int to)
{
	for (int i = from; i < to; i++)
		strbuf_addf(sb, "%s NCCL INFO AllReduce: opCount %x sendbuff 0x1 recvbuff 0x1 count 1 datatype 7 op 0 "
				"root 0 comm 0x2 [nranks=2] stream 0x3\n", who, i);
}

/* Lines of two processes that arrive in blocks (stdout buffered through a
 * pipe): A 0-9, B 0-9, A 10-19, B 10-19 is no stop; A ending at 9 while B
 * goes to 19 is. 2.23+ prints Init timings after Init COMPLETE: a job that
 * stops there still stops there. */
static void test_stopped_blocks(void **state)
{
	(void)state;
	struct strbuf sb = STRBUF_INIT;
	char *a = init_lines("node-a:1:1 [0]", 6), *b = init_lines("node-b:2:2 [0]", 6);
	strbuf_adds(&sb, a);
	strbuf_adds(&sb, b);
	strbuf_adds(&sb, "node-a:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 2 - Init COMPLETE\n");
	strbuf_adds(&sb, "node-b:2:2 [0] NCCL INFO comm 0x2 rank 1 nranks 2 - Init COMPLETE\n");
	size_t init_len = sb.len;
	colls(&sb, "node-a:1:1 [0]", 0, 10);
	colls(&sb, "node-b:2:2 [0]", 0, 10);
	colls(&sb, "node-a:1:1 [0]", 10, 20);
	colls(&sb, "node-b:2:2 [0]", 10, 20);
	struct nccl_explain x;
	explain(sb.buf, &x);
	assert_null(x.stopped_first);
	nccl_explain_free(&x);
	strbuf_setlen(&sb, init_len);
	colls(&sb, "node-a:1:1 [0]", 0, 10);
	colls(&sb, "node-b:2:2 [0]", 0, 20);
	explain(sb.buf, &x);
	assert_string_equal(x.stopped_first, "node-a:1");
	assert_true(nccl_explain_failed(&x));
	nccl_explain_free(&x);
	/* 2.23+: Init timings after Init COMPLETE, then nothing from anyone */
	strbuf_setlen(&sb, init_len);
	strbuf_adds(&sb, "node-a:1:1 [0] NCCL INFO Init timings - ncclCommInitRankConfig: rank 0 nranks 2 total 0.41 "
			 "(kernels 0.12, alloc 0.01, bootstrap 0.02, allgathers 0.01, topo 0.15, graphs 0.01, connections "
			 "0.08, rest 0.01)\n");
	strbuf_adds(&sb, "node-b:2:2 [0] NCCL INFO Init timings - ncclCommInitRankConfig: rank 1 nranks 2 total 0.40 "
			 "(kernels 0.12, alloc 0.01, bootstrap 0.02, allgathers 0.01, topo 0.15, graphs 0.01, connections "
			 "0.08, rest 0.01)\n");
	explain(sb.buf, &x);
	assert_non_null(x.stopped_first);
	assert_true(x.stopped_weak);
	nccl_explain_free(&x);
	strbuf_release(&sb);
	free(a);
	free(b);
}

/* A directory of per-rank files: node-b's rank stopped at opCount 4
 * while node-a's went on to 19; files that end alike are no stop. */
static void test_stopped_files(void **state)
{
	(void)state;
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
	strbuf_adds(&a, "node-a:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 2 - Init COMPLETE\n");
	strbuf_adds(&b, "node-b:2:2 [0] NCCL INFO comm 0x2 rank 1 nranks 2 - Init COMPLETE\n");
	colls(&a, "node-a:1:1 [0]", 0, 20);
	colls(&b, "node-b:2:2 [0]", 0, 5);
	struct nccl_explain x;
	nccl_explain_init(&x);
	nccl_explain_feed(&x, a.buf, a.len);
	nccl_explain_feed(&x, b.buf, b.len);
	nccl_explain_finish(&x);
	assert_string_equal(x.stopped_first, "node-b:2");
	assert_true(nccl_explain_failed(&x));
	nccl_explain_free(&x);
	colls(&b, "node-b:2:2 [0]", 5, 20);
	nccl_explain_init(&x);
	nccl_explain_feed(&x, a.buf, a.len);
	nccl_explain_feed(&x, b.buf, b.len);
	nccl_explain_finish(&x);
	assert_null(x.stopped_first);
	nccl_explain_free(&x);
	strbuf_release(&a);
	strbuf_release(&b);
}

static void test_stopped_after_init(void **state)
{
	(void)state;
	struct strbuf sb = STRBUF_INIT;
	char *a = init_lines("node-a:1:1 [0]", 6), *b = init_lines("node-b:2:2 [0]", 6);
	strbuf_adds(&sb, a);
	strbuf_adds(&sb, b);
	strbuf_adds(&sb, "node-a:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1000 commId 0x5 - "
			 "Init COMPLETE\n");
	strbuf_adds(&sb, "node-b:2:2 [0] NCCL INFO comm 0x2 rank 1 nranks 2 cudaDev 0 nvmlDev 0 busId 1000 commId 0x5 - "
			 "Init COMPLETE\n");
	for (int i = 0; i < 25; i++)
		strbuf_addf(&sb, "node-b:2:2 [0] NCCL INFO AllReduce: opCount %x sendbuff 0x1 recvbuff 0x1 count 1 "
				 "datatype 7 op 0 root 0 comm 0x2 [nranks=2] stream 0x3\n", i);
	struct nccl_explain x;
	explain(sb.buf, &x);
	char *got = ids(&x, false);
	assert_string_equal(got, "stopped-after-init");
	assert_string_equal(x.stopped_first, "node-a:1");
	free(got);
	struct strbuf txt = STRBUF_INIT;
	nccl_explain_text(&x, NULL, &txt);
	assert_non_null(strstr(txt.buf, "stopped first: node-a:1\n    its last line (13): node-a:1:1 [0] NCCL INFO comm "
				       "0x1 rank 0"));
	strbuf_release(&txt);
	nccl_explain_free(&x);

	/* the same with node-a's communicator destroyed: it ended */
	strbuf_adds(&sb, "");
	struct strbuf ended = STRBUF_INIT;
	strbuf_adds(&ended, sb.buf);
	char *cut = strstr(ended.buf, "node-b:2:2 [0] NCCL INFO AllReduce");
	strbuf_setlen(&ended, (size_t)(cut - ended.buf));
	strbuf_adds(&ended, "node-a:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev 0 busId 1000 - Destroy COMPLETE\n");
	strbuf_adds(&ended, cut);
	explain(ended.buf, &x);
	assert_null(x.stopped_first);
	nccl_explain_free(&x);

	/* files one after the other (not interleaved): no verdict */
	strbuf_reset(&ended);
	strbuf_adds(&ended, a);
	strbuf_adds(&ended, "node-a:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 2 - Init COMPLETE\n");
	strbuf_adds(&ended, b);
	for (int i = 0; i < 25; i++)
		strbuf_adds(&ended, "node-b:2:2 [0] NCCL INFO AllReduce: opCount 1 sendbuff 0x1\n");
	explain(ended.buf, &x);
	assert_null(x.stopped_first);
	nccl_explain_free(&x);

	/* both finish together, a line or two apart: no verdict */
	strbuf_reset(&ended);
	strbuf_adds(&ended, a);
	strbuf_adds(&ended, b);
	strbuf_adds(&ended, "node-a:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 2 - Init COMPLETE\n"
			    "node-b:2:2 [0] NCCL INFO comm 0x2 rank 1 nranks 2 - Init COMPLETE\n"
			    "node-b:2:2 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1\n"
			    "node-b:2:2 [0] NCCL INFO AllReduce: opCount 1 sendbuff 0x1\n"
			    "node-b:2:2 [0] NCCL INFO [Service thread] Connection closed by localRank 0\n"
			    "node-b:2:2 [0] NCCL INFO [Service thread] Connection closed by localRank 0\n"
			    "node-b:2:2 [0] NCCL INFO comm 0x2 rank 1 nranks 2 cudaDev 0 busId 1000 - Destroy COMPLETE\n");
	explain(ended.buf, &x);
	assert_null(x.stopped_first);
	nccl_explain_free(&x);

	/* node-b makes a second communicator node-a is not part of: init lines are no going on */
	strbuf_reset(&ended);
	strbuf_adds(&ended, a);
	strbuf_adds(&ended, b);
	strbuf_adds(&ended, "node-a:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 2 - Init COMPLETE\n"
			    "node-b:2:2 [0] NCCL INFO comm 0x2 rank 1 nranks 2 - Init COMPLETE\n"
			    "node-b:2:2 [0] NCCL INFO ncclCommSplit comm 0x3 rank 0 nranks 1 cudaDev 0 - Init START\n");
	char *second = init_lines("node-b:2:2 [0]", 40);
	strbuf_adds(&ended, second);
	free(second);
	explain(ended.buf, &x);
	assert_null(x.stopped_first);
	nccl_explain_free(&x);

	/* node-a dies; node-b's proxy warns and traces the error up */
	strbuf_reset(&ended);
	strbuf_adds(&ended, a);
	strbuf_adds(&ended, b);
	strbuf_adds(&ended, "node-b:2:2 [0] NCCL INFO comm 0x2 rank 1 nranks 2 - Init COMPLETE\n"
			    "node-a:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 2 - Init COMPLETE\n"
			    "node-b:2:9 [0] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer "
			    "10.0.0.1<4321> with error 12, opcode 0, len 0, vendor err 129 (Recv)\n"
			    "node-b:2:9 [0] NCCL INFO transport/net.cc:1008 -> 6\n"
			    "node-b:2:9 [0] NCCL INFO proxy.cc:679 -> 6\n"
			    "node-b:2:9 [0] NCCL INFO proxy.cc:858 -> 6 [Proxy Thread]\n");
	explain(ended.buf, &x);
	assert_null(x.stopped_first); /* a WARN follows: the signatures say what happened */
	assert_int_equal(x.procs[1].error_traces, 3);
	nccl_explain_free(&x);

	/* every process ends at its Init COMPLETE, no WARN: listed, not a failure */
	strbuf_reset(&ended);
	strbuf_adds(&ended, a);
	strbuf_adds(&ended, b);
	strbuf_adds(&ended, "node-b:2:2 [0] NCCL INFO comm 0x2 rank 1 nranks 2 - Init COMPLETE\n"
			    "node-a:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 2 - Init COMPLETE\n");
	explain(ended.buf, &x);
	assert_string_equal(x.stopped_first, "node-b:2");
	assert_true(x.stopped_weak);
	assert_false(nccl_explain_failed(&x));
	nccl_explain_free(&x);

	/* ... and at its first collective call: the job stopped there */
	strbuf_adds(&ended, "node-a:1:1 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count 1\n"
			    "node-b:2:2 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count 1\n");
	explain(ended.buf, &x);
	assert_string_equal(x.stopped_first, "node-a:1");
	assert_false(x.stopped_weak);
	assert_true(nccl_explain_failed(&x));
	nccl_explain_free(&x);

	/* no init seen: no verdict */
	char *c = init_lines("node-b:2:2 [0]", 30);
	strbuf_reset(&ended);
	strbuf_adds(&ended, a);
	strbuf_adds(&ended, b);
	strbuf_adds(&ended, c);
	explain(ended.buf, &x);
	assert_null(x.stopped_first);
	nccl_explain_free(&x);
	free(a);
	free(b);
	free(c);
	strbuf_release(&ended);
	strbuf_release(&sb);
}

static void test_version_mismatch(void **state)
{
	(void)state;
	struct nccl_explain x;
	explain("node-a:1:1 [0] NCCL INFO NCCL version 2.19.3+cuda12.3\n"
		"node-b:2:2 [0] NCCL INFO NCCL version 2.18.3+cuda12.2\n"
		"node-c:3:3 [0] NCCL INFO NCCL version 2.19.3+cuda12.3\n",
		&x);
	assert_int_equal(x.versions.n, 2);
	assert_string_equal(x.versions.v[0], "2.18.3");
	assert_string_equal(x.versions.v[1], "2.19.3");
	char *got = ids(&x, false);
	assert_string_equal(got, "version-mismatch");
	free(got);
	assert_true(nccl_explain_failed(&x));
	nccl_explain_free(&x);
	expect_ids("node-a:1:1 [0] NCCL INFO NCCL version 2.19.3+cuda12.3\n"
		   "node-b:2:2 [0] NCCL INFO NCCL version 2.19.3+cuda12.4\n",
		   "", "");
}

static void test_unmatched_kept(void **state)
{
	(void)state;
	struct nccl_explain x;
	explain(W "Bootstrap : no socket interface found\n" W "Bootstrap : no socket interface found\n" W
		  "NCCL library version is too old.\n" W "\n",
		&x);
	assert_int_equal(x.n_unmatched, 2);
	assert_int_equal(x.unmatched_total, 3);
	assert_int_equal(x.unmatched[0].count, 2);
	assert_string_equal(x.unmatched[0].text, "Bootstrap : no socket interface found");
	assert_string_equal(x.unmatched[0].first_proc, "node-a:4242");
	struct strbuf out = STRBUF_INIT;
	nccl_explain_text(&x, NULL, &out);
	assert_non_null(strstr(out.buf, "Unmatched warnings: 3 lines, 2 different"));
	assert_non_null(strstr(out.buf, "2x Bootstrap : no socket interface found"));
	json_object *o = nccl_explain_json(&x, NULL), *v;
	assert_true(json_object_object_get_ex(o, "unmatched_count", &v));
	assert_int_equal(json_object_get_int(v), 3);
	json_object_put(o);
	strbuf_release(&out);
	nccl_explain_free(&x);
}

static void test_caps(void **state)
{
	(void)state;
	struct nccl_explain x;
	/* a line past 64 KiB is cut, not split */
	size_t n = 70 * 1024;
	char *big = malloc(n + 512);
	strcpy(big, W);
	memset(big + strlen(big), 'x', n);
	strcpy(big + strlen(W) + n, "\n" I "NET/IB : No device found.\n");
	explain(big, &x);
	assert_int_equal(x.lines, 2);
	assert_int_equal(x.unmatched_total, 1);
	assert_true(strlen(x.unmatched[0].text) <= 1024);
	nccl_explain_free(&x);
	free(big);
	/* the line cap */
	nccl_explain_init(&x);
	x.max_lines = 3;
	const char *t = I "a\n" I "b\n" I "c\n" I "NET/IB : No device found.\n";
	nccl_explain_feed(&x, t, strlen(t));
	nccl_explain_finish(&x);
	assert_true(x.cut_lines);
	assert_int_equal(x.lines, 3);
	assert_int_equal(x.n_sigs, 0);
	struct strbuf out = STRBUF_INIT;
	nccl_explain_text(&x, NULL, &out);
	assert_non_null(strstr(out.buf, "only the first 3 lines"));
	strbuf_release(&out);
	nccl_explain_free(&x);
	/* the byte cap, on a pipe */
	int fd[2];
	assert_int_equal(pipe(fd), 0);
	assert_int_equal(write(fd[1], "0123456789abcdef", 16), 16);
	close(fd[1]);
	struct strbuf sb = STRBUF_INIT;
	bool cut;
	assert_int_equal(fd_read_capped(fd[0], 10, &sb, &cut), 0);
	assert_true(cut);
	assert_int_equal(sb.len, 10);
	close(fd[0]);
	strbuf_release(&sb);
}

/* NUL bytes, CRs, garbage: no crash, lines counted. */
static void test_garbage(void **state)
{
	(void)state;
	struct nccl_explain x;
	const char t[] = "\0\0\r\n:::: [\n[]:\n[rank]:\n0:\n:1:2 [\nNCCL WARN\nNCCL INFO\n[1,0]<stdout>:\n";
	nccl_explain_init(&x);
	nccl_explain_feed(&x, t, sizeof(t) - 1);
	nccl_explain_feed(&x, NULL, 0);
	nccl_explain_finish(&x);
	assert_int_equal(x.lines, 9);
	assert_int_equal(x.streams, 2);
	struct strbuf out = STRBUF_INIT;
	nccl_explain_text(&x, NULL, &out);
	json_object_put(nccl_explain_json(&x, NULL));
	strbuf_release(&out);
	nccl_explain_free(&x);
	nccl_explain_free(&x); /* twice is safe */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wc_versions),
		cmocka_unit_test(test_verbs_calls),
		cmocka_unit_test(test_fallbacks),
		cmocka_unit_test(test_sockets_and_shm),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_harmless),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_prefixes),
		cmocka_unit_test(test_interleaved),
		cmocka_unit_test(test_stopped_after_init),
		cmocka_unit_test(test_stopped_blocks),
		cmocka_unit_test(test_tag_last_carrier),
		cmocka_unit_test(test_stopped_files),
		cmocka_unit_test(test_version_mismatch),
		cmocka_unit_test(test_unmatched_kept),
		cmocka_unit_test(test_caps),
		cmocka_unit_test(test_garbage),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
