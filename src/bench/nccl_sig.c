/* NCCL's warnings and errors, signature by signature; see nccl_sig.h.
 *
 * The texts are NCCL's format strings (NVIDIA/nccl, tags v2.12.x to
 * v2.29.x), matched by fixed substrings that survive the changes between
 * versions:
 * - src/transport/net_ib.cc (2.12-2.21), src/transport/net_ib/p2p.cc and
 *   gin.cc (2.28+): "NET/IB : Got completion from peer %s with error %d,
 *   opcode %d, len %d, vendor err %d" (2.12), "... vendor err %d (%s)%s%s%s%s"
 *   (2.18), "NET/IB: Got completion from peer %s with status=%s(%d) ..."
 *   (2.29), "NET/IB/GIN: Got completion from peer %s with status=%d ...";
 * - src/misc/ibvwrap.cc, src/include/ibvwrap.h: "Call to <verb> failed with
 *   error %s" (IBV_PTR_CHECK_ERRNO, IBV_INT_CHECK_RET_ERRNO);
 * - src/transport/net_ib.cc: "NET/IB : No device found." and "NET/IB : GPU
 *   Direct RDMA Disabled for HCA %d '%s'" (INFO);
 * - src/misc/socket.cc: "socketStartConnect: Connect to %s failed : %s",
 *   "socketPollConnect: connect returned %s, exceeded error retry count";
 * - src/misc/shmutils.cc: "Error while %s shared memory segment %s (size
 *   %d)", 2.29: "Error: failed to create shared memory file %s";
 * - src/include/checks.h: "Cuda failure '%s'", "Cuda failure %d '%s'";
 * - src/misc/argcheck.cc, init.cc: ncclGetErrorString's texts ("unhandled
 *   system error", "unhandled cuda error", "internal error - please report
 *   this issue to the NCCL developers", "invalid usage", "remote process
 *   exited or there was a network error"), which PyTorch repeats in
 *   "NCCL error in: ..." and DistBackendError;
 * - src/plugin/net.cc (2.19+), src/net.cc (2.12-2.18): "NET/Plugin : No
 *   plugin found (%s), using internal implementation", "NET/Plugin: Could
 *   not find: %s", "%s/Plugin: Could not find:%s%s%s" (2.23+, also TUNER
 *   and PROFILER);
 * - src/graph/topo.cc, xml.cc: "Could not find real path of %s", "Attribute
 *   %s of node %s not found", "Topology detection : could not read %s,
 *   ignoring".
 * ibv_wc_status names and texts: rdma-core libibverbs/verbs.h (enum
 * ibv_wc_status) and libibverbs/enum_strs.c (ibv_wc_status_str). */
#include "bench/nccl_sig.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define NCCL_TS "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html"

