//! What a run reports: counters, a per-flow table and a summary, written as
//! `summary.json` and `flows.csv` (a table pandas and polars read directly).
//! The summary and the steps table count messages (what the workload asked
//! for); the flow table lists the transport flows that carried them, which
//! are the messages themselves unless a message was split into subflows.

use crate::table::{Column, Table};
use serde::Serialize;

/// Network-wide packet counters. At the end of a run that drained,
/// `packets_sent == delivered + drops_congestion + drops_failure` (every
/// packet a host created either reached a host or was dropped), and
/// `packets_sent == data_sent + acks_sent + nacks_sent + credits_sent + rts_sent +
/// pfc_pauses + pfc_resumes + switch_control_sent + probes_sent` (packets switch policies
/// make are counted by kind too). A switch control packet is delivered when its switch
/// consumes it; a probe or echo when it reaches its host.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Counters {
    pub packets_sent: u64,
    pub data_sent: u64,
    pub acks_sent: u64,
    pub nacks_sent: u64,
    /// EQDS credits.
    pub credits_sent: u64,
    /// Requests-to-send: EQDS's, and timeout RTSs (`transport.timeout_rts`; resent as data when lost).
    pub rts_sent: u64,
    pub delivered: u64,
    /// Payload bytes that reached their receivers, each data packet counted once.
    pub payload_delivered: u64,
    pub drops_congestion: u64,
    pub drops_failure: u64,
    pub trims: u64,
    pub retransmissions: u64,
    pub timeouts: u64,
    pub ecn_marks: u64,
    pub events: u64,
    /// Times routing changed its ECMP groups (convergence after failures).
    pub route_updates: u64,
    /// PFC frames sent: pauses (refreshes included) and resumes.
    pub pfc_pauses: u64,
    pub pfc_resumes: u64,
    /// Packets switch policies sent each other (`PacketKind::SwitchControl`).
    pub switch_control_sent: u64,
    /// A host agent's probes and their echoes (FaCa).
    pub probes_sent: u64,
    /// Data packets that arrived after a later packet of their flow (see `Summary`).
    pub reordered_arrivals: u64,
}

impl Counters {
    /// Count a control packet a host sends, by kind.
    #[inline]
    pub fn count_control(&mut self, kind: crate::packet::PacketKind) {
        use crate::packet::PacketKind::*;
        match kind {
            Ack | AckBatch | SackAck => self.acks_sent += 1,
            Nack => self.nacks_sent += 1,
            Credit => self.credits_sent += 1,
            Rts => self.rts_sent += 1,
            SwitchControl => self.switch_control_sent += 1,
            Probe | ProbeEcho => self.probes_sent += 1,
            Data | Pause => {}
        }
    }

    /// Packets sent, summed over their kinds (equals `packets_sent` when nothing is miscounted).
    pub fn sent_by_kind(&self) -> u64 {
        self.data_sent
            + self.acks_sent
            + self.nacks_sent
            + self.credits_sent
            + self.rts_sent
            + self.pfc_pauses
            + self.pfc_resumes
            + self.switch_control_sent
            + self.probes_sent
    }

    /// Count a packet a switch policy made, by kind (`packets_sent` is counted by the caller).
    pub fn count_sent(&mut self, kind: crate::packet::PacketKind) {
        match kind {
            crate::packet::PacketKind::Data => self.data_sent += 1,
            crate::packet::PacketKind::Pause => self.pfc_pauses += 1,
            other => self.count_control(other),
        }
    }
}

