//! MP-RDMA's congestion window rule (Lu et al., "Multi-Path Transport for
//! RDMA in Datacenters", NSDI '18), per ACK and in packets: an unmarked ACK
//! adds 1/cwnd, an ECN-marked ACK takes away 1/2, so a window of marked
//! ACKs halves cwnd, as DCTCP does at full marking. A loss (timeout or
//! NACK) takes away the lost packet (REPS §4.1: "reduces the congestion
//! window by one MTU in case of packet drops").
//!
//! The REPS artifact's variant (`updateCwndOnAck_MPRDMA`, lbsim's
//! `cc/dctcp.rs`) takes away 1/4 per marked ACK instead; the two differ
//! only there, so this is that variant with `mark_cut_divisor` = 2.

use super::{Cc, CcBuilder, CcCommon, CcEntry, DctcpVariant};
use crate::scenario::registry::{check_params, parse_params, NoParams};
use crate::scenario::ScenarioError;

/// MP-RDMA's window: the DCTCP variant with a half-packet cut per marked ACK.
pub fn mprdma_window(initial: u64, max: u64, mtu: u64) -> DctcpVariant {
    DctcpVariant {
        mark_cut_divisor: 2,
        ..DctcpVariant::new(initial, max, mtu)
    }
}

struct Builder(CcCommon);

impl CcBuilder for Builder {
    fn sender(&self, initial_window: u64) -> Cc {
        Cc::Mprdma(mprdma_window(initial_window, self.0.max_cwnd, self.0.mtu))
    }
}

fn prepare(params: Option<&toml::Value>, common: &CcCommon) -> Result<Box<dyn CcBuilder>, ScenarioError> {
    parse_params::<NoParams>(params, "cc.mprdma")?;
    Ok(Box::new(Builder(*common)))
}

/// `cc.kind = "mprdma"` (and `lb.mprdma.cc`): the shared window keys, no table of its own.
pub const ENTRY: CcEntry = CcEntry {
    name: "mprdma",
    presets: &[],
    check: check_params::<NoParams>,
    prepare,
};

#[cfg(test)]
mod tests {
    use super::*;

    const MTU: u64 = 4096;

    #[test]
    fn a_window_of_marks_halves_a_window_of_clean_acks_adds_one_packet() {
        let mut c = mprdma_window(16 * MTU, 64 * MTU, MTU);
        for _ in 0..16 {
            c.ack(MTU, true);
        }
        assert_eq!(c.cwnd, 8 * MTU, "16 marked ACKs x 1/2 packet");
        for _ in 0..8 {
            c.ack(MTU, false);
        }
        assert!((c.cwnd as i64 - 9 * MTU as i64).abs() < MTU as i64 / 5, "{}", c.cwnd);
    }

    #[test]
    fn losses_floor_and_cap() {
        let mut c = mprdma_window(4 * MTU, 4 * MTU, MTU);
        c.on_loss(MTU);
        assert_eq!(c.cwnd, 3 * MTU);
        for _ in 0..10 {
            c.ack(MTU, true);
        }
        assert_eq!(c.cwnd, MTU, "never below one packet");
        for _ in 0..100 {
            c.ack(MTU, false);
        }
        assert_eq!(c.cwnd, 4 * MTU, "capped at max_cwnd");
    }
}
