//! AI collectives, flow dependencies and the ideal FCT (issue "Datacenter
//! traces and AI collectives").

mod common;
use common::{dir_with_file, run_ok, scenario};
use lbsim_core::{build, metrics::FlowRecord, Scenario};

/// Every dependent flow started exactly when the last flow it waited for
/// arrived (the engine adds no delay and never starts one early).
fn assert_waits(flows: &[FlowRecord], after: impl Fn(&FlowRecord) -> Vec<usize>) {
    for f in flows {
        let deps = after(f);
        if let Some(last) = deps.iter().map(|&d| flows[d].receiver_finish_us).reduce(f64::max) {
            assert_eq!(
                f.start_us, last,
                "flow {} starts when its last dependency arrives",
                f.id
            );
        }
    }
}

/// A lone flow on one idle path (ECMP) takes exactly its ideal time:
/// slowdown 1, on 2 and 3 tiers, for one packet, a partial last packet and
/// many packets. Sprayed, the short last packet can overtake the full one
/// before it on another path and land up to one serialization earlier than
/// the single-path ideal; the slowdown is still 1.
#[test]
fn lone_flow_slowdown_is_exactly_one() {
    let dir = std::env::temp_dir().join(format!("lbsim-ideal-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for tiers in [2, 3] {
        for size in [1u64, 5000, 1_000_000, 8 << 20] {
            std::fs::write(
                dir.join("one.csv"),
                format!("src,dst,size_bytes,start_us\n0,127,{size},1\n"),
            )
            .unwrap();
            for lb in ["ecmp", "reps"] {
                let s = scenario(&format!(
                    "[topology]\ntiers = {tiers}\n[lb]\nkind = \"{lb}\"\n[workload]\nkind = \"flows\"\nfile = \"one.csv\"\n"
                ));
                let f = &run_ok(&s, Some(&dir)).flows[0];
                let what = format!("{lb}, {tiers} tiers, {size} B");
                if lb == "ecmp" {
                    assert_eq!(f.fct_us, f.ideal_fct_us, "{what}");
                } else {
                    assert!(
                        f.fct_us <= f.ideal_fct_us && f.fct_us > f.ideal_fct_us - 0.082,
                        "{what}"
                    );
                }
                assert_eq!(f.slowdown, 1.0, "{what}");
                assert!(f.measured);
            }
        }
    }
}

/// Ring AllReduce on an idle tree, hosts in order: no two flows share a
/// link, so each rank's chain of 2(N−1) steps crosses consecutive ring hops
/// at their ideal times. The collective finishes within 5 % of the longest
/// such chain (REPS §4.2; the closed-form check).
#[test]
fn ring_allreduce_matches_closed_form() {
    let s = scenario(
        "[topology]\nhosts = 32\nradix = 8\n\
         [workload]\nkind = \"ring_allreduce\"\nsize = \"4MiB\"\n",
    );
    let out = run_ok(&s, None);
    let n = 32;
    assert_eq!(out.flows.len(), 2 * (n - 1) * n);
    assert_eq!(out.summary.unfinished_flows, 0);
    // hop[r]: the ideal time of one chunk from rank r to rank r + 1.
    let hop: Vec<f64> = (0..n).map(|r| out.flows[r].ideal_fct_us).collect();
    assert!(
        hop[7] > hop[0],
        "crossing to the next ToR takes longer than staying under one"
    );
    let closed = (0..n)
        .map(|r| (0..2 * (n - 1)).map(|k| hop[(r + k) % n]).sum::<f64>())
        .fold(0.0, f64::max);
    let got = out.summary.collective_us;
    assert!(
        got >= closed * 0.999 && got <= closed * 1.05,
        "ring AllReduce {got} us, closed form {closed} us"
    );
    // The steps table covers every step, in order.
    let steps = out.tables.iter().find(|t| t.name == "steps").expect("a steps table");
    assert_eq!(steps.rows(), 2 * (n - 1));
    // Step s of rank r waits for step s − 1 of rank r − 1 (flow ids: step · n + rank).
    assert_waits(&out.flows, |f| match f.step as usize {
        0 => vec![],
        s => vec![(s - 1) * n + (f.id as usize % n + n - 1) % n],
    });
}

/// Butterfly AllReduce: 2·log2 N steps; every step starts only when the
/// partner's previous chunk has arrived, and the whole takes at least the
/// sum of its steps' ideal times.
#[test]
fn butterfly_allreduce_respects_its_steps() {
    let s = scenario(
        "[topology]\nhosts = 32\nradix = 8\n[lb]\nkind = \"reps\"\n\
         [workload]\nkind = \"butterfly_allreduce\"\nsize = \"4MiB\"\nlayout = \"cross_spine\"\n",
    );
    let out = run_ok(&s, None);
    let n = 32usize;
    assert_eq!(out.flows.len(), 10 * n);
    assert_eq!(out.summary.unfinished_flows, 0);
    let partner = |step: usize| n >> (if step < 5 { step + 1 } else { 10 - step });
    assert_eq!(out.flows[0].size_bytes, 2 << 20);
    assert_eq!(out.flows[4 * n].size_bytes, (4 << 20) / 32);
    // Flow ids are step · n + rank, whatever host the layout gives each rank.
    assert_waits(&out.flows, |f| match f.step as usize {
        0 => vec![],
        s => {
            let rank = f.id as usize % n;
            vec![(s - 1) * n + (rank ^ partner(s - 1))]
        }
    });
    let lower: f64 = (0..10).map(|s| out.flows[s * n].ideal_fct_us).sum();
    assert!(
        out.summary.collective_us >= lower,
        "{} < {lower}",
        out.summary.collective_us
    );
    assert!(
        out.summary.collective_us < 2.0 * lower,
        "{} vs {lower}",
        out.summary.collective_us
    );
}

/// AllToAll with 2 messages per node under way, refilled from fixed lanes
/// (`refill = "lane"`): message k starts when message k − 2 arrives.
#[test]
fn alltoall_lanes_wait_for_their_own_message() {
    let s = scenario(
        "[topology]\nhosts = 16\nradix = 8\n\
         [workload]\nkind = \"alltoall\"\nsize = \"1MiB\"\nparallel = 2\nrefill = \"lane\"\n",
    );
    let out = run_ok(&s, None);
    assert_eq!(out.flows.len(), 16 * 15);
    assert_eq!(out.summary.unfinished_flows, 0);
    for src in 0..16 {
        let mine: Vec<&FlowRecord> = out.flows.iter().filter(|f| f.src == src).collect();
        assert_at_most_open(&mine, 2);
        for k in 2..mine.len() {
            assert_eq!(mine[k].start_us, mine[k - 2].receiver_finish_us);
        }
    }
}

/// No more than `limit` of `mine` (one node's messages) under way at any start.
fn assert_at_most_open(mine: &[&FlowRecord], limit: usize) {
    for f in mine {
        let open = mine
            .iter()
            .filter(|g| g.start_us <= f.start_us && g.receiver_finish_us > f.start_us)
            .count();
        assert!(
            open <= limit,
            "host {} has {open} messages open at {} us",
            f.src,
            f.start_us
        );
    }
}

/// AllToAll refilled by triggers (the default, the REPS artifact's): a
/// node's messages go in rounds of `parallel`, and the i-th message of a
/// round to be done starts the i-th of the next round, exactly then. Cut
/// into subflows (`lb.kind = "subflows"`) a message is done when its last
/// subflow is. With
/// `release = "ack"` "done" is the sender's last ACK.
#[test]
fn alltoall_refills_on_any_message_done() {
    for (lb, release) in [("ecmp", "arrival"), ("subflows", "arrival"), ("ecmp", "ack")] {
        let s = scenario(&format!(
            "[topology]\nhosts = 16\nradix = 8\n[lb]\nkind = \"{lb}\"\n\
             [workload]\nkind = \"alltoall\"\nsize = \"1MiB\"\nparallel = 3\nrelease = \"{release}\"\n"
        ));
        let out = run_ok(&s, None);
        assert_eq!(out.summary.unfinished_flows, 0, "{lb}, {release}");
        // Per message: its start and when it was done (its last flow).
        let messages = out.flows.iter().map(|f| f.message).max().unwrap() as usize + 1;
        assert_eq!(messages, 16 * 15);
        assert_eq!(
            out.flows.len() > messages,
            lb == "subflows",
            "{lb}: messages cut into subflows"
        );
        let (mut start, mut done, mut src) = (vec![f64::NAN; messages], vec![0f64; messages], vec![0; messages]);
        for f in &out.flows {
            let m = f.message as usize;
            assert!(
                start[m].is_nan() || start[m] == f.start_us,
                "a message's flows start together"
            );
            start[m] = f.start_us;
            let end = if release == "ack" {
                f.sender_finish_us
            } else {
                f.receiver_finish_us
            };
            done[m] = done[m].max(end);
            src[m] = f.src;
        }
        for node in 0..16 {
            let mine: Vec<usize> = (0..messages).filter(|&m| src[m] == node).collect();
            assert_eq!(mine.len(), 15);
            for (round, next) in mine.chunks(3).zip(mine.chunks(3).skip(1)) {
                let mut ends: Vec<f64> = round.iter().map(|&m| done[m]).collect();
                ends.sort_by(f64::total_cmp);
                let starts: Vec<f64> = next.iter().map(|&m| start[m]).collect();
                assert_eq!(
                    starts, ends,
                    "{lb}, {release}: host {node}'s next round starts as its last one ends"
                );
            }
        }
    }
}

/// `release = "ack"`: a flow waiting for another starts when that one's
/// sender holds its last ACK, one ACK's trip after the data arrived.
#[test]
fn release_on_ack_waits_for_the_senders_last_ack() {
    let dir = dir_with_file(
        "release",
        "chain.csv",
        "src,dst,size_bytes,start_us,after\n0,40,100000,0,\n40,80,100000,0,0\n",
    );
    for release in ["arrival", "ack"] {
        let s = scenario(&format!(
            "[workload]\nkind = \"flows\"\nfile = \"chain.csv\"\nrelease = \"{release}\"\n"
        ));
        let f = run_ok(&s, Some(&dir)).flows;
        let expected = match release {
            "ack" => f[0].sender_finish_us,
            _ => f[0].receiver_finish_us,
        };
        assert_eq!(f[1].start_us, expected, "{release}");
        assert!(f[0].sender_finish_us > f[0].receiver_finish_us);
    }
}

/// An htsim connection matrix (`workload.kind = "connection_matrix"`): its
/// triggers start their targets exactly when htsim's would. Oneshot: both
/// targets when the activator's sender has its last ACK; multishot: one
/// target per activator done, in the order they are done; barrier (count 2):
/// when the second of its activators' data has arrived, and never with one.
#[test]
fn connection_matrix_triggers_start_their_targets() {
    let dir = dir_with_file(
        "cm",
        "m.cm",
        "Nodes 128\nConnections 12\nTriggers 4\n\
         0->40 id 1 start 0 size 200000 send_done_trigger 1\n\
         40->80 id 2 trigger 1 size 1000\n\
         41->81 id 3 trigger 1 size 1000\n\
         1->50 id 4 start 2000000 size 300000 send_done_trigger 2\n\
         2->60 id 5 start 0 size 100000 send_done_trigger 2\n\
         50->90 id 6 trigger 2 size 1000\n\
         60->100 id 7 trigger 2 size 1000\n\
         3->70 id 8 start 0 size 50000 recv_done_trigger 3\n\
         70->110 id 9 trigger 3 size 1000\n\
         4->71 id 10 start 0 size 80000 recv_done_trigger 3\n\
         5->72 id 11 start 0 size 1000 recv_done_trigger 4\n\
         72->111 id 12 trigger 4 size 1000\n\
         trigger id 1 oneshot\ntrigger id 2 multishot\ntrigger id 3 barrier count 2\ntrigger id 4 barrier count 2\n",
    );
    let s = scenario("[workload]\nkind = \"connection_matrix\"\nfile = \"m.cm\"\n");
    let out = lbsim_core::run(&s, Some(&dir)).unwrap();
    let f = &out.flows;
    assert_eq!(f[3].start_us, 2.0, "start is in picoseconds");
    assert_eq!(
        (f[1].start_us, f[2].start_us),
        (f[0].sender_finish_us, f[0].sender_finish_us)
    );
    let mut done = [f[3].sender_finish_us, f[4].sender_finish_us];
    done.sort_by(f64::total_cmp);
    assert!(
        f[4].sender_finish_us < f[3].sender_finish_us,
        "the smaller message, started first, is done first"
    );
    assert_eq!(
        [f[5].start_us, f[6].start_us],
        done,
        "multishot: targets in file order, one per activator done"
    );
    assert_eq!(f[8].start_us, f[7].receiver_finish_us.max(f[9].receiver_finish_us));
    assert!(f[7].receiver_finish_us != f[9].receiver_finish_us);
    assert!(
        !f[11].finished && f[11].start_us.is_nan(),
        "a barrier of 2 with one activator never fires"
    );
    assert_eq!(out.summary.unfinished_flows, 1);
    assert!(out.summary.collective_us.is_nan(), "unfinished: no completion time");
}

/// Dependencies from a file: a flow that waits for one that can never
/// finish (its host is cut off) is reported unfinished and never started;
/// the run still ends.
#[test]
fn file_dependencies_and_unfinishable_waits() {
    let dir = dir_with_file(
        "deps",
        "deps.csv",
        "src,dst,size_bytes,start_us,after,step\n0,9,100000,0,,0\n1,9,100000,0,,0\n9,2,100000,5,0;1,1\n3,127,1000,0,,0\n127,4,1000,0,3,1\n",
    );
    let s = scenario(
        "stop_at = \"2ms\"\n[workload]\nkind = \"flows\"\nfile = \"deps.csv\"\n\
         [[failures]]\nkind = \"down\"\nlink = \"t0_15->h127\"\nat = \"0us\"\n",
    );
    let out = lbsim_core::run(&s, Some(&dir)).unwrap();
    let f = &out.flows;
    assert!(f[0].finished && f[1].finished && f[2].finished);
    assert_eq!(
        f[2].start_us,
        f[0].receiver_finish_us.max(f[1].receiver_finish_us).max(5.0)
    );
    assert!(!f[3].finished, "its receiver's link is down");
    assert!(
        !f[4].finished && f[4].start_us.is_nan(),
        "never started: waits for flow 3"
    );
    assert_eq!(out.summary.unfinished_flows, 2);
}

#[test]
fn bad_collective_keys_are_named() {
    for (toml, key) in [
        (
            "[workload]\nkind = \"alltoall\"\nsize = \"1MiB\"\n",
            "workload.parallel",
        ),
        (
            "[workload]\nkind = \"alltoall\"\nsize = \"1MiB\"\nparallel = 0\n",
            "workload.parallel",
        ),
        ("[workload]\nkind = \"ring_allreduce\"\n", "workload.size"),
        (
            "[workload]\nkind = \"ring_allreduce\"\nsize = \"1MiB\"\nparallel = 2\n",
            "workload.parallel",
        ),
        (
            "[workload]\nkind = \"ring_allreduce\"\nsize = \"1MiB\"\nlayout = \"diagonal\"\n",
            "workload.layout",
        ),
        (
            "[workload]\nkind = \"ring_allreduce\"\nsize = \"1MiB\"\niterations = 0\n",
            "workload.iterations",
        ),
        (
            "[topology]\nhosts = 24\nradix = 8\n[workload]\nkind = \"butterfly_allreduce\"\nsize = \"1MiB\"\n",
            "topology.hosts",
        ),
        (
            "[workload]\nkind = \"permutation\"\nsize = \"1MiB\"\ncooldown = \"1ms\"\n",
            "workload.cooldown",
        ),
        (
            "[workload]\nkind = \"permutation\"\nsize = \"1MiB\"\nrelease = \"ack\"\n",
            "workload.release",
        ),
        (
            "[workload]\nkind = \"ring_allreduce\"\nsize = \"1MiB\"\nrelease = \"first_byte\"\n",
            "workload.release",
        ),
        (
            "[workload]\nkind = \"ring_allreduce\"\nsize = \"1MiB\"\nranks = 1\n",
            "workload.ranks",
        ),
        (
            "[workload]\nkind = \"ring_allreduce\"\nsize = \"1MiB\"\nranks = 129\n",
            "workload.ranks",
        ),
        (
            "[workload]\nkind = \"butterfly_allreduce\"\nsize = \"1MiB\"\nranks = 48\n",
            "workload.ranks",
        ),
        (
            "[workload]\nkind = \"ring_allreduce\"\nsize = \"1MiB\"\nschedule = \"doubling\"\n",
            "workload.schedule",
        ),
        (
            "[workload]\nkind = \"alltoall\"\nsize = \"1MiB\"\nparallel = 2\nrefill = \"sometimes\"\n",
            "workload.refill",
        ),
    ] {
        let e = Scenario::from_toml(toml)
            .and_then(|s| build::build(&s, None).map(|_| ()))
            .expect_err(toml);
        assert_eq!(e.key, key, "{toml}: {e}");
    }
}
