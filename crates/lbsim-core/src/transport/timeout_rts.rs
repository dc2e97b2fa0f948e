//! The timeout request-to-send of the window congestion controls
//! (`transport.timeout_rts`), as the REPS artifact's sender does it in
//! sender-CC mode (htsim uec.cpp `rtxTimerExpired`, `sendRTS`,
//! `UecSink::processRts`, `checkFinished`):
//!
//! - when the retransmission timer declares a packet lost and no other
//!   retransmission was waiting, and the window has no room for it beside
//!   what is in flight (the retransmission itself counted when the window
//!   lets it go and the host's NIC is idle, as the artifact's `queueForRtx`
//!   then sends it before the check; a busy NIC holds it back), the sender
//!   sends an RTS, at most one per RTO (the
//!   artifact's `_rtt`, which is its fixed RTO);
//! - the RTS is a header-only control packet on an EV drawn from the load
//!   balancer (`LoadBalancer::header_only_ev`: like a data packet's but
//!   for MPRDMA's ACK clocking, which keeps its grant for data), and it
//!   takes a sequence number: the flow is done only once that seq is
//!   acknowledged too. The retransmission
//!   timer covers it like data; lost, it is resent as a header-only data
//!   packet;
//! - the receiver acknowledges it at once, echoing its EV (so REPS may
//!   cache it), and counts no payload for it; its ACK gives congestion
//!   control no bytes (the artifact's receiver byte count does not grow).
//!
//! lbsim's choice of sequence space: the artifact gives the RTS the next PSN
//! among the data's; lbsim numbers RTSs after the message's last packet
//! (seqs `npkts`, `npkts + 1`, ...), allocated one by one as they go, so
//! data seqs stay the message's packet numbers and nothing is held per flow
//! when the key is off. Each RTS seq is acknowledged only by an ACK answering
//! it (the cumulative ACK and bitmap cover data seqs only): where the
//! artifact's next cumulative ACK would cover an RTS whose own ACK was lost,
//! lbsim resends it after an RTO. An RTS counts in flight (header bytes) until
//! acknowledged or timed out, as lbsim counts every send.
//!
//! `transport.rts_in_flight = false` counts it as the artifact does, which
//! loses track (off in every preset; docs/validation.md, Fig. 19): `sendRTS`
//! keeps a send record for it but adds nothing to `_in_flight`, while its
//! timeout (`mark_packet_for_retransmission`) takes the header off like any
//! packet's. A lost RTS so leaves the count 64 bytes below what is really in
//! flight, for good (its resend counts and its ACK uncounts as data do); an
//! RTS acknowledged on its first send changes nothing, and one acknowledged
//! after its timeout gets its bytes back (`handleAckno` finds it queued for
//! resending). The count can go below zero: lbsim keeps the difference as
//! the sender's `inflight_drift`, which the window check subtracts.

use super::sender::{PktRecord, PktState};
use super::{Acked, Flow, Sender};
use crate::cc::CongestionControl;
use crate::lb::LoadBalancer;
use crate::packet::{Packet, PacketKind};
use crate::time::SimTime;

/// At most this many RTSs per flow (one per RTO: over 2.7 s of simulated time at the artifact's RTO).
pub const MAX_RTS_PER_FLOW: u32 = 1 << 16;

impl Sender {
    /// Seq `seq` is a timeout RTS's, not one of the message's packets.
    #[inline]
    pub fn is_rts(&self, seq: u32) -> bool {
        seq >= self.npkts
    }

    /// RTSs sent so far (each took one seq).
    pub fn rts_sent(&self) -> u32 {
        self.seqs - self.npkts
    }

    /// A retransmission waits to go.
    pub(super) fn has_rtx(&mut self) -> bool {
        self.clean_rtx_front();
        !self.rtx.is_empty()
    }

    /// No RTS within the last `rto` (the artifact's `_rtt`), and under the cap.
    fn may_send_rts(&self, now: SimTime, rto: SimTime) -> bool {
        self.rts_sent() < MAX_RTS_PER_FLOW && self.last_rts.is_none_or(|t| now >= t + rto)
    }

