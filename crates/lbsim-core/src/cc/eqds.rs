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
//! Data the network loses outright (no trim, so no NACK) is found by the
//! retransmission timer. With `cc.eqds.rts` (EQDS; htsim `eqds.cpp`
//! `EqdsSrc::rtxTimerExpired`), a sender that then cannot send asks for
//! credit with a request-to-send (`PacketKind::Rts`), at most one per RTT
//! (htsim `sendRTS`). It carries the highest credit count the sender heard,
//! so credits lost on the way are issued again, and the sends it still
//! needs credit for, its pull target as htsim's carries (`computePullTarget`):
//! what that adds to the receiver's count is retransmissions, credited first
//! (htsim `EqdsSink::processRts` adds the RTS's `retx_backlog`). A sender
//! with work, nothing in flight and no credit sends one again every RTO
//! until credit comes.
//!
//! Without RTS (the stand-in lbsim had before): a packet lost to a timeout
//! reuses the credit it spent, and a sender that waits one RTO with nothing
//! in flight and no credit gives itself one.

use crate::time::SimTime;

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
    /// Ask for credit with an RTS instead of granting it to itself.
    rts: bool,
    last_rts: Option<SimTime>,
}

impl EqdsSender {
    /// `unsolicited`: packets the message may send before any credit;
    /// `rts`: recover lost data and credit with requests-to-send.
    pub fn new(unsolicited: u32, rts: bool) -> Self {
        EqdsSender {
            unsolicited,
            granted: 0,
            self_granted: 0,
            spent: 0,
            stall_mark: None,
            rts,
            last_rts: None,
        }
    }

    /// An RTS's content with `pending` sends still to make: the highest
    /// cumulative credit count heard, and the credits needed beyond it.
    pub fn rts_request(&self, pending: u32) -> (u32, u32) {
        (self.granted, pending.saturating_sub(self.unsolicited + self.credits()))
    }

    /// Whether to send an RTS now: in RTS mode, at most one per `rtt`
    /// ("once per RTT is enough", htsim `EqdsSrc::sendRTS`).
    pub fn rts_due(&mut self, now: SimTime, rtt: SimTime) -> bool {
        if !self.rts || self.last_rts.is_some_and(|t| now < t + rtt) {
            return false;
        }
        self.last_rts = Some(now);
        true
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

    /// A packet was declared lost by the retransmission timer. Without RTS
    /// its credit is reused; with RTS the receiver credits it again.
    pub fn on_timeout_loss(&mut self) {
        if !self.rts {
            self.self_granted += 1;
        }
    }

    /// The flow has work, no credit and nothing in flight. Returns true when
    /// it should check again one RTO later. With RTS it always does (and
    /// sends an RTS each time); without, on the second call, if no credit
    /// came meanwhile, it grants itself one.
    pub fn on_stall(&mut self) -> bool {
        if self.rts {
            return true;
        }
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
        let mut s = EqdsSender::new(2, true);
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
    fn without_rts_timeouts_reuse_credit_and_stalls_grant_one_after_an_rto() {
        let mut s = EqdsSender::new(1, false);
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

    /// With RTS a timeout grants nothing: the sender asks, at most once per
    /// RTT, and a stall keeps asking every RTO.
    #[test]
    fn with_rts_timeouts_ask_once_per_rtt_and_never_self_grant() {
        let rtt = SimTime::from_us(10);
        let mut s = EqdsSender::new(1, true);
        s.on_send();
        s.on_timeout_loss();
        assert!(!s.may_send(), "no credit of its own making");
        assert!(s.rts_due(SimTime::from_us(50), rtt));
        assert!(!s.rts_due(SimTime::from_us(59), rtt), "one RTS per RTT");
        assert!(s.rts_due(SimTime::from_us(60), rtt));
        assert!(s.on_stall() && s.on_stall(), "a stall re-checks every RTO");
        assert!(!s.may_send());
        assert_eq!(s.rts_request(3), (0, 3), "heard nothing, needs credit for all 3");
        s.on_credit(1);
        assert_eq!(s.rts_request(3), (1, 2), "holds one credit: needs 2 more");
        assert!(s.may_send());
        assert!(!EqdsSender::new(1, false).rts_due(SimTime::ZERO, rtt), "off: never");
    }
}
