#!/usr/bin/env python3
"""Write a recorded machine with N RDMA devices (default 2,000) for perf/many-rdma.sh.

    python3 perf/gen-many-rdma.py DIR [N]

DIR/root is the tree to run `gpuready check --sysroot DIR/root` on. The
machine is the healthy HGX H100 fixture (tests/fixtures/h100-8x-cx7-roce: 8
GPUs, each with a CX-7 on its switch, mlx5_0..mlx5_7) plus N - 8 more CX-7
RoCE functions, mlx5_8..mlx5_{N-1}, each on a root port of its own, 200 to a
PCI domain (0001, 0002, ...). Every device has what the fixture's have: a PCI
function with its config space, a netdev (ens{k+1}f0np0, 10.{k/256}.{k%256}.10),
one port with its GIDs, counters and hw_counters, a uverbs node, an RDMA-CM
ToS of 104, and its lines in the kernel log. The site's NCCL profile, ToS
service, sysctls and memlock limits are the fixture's, over all N devices.

It uses tests/fixtures/gen.py's building blocks, so it is deterministic (two
runs give byte-identical trees) and needs only the Python standard library.
DIR/root is deleted and rewritten; nothing else is touched.
"""
from __future__ import annotations

import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures"))
import gen  # noqa: E402  (tests/fixtures/gen.py)

PER_DOMAIN = 200                     # root ports 00:01.0-00:19.7 of one PCI domain


def machine(n: int) -> gen.Machine:
    assert 8 <= n <= 8 + 255 * PER_DOMAIN, n
    s = gen.HgxSpec("many-rdma", "gpu-h100-01",
                    os=dict(gen.OS_2404_H100, rmem_max=268435456, wmem_max=268435456),
                    gpu_idle_link=True,
                    rail_overrides={k: {"ipv4": f"10.{k >> 8}.{k & 255}.10"} for k in range(n)})
    m = gen.build_hgx(s)               # GPU i and mlx5_i on one switch, i < 8
    for k in range(s.rails, n):        # the others: a root port each
        j = k - s.rails
        dom, slot = 1 + j // PER_DOMAIN, j % PER_DOMAIN
        numa = slot * 2 // PER_DOMAIN
        cpus = s.node_cpus[numa]
        if slot == 0:
            al = gen.Alloc(0xa0000000, 0x400000000000 + dom * 0x10000000000)
        rp = f"{dom:04x}:00:{1 + slot // 8:02x}.{slot % 8}"
        gen.add_root_port(m, rp, f"pci{dom:04x}:00", gen.INTEL, gen.SPR_RP, numa, cpus)
        gen.hgx_nic(m, s, k, f"{dom:04x}:{1 + slot:02x}:00.0", rp, numa, cpus, al)
    devs = [f"mlx5_{k}" for k in range(n)]
    gen.hgx_host_config(m, devs, profile=("nccl-rdma.sh", gen.HEALTHY_NCCL_PROFILE),
                        tos_service=True, rdma_cm={d: 104 for d in devs}, tuned=True,
                        memlock=True)
    gen.add_recording(m, [])
    gen.add_kernel_log(m)
    gen.finalize(m)
    return m


def main(argv: list) -> int:
    if len(argv) not in (1, 2):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    out, n = argv[0], int(argv[1]) if len(argv) > 1 else 2000
    m = machine(n)
    root = os.path.join(out, "root")
    if os.path.lexists(root):
        shutil.rmtree(root)
    os.makedirs(root)
    m.t.flush(root)
    problems = gen.check_tree(root) + gen.check_config(root) + gen.check_kmsg(root)
    for p in problems:
        print(p, file=sys.stderr)
    print(f"{root}: {n} RDMA devices, {len(m.t.files)} files, {len(m.t.links)} symlinks")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
