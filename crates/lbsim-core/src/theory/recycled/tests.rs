//! Tests of the recycled model: hand-traced steps of the process, its
//! invariants, and Theorem 5.1 and App. D.1's claims checked over seeds.

use super::*;

fn params(n: usize, tau: u32, b: u32) -> RecycledParams {
    RecycledParams {
        n,
        tau,
        b,
        ack_every: 1,
        schedule: Schedule::Immediate,
        steps: 100,
        record_loads: true,
        initial_loads: None,
    }
}

#[test]
fn hand_traced_single_bin() {
    // n = 1: step 1 throws one fresh ball (colour 0); from step 2 on it is
    // removed from a bin holding 1 ≤ τ and recycled: frozen at once.
    let p = params(1, 2, 3);
    let mut s = Recycled::new(&p, 1).unwrap();
    assert_eq!(s.step(), 1);
    assert_eq!(s.bin_colours(0), vec![0]);
    assert!(s.is_frozen());
    assert_eq!(s.step(), 0);
    assert_eq!((s.bin_colours(0), s.memory(0)), (vec![0], Some(0)));
    let r = run(&p, 1).unwrap();
    assert_eq!(r.summary.converged_step, Some(1));
    assert!(r.series.max_load.iter().all(|&m| m == 1) && r.series.steps() == 100);
}

#[test]
fn hand_traced_overfull_bin_forgets() {
    // n = 1, τ = 1, three balls (colours 0, 1, 2): each removal is from a
    // bin holding 3 > τ, so the colour forgets and a fresh colour (3, 4,
    // 5, then 0 again: round-robin over free colours) is thrown.
    let mut p = params(1, 1, 6);
    p.initial_loads = Some(vec![3]);
    let mut s = Recycled::new(&p, 1).unwrap();
    assert_eq!(s.bin_colours(0), vec![0, 1, 2]);
    for (t, want) in [
        (1, vec![1, 2, 3]),
        (2, vec![2, 3, 4]),
        (3, vec![3, 4, 5]),
        (4, vec![4, 5, 0]),
    ] {
        assert_eq!(s.step(), 1, "step {t}");
        assert_eq!(s.bin_colours(0), want, "step {t}");
        assert_eq!(s.memory(want[0]), None);
    }
    assert!(!s.is_frozen());
    // 3 balls in 1 bin with τ = 1 can never converge (balls are conserved).
    let r = run(&p, 1).unwrap();
    assert_eq!(r.summary.converged_step, None);
    assert_eq!(
        (r.summary.last_over_tau, r.summary.peak_load, r.summary.final_balls),
        (100, 3, 3)
    );
    assert!(r.fresh.iter().all(|&f| f == 1));
}

#[test]
fn hand_traced_two_bins() {
    // n = 2, τ = 1, bins [2, 1]: bin 0 (2 > τ) forgets colour 0, bin 1
    // (1 ≤ τ) recycles colour 2 into itself; one fresh throw (colour 3).
    let mut p = params(2, 1, 2);
    p.initial_loads = Some(vec![2, 1]);
    let mut s = Recycled::new(&p, 7).unwrap();
    assert_eq!((s.bin_colours(0), s.bin_colours(1)), (vec![0, 1], vec![2]));
    assert_eq!(s.step(), 1);
    assert_eq!(s.memory(0), None);
    assert_eq!(s.memory(2), Some(1));
    let b1 = s.bin_colours(1);
    assert_eq!(b1[0], 2);
    let fresh_in_0 = s.bin_colours(0).contains(&3);
    assert_eq!(s.bin_colours(0).len() + b1.len(), 3);
    assert_eq!(fresh_in_0, b1.len() == 1);
    assert_eq!(s.bin_colours(0)[0], 1);
}

#[test]
fn balls_grow_only_by_empty_bins() {
    // n throws per step, one removal per non-empty bin: balls grow by the
    // number of empty bins, and a bin grows only through fresh balls (App. C).
    let p = RecycledParams {
        steps: 400,
        record_loads: true,
        ..RecycledParams::theorem(16, 400)
    };
    let r = run(&p, 3).unwrap();
    let loads = r.series.loads.unwrap();
    let mut prev = vec![0u32; 16];
    for t in 0..r.summary.converged_step.unwrap() as usize {
        let row = &loads[t * 16..(t + 1) * 16];
        let empty = prev.iter().filter(|&&l| l == 0).count() as u64;
        assert_eq!(r.series.balls[t], prev.iter().map(|&l| l as u64).sum::<u64>() + empty);
        let growth: u32 = row.iter().zip(&prev).map(|(&a, &b)| a.saturating_sub(b)).sum();
        assert!(
            growth <= r.fresh[t],
            "step {}: growth {growth} > fresh {}",
            t + 1,
            r.fresh[t]
        );
        prev = row.to_vec();
    }
}

