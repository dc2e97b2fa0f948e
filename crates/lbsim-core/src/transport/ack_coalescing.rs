//! ACK coalescing at the receiver (REPS §4.5.1): with ratio n, one ACK per
//! n data packets of a flow. The ACK acknowledges every packet received
//! since the previous one but carries only the entropy value and ECN mark
//! of the packet that triggered it (the paper's worst case for REPS), so
//! the sender's load balancer learns one EV per n packets while its
//! congestion control sees every newly acknowledged byte.
//!
//! The transport is out of order, so an ACK covers a set of seqs, not a
//! range: it carries the list of seqs received since the previous ACK. That
//! list is written once into the flow's log here and the ACK packet carries
//! its position and length (`PacketKind::AckBatch`), which saves an
//! allocation per ACK and reads the same as carrying the list.
//!
//! When a batch is sent early (the end of a message, `transport.ack_delay`):
//! see `transport::receiver`.

use crate::time::SimTime;

/// The packet whose arrival will trigger the next ACK: what that ACK echoes.
#[derive(Clone, Copy, Debug, Default)]
pub struct Trigger {
    pub ev: u16,
    pub ecn: bool,
    /// It asked for an ACK at once (`Packet::ack_requested`).
    pub ack_requested: bool,
    pub route: u8,
    pub sent_at: SimTime,
}

#[derive(Clone, Debug, Default)]
pub struct AckLog {
    seqs: Vec<u32>,
    /// Entries already covered by an ACK.
    acked: usize,
    /// Arrival of the oldest entry not yet acknowledged.
    pub batch_since: SimTime,
    /// The latest entry's packet.
    pub last: Trigger,
    /// An `AckFlush` event is pending for this flow.
    pub flush_armed: bool,
}

impl AckLog {
    /// Log an arrival; returns how many entries await an ACK.
    #[inline]
    pub fn push(&mut self, seq: u32, trigger: Trigger, now: SimTime) -> usize {
        if self.pending() == 0 {
            self.batch_since = now;
        }
        self.seqs.push(seq);
        self.last = trigger;
        self.pending()
    }

    #[inline]
    pub fn pending(&self) -> usize {
        self.seqs.len() - self.acked
    }

    /// Close the batch: (position in the log, length) for the ACK to carry.
    #[inline]
    pub fn take(&mut self) -> (u32, u16) {
        let start = self.acked;
        self.acked = self.seqs.len();
        (start as u32, (self.acked - start) as u16)
    }

    /// The seqs an ACK with this position and length acknowledges.
    #[inline]
    pub fn covered(&self, start: u32, span: u16) -> &[u32] {
        &self.seqs[start as usize..start as usize + span as usize]
    }

    /// Free the log (the sender has every ACK it needs).
    pub fn release(&mut self) {
        self.seqs = Vec::new();
        self.acked = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_cover_what_arrived_since_the_previous_ack() {
        let mut log = AckLog::default();
        let t = Trigger::default();
        assert_eq!(log.push(5, t, SimTime(10)), 1);
        assert_eq!(log.batch_since, SimTime(10));
        assert_eq!(log.push(2, t, SimTime(20)), 2);
        let (s, n) = log.take();
        assert_eq!(log.covered(s, n), [5, 2]);
        assert_eq!(log.pending(), 0);
        log.push(9, t, SimTime(30));
        assert_eq!(log.batch_since, SimTime(30), "a new batch starts");
        let (s, n) = log.take();
        assert_eq!(log.covered(s, n), [9]);
        assert_eq!(log.covered(0, 2), [5, 2], "earlier ACKs still read their own list");
    }
}
