//! EQDS, the sender's side (Olteanu et al., "An edge-queued datagram
//! service for all datacenter traffic", NSDI '22). A message sends its first
//! BDP unsolicited, at line rate; every further packet waits for a credit
//! from the receiver, which paces credits at its link rate over its active
//! senders (`credit_pacer`). One credit lets one packet (at most one MTU)
//! go. There is no window: the receiver's pacing is the congestion control,
//! and trimming (a NACK, then a fresh credit) handles the first-RTT incast.
//!
//! Credits arrive as cumulative counts (`PacketKind::Credit`), as EQDS's
//! pull numbers are, so a lost credit is made good by the next one.
//!
//! A packet the network loses silently (a retransmission timeout) had
//! spent its credit on nothing: the sender reuses that credit for the
//! retransmission. This also stands in for EQDS's RTS after a timeout (the
//! retransmission tells the receiver the sender is still there). A sender
//! that waits one RTO with nothing in flight and no credit (its last
//! credits were lost) gives itself one credit, as an RTS would fetch.

#[derive(Clone, Debug)]
pub struct EqdsSender {
    /// Sends left that need no credit (the first BDP).
    unsolicited: u32,
    /// Highest cumulative credit count heard from the receiver.
    granted: u32,
    /// Credits the sender gave itself (timeouts, stalls).
    self_granted: u32,
    spent: u32,
    /// `granted` when a stall check was armed, to tell if credits arrived since.
    stall_mark: Option<u32>,
}

impl EqdsSender {
    /// `unsolicited`: packets the message may send before any credit.
    pub fn new(unsolicited: u32) -> Self {
        EqdsSender {
            unsolicited,
            granted: 0,
            self_granted: 0,
            spent: 0,
            stall_mark: None,
        }
    }

    #[inline]
    fn credits(&self) -> u32 {
        (self.granted + self.self_granted).saturating_sub(self.spent)
    }

    #[inline]
    pub fn may_send(&self) -> bool {
        self.unsolicited > 0 || self.credits() > 0
    }

    /// A packet left: spend the unsolicited allowance first, then a credit.
    #[inline]
    pub fn on_send(&mut self) {
        self.stall_mark = None;
        if self.unsolicited > 0 {
            self.unsolicited -= 1;
        } else {
            self.spent += 1;
        }
    }

    /// A credit packet carrying the receiver's cumulative count.
    #[inline]
    pub fn on_credit(&mut self, cumulative: u32) {
        self.granted = self.granted.max(cumulative);
    }

    /// A packet was declared lost by the retransmission timer: its credit is reused.
    pub fn on_timeout_loss(&mut self) {
        self.self_granted += 1;
    }

    /// The flow has work, no credit and nothing in flight. Returns true when
    /// it should check again one RTO later; on that second call, if no
    /// credit came meanwhile, it grants itself one.
    pub fn on_stall(&mut self) -> bool {
        match self.stall_mark {
            Some(mark) if mark == self.granted => {
                self.self_granted += 1;
                self.stall_mark = None;
                false
            }
            _ => {
                self.stall_mark = Some(self.granted);
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsolicited_first_then_one_packet_per_credit() {
        let mut s = EqdsSender::new(2);
        for _ in 0..2 {
            assert!(s.may_send());
            s.on_send();
        }
        assert!(!s.may_send(), "the first BDP is spent");
        s.on_credit(1);
        assert!(s.may_send());
        s.on_send();
        assert!(!s.may_send());
        // Credits 2 and 3 arrive out of order, 2 after 3: count 3 holds.
        s.on_credit(3);
        s.on_credit(2);
        s.on_send();
        s.on_send();
        assert!(!s.may_send(), "two more credits, two more packets");
    }

    #[test]
    fn timeouts_reuse_credit_and_stalls_grant_one_after_an_rto() {
        let mut s = EqdsSender::new(1);
        s.on_send();
        s.on_timeout_loss();
        assert!(s.may_send(), "the lost packet's credit pays for its retransmission");
        s.on_send();
        assert!(!s.may_send());
        assert!(s.on_stall(), "first check only arms");
        assert!(!s.may_send());
        assert!(!s.on_stall(), "no credit came for an RTO: grant one");
        assert!(s.may_send());
        s.on_send();
        assert!(s.on_stall());
        s.on_credit(1);
        assert!(s.on_stall(), "a credit arrived meanwhile: re-arm instead of granting");
    }
}