const struct nccl_sig nccl_sigs[] = {
	{ .id = "ib-wc", .where = NCCL_SIG_WARN, .any = { "Got completion from peer", "Got completion with error" },
	  .kind = NCCL_SIG_FAIL,
	  .meaning = "an RDMA work request completed with an error: the IB/RoCE connection to that peer broke",
	  .causes = "a link flap or down port, lossy RoCE (PFC/ECN), a remote process that died, a wrong GID or MTU",
	  .next = "`rdma link` and `dmesg -T` on both nodes; `gpuready check --only rdma` on both (port state, "
		  "errors, PFC/ECN, GID, MTU)",
	  .source = "NCCL src/transport/net_ib.cc (2.12-2.27), net_ib/p2p.cc (2.28+); rdma-core ibv_wc_status" },
	{ .id = "ib-reg-dmabuf-mr", .where = NCCL_SIG_WARN, .any = { "ibv_reg_dmabuf_mr failed" },
	  .kind = NCCL_SIG_FAIL,
	  .meaning = "registering GPU memory with the HCA through DMA-BUF failed",
	  .causes = "the proprietary GPU kernel modules (DMA-BUF needs the open ones), a kernel older than 5.12, "
		    "an IOMMU in translated mode, an old rdma-core or HCA driver",
	  .next = "`gpuready gpudirect`; `cat /proc/driver/nvidia/version`; where nvidia_peermem is loaded, "
		  "NCCL_DMABUF_ENABLE=0 makes NCCL use it instead",
	  .source = "NCCL src/misc/ibvwrap.cc (2.19+: Call to ibv_reg_dmabuf_mr failed)" },
	{ .id = "ib-reg-mr", .where = NCCL_SIG_WARN, .any = { "ibv_reg_mr failed", "ibv_reg_mr_iova2 failed" },
	  .kind = NCCL_SIG_FAIL,
	  .meaning = "registering memory with the HCA failed (errno in the line)",
	  .causes = "the locked-memory limit (ulimit -l) in the job or container, GPU memory without peer memory "
		    "(nvidia_peermem) or DMA-BUF, an IOMMU in translated mode",
	  .next = "`ulimit -l` inside the job; `gpuready gpudirect`; `gpuready check --only rdma.memlock`",
	  .source = "NCCL src/misc/ibvwrap.cc (IBV_PTR_CHECK_ERRNO: Call to ibv_reg_mr failed with error %s)" },
	{ .id = "ib-modify-qp", .where = NCCL_SIG_WARN, .any = { "ibv_modify_qp failed" },
	  .kind = NCCL_SIG_FAIL,
	  .meaning = "moving a queue pair to INIT/RTR/RTS failed: the two ends could not agree on a path",
	  .causes = "a wrong NCCL_IB_GID_INDEX (no RoCE v2 GID with an address), an MTU mismatch, an unreachable "
		    "address, NCCL_IB_TC/SL the fabric refuses",
	  .next = "`show_gids` on both nodes; `gpuready check --only rdma.nccl_gid_index,rdma.mtu`",
	  .source = "NCCL src/misc/ibvwrap.cc (Call to ibv_modify_qp failed with error %s)" },
	/* the events whose ibv_event_type_str() text says "error" (port error,
	 * local catastrophic error, local work queue catastrophic error, ...):
	 * before 2.23 NCCL printed every event as "Got async event : %s"; from
	 * 2.23 the fatal ones as "async fatal event" (on QP, on CQ) */
	{ .id = "ib-async-event", .where = NCCL_SIG_WARN, .any = { "async fatal event", "Got async event" },
	  .also = "error", .kind = NCCL_SIG_FAIL,
	  .meaning = "the NIC reported an asynchronous event on a port or queue pair (port error, local access "
		     "violation, QP or device fatal)",
	  .causes = "a link that went down, a firmware or driver fault, a buffer the NIC could no longer access",
	  .next = "`ibv_devinfo -v`; `rdma link`; `dmesg -T | grep -i mlx5`; `gpuready check --only rdma.link_flaps`",
	  .source = "NCCL src/transport/net_ib.cc ncclIbAsyncThreadMain (Got async event : %s, 2.12-2.22; %s:%d async "
		    "fatal event: %s and ... on QP (%p): %s, 2.23+), net_ib/common.cc (2.29)" },
	{ .id = "ib-async-nonfatal", .where = NCCL_SIG_WARN,
	  .any = { "Got async error event", "Got non-fatal async event", "Got async event" }, .kind = NCCL_SIG_HARMLESS,
	  .meaning = "the NIC reported an event that is not an error (port active, LID or SM change, client "
		     "reregistration, GID table change): routine on a fabric that is being managed",
	  .causes = "a subnet manager sweep, a port coming up, an address added to the GID table",
	  .next = "nothing, unless it repeats with errors: then `rdma link` and `dmesg -T | grep -i mlx5`",
	  .source = "NCCL src/transport/net_ib.cc ncclIbAsyncThreadMain (2.23-2.28: %s:%d Got async error event: "
		    "%s; 2.28.7+: Got non-fatal async event: %s(%d); before 2.23 every event: Got async event : %s)" },
	{ .id = "ib-no-device", .where = NCCL_SIG_WARN | NCCL_SIG_INFO, .any = { "NET/IB : No device found" },
	  .kind = NCCL_SIG_FALLBACK,
	  .meaning = "NCCL's IB transport found no usable HCA port, so inter-node traffic uses sockets (TCP)",
	  .causes = "no RDMA device in the container (/dev/infiniband), all ports down, NCCL_IB_HCA matching nothing, "
		    "NCCL_IB_DISABLE=1",
	  .next = "`ibv_devinfo -l`; `rdma link`; `gpuready check --only rdma`",
	  .source = "NCCL src/transport/net_ib.cc (INFO NET/IB : No device found.)" },
	/* not graph/paths.cc's "Disabled for GPU %lx / HCA %d (distance ...)": NCCL
	 * prints that for every GPU and NIC too far apart, on healthy nodes */
	{ .id = "ib-gdr-disabled", .where = NCCL_SIG_INFO, .any = { "GPU Direct RDMA Disabled for HCA" },
	  .unless = "NET/Socket", .kind = NCCL_SIG_FALLBACK,
	  .meaning = "NCCL does not use GPUDirect RDMA for that HCA: data is staged through host memory",
	  .causes = "neither nvidia_peermem nor DMA-BUF available, the GPU and HCA too far apart for "
		    "NCCL_NET_GDR_LEVEL, NCCL_NET_GDR_LEVEL=LOC",
	  .next = "`gpuready gpudirect`; `gpuready check --only gpudirect,rdma.nccl_gdr`",
	  .source = "NCCL src/init.cc (2.18+: NET/%s : GPU Direct RDMA %s for HCA %d '%s'), src/transport/net_ib.cc "
		    "(2.12: ... for HCA %d '%s' (no module)), src/graph/paths.cc (GPU Direct RDMA Disabled for GPU %lx / "
		    "HCA %d (distance %d > %d); 2.29: for GPU/%ld-%ld (rank %d) - NET/...)" },
	{ .id = "torch-watchdog-timeout", .where = NCCL_SIG_OTHER | NCCL_SIG_WARN,
	  .any = { "Watchdog caught collective operation timeout" }, .kind = NCCL_SIG_FAIL,
	  .meaning = "PyTorch's watchdog gave up on a collective that did not complete within its timeout: the job hung",
	  .causes = "a rank that stopped or fell behind (look at the last lines of each rank), a network that "
		    "stalls (see the other signatures), a deadlock in the program",
	  .next = "`gpuready cluster nccl` on the job's nodes; on each node `dmesg -T | grep -i -e xid -e oom`",
	  .source = "PyTorch torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp (Watchdog caught collective operation "
		    "timeout: WorkNCCL(...))" },
	{ .id = "proxy-failed", .where = NCCL_SIG_WARN,
	  .any = { "Failed to execute operation", "Error encountered progressing operation", "Socket recv failed while polling",
		   "Proxy Call to rank" },
	  .kind = NCCL_SIG_FAIL,
	  .meaning = "NCCL's proxy thread could not set up or progress a connection for a rank; its retcode is the "
		     "ncclResult_t of the failure logged just before (1 CUDA, 2 system, 3 internal, 6 remote)",
	  .causes = "the failure before it: a completion error, a closed socket, a CUDA error",
	  .next = "read the WARN before it on the same process; `gpuready check --only rdma` on both nodes",
	  .source = "NCCL src/proxy.cc ([Proxy Service %d] Failed to execute operation %s from rank %d, retcode %d; "
		    "[Service thread] Error encountered progressing operation=%s, res=%d, closing connection; Socket recv "
		    "failed while polling for opId=%p; 2.12-2.15: Proxy Call to rank %d failed (%s))" },
	{ .id = "bootstrap-refused", .where = NCCL_SIG_WARN, .any = { "Connection refused", "exceeded retries" },
	  .kind = NCCL_SIG_FAIL,
	  .meaning = "a TCP connection (bootstrap, proxy or socket transport) was refused: nothing listens at the address",
	  .causes = "the root rank or the peer's proxy is not up yet or already gone, a wrong MASTER_ADDR, a peer that "
		    "bound another interface",
	  .next = "`ip addr` on both nodes (the Bootstrap interface must be routable between them); "
		  "`gpuready check --only rdma.nccl_socket_ifname`",
	  .source = "NCCL src/misc/socket.cc (socketStartConnect: Connect to %s failed : %s; socketStartConnect|"
		    "socketPollConnect: exceeded retries (%d), 2.16-2.23)" },
	{ .id = "bootstrap-timeout", .where = NCCL_SIG_WARN,
	  .any = { "Connection timed out", "exceeded timeouts", "no POLLOUT events" }, .kind = NCCL_SIG_FAIL,
	  .meaning = "a TCP connection during bootstrap or proxy setup timed out: the SYNs got no answer",
	  .causes = "a firewall dropping the port, an address not routable from this node, an interface that is down",
	  .next = "`ip route` and `ip addr` on both nodes; `gpuready check --only rdma.nccl_socket_ifname`",
	  .source = "NCCL src/misc/socket.cc (socketPollConnect: exceeded timeouts (%d), 2.16-2.23; socketPollConnect "
		    "poll() returned %d, no POLLOUT events, 2.23-2.26; the connect WARN with Connection timed out)" },
	{ .id = "socket-connect-failed", .where = NCCL_SIG_WARN, .any = { "Connect to ", "connect to " }, .also = " failed",
	  .kind = NCCL_SIG_FAIL,
	  .meaning = "a TCP connection failed with another error than refused or timed out (no route, aborted)",
	  .causes = "a link-local or wrong-family address chosen by interface auto-selection, no route to the peer",
	  .next = "`ip addr` (an fe80:: or %ib0 address means a link-local one was chosen); set NCCL_SOCKET_IFNAME; "
		  "`gpuready check --only rdma.nccl_socket_ifname`",
	  .source = "NCCL src/misc/socket.cc (Net : Connect to %s failed : %s, 2.12-2.15; socketStartConnect: Connect to "
		    "%s failed : %s, 2.16-2.23; %s: connect to %s failed : %s, 2.24-2.26; socketPollConnect to %s failed "
		    "with error %s, 2.27+)" },
	/* the same after NCCL's retries (2.24+): "... returned %s, exceeded error retry count" */
	{ .id = "socket-connect-failed", .where = NCCL_SIG_WARN, .any = { "exceeded error retry count" },
	  .kind = NCCL_SIG_FAIL,
	  .meaning = "a TCP connect or accept kept failing until NCCL gave up retrying (no route, reset, aborted)",
	  .causes = "no route to the peer's address, a firewall, a link-local or wrong-family address chosen by "
		    "interface auto-selection",
	  .next = "`ip route` (a route to the address in the line?); set NCCL_SOCKET_IFNAME; "
		  "`gpuready check --only rdma.nccl_socket_ifname`",
	  .source = "NCCL src/misc/socket.cc (2.24-2.28: %s: connect to %s returned %s, exceeded error retry count "
		    "after %d attempts; ncclSocketTryAccept: exceeded error retry count after %d attempts, %s), "
		    "src/os/linux.cc (2.29)" },
	{ .id = "socket-closed", .where = NCCL_SIG_WARN, .any = { "Connection closed by remote peer" }, .kind = NCCL_SIG_FAIL,
	  .meaning = "a peer closed a bootstrap or proxy socket: it failed first or was killed",
	  .causes = "another rank crashed first (read its log), it was killed (out of memory)",
	  .next = "the other rank's log for its first WARN; on its node `dmesg -T | grep -i -e xid -e oom`",
	  .source = "NCCL src/misc/socket.cc (Net : Connection closed by remote peer %s, 2.12-2.15; socketProgress: "
		    "Connection closed by remote peer %s, 2.16+)" },
	{ .id = "socket-io-failed", .where = NCCL_SIG_WARN, .any = { "Call to recv from", "Call to send to" },
	  .also = " failed", .kind = NCCL_SIG_FAIL,
	  .meaning = "a socket read or write failed, typically Connection reset by peer: the peer died or the network "
		     "dropped the connection",
	  .causes = "the peer process died, a link or switch on the path dropped the connection",
	  .next = "the peer's log; `rdma link` and `ip -s link` on both nodes",
	  .source = "NCCL src/misc/socket.cc (Net : Call to recv from %s failed : %s, 2.12-2.15; socketProgressOpt: "
		    "Call to recv from %s failed : %s, 2.16+)" },
	{ .id = "shm-failed", .where = NCCL_SIG_WARN,
	  .any = { "shared memory segment", "failed to create shared memory file", "/dev/shm", "Call to open failed" },
	  .kind = NCCL_SIG_FAIL,
	  .meaning = "creating or mapping a shared-memory segment under /dev/shm failed",
	  .causes = "a small /dev/shm in a container (Docker's default 64 MB: --shm-size, --ipc=host)",
	  .next = "`df -h /dev/shm` inside the job; `gpuready check --only rdma.dev_shm`",
	  .source = "NCCL src/misc/shmutils.cc (Error while %s shared memory segment %s (size %d))" },
	{ .id = "shm-failed", .where = NCCL_SIG_WARN, .any = { "Call to posix_fallocate failed", "Call to shm_open failed" },
	  .kind = NCCL_SIG_FAIL,
	  .meaning = "creating a shared-memory segment under /dev/shm failed (2.7-2.11 wording)",
	  .causes = "a small /dev/shm in a container (Docker's default 64 MB: --shm-size, --ipc=host), its permissions",
	  .next = "`df -h /dev/shm` inside the job; `gpuready check --only rdma.dev_shm`",
	  .source = "NCCL src/include/shm.h (Call to posix_fallocate failed : %s; Call to shm_open failed : %s)" },
	{ .id = "cuda-error", .where = NCCL_SIG_WARN | NCCL_SIG_INFO | NCCL_SIG_OTHER,
	  .any = { "Cuda failure", "unhandled cuda error", "ncclUnhandledCudaError", "Failed to CUDA calloc" },
	  .kind = NCCL_SIG_FAIL,
	  .meaning = "a CUDA call failed inside NCCL (the line names the CUDA error)",
	  .causes = "a GPU fault (Xid), out of GPU memory, a driver/CUDA mismatch, P2P between GPUs that cannot do it",
	  .next = "`dmesg -T | grep -i xid`; `nvidia-smi -q -d ECC`; `gpuready check --only gpu`",
	  .source = "NCCL src/include/checks.h (Cuda failure '%s'); ncclGetErrorString" },
	{ .id = "system-error", .where = NCCL_SIG_WARN | NCCL_SIG_INFO | NCCL_SIG_OTHER,
	  .any = { "unhandled system error", "ncclSystemError" }, .kind = NCCL_SIG_FAIL,
	  .meaning = "a system call or library call failed in NCCL (the WARN before it says which)",
	  .causes = "a socket, shared-memory or verbs failure: read the warnings above it",
	  .next = "rerun with NCCL_DEBUG=INFO and read the first WARN of the failing rank; `gpuready check`",
	  .source = "NCCL ncclGetErrorString (ncclSystemError)" },
	{ .id = "internal-error", .where = NCCL_SIG_WARN | NCCL_SIG_INFO | NCCL_SIG_OTHER,
	  .any = { "internal error", "ncclInternalError" }, .kind = NCCL_SIG_FAIL,
	  .meaning = "NCCL hit a state it did not expect",
	  .causes = "often a peer that died or mismatching versions; sometimes an NCCL bug",
	  .next = "compare `NCCL version` lines of every rank; rerun with NCCL_DEBUG=INFO",
	  .source = "NCCL ncclGetErrorString (ncclInternalError: internal error, 2.12-2.17; internal error - please "
		    "report this issue to the NCCL developers, 2.18+)" },
	{ .id = "invalid-usage", .where = NCCL_SIG_WARN | NCCL_SIG_INFO | NCCL_SIG_OTHER,
	  .any = { "invalid usage", "ncclInvalidUsage" }, .kind = NCCL_SIG_FAIL,
	  .meaning = "the application called NCCL wrongly (the WARN before it says how)",
	  .causes = "two ranks on one GPU, mismatched collectives, a communicator used after abort",
	  .next = "read the WARN before it; check that every rank has its own GPU (`nvidia-smi -L`)",
	  .source = "NCCL ncclGetErrorString (ncclInvalidUsage)" },
	{ .id = "remote-error", .where = NCCL_SIG_WARN | NCCL_SIG_INFO | NCCL_SIG_OTHER,
	  .any = { "remote process exited or there was a network error", "ncclRemoteError" }, .kind = NCCL_SIG_FAIL,
	  .meaning = "a peer process exited or the network between them failed",
	  .causes = "another rank crashed first (read its log), a link went down",
	  .next = "find the rank that stopped first; `rdma link` and `dmesg -T` on its node",
	  .source = "NCCL ncclGetErrorString (ncclRemoteError, 2.13+)" },
	{ .id = "net-plugin-failed", .where = NCCL_SIG_WARN,
	  .any = { "aws-ofi-nccl initialization failed", "Initializing plugin failed", "fi_getinfo() call failed",
		   "Creating new endpoint for domain" },
	  .kind = NCCL_SIG_FALLBACK,
	  .meaning = "the network plugin could not start, so NCCL falls back to its IB transport or to sockets",
	  .causes = "no EFA device in the container (/dev/infiniband not passed in), a libfabric without the provider; "
		    "harmless where no EFA is expected",
	  .next = "`ls -l /dev/infiniband` inside the job; `gpuready check --only rdma.devices`",
	  .source = "aws-ofi-nccl (NET/OFI aws-ofi-nccl initialization failed; NET/OFI OFI fi_getinfo() call failed: %s)" },
	{ .id = "ofi-completion-error", .where = NCCL_SIG_WARN, .any = { "completed with error" }, .also = "NET/OFI",
	  .kind = NCCL_SIG_FAIL,
	  .meaning = "a libfabric request of the AWS OFI plugin failed (UNDELIVERABLE: the peer could not be reached)",
	  .causes = "the peer died, the EFA link or its security group",
	  .next = "the peer's log; `gpuready check --only rdma` on both nodes",
	  .source = "aws-ofi-nccl (NET/OFI Request %p completed with error. RC: %d. Error: %d (%s))" },
	{ .id = "plugin-version-probe", .where = NCCL_SIG_WARN | NCCL_SIG_INFO,
	  .any = { "Failed to find ncclNetPlugin", "Failed to find ncclCollNetPlugin" }, .kind = NCCL_SIG_HARMLESS,
	  .meaning = "NCCL looks for the newest plugin interface first and steps down: the plugin does not export "
		     "that version (a problem only when no version is found: see the network)",
	  .causes = "a plugin built for another NCCL release",
	  .next = "nothing, unless the network is not the plugin's",
	  .source = "NCCL src/net.cc (NET/Plugin: Failed to find ncclNetPlugin_v%d symbol.), 2.26+ src/plugin/net/" },
	{ .id = "plugin-absent", .where = NCCL_SIG_WARN | NCCL_SIG_INFO,
	  .any = { "No plugin found", "/Plugin: Could not find:", "/Plugin : Could not find", "Plugin load returned" },
	  .kind = NCCL_SIG_HARMLESS,
	  .meaning = "no external net/tuner/profiler plugin is installed; NCCL uses its internal implementation",
	  .causes = "normal unless the fabric needs one (AWS EFA: aws-ofi-nccl; HPC-X's IBext)",
	  .next = "nothing, unless a plugin was meant to load: `ls -l` its directory and set NCCL_NET_PLUGIN",
	  .source = "NCCL src/net.cc (2.12-2.18), src/plugin/net.cc (2.19-2.25), src/plugin/plugin_open.cc (2.26+)" },
	{ .id = "plugin-absent", .where = NCCL_SIG_WARN | NCCL_SIG_INFO,
	  .any = { "Plugin load (", "Using internal network plugin", "Failed to find ncclTunerPlugin",
		   "failed to find ncclTunerPlugin" },
	  .kind = NCCL_SIG_HARMLESS,
	  .meaning = "no external net/tuner plugin is installed; NCCL uses its internal implementation",
	  .causes = "normal unless the fabric needs one",
	  .next = "nothing",
	  .source = "NCCL src/net.cc (NET/Plugin : Plugin load (%s) returned %d : %s, 2.17-2.18), src/plugin/ (2.21-2.25), "
		    "src/tuner (2.19-2.27)" },
	{ .id = "topo-harmless", .where = NCCL_SIG_INFO,
	  .any = { "Could not get speed from", "is not a PCI device", "=== System : maxBw" }, .kind = NCCL_SIG_HARMLESS,
	  .meaning = "a virtual interface (loopback, bridge, VM NIC) has no speed or PCI path, or NCCL prints its "
		     "topology: NCCL assumes defaults",
	  .causes = "virtual interfaces, NCCL_DEBUG_SUBSYS including GRAPH",
	  .next = "nothing",
	  .source = "NCCL src/transport/net_socket.cc (Could not get speed from %s. Defaulting to 10 Gbps.), "
		    "src/graph/topo.cc (Topology detection: network path %s is not a PCI device (%s); === System : maxBw)" },
	/* Read from the whole log, not from one line (bench/nccl_explain.c). */
	{ .id = "version-mismatch", .where = 0, .kind = NCCL_SIG_FAIL,
	  .meaning = "processes of one job state different NCCL versions",
	  .causes = "different containers or Python environments per node (pip's nvidia-nccl-cu12 against the "
		    "system NCCL), LD_LIBRARY_PATH differing between nodes",
	  .next = "`gpuready cluster check` (drift of NCCL per node); compare the NCCL version lines per host",
	  .source = "NCCL documentation, Troubleshooting: every rank must run the same NCCL version" },
	{ .id = "stopped-after-init", .where = 0, .kind = NCCL_SIG_FAIL,
	  .meaning = "a process's lines end after initialization while other processes go on: it hung or died",
	  .causes = "the process crashed (out of memory, a signal), its GPU hung (Xid), or it waits in a "
		    "collective the others never reached",
	  .next = "on the named process's node: `dmesg -T | grep -i -e xid -e oom`; `nvidia-smi -q -d ECC`",
	  .source = "NCCL documentation, Troubleshooting (NCCL_DEBUG=INFO, per-rank logs)" },
};
const size_t n_nccl_sigs = sizeof(nccl_sigs) / sizeof(nccl_sigs[0]);

