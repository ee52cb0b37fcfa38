/* The site's expectations: what the checks compare the node with
 * (checks/expect.h states each default and its source). */
#include "opts/settings.h"
#include "checks/expect.h"

#include <stddef.h>
#include <string.h>

#define OFF(f) offsetof(struct settings, f)

/* --min-cuda's form: MAJOR.MINOR, 1 to 3 digits and 1 to 2, the versions
 * cuda_version_parse (inventory/gpu_live.h) reads and cuda_version_string
 * writes. A patch level ("12.8.1") or a bare major ("12") is refused: the
 * driver reports only major and minor, and a value the check could not
 * compare must not turn it off. */
static const char *site_cuda_form(const char *v)
{
	size_t major = strspn(v, "0123456789");
	size_t minor = v[major] == '.' ? strspn(v + major + 1, "0123456789") : 0;

	if (major < 1 || major > 3 || minor < 1 || minor > 2 || v[major + 1 + minor] != '\0')
		return "a CUDA version MAJOR.MINOR (e.g. " DEFAULT_MIN_CUDA ")";
	return NULL;
}

/* Each is also a config-file key (docs/configuration.md), read by every
 * command; on the command line `check` takes them all and each area's
 * command those of its own checks (gpudirect reads none). */
static const struct opt site_rows[] = {
	{ .name = "tos", .type = OPT_INT, .offset = OFF(tos), .metavar = "TOS",
	  .help = "Expected RoCE traffic class byte (DSCP << 2 | ECN) for RDMA-CM and NCCL_IB_TC; 104 is DSCP 26.",
	  .def = OPT_DEF_INT(DEFAULT_TOS), .key = "tos", .max = 255, .scope = SCOPE_FIXES | SCOPE_CHECK | SCOPE_CLUSTER | SCOPE_RDMA },
	{ .name = "mtu", .type = OPT_INT, .offset = OFF(mtu), .metavar = "BYTES",
	  .help = "Expected MTU of every RDMA network interface (0: any).", .def = OPT_DEF_INT(0), .key = "mtu",
	  .max = 65536, .scope = SCOPE_FIXES | SCOPE_CHECK | SCOPE_CLUSTER | SCOPE_RDMA },
	{ .name = "link-rate", .type = OPT_DOUBLE, .offset = OFF(link_rate), .metavar = "GBPS",
	  .help = "Minimum expected rate of every active RDMA port in Gb/s (0: none).", .def = OPT_DEF_DOUBLE(0),
	  .key = "link_rate", .max = 100000, .scope = SCOPE_FIXES | SCOPE_CHECK | SCOPE_CLUSTER | SCOPE_RDMA },
	{ .name = "min-sockbuf", .type = OPT_U64, .offset = OFF(min_sockbuf), .metavar = "BYTES",
	  .help = "Smallest acceptable net.core.rmem_max and wmem_max.", .def = OPT_DEF_U64(DEFAULT_MIN_SOCKBUF),
	  .key = "min_sockbuf", .scope = SCOPE_FIXES | SCOPE_CHECK | SCOPE_CLUSTER | SCOPE_RDMA },
	{ .name = "expect-gpus", .type = OPT_INT, .offset = OFF(expect_gpus), .metavar = "N",
	  .help = "Number of NVIDIA GPUs this node must have; a different count fails (0: the PCI count is the expectation).",
	  .def = OPT_DEF_INT(0), .key = "expect_gpus", .max = 1024, .scope = SCOPE_FIXES | SCOPE_CHECK | SCOPE_CLUSTER | SCOPE_GPU },
	{ .name = "min-cuda", .type = OPT_STRING, .offset = OFF(min_cuda), .metavar = "X.Y",
	  .help = "Oldest CUDA version the installed driver must support (NVML/CUDA driver version), as MAJOR.MINOR.",
	  .def = OPT_DEF_STR(DEFAULT_MIN_CUDA), .key = "min_cuda", .scope = SCOPE_FIXES | SCOPE_CHECK | SCOPE_CLUSTER | SCOPE_GPU, .valid = site_cuda_form },
	{ .name = "python", .type = OPT_STRING, .offset = OFF(python), .metavar = "PATH",
	  .help = "Python interpreter for the PyTorch check (default: $VIRTUAL_ENV/bin/python, /opt/pytorch-venv/bin/python, python3).",
	  .key = "python", .scope = SCOPE_FIXES | SCOPE_CHECK | SCOPE_CLUSTER | SCOPE_GPU },
	{ .name = "min-bar1", .type = OPT_DOUBLE, .offset = OFF(min_bar1_gib), .metavar = "GIB",
	  .help = "Smallest acceptable GPU BAR1 (the window GPUDirect RDMA maps GPU memory through), in GiB.",
	  .def = OPT_DEF_DOUBLE(DEFAULT_MIN_BAR1_GIB), .key = "min_bar1", .max = 1048576, .scope = SCOPE_FIXES | SCOPE_CHECK | SCOPE_CLUSTER | SCOPE_GPU },
};
const struct opt_table site_opts = OPT_TABLE("site", site_rows);