#[test]
fn frozen_state_repeats() {
    let p = RecycledParams {
        record_loads: true,
        ..RecycledParams::theorem(16, 300)
    };
    let r = run(&p, 9).unwrap();
    let t = r.summary.converged_step.expect("converges") as usize;
    // Simulating past the freeze gives exactly the repeated state.
    let mut s = Recycled::new(&p, 9).unwrap();
    for _ in 0..t {
        s.step();
    }
    let frozen: Vec<u32> = s.loads().collect();
    for _ in 0..50 {
        assert_eq!(s.step(), 0);
        assert_eq!(s.loads().collect::<Vec<_>>(), frozen);
    }
    let loads = r.series.loads.as_ref().unwrap();
    assert_eq!(&loads[loads.len() - 16..], &frozen[..]);
    assert_eq!(r.series.steps(), 300);
}

#[test]
fn round_robin_batches_cycle_and_remember() {
    // n = 2, b = 2, τ large: step 1 throws colours 0, 1 at random, step 2
    // colours 2, 3 at random. By step 3 colours 0 and 1 have both been
    // removed (at step 2, or the second of a shared bin at step 3 before
    // the throws), so batch 0 throws them into the bins they remember.
    let mut p = params(2, 100, 2);
    p.schedule = Schedule::RoundRobin;
    let mut s = Recycled::new(&p, 4).unwrap();
    assert_eq!(s.step(), 2);
    let first: Vec<Option<u32>> = [0u32, 1]
        .map(|c| (0..2u32).find(|&i| s.bin_colours(i as usize).contains(&c)))
        .to_vec();
    assert_eq!(s.step(), 2);
    assert_eq!(s.step(), 0);
    for c in [0u32, 1] {
        let m = s.memory(c).expect("remembers");
        assert_eq!(Some(m), first[c as usize]);
        assert_eq!(s.bin_colours(m as usize).iter().filter(|&&x| x == c).count(), 1);
    }
}

#[test]
fn coalescing_recycles_every_kth_removal() {
    // n = 1, τ large, ack_every 2: the single ball is recycled at every
    // other removal and replaced by a fresh colour otherwise.
    let mut p = params(1, 100, 4);
    p.ack_every = 2;
    let mut s = Recycled::new(&p, 1).unwrap();
    assert_eq!(s.step(), 1); // colour 0
    assert_eq!(s.step(), 1); // removal 1: no feedback; fresh colour 1
    assert_eq!(s.bin_colours(0), vec![1]);
    assert_eq!(s.step(), 0); // removal 2: feedback, colour 1 recycled
    assert_eq!((s.bin_colours(0), s.memory(1)), (vec![1], Some(0)));
    assert_eq!(s.step(), 1); // removal 3: none; colour 1 freed, fresh colour 2
    assert_eq!((s.bin_colours(0), s.memory(1)), (vec![2], None));
    assert!(!s.is_frozen());
}

#[test]
fn deterministic_per_seed_and_errors_named() {
    let p = RecycledParams {
        record_loads: true,
        ..RecycledParams::theorem(8, 200)
    };
    assert_eq!(run(&p, 5).unwrap(), run(&p, 5).unwrap());
    assert_ne!(run(&p, 5).unwrap().series.loads, run(&p, 6).unwrap().series.loads);
    let bad_n = RecycledParams { n: 0, ..p.clone() };
    assert_eq!(run(&bad_n, 1).unwrap_err().param, "n");
    let bad_b = RecycledParams { b: 0, ..p.clone() };
    assert_eq!(run(&bad_b, 1).unwrap_err().param, "b");
    let bad_k = RecycledParams {
        ack_every: 0,
        ..p.clone()
    };
    assert_eq!(run(&bad_k, 1).unwrap_err().param, "ack_every");
    let bad_init = RecycledParams {
        initial_loads: Some(vec![1; 3]),
        ..p.clone()
    };
    assert_eq!(run(&bad_init, 1).unwrap_err().param, "initial_loads");
    assert_eq!(Schedule::parse("fifo").unwrap_err().param, "schedule");
}

