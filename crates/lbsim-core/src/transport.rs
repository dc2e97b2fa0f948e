//! A reliable out-of-order message transport as in Ultra Ethernet (REPS
//! §2.1, §4.1): the receiver accepts packets in any order and acknowledges
//! every one, echoing its entropy value and ECN mark; the sender keeps
//! per-packet state, retransmits on a retransmission timeout and, with
//! trimming, on a NACK. A message completes at the receiver when it holds
//! every byte, and at the sender when it sees the last ACK.
//!
//! The retransmission timer is one lazy event per flow: the sender logs its
//! sends in order and the timer, when it fires, declares every send older
//! than the RTO that is still unacknowledged lost, then re-arms at the next
//! oldest deadline. The RTO is fixed, as in the REPS artifact.

use crate::ack_coalescing::AckLog;
use crate::cc::CongestionControl;
use crate::lb::{Lb, LbStats};
use crate::rng::Rng;
use crate::time::SimTime;
use std::collections::VecDeque;

/// One message to deliver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowSpec {
    pub src: u32,
    pub dst: u32,
    pub size: u64,
    pub start: SimTime,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PktState {
    Unsent,
    InFlight,
    Lost,
    Acked,
}

pub struct Flow {
    pub spec: FlowSpec,
    pub npkts: u32,
    payload: u32,
    header: u32,
    // Sender.
    state: Vec<PktState>,
    sent_at: Vec<SimTime>,
    /// The EV each packet was last sent on, for balancers that learn from timeouts.
    sent_ev: Vec<u16>,
    next_new: u32,
    /// snd_una: every packet below it is acknowledged (advanced lazily, only under an `ooo_limit`).
    una: u32,
    /// New packets go out only below `una` + this (MP-RDMA's Δ); u32::MAX: no limit.
    ooo_limit: u32,
    /// `una` + `ooo_limit` as last computed: new packets below it may go.
    send_limit: u32,
    rtx: VecDeque<u32>,
    send_log: VecDeque<(SimTime, u32)>,
    pub inflight: u64,
    acked: u32,
    pub cc: CongestionControl,
    pub lb: Lb,
    pub lb_stats: LbStats,
    pub rng: Rng,
    pub timer_pending: bool,
    pub in_ready: bool,
    pub started: bool,
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
    /// Largest RTT in the current tumbling window of 2·RTO (REPS App. A;
    /// the artifact keeps it this way in `processAck`).
    rtt_window_end: SimTime,
    rtt_window_max: SimTime,
    // Receiver.
    rx_got: Vec<u64>,
    rx_count: u32,
    pub rx_finish: Option<SimTime>,
    pub tx_finish: Option<SimTime>,
    /// Seqs received and their coalesced ACKs (`transport.ack_ratio` > 1).
    pub ack_log: AckLog,
    // Statistics.
    pub retransmissions: u64,
    pub timeouts: u64,
    pub nacks: u64,
    pub drops: u64,
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

/// What a newly arrived ACK did.
pub struct AckOutcome {
    /// Bytes (on the wire) newly acknowledged; 0 for a duplicate.
    pub newly_acked: u64,
    pub all_acked: bool,
}

impl Flow {
    pub fn new(
        spec: FlowSpec,
        mtu: u32,
        header: u32,
        cc: CongestionControl,
        lb: Lb,
        rng: Rng,
        base_rtt: SimTime,
    ) -> Self {
        let payload = mtu - header;
        let npkts = packetize(spec.size, mtu, header).0 as u32;
        Flow {
            spec,
            npkts,
            payload,
            header,
            state: vec![PktState::Unsent; npkts as usize],
            sent_at: vec![SimTime::ZERO; npkts as usize],
            sent_ev: vec![0; npkts as usize],
            next_new: 0,
            una: 0,
            ooo_limit: u32::MAX,
            send_limit: u32::MAX,
            rtx: VecDeque::new(),
            send_log: VecDeque::new(),
            inflight: 0,
            acked: 0,
            cc,
            lb,
            lb_stats: LbStats::default(),
            rng,
            timer_pending: false,
            in_ready: false,
            started: false,
            started_at: spec.start,
            waiting_on: 0,
            message: 0,
            step: 0,
            ideal: SimTime::ZERO,
            base_rtt,
            rtt_window_end: SimTime::ZERO,
            rtt_window_max: SimTime::ZERO,
            rx_got: vec![0; (npkts as usize).div_ceil(64)],
            rx_count: 0,
            rx_finish: None,
            tx_finish: None,
            ack_log: AckLog::default(),
            retransmissions: 0,
            timeouts: 0,
            nacks: 0,
            drops: 0,
        }
    }