/// One transport flow, as the results table has it. Times in microseconds.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FlowRecord {
    pub id: u32,
    /// The workload message it carries (its own id unless the message was split into subflows).
    pub message: u32,
    pub src: u32,
    pub dst: u32,
    pub size_bytes: u64,
    /// The load balancer this flow used (`lb.kind`, or a `lb.mix` share's).
    pub lb: &'static str,
    /// Its step within a collective (0 for other workloads).
    pub step: u32,
    /// When it started (later than asked when it waited for other flows; NaN if it never could).
    pub start_us: f64,
    /// When the receiver held every byte (NaN if unfinished).
    pub receiver_finish_us: f64,
    /// When the sender saw the last ACK (NaN if unfinished).
    pub sender_finish_us: f64,
    /// receiver_finish − start (NaN if unfinished).
    pub fct_us: f64,
    /// Its completion time alone on the idle network (`Network::ideal_fct`).
    pub ideal_fct_us: f64,
    /// max(1, fct / ideal) (NaN if unfinished).
    pub slowdown: f64,
    /// Counted by the statistics: finished, not in the warm-up, not after the cool-down.
    pub measured: bool,
    pub finished: bool,
    pub retransmissions: u64,
    pub timeouts: u64,
    pub nacks: u64,
    /// This flow's packets (data or control) dropped in the network.
    pub drops: u64,
    pub explored_evs: u64,
    pub recycled_evs: u64,
    pub freeze_entries: u64,
    pub frozen_us: f64,
}

/// One workload message, whatever number of transport flows carried it.
/// Times in microseconds.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct MessageRecord {
    pub message: u32,
    pub src: u32,
    pub dst: u32,
    pub size_bytes: u64,
    pub lb: &'static str,
    pub step: u32,
    /// Transport flows that carried it (`lb.subflows.count` for split messages, else 1).
    pub subflows: u32,
    /// When its flows started (NaN if they never could).
    pub start_us: f64,
    /// When its last byte reached the receiver: the last flow's arrival (NaN if any flow is unfinished).
    pub receiver_finish_us: f64,
    /// receiver_finish − start (NaN if unfinished).
    pub fct_us: f64,
    /// The whole message alone on one idle path (`Network::ideal_fct`).
    pub ideal_fct_us: f64,
    /// max(1, fct / ideal) (NaN if unfinished).
    pub slowdown: f64,
    /// Finished, not in the warm-up, not after the cool-down.
    pub measured: bool,
    /// Every flow carrying it finished.
    pub finished: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct Drops {
    pub congestion: u64,
    pub failure: u64,
    pub trimmed: u64,
}

/// The run in one object: `summary.json`.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    pub lbsim_version: &'static str,
    /// Messages (the workload's flows); subflows count once, as their message.
    pub flows: usize,
    pub finished_flows: usize,
    pub unfinished_flows: usize,
    /// Workload completion time: the largest message FCT (NaN if any message is unfinished).
    pub max_fct_us: f64,
    pub mean_fct_us: f64,
    pub p50_fct_us: f64,
    pub p99_fct_us: f64,
    /// Slowdown over the measured messages.
    pub measured_flows: usize,
    pub mean_slowdown: f64,
    pub p99_slowdown: f64,
    /// A collective's completion: last arrival − first start (NaN if none or unfinished).
    pub collective_us: f64,
    pub drops: Drops,
    pub retransmissions: u64,
    pub timeouts: u64,
    pub packets_sent: u64,
    pub packets_delivered: u64,
    pub ecn_marks: u64,
    pub events: u64,
    pub sim_end_us: f64,
    pub wall_seconds: f64,
    pub events_per_second: f64,
    /// Derived values the scenario resolved to.
    pub base_rtt_us: f64,
    pub bdp_bytes: u64,
    pub rto_us: f64,
    pub queue_bytes: u64,
    pub stopped_early: bool,
    /// Why the run stopped: "drained", "horizon", "cancelled", "no_progress" or "pfc_deadlock".
    pub stop_reason: &'static str,
    /// PFC frames sent: pauses (refreshes included) and resumes.
    pub pfc_pauses: u64,
    pub pfc_resumes: u64,
    /// Data packets that reached their receiver after a later packet of their flow
    /// (reordered in the network, or retransmitted).
    pub reordered_arrivals: u64,
    /// Packets switch policies sent each other (ConWeave's REPLY, CLEAR, NOTIFY).
    pub switch_control_sent: u64,
    /// Requests-to-send: EQDS's, and a window-limited sender's timeout RTSs (`transport.timeout_rts`).
    pub rts_sent: u64,
    /// What switch-side balancers counted, `<lb>.<counter>` (summed over switches, or the largest).
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub switch_lb: std::collections::BTreeMap<String, u64>,
    /// What a balancer's host agent counted, `<lb>.<key>` (FaCa: probes, their bytes, their share of the NICs).
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub host_lb: std::collections::BTreeMap<String, f64>,
    /// What the scenario allows but likely did not mean (`scenario::warnings`).
    pub warnings: Vec<String>,
}

