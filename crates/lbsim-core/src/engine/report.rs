//! What a finished run reports: a record per transport flow and per
//! message, the summary, and the tables beyond them (messages when split,
//! a collective's steps, time series, failures as resolved).

use super::{Simulation, StopReason};
use crate::failure::Fault;
use crate::lb::LoadBalancer;
use crate::metrics::{fct_stats, message_table, slowdown_stats, step_table, Drops, FlowRecord, MessageRecord, Summary};
use crate::scenario::FctEnd;
use crate::table::{Column, Table};
use crate::time::SimTime;
use crate::transport::{Flow, Receive};

impl Simulation {
    pub fn flow_records(&self) -> Vec<FlowRecord> {
        let us = |t: Option<SimTime>| t.map(|t| t.as_us_f64()).unwrap_or(f64::NAN);
        self.flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let frozen = f.lb.frozen_ps(self.now, &f.lb_stats);
                let rx_finish = f.rx.finish();
                let finish = self.finish(f);
                let started = f.tx.active;
                let fct = finish.map(|t| t - f.started_at);
                let measured = started
                    && f.started_at >= self.meta.measure_from
                    && finish.is_some_and(|t| self.meta.measure_until.is_none_or(|u| t <= u));
                FlowRecord {
                    id: i as u32,
                    message: f.message,
                    src: f.spec.src,
                    dst: f.spec.dst,
                    size_bytes: f.spec.size,
                    lb: f.lb_kind.name(),
                    step: f.step,
                    start_us: if started { f.started_at.as_us_f64() } else { f64::NAN },
                    receiver_finish_us: us(rx_finish),
                    sender_finish_us: us(f.tx.finish_time()),
                    fct_us: fct.map_or(f64::NAN, |t| t.as_us_f64()),
                    ideal_fct_us: f.ideal.as_us_f64(),
                    // ConWeave fctAnalysis.py: slowdown = max(1, FCT / standalone FCT).
                    slowdown: fct.map_or(f64::NAN, |t| (t.ps() as f64 / f.ideal.ps() as f64).max(1.0)),
                    measured,
                    finished: finish.is_some(),
                    retransmissions: f.tx.retransmissions,
                    timeouts: f.tx.timeouts,
                    nacks: f.tx.nacks,
                    drops: f.drops,
                    explored_evs: f.lb_stats.explored,
                    recycled_evs: f.lb_stats.recycled,
                    freeze_entries: f.lb_stats.freeze_entries,
                    frozen_us: frozen as f64 / 1e6,
                }
            })
            .collect()
    }

    /// When flow `f` completed, by `metrics.fct`: its last byte's arrival,
    /// or the sender's receipt of that byte's ACK (only once the data is all
    /// there: a sender done early by a cut-short run does not count).
    fn finish(&self, f: &Flow) -> Option<SimTime> {
        let rx = f.rx.finish()?;
        match self.meta.fct_end {
            FctEnd::LastByte => Some(rx),
            FctEnd::LastAck => f.tx.finish_time().map(|t| t.max(rx)),
        }
    }

    /// One record per message: a message finishes when the last of its
    /// flows' data arrives, and its slowdown is against the whole message's
    /// ideal (REPS Fig. 2 normalises the message's completion).
    pub fn message_records(&self) -> Vec<MessageRecord> {
        self.flows
            .chunk_by(|a, b| a.message == b.message)
            .map(|carriers| {
                let first = &carriers[0];
                let ideal = self.meta.message_ideal[first.message as usize];
                let started = carriers.iter().all(|f| f.tx.active);
                let start = carriers.iter().map(|f| f.started_at).min().unwrap_or(first.started_at);
                let last_of = |end: &dyn Fn(&Flow) -> Option<SimTime>| {
                    carriers
                        .iter()
                        .try_fold(SimTime::ZERO, |last, f| end(f).map(|t| last.max(t)))
                };
                let rx_finish = last_of(&|f| f.rx.finish());
                let finish = last_of(&|f| self.finish(f));
                let fct = finish.map(|t| t - start);
                MessageRecord {
                    message: first.message,
                    src: first.spec.src,
                    dst: first.spec.dst,
                    size_bytes: carriers.iter().map(|f| f.spec.size).sum(),
                    lb: first.lb_kind.name(),
                    step: first.step,
                    subflows: carriers.len() as u32,
                    start_us: if started { start.as_us_f64() } else { f64::NAN },
                    receiver_finish_us: rx_finish.map_or(f64::NAN, |t| t.as_us_f64()),
                    fct_us: fct.map_or(f64::NAN, |t| t.as_us_f64()),
                    ideal_fct_us: ideal.as_us_f64(),
                    // ConWeave fctAnalysis.py: slowdown = max(1, FCT / standalone FCT).
                    slowdown: fct.map_or(f64::NAN, |t| (t.ps() as f64 / ideal.ps() as f64).max(1.0)),
                    measured: started
                        && start >= self.meta.measure_from
                        && finish.is_some_and(|t| self.meta.measure_until.is_none_or(|u| t <= u)),
                    finished: finish.is_some(),
                }
            })
            .collect()
    }

    /// The tables beyond the flow table: the messages when some were split
    /// into subflows, a collective's steps, recorded time series, and the
    /// failures as they were resolved (one row per target).
    pub fn extra_tables(&self, messages: &[MessageRecord]) -> Vec<Table> {
        let mut out = Vec::new();
        if messages.len() < self.flows.len() {
            out.push(message_table(messages));
        }
        out.extend(self.observer.as_ref().map(|o| o.tables()).unwrap_or_default());
        if self.port_totals {
            out.push(self.port_totals_table());
        }
        if self.meta.collective.is_some() {
            out.push(step_table(messages));
        }
        out.extend(self.pfc_table());
        out.extend(self.net.policies.records_table(&self.net.switches));
        out.extend(self.lb_agent.as_ref().and_then(|a| a.table(&self.net)));
        if !self.failures.is_empty() {
            let mut entry = Vec::new();
            let mut link = Vec::new();
            let mut kind = Vec::new();
            let (mut start, mut dur, mut every) = (Vec::new(), Vec::new(), Vec::new());
            for f in &self.failures {
                // A network-wide failure (switch_ber, cable_ber) has no ports: one row for it.
                let names: Vec<String> = if let Fault::CableBer(_) = f.fault {
                    vec!["all links and switches".to_string()] // cable_ber also counts each switch's own pipe
                } else if f.ports.is_empty() {
                    vec!["all switches".to_string()]
                } else {
                    f.ports
                        .iter()
                        .map(|&p| self.net.ports[p as usize].name.clone())
                        .collect()
                };
                for name in names {
                    entry.push(f.entry as u32);
                    link.push(name);
                    kind.push(
                        match f.fault {
                            Fault::Down => "down",
                            Fault::Degrade(_) => "degrade",
                            Fault::Loss(_) => "loss",
                            Fault::DropNth(_) => "drop_nth",
                            Fault::SwitchBer(_) => "switch_ber",
                            Fault::CableBer(_) => "cable_ber",
                        }
                        .to_string(),
                    );
                    start.push(f.start.as_us_f64());
                    dur.push(f.duration.map_or(f64::NAN, |d| d.as_us_f64()));
                    every.push(f.every.map_or(f64::NAN, |d| d.as_us_f64()));
                }
            }
            out.push(
                Table::new("failures")
                    .with("entry", Column::U32(entry))
                    .with("link", Column::Str(link))
                    .with("kind", Column::Str(kind))
                    .with("start_us", Column::F64(start))
                    .with("duration_us", Column::F64(dur))
                    .with("every_us", Column::F64(every)),
            );
        }
        out
    }

    pub fn summary(&self, records: &[MessageRecord]) -> Summary {
        let s = fct_stats(records);
        let c = &self.counters;
        let finished = records.iter().filter(|r| r.finished).count();
        let (measured_flows, mean_slowdown, p99_slowdown) = slowdown_stats(records);
        let collective_us = match self.meta.collective {
            Some(_) if finished == records.len() => {
                let first = records.iter().map(|r| r.start_us).fold(f64::INFINITY, f64::min);
                let last = records.iter().map(|r| r.receiver_finish_us).fold(0.0, f64::max);
                last - first
            }
            _ => f64::NAN,
        };
        Summary {
            lbsim_version: env!("CARGO_PKG_VERSION"),
            flows: records.len(),
            finished_flows: finished,
            unfinished_flows: records.len() - finished,
            max_fct_us: s.max,
            mean_fct_us: s.mean,
            p50_fct_us: s.p50,
            p99_fct_us: s.p99,
            measured_flows,
            mean_slowdown,
            p99_slowdown,
            collective_us,
            drops: Drops {
                congestion: c.drops_congestion,
                failure: c.drops_failure,
                trimmed: c.trims,
            },
            retransmissions: c.retransmissions,
            timeouts: c.timeouts,
            packets_sent: c.packets_sent,
            packets_delivered: c.delivered,
            ecn_marks: c.ecn_marks,
            events: c.events,
            sim_end_us: self.now.as_us_f64(),
            wall_seconds: self.wall_seconds,
            events_per_second: if self.wall_seconds > 0.0 {
                c.events as f64 / self.wall_seconds
            } else {
                0.0
            },
            base_rtt_us: self.params.base_rtt.as_us_f64(),
            bdp_bytes: self.params.bdp_bytes,
            rto_us: self.params.transport.rto.as_us_f64(),
            queue_bytes: self.params.queue_bytes,
            stopped_early: self.stop_reason != Some(StopReason::Drained),
            stop_reason: self.stop_reason.map_or("drained", StopReason::name),
            pfc_pauses: c.pfc_pauses,
            pfc_resumes: c.pfc_resumes,
            reordered_arrivals: c.reordered_arrivals,
            switch_control_sent: c.switch_control_sent,
            rts_sent: c.rts_sent,
            switch_lb: self.net.policies.counters(),
            host_lb: self.lb_agent_summary(),
            warnings: Vec::new(),
        }
    }

    /// Every port at the end: where it leads, what it sent, what its queue
    /// dropped for want of room (`pushed_out`: of those, waiting packets a
    /// full queue gave up for an arrival) and its largest data backlog.
    /// Losses on a failed or lossy link are not a queue's and are not here.
    fn port_totals_table(&self) -> Table {
        use crate::net::queue::QueueDiscipline;
        let ports = &self.net.ports;
        let col = |f: &dyn Fn(&crate::net::Port) -> u64| Column::U64(ports.iter().map(f).collect());
        let node = |f: &dyn Fn(&crate::net::Port) -> crate::net::Node| {
            Column::Str(ports.iter().map(|p| self.net.node_name(f(p))).collect())
        };
        Table::new("port_totals")
            .with("port", Column::Str(ports.iter().map(|p| p.name.clone()).collect()))
            .with("from", node(&|p| p.from))
            .with("to", node(&|p| p.to))
            .with("tx_bytes", col(&|p| p.tx_bytes))
            .with("tx_packets", col(&|p| p.tx_packets))
            .with("drops", col(&|p| p.queue.stats().drops))
            .with("pushed_out", col(&|p| p.queue.stats().pushed_out))
            .with("max_queue_bytes", col(&|p| p.queue.stats().max_bytes))
    }

    /// PFC per port that sent or received a frame: counts, time paused, and
    /// the classes still paused when the run ended (a deadlock's ports).
    fn pfc_table(&self) -> Option<Table> {
        let ports: Vec<_> = self.net.ports.iter().filter(|p| p.pfc.is_some()).collect();
        if ports.is_empty() {
            return None;
        }
        let col = |f: &dyn Fn(&crate::net::Port) -> u64| Column::U64(ports.iter().map(|p| f(p)).collect());
        let state = |p: &crate::net::Port| p.pfc.as_deref().cloned().unwrap_or_default();
        Some(
            Table::new("pfc")
                .with("port", Column::Str(ports.iter().map(|p| p.name.clone()).collect()))
                .with("pauses_sent", col(&|p| state(p).pauses_sent))
                .with("resumes_sent", col(&|p| state(p).resumes_sent))
                .with("pauses_received", col(&|p| state(p).pauses_received))
                .with(
                    "paused_us",
                    Column::F64(ports.iter().map(|p| p.paused_time(self.now).as_us_f64()).collect()),
                )
                .with("paused_classes_at_end", col(&|p| p.paused as u64)),
        )
    }
}
