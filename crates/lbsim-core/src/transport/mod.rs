//! A reliable message transport as in Ultra Ethernet (REPS §2.1, §4.1): a
//! flow is a sender half (`sender`), a receiver half (`receiver`, whose
//! ACK policy is behind an interface), its congestion control and its load
//! balancer. The methods here are what happens to a flow when one of its
//! packets leaves or an answer arrives, in the order the REPS artifact's
//! sender does it; the engine only moves packets and keeps time.
//!
//! A message completes at the receiver when it holds every byte, and at the
//! sender when it sees the last ACK.

pub mod ack_coalescing;
pub mod gbn;
pub mod irn;
pub mod receiver;
pub mod sender;
pub mod timeout_rts;

use crate::cc::{AckSignal, Cc, CongestionControl, ControlRequest, TimerSignal};
use crate::lb::{AckEcho, AckPath, Lb, LbStats, LoadBalancer, TimeoutInfo};
use crate::packet::{Packet, PacketKind};
use crate::rng::Rng;
use crate::scenario::{LbKind, TransportKind};
use crate::time::SimTime;
pub use receiver::{AckPolicy, Receive, Receiver};
pub use sender::{Acked, RdmaTimer, Recovery, Sender};

/// One message to deliver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowSpec {
    pub src: u32,
    pub dst: u32,
    pub size: u64,
    pub start: SimTime,
}

/// A message of `size` bytes in packets of at most `mtu` bytes on the wire,
/// `header` of them header: the packet count and the wire sizes of a full
/// packet and of the last one (never empty: at least one payload byte).
pub fn packetize(size: u64, mtu: u32, header: u32) -> (u64, u64, u64) {
    let payload = (mtu - header) as u64;
    let npkts = size.div_ceil(payload).max(1);
    let last = size.saturating_sub((npkts - 1) * payload).max(1);
    (npkts, mtu as u64, last + header as u64)
}

/// Run-wide transport settings a flow's handlers need.
#[derive(Clone, Copy, Debug)]
pub struct TransportParams {
    pub rto: SimTime,
    /// Queues trim: a timeout is then a loss, not congestion (REPS App. A).
    pub trimming: bool,
    pub acks: AckPolicy,
    /// Only ACKs of outstanding packets feed the RTT window (`transport.rtt_samples`).
    pub rtt_outstanding_only: bool,
    /// A window-limited timeout sends an RTS (`transport::timeout_rts`).
    pub timeout_rts: bool,
    /// Some data packets ask for an ACK at once (`transport.ack_request`).
    pub ack_request: bool,
    /// A timeout takes the flow a second turn at its NIC (`transport.timeout_nic_turn`).
    pub timeout_nic_turn: bool,
}

/// What the retransmission timer did.
#[derive(Clone, Copy, Debug, Default)]
pub struct TimerOutcome {
    /// Packets it declared lost.
    pub lost: u64,
    /// When to fire again, if at all.
    pub rearm: Option<SimTime>,
    /// A control packet congestion control wants sent (EQDS: an RTS).
    pub request: Option<ControlRequest>,
    /// Send a timeout RTS (`Flow::timeout_rts_packet`).
    pub rts: bool,
    /// It declared packets lost while none waited to be resent (`transport.timeout_nic_turn`).
    pub first_loss: bool,
}

