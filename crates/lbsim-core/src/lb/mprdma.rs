//! MPRDMA: the multi-path ACK clocking of MP-RDMA (Lu et al., "Multi-Path
//! Transport for RDMA in Datacenters", NSDI '18). With per-packet ACKs, each
//! ACK clocks out the next packet: an unmarked ACK lets that packet go on
//! the ACK's own path (its EV); a marked ACK (or a NACK) sends it on a new
//! random path; a send with no ACK-granted EV pending (the first window,
//! extra packets the window's growth allows) probes a new random path.
//!
//! Only the latest ACK's verdict is pending: MP-RDMA keeps no per-path
//! state and, unlike REPS, caches no entropies (REPS §6). The REPS artifact
//! does the same (`uec.cpp` `processEv_mprdma`: the last ACK's EV). MP-RDMA
//! flows run MP-RDMA's own window rule by default (`cc/mprdma.rs`,
//! `lb.mprdma.cc`).

use super::{LbStats, LoadBalancer, TimeoutInfo};
use crate::rng::Rng;
use crate::time::SimTime;

#[derive(Clone, Debug)]
pub struct Mprdma {
    entropy_space: u32,
    /// The EV the latest feedback granted to the next packet.
    granted: Option<u16>,
}

impl Mprdma {
    pub fn new(entropy_space: u32) -> Self {
        Mprdma {
            entropy_space,
            granted: None,
        }
    }
}

impl LoadBalancer for Mprdma {
    fn next_ev(&mut self, _now: SimTime, rng: &mut Rng, stats: &mut LbStats) -> u16 {
        match self.granted.take() {
            Some(ev) => {
                stats.recycled += 1;
                ev
            }
            None => {
                stats.explored += 1;
                rng.below(self.entropy_space as u64) as u16
            }
        }
    }

    fn on_ack(&mut self, _now: SimTime, ev: u16, ecn: bool, _stats: &mut LbStats) {
        self.granted = (!ecn).then_some(ev);
    }

    fn on_nack(&mut self, _now: SimTime, _ev: u16, _stats: &mut LbStats) {
        self.granted = None;
    }

    fn on_timeout(&mut self, _now: SimTime, _info: TimeoutInfo, _stats: &mut LbStats) {
        self.granted = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::StreamTag;

    #[test]
    fn unmarked_ack_path_is_reused_marked_ack_path_is_left() {
        let mut rng = Rng::new(2, StreamTag::Flow, 0);
        let mut st = LbStats::default();
        let mut m = Mprdma::new(65536);
        let t = SimTime::ZERO;
        m.next_ev(t, &mut rng, &mut st); // first window: probe
        assert_eq!((st.explored, st.recycled), (1, 0));

        m.on_ack(t, 77, false, &mut st);
        assert_eq!(m.next_ev(t, &mut rng, &mut st), 77, "unmarked: the ACK's own path");
        let probe = m.next_ev(t, &mut rng, &mut st);
        assert_ne!(probe, 77, "the grant is used once; the next send probes");
        assert_eq!((st.explored, st.recycled), (2, 1));

        m.on_ack(t, 77, true, &mut st);
        let away = m.next_ev(t, &mut rng, &mut st);
        assert_ne!(away, 77, "marked: a new random path");
        assert_eq!((st.explored, st.recycled), (3, 1));

        // Only the latest feedback counts: a mark cancels an earlier grant.
        m.on_ack(t, 5, false, &mut st);
        m.on_ack(t, 6, true, &mut st);
        assert_ne!(m.next_ev(t, &mut rng, &mut st), 5);
        m.on_ack(t, 5, false, &mut st);
        m.on_nack(t, 5, &mut st);
        assert_ne!(m.next_ev(t, &mut rng, &mut st), 5, "a NACK also moves off");
        assert_eq!((st.explored, st.recycled), (5, 1));
    }
}
