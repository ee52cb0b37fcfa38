/* What a copy between two places can reach: the bandwidth of a PCIe or
 * NVLink link in GB/s (10^9 bytes/s, as nvbandwidth reports) per
 * direction, as "encoded" (the signalling rate less the line code) and
 * "expected" (encoded x a protocol efficiency, the share a large DMA copy
 * reaches).
 *
 * Pure functions: the caller reads the link (the inventory's pci_dev
 * cur_speed and cur_width, from sysfs current_link_speed and
 * current_link_width; NVML's link generation and NVLink counts when live)
 * and passes it in. Anything that is not a known link comes back as an
 * unknown limit with the reason, never as 0 GB/s: a verdict that needs a
 * limit must say it has none (fail closed).
 *
 * PCIe: per lane 2.5, 5, 8, 16, 32, 64 GT/s for Gen1-6, with the line
 * code 8b/10b (Gen1-2) and 128b/130b (Gen3-5) as Linux encodes them
 * (drivers/pci/pci.h PCIE_SPEED2MBS_ENC). Gen6 signals 64 GT/s in PAM4
 * with no line code (1b/1b, PCIe r6.1 Table 1-1 as cited there) and
 * carries data in 256-byte flits, 236 bytes of which hold TLPs (the rest:
 * 6 DLLP, 8 CRC, 6 FEC; the layout of the members-only PCIe 6.0
 * specification as public summaries give it): the Gen6 "encoded" rate
 * here is 236/256 of the raw rate.
 *
 * Protocol efficiency (an assumption; the site can override it,
 * --pcie-efficiency): Gen1-5 0.88 of the encoded rate. A posted write of
 * a 256-byte payload carries 20-24 bytes of framing, sequence number,
 * 3- or 4-DW header and LCRC (256/276 = 92.8%, 256/280 = 91.4%; Intel
 * PCIe application notes AN 456 and AN 690), before flow-control and ACK
 * DLLPs and SKP ordered sets take a few percent more. Public H100 PCIe
 * Gen5 x16 figures reach 0.90-0.91 of 63.02 GB/s (nvbandwidth issue #6:
 * 56.7-57.1 GB/s host to device on three of four GPUs) and
 * Gen4 x16 0.80-0.86 of 31.51 (nvbandwidth README 25.9-26.2; issues #15,
 * #42), so 0.88 is a figure a healthy large copy comes near, while a link
 * trained to half its width or speed lands at half of it. Gen6 0.94: in
 * flit mode only the TLP header remains per packet (256/272 for a 256-byte
 * payload with a 4-DW header); no public GPU measurement yet, so it is
 * the weakest of these figures.
 *
 * NVLink: links x per-link rate per direction: NVLink 2 (V100) 6 x 25,
 * NVLink 3 (A100) 12 x 25, NVLink 4 (H100) 18 x 25 = 450, NVLink 5
 * (B200/GB200) 18 x 50 = 900 GB/s (nvidia.com NVLink pages: 600, 900 and
 * 1800 GB/s in both directions per GPU; nccl-tests issue #149 for 25 GB/s
 * per link and direction). Efficiency 0.80 (--nvlink-efficiency): NCCL's
 * maintainers put application-level NVLink at about 80% of line rate
 * (NVIDIA/nccl issue #1054), and 370 of 450 GB/s
 * per direction on H100 (NVIDIA/nccl issue #1442). */
#ifndef GPUREADY_BENCH_COPY_EXPECT_H
#define GPUREADY_BENCH_COPY_EXPECT_H

#include <stdbool.h>

#define COPY_PCIE_EFFICIENCY 0.88       /* Gen1-5, of the encoded rate */
#define COPY_PCIE_FLIT_EFFICIENCY 0.94  /* Gen6 flit mode, of the flits' TLP bytes */
#define COPY_NVLINK_EFFICIENCY 0.80

enum copy_link_kind {
	COPY_LINK_UNKNOWN,
	COPY_LINK_PCIE,
	COPY_LINK_NVLINK,
	COPY_LINK_OTHER,   /* a limit the caller states (the host side, a site figure) */
};

/* One end's (or a path's) limit per direction. When !known, the numbers
 * are 0 and `label` says why ("PCIe link speed '2.7 GT/s' is no PCIe
 * generation"). */
struct copy_limit {
	bool known;
	enum copy_link_kind kind;
	int gen;                 /* PCIe 1-6, NVLink 2-5; 0 other */
	int width;               /* PCIe lanes or NVLink links; 0 other */
	double encoded_gbps;     /* GB/s per direction after line coding */
	double efficiency;       /* 0 < e <= 1 */
	double expected_gbps;    /* encoded_gbps x efficiency */
	char label[96];          /* "PCIe Gen5 x16", "NVLink 4 x18"; when unknown, the reason */
};

/* The PCIe generation (1-6) of a per-lane rate in GT/s, or 0 when it is
 * none of them (0, negative, NaN, 2.7 ...). */
int copy_pcie_gen(double gts);

/* The limit of a PCIe link at gts GT/s per lane and `width` lanes (1, 2,
 * 4, 8, 12, 16, 32). efficiency <= 0 takes the default for the
 * generation; above 1 is refused. Returns 0, or -EINVAL with *out an
 * unknown limit saying why. */
int copy_expect_pcie(double gts, int width, double efficiency, struct copy_limit *out);

/* The same from sysfs text: current_link_speed ("32.0 GT/s PCIe", older
 * kernels "8 GT/s"; "Unknown" when the kernel cannot tell) and
 * current_link_width ("16"). NULL, empty or garbled text is unknown. */
int copy_expect_pcie_text(const char *speed, const char *width, double efficiency, struct copy_limit *out);

/* The limit of `links` NVLinks of generation gen (2-5) between two GPUs
 * (or out of one GPU); efficiency <= 0 takes COPY_NVLINK_EFFICIENCY.
 * Returns 0 or -EINVAL with *out unknown. */
int copy_expect_nvlink(int gen, int links, double efficiency, struct copy_limit *out);

/* A limit the caller states (a host side measured or given by the site):
 * encoded and expected are both gbps; label names it. gbps <= 0 or not
 * finite gives an unknown limit. */
void copy_limit_fixed(double gbps, const char *label, struct copy_limit *out);

/* The limit of both directions of a link at once (a bidirectional Total
 * matrix): twice one direction's, labelled "..., both directions". An
 * unknown limit stays unknown. out may be one. */
void copy_limit_both(const struct copy_limit *one, struct copy_limit *out);

/* The slower of a copy's two ends (a host copy: the GPU's PCIe link and
 * the host side; a peer copy over PCIe: the two GPUs' links), compared
 * by expected bandwidth. When either end is unknown the result is
 * unknown, naming that end: a limit that ignored an end could not be
 * trusted. out may be a or b. */
void copy_limit_slower(const struct copy_limit *a, const struct copy_limit *b, struct copy_limit *out);

#endif