/* rdma-core libibverbs/verbs.h enum ibv_wc_status and enum_strs.c. */
static const struct {
	const char *name, *str, *meaning;
} wc_status[] = {
	{ "IBV_WC_SUCCESS", "success", "no error" },
	{ "IBV_WC_LOC_LEN_ERR", "local length error", "a receive buffer was smaller than the message" },
	{ "IBV_WC_LOC_QP_OP_ERR", "local QP operation error", "the local QP rejected the request" },
	{ "IBV_WC_LOC_EEC_OP_ERR", "local EE context operation error", "a local EE context error" },
	{ "IBV_WC_LOC_PROT_ERR", "local protection error",
	  "a local buffer was not registered or its registration went away (GPU memory, peer memory)" },
	{ "IBV_WC_WR_FLUSH_ERR", "Work Request Flushed Error",
	  "the QP was already in error: this request was flushed after an earlier failure (look for the first error)" },
	{ "IBV_WC_MW_BIND_ERR", "memory management operation error", "a memory window bind failed" },
	{ "IBV_WC_BAD_RESP_ERR", "bad response error", "the responder sent an unexpected answer" },
	{ "IBV_WC_LOC_ACCESS_ERR", "local access error", "a local memory access violated its registration" },
	{ "IBV_WC_REM_INV_REQ_ERR", "remote invalid request error", "the responder found the request invalid" },
	{ "IBV_WC_REM_ACCESS_ERR", "remote access error",
	  "the remote buffer or key was not valid: the peer's registration went away or it exited" },
	{ "IBV_WC_REM_OP_ERR", "remote operation error", "the responder could not complete the operation" },
	{ "IBV_WC_RETRY_EXC_ERR", "transport retry counter exceeded",
	  "the peer did not acknowledge in time: link down, lossy RoCE, wrong route or a dead peer" },
	{ "IBV_WC_RNR_RETRY_EXC_ERR", "RNR retry counter exceeded", "the peer had no receive posted in time" },
	{ "IBV_WC_LOC_RDD_VIOL_ERR", "local RDD violation error", "a local RD domain violation" },
	{ "IBV_WC_REM_INV_RD_REQ_ERR", "remote invalid RD request", "a remote RD request was invalid" },
	{ "IBV_WC_REM_ABORT_ERR", "aborted error", "the responder aborted the operation" },
	{ "IBV_WC_INV_EECN_ERR", "invalid EE context number", "an invalid EE context number" },
	{ "IBV_WC_INV_EEC_STATE_ERR", "invalid EE context state", "an invalid EE context state" },
	{ "IBV_WC_FATAL_ERR", "fatal error", "the HCA reported a fatal error" },
	{ "IBV_WC_RESP_TIMEOUT_ERR", "response timeout error", "the responder timed out" },
	{ "IBV_WC_GENERAL_ERR", "general error", "a vendor-specific error (read the vendor err)" },
	{ "IBV_WC_TM_ERR", "TM error", "a tag-matching error" },
	{ "IBV_WC_TM_RNDV_INCOMPLETE", "TM software rendezvous", "a tag-matching rendezvous was incomplete" },
};
#define N_WC (int)(sizeof(wc_status) / sizeof(wc_status[0]))