/// `repr(C)`, aligned to a cache line: the fields stay in this order, so
/// that sending and acknowledging read few lines of it. The sender first
/// (`Sender`: `can_send`'s line, then the rest of the send path), then what
/// else the sending host reads, congestion control and the balancer; the
/// receiver's half after them; what only starting, timeouts and reporting
/// read last.
#[repr(C, align(64))]
pub struct Flow {
    pub tx: Sender,
    pub spec: FlowSpec,
    pub rng: Rng,
    /// Route class of its packets (0: the switches hash their EVs).
    pub route: u8,
    pub timer_pending: bool,
    pub in_ready: bool,
    pub cc: Cc,
    pub lb: Lb,
    pub lb_stats: LbStats,
    pub rx: Receiver,
    /// Payload bytes its receiver got, each packet once (the invariants check it against `spec.size`).
    pub delivered: u64,
    /// One past the highest data seq its receiver has seen (for `Counters::reordered_arrivals`).
    pub rx_next: u32,
    pub lb_kind: LbKind,
    /// When a rate-paced flow's wake-up is due (`SimTime::MAX`: none pending).
    pub pace_at: SimTime,
    /// When it actually started: its `spec.start`, or later when it waited for other flows.
    pub started_at: SimTime,
    /// Flows it still waits for before it may start.
    pub waiting_on: u32,
    /// The workload message it carries (several flows carry one split into subflows).
    pub message: u32,
    /// Its step within a collective (0 otherwise).
    pub step: u32,
    /// Its completion time alone on an idle network (`Network::ideal_fct`).
    pub ideal: SimTime,
    /// Idle round-trip time of this flow's path (App. A's reference).
    pub base_rtt: SimTime,
    /// This flow's packets (data or control) dropped in the network.
    pub drops: u64,
}

impl Flow {
    /// Ask the cache for the parts of the flow a packet of `kind` reaching
    /// its host reads: the receiver's for data, the sender's for the rest.
    #[inline(always)]
    pub fn prefetch_for(&self, kind: PacketKind) {
        if kind == PacketKind::Data {
            crate::cache::prefetch(&self.rx);
        } else {
            self.prefetch_sender();
        }
    }

    /// The sender's side: what an ACK or the NIC pulling a packet reads.
    #[inline(always)]
    pub fn prefetch_sender(&self) {
        crate::cache::prefetch(&self.tx);
        crate::cache::prefetch(&self.cc);
        crate::cache::prefetch(&self.lb);
    }