    /// Take the next seq for an RTS sent now: logged for the timer and in
    /// flight like a data send. Returns (seq, wire size: the header).
    fn take_rts(&mut self, now: SimTime) -> (u32, u32) {
        let seq = self.seqs;
        self.seqs += 1;
        self.pkts.push(PktRecord::sent(PktState::InFlight, now));
        self.send_log.push_back((now, seq));
        let size = self.wire_size(seq);
        if !self.rts_uncounted {
            self.inflight += size as u64;
        }
        self.last_rts = Some(now);
        (seq, size)
    }

    /// Whether RTS seq `seq`'s current send is counted in flight: always,
    /// but under `rts_uncounted` only once it was resent.
    pub(super) fn rts_counted(&self, seq: u32) -> bool {
        let i = (seq - self.npkts) as usize;
        !self.rts_uncounted || self.rts_resent.get(i / 64).is_some_and(|w| w >> (i % 64) & 1 == 1)
    }

    /// RTS seq `seq` goes again, as a header-only data packet, counted.
    pub(super) fn note_rts_resent(&mut self, seq: u32) {
        if self.rts_uncounted {
            let i = (seq - self.npkts) as usize;
            if self.rts_resent.len() <= i / 64 {
                self.rts_resent.resize(i / 64 + 1, 0);
            }
            self.rts_resent[i / 64] |= 1 << (i % 64);
        }
    }

    /// An uncounted RTS's bytes were taken off the count (its timeout).
    pub(super) fn add_drift(&mut self, size: u64) {
        self.inflight_drift += size;
        self.drifted = true;
    }

    /// The ACK answering RTS seq `seq`. Uncounted, in flight: `on_ack` takes
    /// off bytes that were never added, so they are added first; declared
    /// lost: its timeout's drift is undone.
    pub(super) fn on_rts_ack(&mut self, seq: u32) -> Acked {
        let st = self.pkts[seq as usize].state;
        if !self.rts_counted(seq) {
            let size = self.wire_size(seq) as u64;
            match st {
                PktState::InFlight => self.inflight += size,
                PktState::Lost => {
                    self.inflight_drift -= size;
                    self.drifted = self.inflight_drift > 0;
                }
                _ => {}
            }
        }
        self.on_ack(seq)
    }
}

impl Flow {
    /// The timer just declared a packet of `size` bytes lost into an empty
    /// retransmission queue, with `later` more bytes declared lost at the
    /// same firing: whether to send an RTS (artifact `rtxTimerExpired`:
    /// `cwnd < size + in_flight` after the retransmission went if it could).
    pub(super) fn rts_after_timeout(&self, size: u64, later: u64, now: SimTime, rto: SimTime, nic_free: bool) -> bool {
        let Some(cwnd) = self.cc.window() else {
            return false;
        };
        let mut inflight = self.tx.window_inflight() + later;
        // The artifact's queueForRtx sends the retransmission before the check
        // only when its NIC is idle (uec.cpp `sendIfPermitted`,
        // `UecNIC::requestSending` returns no route while a packet is on the
        // wire); otherwise the packet waits and is not in flight yet.
        if nic_free && cwnd > inflight {
            inflight += size;
        }
        cwnd < size + inflight && self.tx.may_send_rts(now, rto)
    }