    /// Wire size of packet `seq`: its share of the payload plus the header.
    #[inline]
    pub fn wire_size(&self, seq: u32) -> u32 {
        let payload = if seq + 1 == self.npkts {
            (self.spec.size - (self.npkts as u64 - 1) * self.payload as u64).max(1) as u32
        } else {
            self.payload
        };
        payload + self.header
    }

    pub fn is_done(&self) -> bool {
        self.tx_finish.is_some()
    }

    /// Drop retransmission entries whose packet got acknowledged meanwhile.
    #[inline]
    fn clean_rtx_front(&mut self) {
        while let Some(&s) = self.rtx.front() {
            if self.state[s as usize] == PktState::Lost {
                break;
            }
            self.rtx.pop_front();
        }
    }

    /// Has a packet to send and congestion control allows it.
    #[inline]
    pub fn can_send(&mut self) -> bool {
        self.has_work() && self.cc.may_send(self.inflight) && self.within_ooo_limit()
    }

    /// A retransmission is always below snd_una + Δ (it was sent once when
    /// snd_una was no higher); a new packet must be.
    #[inline]
    fn within_ooo_limit(&mut self) -> bool {
        self.next_new < self.send_limit || !self.rtx.is_empty() || self.raise_send_limit()
    }

    /// Advance snd_una past acknowledged packets and recompute the bound.
    #[cold]
    fn raise_send_limit(&mut self) -> bool {
        while self.una < self.next_new && self.state[self.una as usize] == PktState::Acked {
            self.una += 1;
        }
        self.send_limit = self.una.saturating_add(self.ooo_limit);
        self.next_new < self.send_limit
    }

    /// MP-RDMA's Δ: no new packet at or beyond snd_una + Δ.
    pub fn set_ooo_limit(&mut self, delta: u32) {
        self.ooo_limit = delta;
        self.send_limit = self.una.saturating_add(delta);
    }

    /// Started, not done, and a packet waits to be sent (new or retransmission).
    #[inline]
    pub fn has_work(&mut self) -> bool {
        if !self.started || self.is_done() {
            return false;
        }
        self.clean_rtx_front();
        !self.rtx.is_empty() || self.next_new < self.npkts
    }

    /// Sends still to make: retransmissions queued plus new packets (an EQDS RTS asks credit for them).
    pub fn pending_sends(&self) -> u32 {
        self.rtx.len() as u32 + (self.npkts - self.next_new)
    }

    /// Take the next packet to send (retransmissions first): (seq, wire size, is retransmission).
    #[inline]
    pub fn take_next(&mut self, now: SimTime) -> (u32, u32, bool) {
        self.clean_rtx_front();
        let (seq, rtx) = match self.rtx.pop_front() {
            Some(s) => (s, true),
            None => {
                self.next_new += 1;
                (self.next_new - 1, false)
            }
        };
        let size = self.wire_size(seq);
        self.state[seq as usize] = PktState::InFlight;
        self.sent_at[seq as usize] = now;
        self.send_log.push_back((now, seq));
        self.inflight += size as u64;
        self.cc.on_send();
        if rtx {
            self.retransmissions += 1;
        }
        (seq, size, rtx)
    }

    /// The load balancer put packet `seq` on `ev`.
    #[inline]
    pub fn record_ev(&mut self, seq: u32, ev: u16) {
        self.sent_ev[seq as usize] = ev;
    }

    /// Record an RTT sample into the tumbling 2·RTO window.
    #[inline]
    pub fn record_rtt(&mut self, now: SimTime, rtt: SimTime, rto: SimTime) {
        if now > self.rtt_window_end {
            self.rtt_window_max = SimTime::ZERO;
            self.rtt_window_end = now + rto * 2;
        }
        self.rtt_window_max = self.rtt_window_max.max(rtt);
    }

