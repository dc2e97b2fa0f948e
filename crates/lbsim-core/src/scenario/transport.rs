//! `[transport]`: which transport flows run, its timers and ACK policy, and
//! the RDMA transports' own table `[transport.rdma]`.

use super::queue::{Queue, QueueKind};
use super::units::{AutoAmount, AutoTime, NeverTime, Time};
use super::{AmountValue, ScenarioError};
use serde::{Deserialize, Serialize};

/// Which transport flows run (`transport::receiver`): the receiver's rule and its ACK policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TransportKind {
    /// Ultra Ethernet's out-of-order tolerant transport with selective ACKs (REPS §2.1).
    Sack,
    /// RoCEv2's Go-Back-N: in-order receiver, cumulative ACKs, a NACK rewinds the sender (ConWeave §2).
    Gbn,
    /// IRN (Mittal et al., SIGCOMM '18): selective ACKs, only lost packets resent, a BDP in flight.
    Irn,
    /// Test-only: the in-order receiver of the "add a transport" example.
    #[cfg(test)]
    InOrder,
}

/// What a SACK receiver's ACK tells the sender (`transport.ack_info`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AckInfo {
    /// Each ACK acknowledges the one packet it answers (REPS §2.1 "selective ACKs").
    PerPacket,
    /// Each ACK carries the receiver's cumulative ACK and a 64-packet SACK
    /// bitmap, so a lost ACK is covered by the next one (the REPS artifact:
    /// htsim uec.cpp `UecSink::sack`, `UecSrc::processAck`).
    CumulativeSack,
}

/// Which ACKs feed the RTT window REPS's freezing test reads (`transport.rtt_samples`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RttSamples {
    /// Every ACK, a duplicate or the late ACK of a packet already declared lost too.
    EveryAck,
    /// Only an ACK whose packet is still outstanding (the REPS artifact:
    /// uec.cpp `processAck` samples only when the PSN still has a send record).
    Outstanding,
}

/// In which order a sender resends the packets it declared lost (`transport.rtx_order`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RtxOrder {
    /// In the order the losses were found (timer, NACK).
    Loss,
    /// Lowest sequence number first (the REPS artifact: uec.cpp `_rtx_queue`
    /// is a map by PSN and `retransmit` takes its first entry).
    Seq,
}