    /// The RTS the timer asked for: the next seq, a header-only control
    /// packet on an EV of the balancer's choice (artifact `sendRTS`).
    pub fn timeout_rts_packet(&mut self, id: u32, now: SimTime) -> Packet {
        let (seq, size) = self.tx.take_rts(now);
        let ev = self.lb.header_only_ev(now, &mut self.rng, &mut self.lb_stats);
        self.tx.record_ev(seq, ev);
        Packet {
            seq,
            ev,
            route: self.route,
            ..Packet::new(PacketKind::Rts, id, self.spec.src, self.spec.dst, size, now)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::dctcp::DctcpVariant;
    use crate::cc::Cc;
    use crate::lb::Lb;
    use crate::rng::{Rng, StreamTag};
    use crate::scenario::TransportKind;
    use crate::transport::receiver::{self, Receive, Reply, Sack};
    use crate::transport::{FlowSpec, TransportParams};

    const MTU: u32 = 4150;
    const US: fn(u64) -> SimTime = SimTime::from_us;

    fn params(timeout_rts: bool) -> TransportParams {
        TransportParams {
            rto: US(10),
            trimming: false,
            acks: receiver::tests::PER_PACKET,
            rtt_outstanding_only: false,
            timeout_rts,
            ack_request: false,
            timeout_nic_turn: false,
        }
    }

    /// A started 4-packet flow under a 3-packet window.
    fn flow() -> Flow {
        let spec = FlowSpec {
            src: 0,
            dst: 1,
            size: 4 * (MTU as u64 - 64),
            start: SimTime::ZERO,
        };
        let cc = Cc::Dctcp(DctcpVariant::new(3 * MTU as u64, 8 * MTU as u64, MTU as u64));
        let lb = Lb::Ops(crate::lb::ops::Ops::new(65536));
        let kind = crate::scenario::LbKind::named("ops").unwrap();
        let rng = Rng::new(1, StreamTag::Flow, 0);
        let mut f = Flow::new(spec, MTU, 64, TransportKind::Sack, cc, lb, kind, rng, US(8));
        f.start();
        f
    }

    /// Seqs 0, 1, 2 (the window) sent at 0, 1 and 2 us.
    fn fill(f: &mut Flow) {
        for t in 0..3 {
            f.next_packet(0, US(t), false);
        }
        assert!(!f.can_send(), "the window: 3 packets");
    }

    /// Send what the window allows now: the seqs sent.
    fn send(f: &mut Flow, now: SimTime) -> Vec<u32> {
        let mut out = Vec::new();
        while f.can_send() {
            out.push(f.next_packet(0, now, false).0.seq);
        }
        out
    }

    fn ack(f: &mut Flow, p: &TransportParams, pkt: &Packet, now: SimTime) -> bool {
        f.on_ack(&Packet::reply(pkt, PacketKind::Ack, 64), now, p)
    }

    /// The exact sequence: a window-limited timeout sends one RTS on the
    /// next seq beyond the message; a second timeout within the RTO sends
    /// none; the flow is not done when all its data is acknowledged but
    /// only with the RTS's seq; the RTS lost times out and goes again as a
    /// header-only data packet. Without the key: no RTS, done with the data.
    #[test]
    fn a_window_limited_timeout_sends_one_rts_per_rto_on_a_seq_of_its_own() {
        let p = params(true);
        let mut f = flow();
        let mut lost = Vec::new();
        fill(&mut f);
        // 10 us: seq 0 times out; window 2 packets, 2 in flight: full.
        let out = f.on_timer(US(10), &p, true, &mut lost);
        assert_eq!((out.lost, out.rts, out.rearm), (1, true, Some(US(11))));
        let rts = f.timeout_rts_packet(0, US(10));
        assert_eq!((rts.kind, rts.seq, rts.size), (PacketKind::Rts, 4, 64));
        assert_eq!(f.tx.rts_sent(), 1);
        assert_eq!(f.tx.inflight, 2 * MTU as u64 + 64, "the RTS counts in flight");
        // 10.5 us: seq 2's ACK opens the window: seq 0 again, then seq 3.
        let t = SimTime::from_ns(10_500);
        assert!(!ack(&mut f, &p, &Packet::data(0, 2, 0, 1, MTU, 0, 0, SimTime::ZERO), t));
        assert_eq!(send(&mut f, t), [0, 3]);
        // 11 us: seq 1 overdue, nothing else waiting, window full, but an
        // RTS went 1 us ago: none now.
        let out = f.on_timer(US(11), &p, true, &mut lost);
        assert_eq!((out.lost, out.rts), (1, false));
        // The RTS's ACK acknowledges its seq and gives the window nothing.
        let cwnd = f.cc.window();
        assert!(!ack(&mut f, &p, &rts, US(11)));
        assert_eq!(f.cc.window(), cwnd);
        assert_eq!(f.tx.inflight, 2 * MTU as u64, "0 and 3");
        for seq in [0, 3] {
            assert!(!ack(&mut f, &p, &Packet::data(0, seq, 0, 1, MTU, 0, 0, t), US(12)));
        }
        assert_eq!(send(&mut f, US(12)), [1]);
        assert!(
            ack(&mut f, &p, &Packet::data(0, 1, 0, 1, MTU, 0, 0, US(12)), US(13)),
            "all 5 seqs"
        );

        // The same flow, its RTS lost: done only once the RTS's seq arrives.
        let mut f = flow();
        fill(&mut f);
        assert!(f.on_timer(US(10), &p, true, &mut lost).rts);
        f.timeout_rts_packet(0, US(10));
        for seq in [1, 2] {
            ack(
                &mut f,
                &p,
                &Packet::data(0, seq, 0, 1, MTU, 0, 0, SimTime::ZERO),
                US(11),
            );
        }
        assert_eq!(send(&mut f, US(11)), [0, 3]);
        for seq in [0, 3] {
            assert!(!ack(&mut f, &p, &Packet::data(0, seq, 0, 1, MTU, 0, 0, US(11)), US(12)));
        }
        assert!(!f.is_done() && !f.tx.has_work(), "all data acknowledged, the RTS not");
        // 20 us: the RTS's seq times out; the window has room: no new RTS.
        let out = f.on_timer(US(20), &p, true, &mut lost);
        assert_eq!((out.lost, out.rts, f.tx.timeouts), (1, false, 2));
        let (again, rtx) = f.next_packet(0, US(20), false);
        assert_eq!(
            (again.kind, again.seq, again.size, rtx),
            (PacketKind::Data, 4, 64, true)
        );
        assert!(ack(&mut f, &p, &again, US(21)));

        // The key off: the same timeout sends nothing; the data finishes the flow.
        let off = params(false);
        let mut f = flow();
        fill(&mut f);
        let out = f.on_timer(US(10), &off, true, &mut lost);
        assert_eq!((out.lost, out.rts, out.rearm), (1, false, Some(US(11))));
        ack(
            &mut f,
            &off,
            &Packet::data(0, 2, 0, 1, MTU, 0, 0, SimTime::ZERO),
            US(11),
        );
        assert_eq!(send(&mut f, US(11)), [0, 3]);
        let done: Vec<bool> = [1, 0, 3]
            .iter()
            .map(|&s| ack(&mut f, &off, &Packet::data(0, s, 0, 1, MTU, 0, 0, US(11)), US(12)))
            .collect();
        assert_eq!(done, [false, false, true]);
    }

    /// `transport.rts_in_flight = false`, the artifact's count: the RTS adds
    /// nothing, its timeout takes 64 bytes off, so once the window is down to
    /// one packet (three losses) the sender has two out where the counted
    /// RTS lets one go. Its resend counts and its ACK uncounts: the 64 bytes
    /// stay missing.
    #[test]
    fn a_lost_uncounted_rts_leaves_the_window_its_header_for_good() {
        let p = params(true);
        let mut lost = Vec::new();
        for (uncounted, after_rts, resent) in [
            (false, 2 * MTU as u64 + 64, vec![0]),
            (true, 2 * MTU as u64, vec![0, 1]),
        ] {
            let mut f = flow();
            f.tx.set_rts_uncounted(uncounted);
            fill(&mut f);
            assert!(f.on_timer(US(10), &p, true, &mut lost).rts);
            f.timeout_rts_packet(0, US(10));
            assert_eq!(f.tx.inflight, after_rts);
            f.on_timer(US(11), &p, true, &mut lost);
            f.on_timer(US(12), &p, true, &mut lost);
            // 20 us: the RTS's seq times out too; the window is one packet.
            assert_eq!(f.on_timer(US(20), &p, true, &mut lost).lost, 1);
            assert_eq!((f.tx.inflight, f.cc.window()), (0, Some(MTU as u64)));
            assert_eq!(send(&mut f, US(20)), resent, "uncounted: {uncounted}");
            let drift = if uncounted { 64 } else { 0 };
            assert_eq!(f.tx.window_inflight(), f.tx.inflight - drift);
            // Acknowledge whatever goes until done: the RTS's seq goes again as data.
            let (mut sent, mut done) = (resent, false);
            for t in 21..30 {
                done = sent
                    .iter()
                    .any(|&seq| ack(&mut f, &p, &Packet::data(0, seq, 0, 1, MTU, 0, 0, US(t)), US(t)));
                if done {
                    break;
                }
                sent = send(&mut f, US(t));
            }
            assert!(done);
            assert_eq!((f.tx.inflight, f.tx.inflight_drift), (0, drift));
        }
    }

    /// Under the artifact's count an RTS acknowledged on its first send
    /// changes nothing, and one acknowledged only after its timeout gets its
    /// 64 bytes back (`handleAckno` finds it queued for resending).
    #[test]
    fn an_acknowledged_uncounted_rts_leaves_the_count_as_it_was() {
        let p = params(true);
        let mut lost = Vec::new();
        for late in [false, true] {
            let mut f = flow();
            f.tx.set_rts_uncounted(true);
            fill(&mut f);
            f.on_timer(US(10), &p, true, &mut lost);
            let rts = f.timeout_rts_packet(0, US(10));
            let before = f.tx.inflight;
            if late {
                f.on_timer(US(20), &p, true, &mut lost);
                assert_eq!(f.tx.inflight_drift, 64, "timed out: 64 bytes off");
            }
            ack(&mut f, &p, &rts, US(21));
            assert_eq!((f.tx.inflight_drift, f.tx.window_inflight()), (0, f.tx.inflight));
            if !late {
                assert_eq!(f.tx.inflight, before);
            }
        }
    }

    /// A timeout that leaves the window room for the retransmission and one
    /// more packet sends no RTS; one with room for the retransmission only
    /// does, when the NIC is idle and the retransmission leaves at once.
    #[test]
    fn an_rts_goes_only_when_the_window_cannot_take_the_retransmission_and_one_more() {
        let p = params(true);
        let mut lost = Vec::new();
        // Seqs 0, 1 in flight under a window of 3 packets (cut to 2 by the loss).
        let mut f = flow();
        f.next_packet(0, SimTime::ZERO, false);
        f.next_packet(0, US(1), false);
        let out = f.on_timer(US(10), &p, true, &mut lost);
        assert_eq!(
            (out.lost, out.rts),
            (1, true),
            "2 packets of window: seq 1 and the retransmission"
        );
        // The same with the host's NIC busy: the retransmission waits for it
        // and is not in flight at the check (the artifact's `queueForRtx`
        // sends it first only from an idle NIC), so the window has room: no RTS.
        let mut f = flow();
        f.next_packet(0, SimTime::ZERO, false);
        f.next_packet(0, US(1), false);
        let out = f.on_timer(US(10), &p, false, &mut lost);
        assert_eq!((out.lost, out.rts), (1, false), "NIC busy: seq 1 only in flight");
        // Seq 0 alone in flight: after the loss the window (2) holds the retransmission and one more.
        let mut f = flow();
        f.next_packet(0, SimTime::ZERO, false);
        let out = f.on_timer(US(10), &p, true, &mut lost);
        assert_eq!((out.lost, out.rts), (1, false));
    }

    /// The receiver answers an RTS at once, whatever the ACK ratio: a plain
    /// ACK, or a cumulative SACK whose bitmap is empty; it accepts no payload.
    #[test]
    fn the_receiver_acknowledges_an_rts_at_once_and_accepts_nothing() {
        let rts = Packet {
            seq: 4,
            ..Packet::new(PacketKind::Rts, 0, 0, 1, 64, SimTime::ZERO)
        };
        let mut r = Sack::new(4);
        let batching = receiver::AckPolicy {
            ratio: 8,
            ..receiver::tests::PER_PACKET
        };
        assert_eq!(r.on_rts(&rts, 4, &batching), Reply::Echo(PacketKind::Ack));
        let cumulative = receiver::AckPolicy {
            cumulative: true,
            ..receiver::tests::PER_PACKET
        };
        let t = SimTime::from_us(1);
        r.on_data(&receiver::tests::data(0), 4, t, &cumulative);
        r.on_data(&receiver::tests::data(3), 4, t, &cumulative);
        let Reply::Sack(i) = r.on_rts(&rts, 4, &cumulative) else {
            panic!("a cumulative SACK")
        };
        let rec = r.sack_record(i).unwrap();
        assert_eq!((rec.trigger, rec.cumulative, rec.bitmap), (4, 1, 0));
        assert_eq!(r.finish(), None);
        assert!(r.on_data(&receiver::tests::data(1), 4, t, &cumulative).new);
    }
}
