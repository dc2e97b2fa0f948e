//! Time series a run can record (all off by default, `[observe]`): bytes
//! sent, queue depth and PFC-paused time of chosen ports per bucket (REPS
//! Figs. 1, 3, 6, 19 use 20 us buckets), drops by cause per bucket, shared
//! buffer occupancy per switch per bucket, and one RTT sample per ACK.
//!
//! Sampling costs one event per bucket, not one per packet; RTT samples cost
//! a push per ACK, only when asked for.

use crate::metrics::Counters;
use crate::net::{Network, PortId, QueueDiscipline};
use crate::table::{Column, Table};
use crate::time::SimTime;

pub struct Observer {
    pub bucket: SimTime,
    ports: Vec<PortId>,
    drops: bool,
    pub rtt: bool,
    buffers: bool,
    /// Switch policies' gauges per switch per bucket.
    switch_lb: bool,
    /// Time each sampled port had been paused at the last tick.
    last_paused: Vec<SimTime>,
    /// Bytes each sampled port had sent at the last tick.
    last_tx: Vec<u64>,
    last_drops: [u64; 3],
    last_tick: SimTime,
    // Port series rows.
    p_time: Vec<f64>,
    p_port: Vec<String>,
    p_bytes: Vec<u64>,
    p_gbps: Vec<f64>,
    p_rate_gbps: Vec<f64>,
    p_queue: Vec<u64>,
    p_queue_max: Vec<u64>,
    p_up: Vec<bool>,
    p_paused_us: Vec<f64>,
    // Buffer series rows.
    b_time: Vec<f64>,
    b_switch: Vec<String>,
    b_used: Vec<u64>,
    b_max: Vec<u64>,
    // Switch policy gauge rows.
    g_time: Vec<f64>,
    g_switch: Vec<String>,
    g_gauge: Vec<String>,
    g_port: Vec<String>,
    g_value: Vec<u64>,
    // Drop series rows.
    d_time: Vec<f64>,
    d_counts: [Vec<u64>; 3],
    // RTT samples.
    r_flow: Vec<u32>,
    r_time: Vec<f64>,
    r_rtt: Vec<f64>,
}

impl Observer {
    pub fn new(bucket: SimTime, ports: Vec<PortId>, drops: bool, rtt: bool, buffers: bool, switch_lb: bool) -> Self {
        Observer {
            bucket,
            last_tx: vec![0; ports.len()],
            last_paused: vec![SimTime::ZERO; ports.len()],
            buffers,
            switch_lb,
            g_time: Vec::new(),
            g_switch: Vec::new(),
            g_gauge: Vec::new(),
            g_port: Vec::new(),
            g_value: Vec::new(),
            ports,
            drops,
            rtt,
            last_drops: [0; 3],
            last_tick: SimTime::ZERO,
            p_time: Vec::new(),
            p_port: Vec::new(),
            p_bytes: Vec::new(),
            p_gbps: Vec::new(),
            p_rate_gbps: Vec::new(),
            p_queue: Vec::new(),
            p_queue_max: Vec::new(),
            p_up: Vec::new(),
            p_paused_us: Vec::new(),
            b_time: Vec::new(),
            b_switch: Vec::new(),
            b_used: Vec::new(),
            b_max: Vec::new(),
            d_time: Vec::new(),
            d_counts: [Vec::new(), Vec::new(), Vec::new()],
            r_flow: Vec::new(),
            r_time: Vec::new(),
            r_rtt: Vec::new(),
        }
    }

    /// Whether anything is sampled per bucket (then the run schedules ticks).
    pub fn ticks(&self) -> bool {
        !self.ports.is_empty() || self.drops || self.buffers || self.switch_lb
    }

