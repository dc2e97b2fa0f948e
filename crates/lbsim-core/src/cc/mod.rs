//! Congestion control: a sender's window, moved by ACKs, ECN marks and
//! losses. One file per algorithm; `CongestionControl` dispatches.

pub mod dctcp;

pub use dctcp::DctcpVariant;

/// The window rule a flow runs. New algorithms (EQDS, DCQCN, FASTFLOW...)
/// are new variants plus one file each.
#[derive(Clone, Debug)]
pub enum CongestionControl {
    Dctcp(DctcpVariant),
}

impl CongestionControl {
    /// Bytes the sender may have in flight.
    #[inline]
    pub fn cwnd(&self) -> u64 {
        match self {
            CongestionControl::Dctcp(c) => c.cwnd,
        }
    }

    /// A new packet of `acked` bytes was acknowledged; `ecn` is the echoed mark.
    #[inline]
    pub fn on_ack(&mut self, acked: u64, ecn: bool) {
        match self {
            CongestionControl::Dctcp(c) => c.on_ack(acked, ecn),
        }
    }

    /// A packet of `bytes` was declared lost (timeout) or reported trimmed (NACK).
    #[inline]
    pub fn on_loss(&mut self, bytes: u64) {
        match self {
            CongestionControl::Dctcp(c) => c.on_loss(bytes),
        }
    }
}
