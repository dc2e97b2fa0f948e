//! WCMP (`lb.kind = "wcmp"`): flows split over a ToR's uplinks in proportion
//! to their capacities; with equal capacities it is ECMP exactly.

mod common;

use common::{run_ok, scenario};
use lbsim_core::table::Column;
use lbsim_core::RunOutput;

/// Two racks of 50 hosts under 2 spines (400 Gb/s, the REPS preset), 100
/// flows of 100 KB from rack 0 to rack 1 (each source twice, to distinct
/// destinations), rack 0's uplinks observed.
fn run(lb: &str, extra: &str, tag: &str) -> RunOutput {
    let dir = std::env::temp_dir().join(format!("lbsim-wcmp-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rows: String = (0..100u32)
        .map(|i| format!("{},{},100000,0\n", i % 50, 50 + (i * 7 + i / 50) % 50))
        .collect();
    std::fs::write(dir.join("f.csv"), format!("src,dst,size_bytes,start_us\n{rows}")).unwrap();
    let text = format!(
        "preset = \"reps_artifact\"\n[topology]\nhosts = 100\nradix = 52\nhosts_per_tor = 50\nuplinks_per_tor = 2\n\
         oversubscription = 25\n[lb]\nkind = \"{lb}\"\n[observe]\nports = [\"t0_0\"]\nbucket = \"1ms\"\n\
         [workload]\nkind = \"flows\"\nfile = \"f.csv\"\n{extra}"
    );
    run_ok(&scenario(&text), Some(&dir))
}

/// Bytes each of rack 0's uplinks sent, by link name.
fn uplink_bytes(out: &RunOutput) -> Vec<(String, u64)> {
    let t = out.tables.iter().find(|t| t.name == "ports").expect("ports observed");
    let (Some(Column::Str(names)), Some(Column::U64(bytes))) = (t.column("port"), t.column("tx_bytes")) else {
        panic!("ports table columns")
    };
    let mut sums: Vec<(String, u64)> = Vec::new();
    for (n, b) in names.iter().zip(bytes) {
        match sums.iter_mut().find(|(m, _)| m == n) {
            Some(s) => s.1 += b,
            None => sums.push((n.clone(), *b)),
        }
    }
    sums.sort();
    sums
}

/// Uplink t0_0->t1_0 at 380 Gb/s, t0_0->t1_1 at 400 Gb/s (FaCa §7.3's two
/// spine speeds): each flow lands on the 400 G uplink with probability
/// 400/780, so of 100 flows the count there is binomial (mean 51.3, standard
/// deviation 5.0); it must fall within three deviations. Every flow's bytes
/// go up one uplink, so bytes / bytes-per-flow counts flows exactly.
#[test]
fn flows_split_by_capacity() {
    let slow = "[[rate_overrides]]\nlink = \"t0_0->t1_0\"\nrate = \"380Gbps\"\n";
    let out = run("wcmp", slow, "split");
    assert_eq!(out.summary.unfinished_flows, 0);
    let sums = uplink_bytes(&out);
    let total: u64 = sums.iter().map(|(_, b)| b).sum();
    assert_eq!(total % 100, 0, "every flow the same bytes: {sums:?}");
    let per_flow = total / 100;
    let on_fast = sums.iter().find(|(n, _)| n == "t0_0->t1_1").unwrap().1;
    assert_eq!(on_fast % per_flow, 0, "{sums:?}");
    let k = (on_fast / per_flow) as f64;
    let (p, n): (f64, f64) = (400.0 / 780.0, 100.0);
    let sd = (n * p * (1.0 - p)).sqrt();
    assert!(
        (k - n * p).abs() <= 3.0 * sd,
        "{k} flows on the 400 G uplink (expected {:.1} ± {sd:.1})",
        n * p
    );
    // Weights given by hand override the capacities: all on the first uplink.
    let out = run("wcmp", &format!("{slow}[lb.wcmp]\nweights = [1, 0]\n"), "given");
    let sums = uplink_bytes(&out);
    assert_eq!(sums.iter().find(|(n, _)| n == "t0_0->t1_1").unwrap().1, 0, "{sums:?}");
}

/// Equal capacities give equal weights, and WCMP's hash points then fall on
/// exactly the uplinks ECMP's hash picks: the same run, flow by flow.
#[test]
fn equal_capacities_are_ecmp() {
    let (w, e) = (run("wcmp", "", "eqw"), run("ecmp", "", "eqe"));
    assert_eq!(w.flows.len(), e.flows.len());
    for (a, b) in w.flows.iter().zip(&e.flows) {
        assert_eq!(a.fct_us, b.fct_us, "flow {}", a.id);
    }
    assert_eq!(uplink_bytes(&w), uplink_bytes(&e));
}

#[test]
fn bad_weights_name_their_key() {
    for (weights, says) in [("[1, 2, 3]", "every ToR has 2 uplinks"), ("[0, 0]", "positive")] {
        let err = lbsim_core::scenario::Scenario::from_toml(&format!(
            "[topology]\nhosts = 100\nradix = 52\nhosts_per_tor = 50\nuplinks_per_tor = 2\noversubscription = 25\n\
             [lb]\nkind = \"wcmp\"\n[lb.wcmp]\nweights = {weights}\n"
        ))
        .and_then(|s| lbsim_core::build::build(&s, None).map(|_| ()))
        .expect_err("bad weights refused");
        assert_eq!(err.key, "lb.wcmp.weights", "{err}");
        assert!(err.message.contains(says), "{err}");
    }
}