impl TransportKind {
    /// An RDMA transport (cumulative ACKs, `[transport.rdma]`).
    pub fn is_rdma(self) -> bool {
        matches!(self, TransportKind::Gbn | TransportKind::Irn)
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Transport {
    pub kind: TransportKind,
    /// Retransmission timeout; "auto" = base RTT of the longest path plus one
    /// full-queue drain per hop (the REPS artifact's rule). Go-Back-N's RTO.
    pub rto: AutoTime,
    /// ACK coalescing: one ACK per this many data packets of a flow (REPS §4.5.1); 1 = every packet.
    pub ack_ratio: u32,
    /// Longest a partial batch of coalesced ACKs waits for more packets; "never" = until the
    /// batch fills or the message completes.
    pub ack_delay: NeverTime,
    /// What each ACK of the "sack" transport acknowledges: "per_packet" or
    /// "cumulative_sack" (cumulative ACK plus a 64-packet bitmap).
    pub ack_info: AckInfo,
    /// Which ACKs feed the 2·RTO window of RTT samples REPS's freezing test
    /// reads (App. A): "every_ack" or "outstanding".
    pub rtt_samples: RttSamples,
    /// A window-limited sender whose retransmission timer fires sends a
    /// request-to-send that takes a sequence number (the REPS artifact's
    /// sender-CC RTS, `transport::timeout_rts`); "sack" with a window CC only.
    pub timeout_rts: bool,
    /// Which lost packet goes first: "loss" (as found) or "seq" (lowest first).
    pub rtx_order: RtxOrder,
    /// A data packet that is resent, ends the message or fills the window
    /// asks for an ACK at once, and a cumulative SACK answering it maps the
    /// 64 packets from it on (the REPS artifact's AR flag); "sack" only.
    pub ack_request: bool,
    /// Under ACK coalescing, an ECN-marked packet is acknowledged at once (the
    /// REPS artifact's receiver: `ecn || shouldSack() || force_ack`).
    pub ack_marked_at_once: bool,
    /// A sender whose retransmission timer declares packets lost (none
    /// waiting to be resent before) asks its NIC for a turn again while it
    /// has one, and so holds two turns of the NIC's round robin (each renews
    /// itself while the flow can send): the REPS artifact's NIC as published
    /// (`UecSrc::rtxTimerExpired` calls `requestSending` after `queueForRtx`
    /// has; docs/validation.md, AllToAll). Off in every preset.
    pub timeout_nic_turn: bool,
    /// A timeout RTS counts in flight until it is acknowledged or times out;
    /// false: as the REPS artifact counts it as published, not at all, yet its
    /// timeout takes its bytes off, so each lost RTS leaves the sender 64 bytes
    /// more window for good (`transport::timeout_rts`; docs/validation.md,
    /// Fig. 19). Needs `timeout_rts`; true in every preset.
    pub rts_in_flight: bool,
    /// A flow starts with the balancer state and window the last finished
    /// flow of its host pair ended with (the REPS artifact's connection
    /// mapping, `engine::pair_state`); false: every flow starts afresh.
    pub resume_pair_state: bool,
    /// The RDMA transports' settings (`kind` = "gbn" or "irn").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rdma: Option<RdmaTransport>,
}

/// `[transport.rdma]`: the RDMA NIC's receiver and, for IRN, its sender.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RdmaTransport {
    /// The receiver NACKs a gap at most once per this (Go-Back-N; IRN: a repeated selective ACK).
    pub nack_interval: Time,
    /// The receiver also asks for a rate cut (CNP) when data arrives out of order.
    pub cnp_on_ooo: bool,
    /// IRN: new packets go only while the bytes from the cumulative ACK to the highest
    /// sent are below this; "auto" = the BDP of the longest path.
    pub irn_window: AutoAmount,
    /// IRN's RTO when at most `irn_low_inflight` packets are outstanding.
    pub irn_rto_low: Time,
    /// IRN's RTO otherwise.
    pub irn_rto_high: Time,
    pub irn_low_inflight: u32,
    /// IRN's loss recovery: "selective" (IRN §3.1: resend only what a later
    /// arrival proves lost) or "rewind" (the ConWeave artifact's: back to the
    /// cumulative ACK, resend everything not selectively acknowledged).
    #[serde(default)]
    pub irn_recovery: IrnRecovery,
}

/// `transport.rdma.irn_recovery` (docs/rdma.md, IRN).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IrnRecovery {
    /// IRN (SIGCOMM '18) §3.1: a packet in flight below one a NACK names is lost.
    Selective,
    /// The ConWeave artifact (rdma-hw.cc `ReceiveAck`, `RecoverQueue`): a NACK outside
    /// recovery rewinds snd_nxt to snd_una; every packet not selectively acknowledged,
    /// in flight or not, is sent again.
    #[default]
    Rewind,
}

impl Transport {
    /// `timeout_rts` means something: a window congestion control on the
    /// "sack" transport (EQDS has its own RTS, `cc.eqds.rts`; DCQCN no window;
    /// the RDMA transports their own timers).
    pub(super) fn timeout_rts_fits(kind: TransportKind, cc: super::CcKind) -> bool {
        kind == TransportKind::Sack && matches!(cc.name(), "dctcp" | "mprdma")
    }