    /// REPS App. A: without trimming, a timeout after low RTTs (max of the
    /// last window below factor × base RTT) looks like a failure; with
    /// trimming congestion shows as NACKs, so any timeout does.
    pub fn timeout_looks_like_failure(&self, trimming: bool, factor: f64) -> bool {
        trimming || (self.rtt_window_max.ps() as f64) < factor * self.base_rtt.ps() as f64
    }

    pub fn on_ack(&mut self, seq: u32) -> AckOutcome {
        let st = self.state[seq as usize];
        if !matches!(st, PktState::InFlight | PktState::Lost) {
            return AckOutcome {
                newly_acked: 0,
                all_acked: false,
            };
        }
        let size = self.wire_size(seq) as u64;
        if st == PktState::InFlight {
            self.inflight -= size;
        }
        self.state[seq as usize] = PktState::Acked;
        self.acked += 1;
        AckOutcome {
            newly_acked: size,
            all_acked: self.acked == self.npkts,
        }
    }

    /// A coalesced ACK: every seq of the receiver's log it covers.
    pub fn on_ack_batch(&mut self, start: u32, span: u16) -> AckOutcome {
        let mut total = AckOutcome {
            newly_acked: 0,
            all_acked: false,
        };
        for i in 0..span as usize {
            let seq = self.ack_log.covered(start, span)[i];
            let out = self.on_ack(seq);
            total.newly_acked += out.newly_acked;
            total.all_acked |= out.all_acked;
        }
        total
    }

    /// A NACK for `seq` (its trimmed header reached the receiver): queue it
    /// again. Returns the packet's size if it was in flight.
    pub fn on_nack(&mut self, seq: u32) -> Option<u64> {
        if self.state[seq as usize] != PktState::InFlight {
            return None;
        }
        let size = self.wire_size(seq) as u64;
        self.inflight -= size;
        self.state[seq as usize] = PktState::Lost;
        self.rtx.push_back(seq);
        self.nacks += 1;
        Some(size)
    }

    /// Timer fired at `now`: declare lost every in-flight send older than
    /// `rto`. Returns the size and EV of each packet declared lost (via
    /// `lost`) and the next deadline to re-arm at, if any send is still
    /// outstanding.
    pub fn on_timer(&mut self, now: SimTime, rto: SimTime, lost: &mut Vec<(u64, u16)>) -> Option<SimTime> {
        while let Some(&(t, seq)) = self.send_log.front() {
            let live = self.state[seq as usize] == PktState::InFlight && self.sent_at[seq as usize] == t;
            if !live {
                self.send_log.pop_front();
                continue;
            }
            if t + rto > now {
                return Some(t + rto);
            }
            self.send_log.pop_front();
            let size = self.wire_size(seq) as u64;
            self.inflight -= size;
            self.state[seq as usize] = PktState::Lost;
            self.rtx.push_back(seq);
            self.timeouts += 1;
            lost.push((size, self.sent_ev[seq as usize]));
        }
        None
    }

    /// Sender saw every ACK: release per-packet state.
    pub fn finish_sender(&mut self, now: SimTime) {
        self.tx_finish = Some(now);
        self.state = Vec::new();
        self.sent_at = Vec::new();
        self.sent_ev = Vec::new();
        self.rtx = VecDeque::new();
        self.send_log = VecDeque::new();
        self.ack_log.release();
    }

    /// Payload bytes packet `seq` carries.
    #[inline]
    pub fn payload_of(&self, seq: u32) -> u64 {
        (self.wire_size(seq) - self.header) as u64
    }

    /// A data packet arrived at the receiver: (it was new, it completed the message).
    pub fn receive(&mut self, seq: u32, now: SimTime) -> (bool, bool) {
        if self.rx_finish.is_some() {
            return (false, false);
        }
        let (w, b) = ((seq / 64) as usize, seq % 64);
        if self.rx_got[w] & (1 << b) == 0 {
            self.rx_got[w] |= 1 << b;
            self.rx_count += 1;
            if self.rx_count == self.npkts {
                self.rx_finish = Some(now);
                self.rx_got = Vec::new();
                return (true, true);
            }
            return (true, false);
        }
        (false, false)
    }
}