/// Nearest-rank percentile of a sorted slice: the smallest value with at
/// least p % of the values at or below it (rank ⌈p·n/100⌉).
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    // p · n first, then / 100: (p / 100) · n rounds 99.9 % of 1000 to 999.0000000000001.
    let rank = (p * sorted.len() as f64 / 100.0).ceil().max(1.0) as usize;
    sorted[rank.min(sorted.len()) - 1]
}

pub struct FctStats {
    pub max: f64,
    pub mean: f64,
    pub p50: f64,
    pub p99: f64,
}

pub fn fct_stats(flows: &[MessageRecord]) -> FctStats {
    let mut f: Vec<f64> = flows.iter().filter(|r| r.finished).map(|r| r.fct_us).collect();
    f.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let all_done = flows.iter().all(|r| r.finished);
    FctStats {
        max: if all_done {
            f.last().copied().unwrap_or(f64::NAN)
        } else {
            f64::NAN
        },
        mean: mean(&f),
        p50: percentile(&f, 50.0),
        p99: percentile(&f, 99.0),
    }
}

/// Mean and 99th percentile slowdown of the measured messages.
pub fn slowdown_stats(flows: &[MessageRecord]) -> (usize, f64, f64) {
    let mut s: Vec<f64> = flows.iter().filter(|r| r.measured).map(|r| r.slowdown).collect();
    s.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (s.len(), mean(&s), percentile(&s, 99.0))
}