    /// Then (one event later, the flow in cache) for the per-packet state
    /// `pkt` reaches: the receiver's bitmap word and SACK record for data,
    /// the sender's packet state for an ACK (for a cumulative SACK, the
    /// record it names and the oldest unacknowledged packet).
    #[inline(always)]
    pub fn prefetch_packet_state(&self, pkt: &Packet) {
        match (pkt.kind, &self.rx) {
            (PacketKind::Data, Receiver::Sack(rx)) => rx.prefetch_arrival(pkt.seq),
            (PacketKind::SackAck, Receiver::Sack(rx)) => {
                rx.prefetch_record(pkt.seq);
                self.tx.prefetch_seq(self.tx.first_unacked());
            }
            (PacketKind::Ack, _) => self.tx.prefetch_seq(pkt.seq),
            _ => {}
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub fn new(
        spec: FlowSpec,
        mtu: u32,
        header: u32,
        transport: TransportKind,
        cc: Cc,
        lb: Lb,
        lb_kind: LbKind,
        rng: Rng,
        base_rtt: SimTime,
    ) -> Self {
        let npkts = packetize(spec.size, mtu, header).0 as u32;
        Flow {
            spec,
            tx: Sender::deferred(spec.size, npkts, mtu, header),
            rx: Receiver::of(transport),
            cc,
            lb,
            lb_kind,
            lb_stats: LbStats::default(),
            rng,
            route: 0,
            timer_pending: false,
            in_ready: false,
            pace_at: SimTime::MAX,
            started_at: spec.start,
            waiting_on: 0,
            message: 0,
            step: 0,
            ideal: SimTime::ZERO,
            base_rtt,
            drops: 0,
            rx_next: 0,
            delivered: 0,
        }
    }

    /// It starts: allocate its per-packet state (flows hold none before
    /// they start nor after they finish, so a long trace holds only what
    /// is in progress).
    pub fn start(&mut self) {
        self.tx.allocate();
        self.rx.allocate(self.tx.npkts);
        self.tx.active = true;
    }

    pub fn npkts(&self) -> u32 {
        self.tx.npkts
    }

    pub fn is_done(&self) -> bool {
        self.tx.is_done()
    }

    /// Has a packet to send and congestion control allows it.
    #[inline]
    pub fn can_send(&mut self) -> bool {
        self.tx.has_work() && self.cc.may_send(self.tx.window_inflight()) && self.tx.within_ooo_limit()
    }

    /// The next data packet, on an EV of the balancer's choice: (packet, is a retransmission).
    /// With `ack_request` it asks for an ACK at once when `asks_for_ack` says so.
    #[inline]
    pub fn next_packet(&mut self, id: u32, now: SimTime, ack_request: bool) -> (Packet, bool) {
        let (seq, size, rtx) = self.tx.take_next(now);
        self.cc.on_send(now, size);
        let ev = if self.tx.is_rts(seq) {
            self.tx.note_rts_resent(seq);
            self.lb.header_only_ev(now, &mut self.rng, &mut self.lb_stats) // a lost RTS resent
        } else {
            self.lb.next_ev(now, &mut self.rng, &mut self.lb_stats)
        };
        self.tx.record_ev(seq, ev);
        let mut pkt = Packet::data(id, seq, self.spec.src, self.spec.dst, size, ev, self.route, now);
        if ack_request && self.asks_for_ack(seq, rtx) {
            pkt.span = 1;
        }
        (pkt, rtx)
    }

    /// Whether packet `seq`, just sent, asks for an ACK at once: the REPS
    /// artifact's sender sets AR on every retransmission (uec.cpp
    /// `sendRtxPacket`), on the message's last new packet (`_backlog == 0`)
    /// and on one that leaves the window full (`_in_flight >= _cwnd`,
    /// `sendNewPacket`). Its receiver-CC rule (`_credit < 0`) never holds
    /// here: EQDS spends whole packets' credits, so none goes below zero.
    #[inline]
    fn asks_for_ack(&self, seq: u32, rtx: bool) -> bool {
        rtx || seq + 1 >= self.tx.npkts || (self.cc.window().is_some() && !self.cc.may_send(self.tx.window_inflight()))
    }

    /// A control packet of this flow's sender (an RTS), on an EV of its balancer (htsim `sendRTS`).
    pub fn control_packet(&mut self, id: u32, req: ControlRequest, size: u32, now: SimTime) -> Packet {
        let ev = self.lb.next_ev(now, &mut self.rng, &mut self.lb_stats);
        Packet {
            seq: req.seq,
            span: req.span,
            ev,
            route: self.route,
            ..Packet::new(req.kind, id, self.spec.src, self.spec.dst, size, now)
        }
    }

    /// An ACK (or a coalesced batch) arrived. Returns true when it was the last one needed.
    #[inline]
    pub fn on_ack(&mut self, ack: &Packet, now: SimTime, p: &TransportParams) -> bool {
        if self.tx.recovery != Recovery::Sack {
            return self.on_rdma_answer(ack, now);
        }
        // What a cumulative SACK said, and the data packet the ACK answers
        // (none for a batch, or a SACK the receiver no longer remembers).
        let (sack, answers) = match ack.kind {
            PacketKind::Ack => (None, Some(ack.seq)),
            PacketKind::SackAck => {
                let sack = self.rx.sack_record(ack.seq);
                (sack, sack.map(|s| s.trigger))
            }
            _ => (None, None),
        };
        if !p.rtt_outstanding_only || answers.is_none_or(|seq| self.tx.is_outstanding(seq)) {
            self.tx.record_rtt(now, now - ack.sent_at, p.rto);
        }
        let echo = AckEcho {
            ev: ack.ev,
            ecn: ack.ecn,
            // A timeout RTS is no data packet (MP-RDMA's Δ must not count its seq).
            seq: answers.filter(|&seq| !self.tx.is_rts(seq)),
        };
        let path = self.lb.on_ack(now, &echo, &mut self.lb_stats);
        let acked = match (ack.kind, sack) {
            (PacketKind::AckBatch, _) => self.tx.on_ack_all(self.rx.covered(ack.seq, ack.span)),
            (PacketKind::SackAck, Some(s)) => {
                let base = receiver::bitmap_base(s.trigger, s.cumulative, ack.ecn || ack.ack_requested());
                self.tx.on_sack(s.cumulative, base, s.bitmap)
            }
            (PacketKind::SackAck, None) => Default::default(), // forgotten (receiver::SACK_LOG)
            _ if self.tx.is_rts(ack.seq) => Default::default(), // acknowledged below
            _ => self.tx.on_ack(ack.seq),
        };
        // A timeout RTS's seq is acknowledged by the ACK answering it, and
        // gives congestion control no bytes (`transport::timeout_rts`).
        let acked = match answers {
            Some(seq) if self.tx.is_rts(seq) => Acked {
                bytes: acked.bytes,
                all: acked.all | self.tx.on_rts_ack(seq).all,
            },
            _ => acked,
        };
        let slow_path = match path {
            AckPath::Slow => answers.map_or(0, |seq| self.tx.wire_size(seq) as u64),
            AckPath::Normal => 0,
        };
        let window_before = self.mprdma_window();
        self.cc.on_ack(&AckSignal {
            acked: acked.bytes,
            ecn: ack.ecn,
            slow_path,
            now,
        });
        self.window_changed(window_before);
        acked.all
    }

    /// The window, for a balancer that reads it (MPRDMA).
    #[inline]
    fn mprdma_window(&self) -> Option<u64> {
        match self.lb {
            Lb::Mprdma(_) => self.cc.window(),
            _ => None,
        }
    }

    /// The artifact's MPRDMA reads the window an ACK or NACK left (`Mprdma::after_window`).
    #[inline]
    fn window_changed(&mut self, before: Option<u64>) {
        if let (Lb::Mprdma(m), Some(before), Some(after)) = (&mut self.lb, before, self.cc.window()) {
            let mtu = self.tx.mtu() as i64;
            m.after_window(
                after as i64 - before as i64,
                after as i64 - self.tx.inflight as i64 + self.tx.inflight_drift as i64,
                mtu,
            );
        }
    }

    /// A NACK: its packet was trimmed on the way (SACK), or the RDMA
    /// receiver saw a gap. Returns true when it acknowledged the last packet.
    pub fn on_nack(&mut self, nack: &Packet, now: SimTime) -> bool {
        if self.tx.recovery != Recovery::Sack {
            return self.on_rdma_answer(nack, now);
        }
        self.lb.on_nack(now, nack.ev, &mut self.lb_stats);
        if let Some(size) = self.tx.on_nack(nack.seq) {
            let before = self.mprdma_window();
            self.cc.on_nack(size);
            self.window_changed(before);
        }
        false
    }

    /// An RDMA ACK or NACK: a cumulative count, perhaps a selective ACK,
    /// and a CNP in its ECN bit.
    fn on_rdma_answer(&mut self, pkt: &Packet, now: SimTime) -> bool {
        let echo = AckEcho {
            ev: pkt.ev,
            ecn: pkt.ecn,
            seq: None,
        };
        self.lb.on_ack(now, &echo, &mut self.lb_stats);
        let acked = match self.tx.recovery {
            Recovery::GoBackN => self.tx.gbn_on_answer(pkt.kind, pkt.seq, now),
            _ => {
                let sacked = (pkt.kind == PacketKind::Nack && pkt.span > 0).then(|| pkt.seq + pkt.span as u32);
                self.tx
                    .irn_on_answer(pkt.seq, sacked, pkt.kind == PacketKind::Nack, now)
            }
        };
        self.cc.on_ack(&AckSignal {
            acked: acked.bytes,
            ecn: pkt.ecn,
            slow_path: 0,
            now,
        });
        acked.all
    }

    /// The retransmission timer fired: declare overdue packets lost, tell
    /// congestion control and the balancer, and say when to fire again.
    /// `nic_free`: the sending host's NIC is idle now, so a retransmission
    /// the window lets go leaves at once (it decides a timeout RTS).
    pub fn on_timer(
        &mut self,
        now: SimTime,
        p: &TransportParams,
        nic_free: bool,
        lost: &mut Vec<(u64, u16)>,
    ) -> TimerOutcome {
        if self.tx.recovery != Recovery::Sack {
            let (lost, rearm) = self.tx.on_rdma_timer(now);
            return TimerOutcome {
                lost,
                rearm,
                ..Default::default()
            };
        }
        lost.clear();
        let rtx_was_empty = !self.tx.has_rtx();
        let rts_check = p.timeout_rts && rtx_was_empty;
        let next = self.tx.on_timer(now, p.rto, lost);
        let mut rts = false;
        for (i, &(size, ev)) in lost.iter().enumerate() {
            self.cc.on_timeout(size);
            self.lb.on_lost(now, ev, &mut self.lb_stats);
            if i == 0 && rts_check {
                let later = lost[1..].iter().map(|l| l.0).sum();
                rts = self.rts_after_timeout(size, later, now, p.rto, nic_free);
            }
        }
        if !lost.is_empty() {
            let header = self.tx.header() as u64;
            let info = TimeoutInfo {
                trimming: p.trimming,
                recent_max_rtt: self.tx.recent_max_rtt(),
                base_rtt: self.base_rtt,
                header_only: lost.iter().all(|&(size, _)| size == header),
            };
            self.lb.on_timeout(now, info, &mut self.lb_stats);
        }
        // Unable to send with nothing in flight (EQDS waiting for a credit that may be lost).
        let stuck = self.tx.has_work() && !self.can_send();
        let signal = TimerSignal {
            now,
            stuck,
            stalled: next.is_none() && self.tx.inflight == 0 && stuck,
            lost: !lost.is_empty(),
            pending: self.tx.pending_sends(),
            base_rtt: self.base_rtt,
        };
        let action = self.cc.on_timer(&signal);
        TimerOutcome {
            lost: lost.len() as u64,
            // The RTS sent now is timed too.
            rearm: next.or((action.recheck || rts).then_some(now + p.rto)),
            request: action.request,
            rts,
            first_loss: rtx_was_empty && !lost.is_empty(),
        }
    }

    /// Every ACK arrived: free per-packet state on both halves.
    pub fn finish_sender(&mut self, now: SimTime) {
        self.tx.finish(now);
        self.rx.release();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::dctcp::DctcpVariant;
    use crate::rng::StreamTag;

    fn flow() -> Flow {
        let spec = FlowSpec {
            src: 0,
            dst: 1,
            size: 4 * 4086,
            start: SimTime::ZERO,
        };
        let cc = Cc::Dctcp(DctcpVariant::new(4 * 4150, 4 * 4150, 4150));
        let lb = Lb::Ops(crate::lb::ops::Ops::new(65536));
        let kind = crate::scenario::LbKind::named("ops").unwrap();
        let rng = Rng::new(1, StreamTag::Flow, 0);
        let mut f = Flow::new(
            spec,
            4150,
            64,
            TransportKind::Sack,
            cc,
            lb,
            kind,
            rng,
            SimTime::from_us(8),
        );
        f.start();
        f
    }

    /// The REPS artifact's ACKs (cumulative SACKs), RTT samples of outstanding packets only.
    fn cumulative_sack_params() -> TransportParams {
        TransportParams {
            rto: SimTime::from_us(10),
            trimming: false,
            acks: AckPolicy {
                cumulative: true,
                ..receiver::tests::PER_PACKET
            },
            rtt_outstanding_only: true,
            timeout_rts: false,
            ack_request: false,
            timeout_nic_turn: false,
        }
    }

    /// `f`'s receiver takes `pkt` at `now` and answers with one cumulative SACK.
    fn sack_answer(f: &mut Flow, pkt: &Packet, now: SimTime, acks: &AckPolicy) -> Packet {
        match f.rx.on_data(pkt, f.tx.npkts, now, acks).reply {
            receiver::Reply::Sack(index) => Packet {
                seq: index,
                ..Packet::reply(pkt, PacketKind::SackAck, 64)
            },
            other => panic!("one cumulative SACK per packet, got {other:?}"),
        }
    }

    /// What a lost ACK costs with `ack_info = "cumulative_sack"`, packet by
    /// packet. The REPS artifact's sender frees in-flight bytes and grows its
    /// window by the growth of the receiver's byte counter that every ACK
    /// carries (uec.cpp `UecSrc::processAck`, `newly_recvd_bytes`), and drops
    /// the send records the cumulative ACK and bitmap cover
    /// (`handleCumulativeAck`, `handleAckno`); lbsim counts the packets the
    /// cumulative SACK newly covers. For packets the SACK covers the two are the
    /// same bytes: seqs 0, 1 and 2 sent, 0 and 1 arrive, 0's ACK is lost. The
    /// ACK of 1 frees both packets, grows the window once by both
    /// (`_cwnd += newly_recvd_bytes * _mtu / _cwnd`), and seq 0 never times
    /// out and is never resent; only seq 2, still in flight, does.
    #[test]
    fn after_a_lost_ack_the_next_cumulative_sack_frees_and_grows_by_both_packets() {
        let us = SimTime::from_us;
        let p = cumulative_sack_params();
        let mut f = flow();
        f.cc = Cc::Dctcp(DctcpVariant::new(4 * 4150, 8 * 4150, 4150));
        let sent: Vec<Packet> = (0..3).map(|i| f.next_packet(0, us(i), false).0).collect();
        assert_eq!(f.tx.inflight, 3 * 4150);
        let _lost = sack_answer(&mut f, &sent[0], us(3), &p.acks);
        let second = sack_answer(&mut f, &sent[1], us(3), &p.acks);
        let before = f.cc.window().unwrap();
        assert!(!f.on_ack(&second, us(5), &p));
        assert_eq!(f.tx.inflight, 4150, "only seq 2 is in flight");
        assert_eq!(
            f.cc.window().unwrap(),
            before + 2 * 4150 * 4150 / before,
            "one step, both packets"
        );
        assert!(!f.tx.is_outstanding(0) && !f.tx.is_outstanding(1) && f.tx.is_outstanding(2));
        let mut lost = Vec::new();
        assert_eq!(
            f.on_timer(us(12), &p, true, &mut lost).lost,
            1,
            "seq 2, sent at 2 us, overdue at 12 us"
        );
        assert_eq!(f.tx.timeouts, 1);
        let (seq, _, rtx) = f.tx.take_next(us(12));
        assert_eq!((seq, rtx), (2, true), "the resend is seq 2, never seq 0");
    }

    /// `transport.ack_request`: as the REPS artifact's sender sets AR
    /// (uec.cpp `sendNewPacket`, `sendRtxPacket`), a packet asks for an ACK at
    /// once when it is the message's last new packet, leaves the window full,
    /// or is resent; without the key none does.
    #[test]
    fn a_packet_asks_for_an_ack_when_it_ends_the_message_fills_the_window_or_is_resent() {
        let us = SimTime::from_us;
        let sends = |f: &mut Flow, n: u64, ack_request: bool| -> Vec<bool> {
            (0..n)
                .map(|t| f.next_packet(0, us(t), ack_request).0.ack_requested())
                .collect()
        };
        let window = |pkts: u64| Cc::Dctcp(DctcpVariant::new(pkts * 4150, 8 * 4150, 4150));
        let mut f = flow(); // a 4-packet message
        f.cc = window(8);
        assert_eq!(sends(&mut f, 4, true), [false, false, false, true], "the last packet");
        let mut f = flow();
        f.cc = window(8);
        assert_eq!(sends(&mut f, 4, false), [false; 4], "the key off");
        let mut f = flow();
        f.cc = window(2);
        assert_eq!(sends(&mut f, 2, true), [false, true], "the second fills the window");
        let p = TransportParams {
            rto: us(10),
            trimming: false,
            acks: receiver::tests::PER_PACKET,
            rtt_outstanding_only: false,
            timeout_rts: false,
            ack_request: true,
            timeout_nic_turn: false,
        };
        assert_eq!(f.on_timer(us(20), &p, true, &mut Vec::new()).lost, 2);
        f.cc = window(8);
        let (resent, rtx) = f.next_packet(0, us(20), true);
        assert!(
            rtx && resent.seq == 0 && resent.ack_requested(),
            "a resend, the window not full"
        );
    }

    /// The cumulative SACK answering a packet that asked for an ACK maps the
    /// 64 packets from it on, not the 64 up to it (artifact uec.cpp
    /// `UecSink::processData`): seq 1 arrives and its ACK is lost; seq 3's
    /// ACK then covers 1 too, unless 3 asked for it.
    #[test]
    fn a_sack_answering_an_ack_request_covers_the_packets_after_it_only() {
        let us = SimTime::from_us;
        // The sender's setting does not matter here: the receiver and the
        // sender read the request from the packets.
        let p = cumulative_sack_params();
        for ask in [false, true] {
            let mut f = flow();
            f.cc = Cc::Dctcp(DctcpVariant::new(8 * 4150, 8 * 4150, 4150));
            let mut sent: Vec<Packet> = (0..4).map(|t| f.next_packet(0, us(t), false).0).collect();
            sent[3].span = ask as u16; // seq 3 asks (as the last packet would)
            let _lost = sack_answer(&mut f, &sent[1], us(5), &p.acks);
            let ack = sack_answer(&mut f, &sent[3], us(5), &p.acks);
            assert_eq!(ack.ack_requested(), ask, "the SACK echoes the request");
            f.on_ack(&ack, us(6), &p);
            assert!(!f.tx.is_outstanding(3));
            assert_eq!(f.tx.is_outstanding(1), ask, "ask = {ask}");
        }
    }

    /// `transport.rtt_samples`: the late ACK of a packet the timer already
    /// declared lost feeds REPS's RTT window with "every_ack" and not with
    /// "outstanding" (the artifact samples only PSNs it still has a send record of).
    #[test]
    fn a_late_ack_of_a_lost_packet_feeds_the_rtt_window_only_with_every_ack() {
        let us = SimTime::from_us;
        for (outstanding_only, want) in [(false, us(15)), (true, SimTime::ZERO)] {
            let p = TransportParams {
                rto: us(10),
                trimming: false,
                acks: receiver::tests::PER_PACKET,
                rtt_outstanding_only: outstanding_only,
                timeout_rts: false,
                ack_request: false,
                timeout_nic_turn: false,
            };
            let mut f = flow();
            let (first, _) = f.next_packet(0, SimTime::ZERO, false);
            f.next_packet(0, us(1), false);
            let mut lost = Vec::new();
            assert_eq!(f.on_timer(us(10), &p, true, &mut lost).lost, 1, "seq 0 overdue");
            let late = Packet::reply(&first, PacketKind::Ack, 64);
            f.on_ack(&late, us(15), &p);
            assert_eq!(f.tx.recent_max_rtt(), want, "outstanding only: {outstanding_only}");
            let on_time = Packet::reply(&Packet::data(0, 1, 0, 1, 4150, 0, 0, us(1)), PacketKind::Ack, 64);
            f.on_ack(&on_time, us(16), &p);
            assert_eq!(
                f.tx.recent_max_rtt(),
                want.max(us(15)),
                "seq 1 was outstanding: sampled"
            );
        }
    }
}
