"""FaCa §7.3's asymmetric leaf-spine in the flow-level mode (docs/flow-level.md):
16 leaves of 8 hosts under 8 spines, spines t1_0..t1_3 at 380 Gb/s and
t1_4..t1_7 at 400 Gb/s (FaCa §7.3), every other link at the preset's 400 Gb/s
(FaCa's leaves "with a capacity of 200Gbps" are left out).
Each host sends k persistent flows to the host at its position in the paired
leaf (leaf i <-> leaf i + 8, FaCa §7.3: "access switches simultaneously transmit
fixed flows to their connected pairs"); the congestion rate and the ToR uplinks'
Drop and standard deviation for ECMP and WCMP as k grows (after FaCa Fig. 9a).

    python examples/faca_flow_level.py
"""

import tempfile
from pathlib import Path

import lbsim

# Both directions of every cable to spines 0-3 (a switch target would slow only their own ports).
SLOW = "".join(
    f'[[rate_overrides]]\nlink = "t0_{t}->t1_{s}"\ndirection = "both"\nrate = "380Gbps"\n'
    for t in range(16)
    for s in range(4)
)


def scenario(k: int, lb: str, seed: int, folder: Path) -> lbsim.Scenario:
    rows = ["src,dst,size_bytes,start_us"]
    for h in range(128):
        leaf, pos = divmod(h, 8)
        dst = ((leaf + 8) % 16) * 8 + pos
        rows += [f"{h},{dst},1000000,0"] * k
    (folder / f"k{k}.csv").write_text("\n".join(rows) + "\n")
    text = f'seed = {seed}\n[lb]\nkind = "{lb}"\n[workload]\nkind = "flows"\nfile = "k{k}.csv"\n{SLOW}'
    return lbsim.Scenario.from_toml(text, base_dir=folder)


def main() -> None:
    print("flows  lb    congestion rate (mean of 5 seeds)  uplink Drop Gb/s  uplink std Gb/s")
    with tempfile.TemporaryDirectory() as d:
        for k in (1, 2, 4, 8, 16, 32):
            for lb in ("ecmp", "wcmp"):
                rs = [lbsim.flow_level(scenario(k, lb, seed, Path(d))) for seed in range(1, 6)]
                cr = sum(r.summary["congestion_rate"] for r in rs) / len(rs)
                up = [r.summary["classes"]["t0->t1"] for r in rs]
                drop = sum(u["drop_bps"] for u in up) / len(up) / 1e9
                std = sum(u["std_bps"] for u in up) / len(up) / 1e9
                print(f"{128 * k:5d}  {lb:4s}  {cr:33.3f}  {drop:16.1f}  {std:15.1f}")


if __name__ == "__main__":
    main()