/// The mean, NaN for no values.
fn mean(values: &[f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.iter().sum::<f64>() / values.len() as f64
}

/// Per collective step: when its first message started and its last one
/// arrived (NaN while any is unfinished). Its `flows` column counts messages.
pub fn step_table(flows: &[MessageRecord]) -> Table {
    let steps = flows.iter().map(|r| r.step as usize + 1).max().unwrap_or(0);
    let mut start = vec![f64::INFINITY; steps];
    let mut end = vec![f64::NEG_INFINITY; steps];
    let mut count = vec![0u32; steps];
    let mut bytes = vec![0u64; steps];
    let mut unfinished = vec![false; steps];
    for r in flows {
        let k = r.step as usize;
        start[k] = start[k].min(r.start_us);
        end[k] = end[k].max(r.receiver_finish_us);
        unfinished[k] |= !r.finished;
        count[k] += 1;
        bytes[k] += r.size_bytes;
    }
    for k in 0..steps {
        if unfinished[k] || count[k] == 0 {
            end[k] = f64::NAN;
        }
        if count[k] == 0 {
            start[k] = f64::NAN;
        }
    }
    let duration = start.iter().zip(&end).map(|(s, e)| e - s).collect();
    Table::new("steps")
        .with("step", Column::U32((0..steps as u32).collect()))
        .with("flows", Column::U32(count))
        .with("bytes", Column::U64(bytes))
        .with("start_us", Column::F64(start))
        .with("end_us", Column::F64(end))
        .with("duration_us", Column::F64(duration))
}

/// The message table as columns (one row per message), written when some
/// message was split into subflows (otherwise it is the flow table).
pub fn message_table(messages: &[MessageRecord]) -> Table {
    let colf = |f: &dyn Fn(&MessageRecord) -> f64| Column::F64(messages.iter().map(f).collect());
    let colu = |f: &dyn Fn(&MessageRecord) -> u32| Column::U32(messages.iter().map(f).collect());
    let colb = |f: &dyn Fn(&MessageRecord) -> bool| Column::Bool(messages.iter().map(f).collect());
    Table::new("messages")
        .with("message", colu(&|r| r.message))
        .with("src", colu(&|r| r.src))
        .with("dst", colu(&|r| r.dst))
        .with(
            "size_bytes",
            Column::U64(messages.iter().map(|r| r.size_bytes).collect()),
        )
        .with("lb", Column::Str(messages.iter().map(|r| r.lb.to_string()).collect()))
        .with("step", colu(&|r| r.step))
        .with("subflows", colu(&|r| r.subflows))
        .with("start_us", colf(&|r| r.start_us))
        .with("receiver_finish_us", colf(&|r| r.receiver_finish_us))
        .with("fct_us", colf(&|r| r.fct_us))
        .with("ideal_fct_us", colf(&|r| r.ideal_fct_us))
        .with("slowdown", colf(&|r| r.slowdown))
        .with("measured", colb(&|r| r.measured))
        .with("finished", colb(&|r| r.finished))
}

/// The flow table as columns (one row per transport flow).
pub fn flow_table(flows: &[FlowRecord]) -> Table {
    let col = |f: &dyn Fn(&FlowRecord) -> u64| Column::U64(flows.iter().map(f).collect());
    let colf = |f: &dyn Fn(&FlowRecord) -> f64| Column::F64(flows.iter().map(f).collect());
    let colu = |f: &dyn Fn(&FlowRecord) -> u32| Column::U32(flows.iter().map(f).collect());
    Table::new("flows")
        .with("id", colu(&|r| r.id))
        .with("message", colu(&|r| r.message))
        .with("src", colu(&|r| r.src))
        .with("dst", colu(&|r| r.dst))
        .with("size_bytes", col(&|r| r.size_bytes))
        .with("lb", Column::Str(flows.iter().map(|r| r.lb.to_string()).collect()))
        .with("step", colu(&|r| r.step))
        .with("start_us", colf(&|r| r.start_us))
        .with("receiver_finish_us", colf(&|r| r.receiver_finish_us))
        .with("sender_finish_us", colf(&|r| r.sender_finish_us))
        .with("fct_us", colf(&|r| r.fct_us))
        .with("ideal_fct_us", colf(&|r| r.ideal_fct_us))
        .with("slowdown", colf(&|r| r.slowdown))
        .with("measured", Column::Bool(flows.iter().map(|r| r.measured).collect()))
        .with("finished", Column::Bool(flows.iter().map(|r| r.finished).collect()))
        .with("retransmissions", col(&|r| r.retransmissions))
        .with("timeouts", col(&|r| r.timeouts))
        .with("nacks", col(&|r| r.nacks))
        .with("drops", col(&|r| r.drops))
        .with("explored_evs", col(&|r| r.explored_evs))
        .with("recycled_evs", col(&|r| r.recycled_evs))
        .with("freeze_entries", col(&|r| r.freeze_entries))
        .with("frozen_us", colf(&|r| r.frozen_us))
}

/// `summary.json` text. JSON has no NaN: serde_json writes unknown
/// (non-finite) values as null.
pub fn summary_json(s: &Summary) -> String {
    serde_json::to_string_pretty(s).expect("summary serializes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank() {
        let v: Vec<f64> = (1..=100).map(|x| x as f64).collect();
        assert_eq!(percentile(&v, 50.0), 50.0);
        assert_eq!(percentile(&v, 99.0), 99.0);
        assert_eq!(percentile(&v, 100.0), 100.0);
        assert_eq!(percentile(&[7.0], 99.0), 7.0);
        assert_eq!(percentile(&v, 7.0), 7.0, "7 % of 100 is rank 7, not 8");
        let thousand: Vec<f64> = (1..=1000).map(|x| x as f64).collect();
        assert_eq!(percentile(&thousand, 99.9), 999.0, "rank 999 exactly");
        assert_eq!(percentile(&thousand, 99.95), 1000.0);
    }

    #[test]
    fn unknown_values_are_null_in_json() {
        let v: serde_json::Value = serde_json::from_str(&serde_json::to_string(&[f64::NAN, 1.5]).unwrap()).unwrap();
        assert_eq!(v, serde_json::json!([null, 1.5]));
    }
}
