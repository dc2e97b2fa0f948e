//! The switch-side baselines of ConWeave §4.1 (CONGA, LetFlow, DRILL)
//! through the whole engine: they finish, name themselves, are
//! deterministic, run ConWeave's lossless RDMA fabric with every invariant
//! holding, and every bad key of their tables is named. Their mechanisms are
//! tested exactly beside their code (`net::policy::{conga, letflow, drill}`).

mod common;
use common::{run_ok, scenario};
use lbsim_core::{build::build, Scenario};

const KINDS: [&str; 3] = ["conga", "letflow", "drill"];

fn permutation(kind: &str, topology: &str, seed: u64) -> Scenario {
    let mut s = scenario(&format!(
        "{topology}[lb]\nkind = \"{kind}\"\n[workload]\nkind = \"permutation\"\nsize = \"1MiB\"\n"
    ));
    s.seed = seed;
    s
}

const LEAF_SPINE: &str = "[topology]\nhosts = 32\nradix = 8\n";
const FAT_TREE: &str = "[topology]\ntiers = 3\nhosts = 64\nradix = 8\n";

#[test]
fn each_finishes_a_permutation_and_the_tables_name_it() {
    for kind in KINDS {
        let out = run_ok(&permutation(kind, LEAF_SPINE, 1), None);
        assert_eq!(out.summary.unfinished_flows, 0, "{kind}");
        assert!(out.flows.iter().all(|f| f.lb == kind), "{kind}");
    }
    // LetFlow and DRILL decide at every switch that goes up, aggregation switches included.
    for kind in ["letflow", "drill"] {
        let out = run_ok(&permutation(kind, FAT_TREE, 1), None);
        assert_eq!(out.summary.unfinished_flows, 0, "{kind} on 3 tiers");
    }
}

/// The same seed gives the same run, bit for bit; another seed draws other
/// uplinks (LetFlow, DRILL) or breaks other ties (CONGA).
#[test]
fn same_seed_same_results() {
    let fingerprint = |kind: &str, seed: u64| {
        let out = run_ok(&permutation(kind, LEAF_SPINE, seed), None);
        let flows: Vec<(u64, u64, u64)> = out
            .flows
            .iter()
            .map(|f| (f.start_us.to_bits(), f.fct_us.to_bits(), f.retransmissions))
            .collect();
        (out.counters, flows)
    };
    for kind in KINDS {
        let a = fingerprint(kind, 7);
        assert_eq!(a, fingerprint(kind, 7), "{kind}");
        assert_ne!(
            a.1,
            fingerprint(kind, 8).1,
            "{kind}: the seed reaches the switches' draws"
        );
    }
}

/// ConWeave's 128-host leaf-spine with PFC, Go-Back-N and DCQCN
/// (`rdma_lossless`), AliStorage at 50 % for 200 us of arrivals: every flow
/// finishes, nothing is dropped, and the engine's invariants (checked at the
/// end of every run) hold. CONGA and LetFlow keep a flow's packets in order
/// at these gaps; DRILL's spraying costs Go-Back-N retransmissions.
#[test]
fn each_runs_the_lossless_rdma_fabric() {
    let run = |kind: &str| {
        let s = scenario(&format!(
            "preset = \"rdma_lossless\"\n[lb]\nkind = \"{kind}\"\n[workload]\nkind = \"trace\"\n\
             cdf = \"alistorage2019\"\nload = 0.5\nload_basis = \"fabric\"\nduration = \"200us\"\n\
             warmup = \"0us\"\ncooldown = \"50ms\"\n"
        ));
        let out = run_ok(&s, None);
        assert_eq!(out.summary.unfinished_flows, 0, "{kind}");
        assert_eq!(out.counters.drops_congestion + out.counters.drops_failure, 0, "{kind}");
        out
    };
    let ecmp = run("ecmp");
    for kind in KINDS {
        let out = run(kind);
        assert_eq!(out.summary.flows, ecmp.summary.flows, "{kind}: the same workload");
        let retx: u64 = out.flows.iter().map(|f| f.retransmissions).sum();
        if kind == "drill" {
            assert!(retx > 0, "DRILL reorders under Go-Back-N");
        }
        eprintln!(
            "{kind}: {} flows, mean FCT {:.1} us (ECMP {:.1}), p99 {:.1} us (ECMP {:.1}), retransmissions {retx}",
            out.summary.flows,
            out.summary.mean_fct_us,
            ecmp.summary.mean_fct_us,
            out.summary.p99_fct_us,
            ecmp.summary.p99_fct_us
        );
    }
}

#[test]
fn every_bad_key_is_named() {
    let bad = [
        ("lb.letflow.flowlet_timeout", "\"0us\""),
        ("lb.letflow.flowlet_timeout", "\"-5us\""),
        ("lb.letflow.flowlet_timeout", "100"),
        ("lb.letflow.gap", "\"100us\""),
        ("lb.drill.samples", "0"),
        ("lb.drill.samples", "-2"),
        ("lb.drill.samples", "1.5"),
        ("lb.drill.memory", "-1"),
        ("lb.drill.probes", "2"),
        ("lb.conga.flowlet_timeout", "\"0us\""),
        ("lb.conga.flowlet_timeout", "\"-1us\""),
        ("lb.conga.dre_period", "\"0us\""),
        ("lb.conga.dre_period", "50"),
        ("lb.conga.dre_alpha", "0.0"),
        ("lb.conga.dre_alpha", "-0.2"),
        ("lb.conga.dre_alpha", "1.5"),
        ("lb.conga.quantize_bits", "0"),
        ("lb.conga.quantize_bits", "8"),
        ("lb.conga.aging", "\"0us\""),
        ("lb.conga.aging", "\"never\""),
        ("lb.conga.tdre", "\"50us\""),
    ];
    for (key, value) in bad {
        let kind = key.split('.').nth(1).unwrap();
        let overrides = [
            ("lb.kind".to_string(), format!("\"{kind}\"")),
            (key.to_string(), value.to_string()),
        ];
        let e = Scenario::from_toml_with("", &overrides)
            .and_then(|s| build(&s, None).map(|_| ()))
            .expect_err(&format!("{key} = {value} must be rejected"));
        assert_eq!(&e.key, key, "{key} = {value}: {e}");
    }
    // CONGA is a leaf-spine design: a 3-tier tree is refused, as a share of a mix too.
    for lb in [
        "[lb]\nkind = \"conga\"\n",
        "[[lb.mix]]\nkind = \"conga\"\nfraction = 0.5\n",
    ] {
        let s = scenario(&format!(
            "{FAT_TREE}{lb}[workload]\nkind = \"permutation\"\nsize = \"1MiB\"\n"
        ));
        let e = build(&s, None).map(|_| ()).expect_err("conga on 3 tiers");
        assert_eq!(e.key, "topology.tiers", "{e}");
        assert!(e.message.contains("conga"), "{e}");
    }
}