    /// Close the bucket ending `now`: one row per sampled port, one drop row.
    pub fn tick(&mut self, now: SimTime, net: &mut Network, c: &Counters) {
        let span = now - self.last_tick;
        if span == SimTime::ZERO {
            return;
        }
        let t = now.as_us_f64();
        for (i, &p) in self.ports.iter().enumerate() {
            let port = &mut net.ports[p as usize];
            // Bytes that left the line in this bucket: a packet still serializing at its
            // end counts only with what was sent of it, so no bucket exceeds the link rate.
            let on_line = match port.busy_until > now {
                true => port.rate.bytes_in(port.busy_until - now),
                false => 0,
            };
            let sent = port.tx_bytes.saturating_sub(on_line).max(self.last_tx[i]);
            let bytes = sent - self.last_tx[i];
            self.last_tx[i] = sent;
            self.p_time.push(t);
            self.p_port.push(port.name.clone());
            self.p_bytes.push(bytes);
            self.p_gbps.push(bytes as f64 * 8.0 / span.ps() as f64 * 1e3);
            self.p_rate_gbps.push(port.rate.bps() as f64 / 1e9);
            self.p_queue.push(port.queue.backlog_bytes());
            self.p_queue_max.push(port.queue.take_window_max());
            self.p_up.push(port.up);
            let paused = port.paused_time(now);
            self.p_paused_us.push((paused - self.last_paused[i]).as_us_f64());
            self.last_paused[i] = paused;
        }
        if self.buffers {
            for (sw, b) in net.buffers.iter_mut().enumerate() {
                self.b_time.push(t);
                self.b_switch.push(net.switches[sw].name.clone());
                self.b_used.push(b.used);
                self.b_max.push(b.take_window_max_used());
            }
        }
        if self.switch_lb {
            let mut g = Vec::new();
            for (sw, s) in net.switches.iter().enumerate() {
                g.clear();
                net.policies.gauges(sw as u32, s, &mut g);
                for (lb, x) in &g {
                    self.g_time.push(t);
                    self.g_switch.push(s.name.clone());
                    self.g_gauge.push(format!("{lb}.{}", x.name));
                    self.g_port
                        .push(x.port.map_or(String::new(), |p| net.ports[p as usize].name.clone()));
                    self.g_value.push(x.value);
                }
            }
        }
        if self.drops {
            let now_drops = [c.drops_congestion, c.drops_failure, c.trims];
            self.d_time.push(t);
            for ((col, now), last) in self.d_counts.iter_mut().zip(now_drops).zip(self.last_drops) {
                col.push(now - last);
            }
            self.last_drops = now_drops;
        }
        self.last_tick = now;
    }

    #[inline]
    pub fn rtt_sample(&mut self, flow: u32, now: SimTime, rtt: SimTime) {
        self.r_flow.push(flow);
        self.r_time.push(now.as_us_f64());
        self.r_rtt.push(rtt.as_us_f64());
    }

    /// The recorded tables (only those asked for).
    pub fn tables(&self) -> Vec<Table> {
        let mut out = Vec::new();
        if !self.ports.is_empty() {
            out.push(
                Table::new("ports")
                    .with("time_us", Column::F64(self.p_time.clone()))
                    .with("port", Column::Str(self.p_port.clone()))
                    .with("tx_bytes", Column::U64(self.p_bytes.clone()))
                    .with("gbps", Column::F64(self.p_gbps.clone()))
                    .with("rate_gbps", Column::F64(self.p_rate_gbps.clone()))
                    .with("queue_bytes", Column::U64(self.p_queue.clone()))
                    .with("queue_max_bytes", Column::U64(self.p_queue_max.clone()))
                    .with("up", Column::Bool(self.p_up.clone()))
                    .with("paused_us", Column::F64(self.p_paused_us.clone())),
            );
        }
        if self.buffers {
            out.push(
                Table::new("buffers")
                    .with("time_us", Column::F64(self.b_time.clone()))
                    .with("switch", Column::Str(self.b_switch.clone()))
                    .with("used_bytes", Column::U64(self.b_used.clone()))
                    .with("max_used_bytes", Column::U64(self.b_max.clone())),
            );
        }
        if self.switch_lb {
            out.push(
                Table::new("switch_lb_series")
                    .with("time_us", Column::F64(self.g_time.clone()))
                    .with("switch", Column::Str(self.g_switch.clone()))
                    .with("gauge", Column::Str(self.g_gauge.clone()))
                    .with("port", Column::Str(self.g_port.clone()))
                    .with("value", Column::U64(self.g_value.clone())),
            );
        }
        if self.drops {
            out.push(
                Table::new("drops_series")
                    .with("time_us", Column::F64(self.d_time.clone()))
                    .with("congestion", Column::U64(self.d_counts[0].clone()))
                    .with("failure", Column::U64(self.d_counts[1].clone()))
                    .with("trimmed", Column::U64(self.d_counts[2].clone())),
            );
        }
        if self.rtt {
            out.push(
                Table::new("rtt")
                    .with("flow", Column::U32(self.r_flow.clone()))
                    .with("time_us", Column::F64(self.r_time.clone()))
                    .with("rtt_us", Column::F64(self.r_rtt.clone())),
            );
        }
        out
    }
}
