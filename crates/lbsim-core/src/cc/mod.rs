//! Congestion control: what lets a sender put another packet on the wire.
//! Window algorithms move a window with ACKs, ECN marks and losses;
//! receiver-driven ones (EQDS) wait for credits. One file per algorithm;
//! `CongestionControl` dispatches.

pub mod credit_pacer;
pub mod dctcp;
pub mod eqds;
pub mod mprdma;
pub mod wait_to_decrease;

pub use dctcp::DctcpVariant;
pub use eqds::EqdsSender;
pub use mprdma::mprdma_window;

/// The rule a flow runs. New algorithms (DCQCN, FASTFLOW...) are new
/// variants plus one file each.
#[derive(Clone, Debug)]
pub enum CongestionControl {
    Dctcp(DctcpVariant),
    Eqds(EqdsSender),
    /// MP-RDMA's rule: the DCTCP variant with its own cut (`mprdma.rs`).
    Mprdma(DctcpVariant),
}

impl CongestionControl {
    /// Whether a packet may leave with `inflight` bytes unacknowledged:
    /// window-limited like the REPS artifact's sender (in flight < cwnd),
    /// or credit-limited.
    #[inline]
    pub fn may_send(&self, inflight: u64) -> bool {
        match self {
            CongestionControl::Dctcp(c) | CongestionControl::Mprdma(c) => inflight < c.cwnd,
            CongestionControl::Eqds(e) => e.may_send(),
        }
    }

    /// A packet left.
    #[inline]
    pub fn on_send(&mut self) {
        if let CongestionControl::Eqds(e) = self {
            e.on_send();
        }
    }

    /// ACKs newly acknowledged `acked` bytes; `ecn` is the echoed mark.
    #[inline]
    pub fn on_ack(&mut self, acked: u64, ecn: bool) {
        match self {
            CongestionControl::Dctcp(c) | CongestionControl::Mprdma(c) => c.on_ack(acked, ecn),
            CongestionControl::Eqds(_) => {}
        }
    }

    /// A packet of `bytes` was reported trimmed. EQDS waits for the credit
    /// the receiver sends with the NACK.
    #[inline]
    pub fn on_nack(&mut self, bytes: u64) {
        match self {
            CongestionControl::Dctcp(c) | CongestionControl::Mprdma(c) => c.on_loss(bytes),
            CongestionControl::Eqds(_) => {}
        }
    }

    /// MP-RDMA: an ACK from a slow path frees no window; the window loses
    /// the packet it acknowledged (`lb/mprdma.rs`, `ack_is_late`).
    #[inline]
    pub fn on_late_ack(&mut self, bytes: u64) {
        match self {
            CongestionControl::Dctcp(c) | CongestionControl::Mprdma(c) => c.on_loss(bytes),
            CongestionControl::Eqds(_) => {}
        }
    }

    /// A packet of `bytes` was declared lost by the retransmission timer.
    #[inline]
    pub fn on_timeout(&mut self, bytes: u64) {
        match self {
            CongestionControl::Dctcp(c) | CongestionControl::Mprdma(c) => c.on_loss(bytes),
            CongestionControl::Eqds(e) => e.on_timeout_loss(),
        }
    }

    /// A credit with the receiver's cumulative count.
    #[inline]
    pub fn on_credit(&mut self, cumulative: u32) {
        if let CongestionControl::Eqds(e) = self {
            e.on_credit(cumulative);
        }
    }

    /// The flow has work and nothing in flight, yet may not send. True:
    /// check again one RTO later (EQDS waits for a credit that may be lost).
    pub fn on_stall(&mut self) -> bool {
        match self {
            CongestionControl::Dctcp(_) | CongestionControl::Mprdma(_) => false,
            CongestionControl::Eqds(e) => e.on_stall(),
        }
    }
}