/// n·ln n, the unit of Theorem 5.1's O(n log n) convergence time.
fn n_ln_n(n: usize) -> f64 {
    n as f64 * (n as f64).ln()
}

/// The steps within which at least 95 of 100 seeds converge, in units of n ln n.
fn c95(p: &RecycledParams) -> f64 {
    let mut cs: Vec<f64> = (1..=100u64)
        .map(|seed| {
            run_summary(p, seed)
                .unwrap()
                .converged_step
                .map_or(f64::INFINITY, |t| t as f64 / n_ln_n(p.n))
        })
        .collect();
    cs.sort_by(f64::total_cmp);
    cs[94]
}

#[test]
fn theorem_5_1_converges_in_order_n_log_n() {
    // Thm 5.1: n ≥ 16, τ = ⌈4 ln n⌉, b = ⌈2.4 ln n⌉, full load: converged
    // (every bin non-empty and at most τ for good) within c·n ln n steps
    // in ≥ 95 of 100 seeds. From empty bins (phase 1 of App. C, a coupon
    // collector) and from App. C's worst phase-2 start.
    for n in [16, 32, 64, 128] {
        let steps = (50.0 * n_ln_n(n)) as u64;
        let p = RecycledParams::theorem(n, steps);
        let c = c95(&p);
        assert!(c <= 1.5, "n = {n}: c95 = {c}");
        let p2 = RecycledParams {
            initial_loads: Some(phase_two_start(n)),
            ..p.clone()
        };
        // Draining the pile alone takes 2n ln n steps: c is about 2, whatever n.
        let c2 = c95(&p2);
        assert!((1.5..=2.5).contains(&c2), "n = {n}: phase-2 c95 = {c2}");
    }
}

#[test]
fn phase_two_start_matches_the_bound() {
    let v = phase_two_start(16);
    assert_eq!(v.iter().sum::<u32>(), (2.0 * n_ln_n(16)) as u32 + 16);
    assert!(v.iter().all(|&l| l >= 1) && v[0] > theorem_tau_of(16));
}

fn theorem_tau_of(n: usize) -> u32 {
    super::super::theorem_tau(n)
}

#[test]
fn coalescing_weakens_recycling_but_beats_ops() {
    // App. D.1, Fig. 17 (n = 16, 10 000 steps, full load): with 2:1 and 4:1
    // coalescing the maximum load stays near τ (time mean under 2τ); 8:1
    // still keeps it well below OPS's.
    let n = 16;
    let mean_max = |k: u32, seed: u64| {
        let p = RecycledParams {
            ack_every: k,
            ..RecycledParams::theorem(n, 10_000)
        };
        let r = run(&p, seed).unwrap();
        r.series.max_load.iter().map(|&m| m as f64).sum::<f64>() / 10_000.0
    };
    let tau = super::super::theorem_tau(n) as f64;
    for seed in 1..=3 {
        let ops = super::super::ops::run(
            &super::super::ops::OpsParams {
                n,
                lam: 1.0,
                steps: 10_000,
                record_loads: false,
            },
            seed,
        )
        .unwrap();
        let ops_mean = ops.max_load.iter().map(|&m| m as f64).sum::<f64>() / 10_000.0;
        let (k1, k2, k4, k8) = (
            mean_max(1, seed),
            mean_max(2, seed),
            mean_max(4, seed),
            mean_max(8, seed),
        );
        assert!(k1 <= tau && k1 < k2 && k2 < k4 && k4 < k8, "{k1} {k2} {k4} {k8}");
        assert!(k2 <= 2.0 * tau && k4 <= 2.0 * tau, "τ = {tau}: 2:1 {k2}, 4:1 {k4}");
        assert!(k8 < 0.5 * ops_mean, "8:1 {k8} vs OPS {ops_mean}");
    }
}

#[test]
fn literal_round_robin_schedule_builds_up() {
    // The literal reading of §5.1 at Thm 5.1's constants: balls pile up
    // (more than the App. C bound of 2n ln n + n) and bins stay above τ.
    let p = RecycledParams {
        schedule: Schedule::RoundRobin,
        ..RecycledParams::theorem(16, 3000)
    };
    let s = run_summary(&p, 1).unwrap();
    assert!(s.final_balls as f64 > 2.0 * n_ln_n(16) + 16.0, "{s:?}");
    assert!(s.last_over_tau > 2900, "{s:?}");
}
