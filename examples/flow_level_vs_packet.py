"""Packet-level vs flow-level (docs/flow-level.md): each flow's wire throughput
on its destination's downlink over a steady window against its max-min rate,
and the ToR uplinks' throughput spread. Run from anywhere with lbsim installed:

    python examples/flow_level_vs_packet.py perm16     # 16 hosts, under a second
    python examples/flow_level_vs_packet.py perm128    # 128 hosts, two seeds, ~10 s
"""
import sys, time
import numpy as np
import lbsim

def compare(base, t1_us, t2_us, label):
    fl = lbsim.flow_level(base)
    flows = fl.flows
    # each flow's last link: ToR -> destination host (one flow per destination in a permutation)
    downs = [p.split(">")[-2] + "->" + p.split(">")[-1] for p in flows["path"]]
    assert len(set(downs)) == len(downs), "needs one flow per destination"
    sc = dict(base)
    sc["stop_at"] = f"{t2_us}us"
    tors = sorted({p.split(">")[1] for p in flows["path"]})
    sc["observe"] = {"ports": downs + tors, "bucket": "100us"}
    t0 = time.time()
    r = lbsim.run(sc, progress=False)
    wall = time.time() - t0
    ports = r.ports
    win = ports[(ports["time_us"] > t1_us) & (ports["time_us"] <= t2_us)]
    got = win.groupby("port")["tx_bytes"].sum() * 8 / ((t2_us - t1_us) * 1e-6)
    obs = np.array([got[d] for d in downs])
    # A downlink also carries the ACKs of its host's own flow (one 64 B ACK per
    # 4096 B data packet at the preset's sizes): take them out.
    sender = {int(s): i for i, s in enumerate(flows["src"])}
    ack_share = 64 / 4096
    pk = np.array([obs[i] - ack_share * obs[sender[int(d)]] if int(d) in sender else obs[i]
                   for i, d in enumerate(flows["dst"])])
    mm = flows["rate_bps"].to_numpy()
    err = pk / mm - 1
    print(f"{label}: {len(mm)} flows, packet run {wall:.1f} s; max-min rates (Gb/s) {sorted(set(np.round(mm/1e9,2)))}")
    print(f"  per-flow error: mean |e| {np.abs(err).mean()*100:.2f} %, max |e| {np.abs(err).max()*100:.2f} %, "
          f"within 5 %: {(np.abs(err) < 0.05).mean()*100:.0f} %")
    full = set(fl.ports[(fl.ports["utilization"] >= 1 - 1e-9) & (fl.ports["flows"] >= 2)]["port"])
    nfull = np.array([sum(int(p) in full for p in ids.split()) for ids in flows["port_ids"]])
    for k in sorted(set(nfull)):
        e = np.abs(err[nfull == k])
        print(f"  flows crossing {k} shared full port(s): {len(e)}, mean |e| {e.mean()*100:.2f} %, max |e| {e.max()*100:.2f} %")
    print(f"  aggregate: packet {pk.sum()/1e12:.3f} Tb/s vs max-min {mm.sum()/1e12:.3f} Tb/s ({(pk.sum()/mm.sum()-1)*100:+.2f} %)")
    up = fl.ports[fl.ports["class"] == "t0->t1"].set_index("name")["throughput_bps"]
    pup = np.array([got.get(n, 0.0) for n in up.index])
    fup = up.to_numpy()
    print(f"  ToR uplinks: packet max {pup.max()/1e9:.1f} min {pup.min()/1e9:.1f} Drop {(pup.max()-pup.min())/1e9:.1f} std {pup.std()/1e9:.1f} Gb/s;"
          f" flow-level max {fup.max()/1e9:.1f} min {fup.min()/1e9:.1f} Drop {(fup.max()-fup.min())/1e9:.1f} std {fup.std()/1e9:.1f} Gb/s;"
          f" per-port max |diff| {np.abs(pup-fup).max()/1e9:.1f} Gb/s")
    print(f"  flow-level congestion rate {fl.summary['congestion_rate']:.3f}")
    worst = np.argsort(-np.abs(err))[:5]
    for i in worst:
        print(f"    flow {i} {flows['path'][i]} packet {pk[i]/1e9:.1f} max-min {mm[i]/1e9:.1f} ({err[i]*100:+.1f} %)")
    return err

which = sys.argv[1]
if which == "perm16":
    base = {"seed": 3, "topology": {"hosts": 16, "radix": 8}, "lb": {"kind": "ecmp"},
            "workload": {"kind": "permutation", "size": "4GiB"}}
    compare(base, 1000, 3000, "16-host permutation, ECMP, DCTCP")
elif which == "perm128":
    for seed in (1, 2):
        base = {"seed": seed, "lb": {"kind": "ecmp"}, "workload": {"kind": "permutation", "size": "4GiB"}}
        compare(base, 1000, 3000, f"128-host permutation seed {seed}, ECMP, DCTCP")