const char *nccl_wc_status_str(int status)
{
	return status >= 0 && status < N_WC ? wc_status[status].str : NULL;
}

const char *nccl_wc_status_name(int status)
{
	return status >= 0 && status < N_WC ? wc_status[status].name : NULL;
}

const char *nccl_wc_status_meaning(int status)
{
	return status >= 0 && status < N_WC ? wc_status[status].meaning : NULL;
}

/* 1..3 digits at p, else -1. */
static int small_num(const char *p)
{
	int v = 0, n = 0;
	while (isdigit((unsigned char)p[n]) && n < 4)
		v = v * 10 + (p[n++] - '0');
	return n >= 1 && n <= 3 ? v : -1;
}

/* The status of a completion line: "with error 12," (2.12-2.27), "with
 * status=12 " (GIN), "with status=transport retry counter exceeded(12) "
 * (2.28+: ibvWcStatusStr(status) and the number). */
static int wc_status_of(const char *text)
{
	const char *p = strstr(text, "with error ");
	if (p)
		return small_num(p + strlen("with error "));
	p = strstr(text, "with status=");
	if (!p)
		return -1;
	p += strlen("with status=");
	if (isdigit((unsigned char)*p))
		return small_num(p);
	const char *end = strstr(p, " opcode=");
	const char *open = NULL;
	for (const char *q = p; *q && (!end || q < end); q++)
		if (*q == '(')
			open = q;
	return open ? small_num(open + 1) : -1;
}

static bool row_matches(const struct nccl_sig *s, const char *text)
{
	bool any = false;
	for (size_t k = 0; k < sizeof(s->any) / sizeof(s->any[0]) && s->any[k] && !any; k++)
		any = strstr(text, s->any[k]) != NULL;
	return any && (!s->also || strstr(text, s->also)) && (!s->unless || !strstr(text, s->unless));
}

const struct nccl_sig *nccl_sig_match(const char *text, unsigned where, int *num)
{
	for (size_t i = 0; i < n_nccl_sigs; i++) {
		const struct nccl_sig *s = &nccl_sigs[i];
		if (!(s->where & where) || !row_matches(s, text))
			continue;
		if (!strcmp(s->id, "ib-wc") && num)
			*num = wc_status_of(text);
		return s;
	}
	return NULL;
}

const struct nccl_sig *nccl_sig_find(const char *id)
{
	if (!strncmp(id, "ib-wc-", 6))
		id = "ib-wc";
	for (size_t i = 0; i < n_nccl_sigs; i++)
		if (!strcmp(nccl_sigs[i].id, id))
			return &nccl_sigs[i];
	return NULL;
}