    pub(super) fn check(&self, queue: &Queue, cc: super::CcKind) -> Result<(), ScenarioError> {
        let bad = |key: &str, msg: String| Err(ScenarioError::new(format!("transport.{key}"), msg));
        if self.ack_ratio == 0 || self.ack_ratio > u16::MAX as u32 {
            return bad(
                "ack_ratio",
                format!("must be between 1 and {}, got {}", u16::MAX, self.ack_ratio),
            );
        }
        if self.ack_delay.value == Some(crate::time::SimTime::ZERO) {
            return bad("ack_delay", "must be positive, or \"never\"".into());
        }
        if self.ack_info == AckInfo::CumulativeSack && self.kind != TransportKind::Sack {
            return bad(
                "ack_info",
                "\"cumulative_sack\" is the ACK of transport.kind = \"sack\"; the RDMA transports \
                 acknowledge cumulatively already (set ack_info = \"per_packet\")"
                    .into(),
            );
        }
        if self.timeout_rts && !Self::timeout_rts_fits(self.kind, cc) {
            return bad(
                "timeout_rts",
                format!(
                    "is the timeout RTS of a window congestion control (cc.kind = \"dctcp\" or \"mprdma\") on \
                     transport.kind = \"sack\", not of transport.kind = \"{}\" with cc.kind = \"{}\" (EQDS sends \
                     its own RTS: cc.eqds.rts); set timeout_rts = false",
                    kind_name(self.kind),
                    cc.name()
                ),
            );
        }
        if !self.rts_in_flight && !self.timeout_rts {
            return bad(
                "rts_in_flight",
                "false says how to count a timeout RTS, but timeout_rts is off (it is on only with a window \
                 congestion control on transport.kind = \"sack\"): set timeout_rts = true, or leave rts_in_flight = true"
                    .into(),
            );
        }
        if self.ack_request && self.kind != TransportKind::Sack {
            return bad(
                "ack_request",
                format!(
                    "is the ACK request of transport.kind = \"sack\"; an RDMA receiver (\"{}\") acknowledges \
                     every packet at once already: set ack_request = false",
                    kind_name(self.kind)
                ),
            );
        }
        if !self.kind.is_rdma() {
            return Ok(());
        }
        let kind = if self.kind == TransportKind::Gbn { "gbn" } else { "irn" };
        let Some(r) = &self.rdma else {
            return bad(
                "rdma",
                format!(
                    "is required with transport.kind = \"{kind}\" (nack_interval, cnp_on_ooo, irn_*); \
                     the presets rdma_lossless and rdma_irn set it"
                ),
            );
        };
        if self.ack_ratio != 1 {
            return bad(
                "ack_ratio",
                format!("an RDMA receiver acknowledges every packet; transport.kind = \"{kind}\" needs 1"),
            );
        }
        if queue.trimming {
            return Err(ScenarioError::new(
                "queue.trimming",
                format!("transport.kind = \"{kind}\" has no use for trimmed headers; trimming needs \"sack\""),
            ));
        }
        let pfc = queue.kind == QueueKind::Shared && queue.shared.as_ref().is_some_and(|q| q.pfc);
        if self.kind == TransportKind::Irn && pfc {
            return Err(ScenarioError::new(
                "queue.shared.pfc",
                "IRN is the lossy RDMA transport (its timers expect drops, and the ConWeave artifact \
                 switches them off under PFC); use transport.kind = \"gbn\" for lossless RoCE",
            ));
        }
        r.check()
    }
}

fn kind_name(kind: TransportKind) -> &'static str {
    match kind {
        TransportKind::Sack => "sack",
        TransportKind::Gbn => "gbn",
        TransportKind::Irn => "irn",
        #[cfg(test)]
        TransportKind::InOrder => "in_order",
    }
}

/// What a scenario allows but a user likely did not mean: Go-Back-N under
/// a balancer that reorders a flow's packets retransmits everything behind
/// each overtaken packet.
pub fn warnings(s: &super::Scenario) -> Vec<String> {
    let mut out = Vec::new();
    if s.transport.kind == TransportKind::Gbn {
        let kinds = std::iter::once(s.lb.kind).chain(s.lb.mix.iter().map(|m| m.kind));
        for kind in kinds {
            let e = crate::lb::entry(kind);
            if e.reorders {
                out.push(format!(
                    "lb.kind = \"{}\" sends a flow's packets over several paths; transport.kind = \"gbn\" \
                     accepts only in-order packets, so every overtaken packet makes its sender resend \
                     everything after it (counted as retransmissions). IRN (\"irn\") or \"sack\" tolerate reordering.",
                    e.name
                ));
            }
        }
    }
    out
}

impl RdmaTransport {
    fn check(&self) -> Result<(), ScenarioError> {
        let bad = |key: &str, msg: &str| Err(ScenarioError::new(format!("transport.rdma.{key}"), msg));
        for (key, t) in [
            ("nack_interval", &self.nack_interval),
            ("irn_rto_low", &self.irn_rto_low),
            ("irn_rto_high", &self.irn_rto_high),
        ] {
            if t.value.ps() == 0 {
                return bad(key, "must be positive");
            }
        }
        if self.irn_rto_low.value > self.irn_rto_high.value {
            return bad(
                "irn_rto_low",
                &format!(
                    "is the RTO with few packets in flight and must not exceed irn_rto_high ({} > {})",
                    self.irn_rto_low.value, self.irn_rto_high.value
                ),
            );
        }
        if self.irn_low_inflight == 0 {
            return bad(
                "irn_low_inflight",
                "must be at least 1 (RTO_low applies with at most this many packets in flight)",
            );
        }
        if matches!(self.irn_window.value, Some(AmountValue::Percent(_))) {
            return bad("irn_window", "must be an amount of data, like \"104000B\", or \"auto\"");
        }
        Ok(())
    }
}
