//! FaCa's switch side (FaCa §5.3): nothing but INT. A probe of the FaCa
//! route class goes exactly where ECMP sends its entropy value
//! (`RouteCtx::hashed`, so the path it reports is the path data on that EV
//! takes), and the switch appends a record: its id, the egress port, the
//! port's queue delay ahead of the probe (backlog / rate), its rate, its
//! latency, and the bandwidth it used over a recent window. FaCa's data
//! packets never come here (route class 0).
//!
//! The used bandwidth is measured over at least one window and less than
//! two: each port keeps the byte count at the last two window boundaries
//! and a probe reads the rate since the older one, so probes close together
//! (from different hosts) do not divide a packet by nanoseconds.

use super::{Counter, Decision, PolicyOut, RouteCtx, SwitchPolicy};
use crate::lb::faca::int::{IntRecord, SharedStore};
use crate::net::PortId;
use crate::packet::{Packet, PacketId, PacketKind};
use crate::time::SimTime;
use std::collections::BTreeMap;

/// A port's byte counts at the last two window boundaries.
#[derive(Clone, Copy, Debug, Default)]
struct Window {
    old: (SimTime, u64),
    new: (SimTime, u64),
}

pub struct FacaInt {
    store: SharedStore,
    window: SimTime,
    /// Bytes a record adds to the probe.
    record_bytes: u32,
    ports: BTreeMap<PortId, Window>,
    records: u64,
}

impl FacaInt {
    pub fn new(store: SharedStore, window: SimTime, record_bytes: u32) -> Self {
        FacaInt {
            store,
            window,
            record_bytes,
            ports: BTreeMap::new(),
            records: 0,
        }
    }

    /// Bits per second `port` sent over [older boundary, now]; moves the boundaries when a window has passed.
    fn used_bps(&mut self, port: PortId, now: SimTime, tx_bytes: u64) -> f64 {
        let w = self.ports.entry(port).or_default();
        if now.saturating_sub(w.new.0) >= self.window {
            w.old = w.new;
            w.new = (now, tx_bytes);
        }
        let dt = now.saturating_sub(w.old.0);
        if dt == SimTime::ZERO {
            return 0.0;
        }
        (tx_bytes - w.old.1) as f64 * 8.0 / (dt.ps() as f64 * 1e-12)
    }
}

impl SwitchPolicy for FacaInt {
    fn route(&mut self, ctx: &RouteCtx, _id: PacketId, pkt: &mut Packet, _out: &mut PolicyOut) -> Decision {
        let d = ctx.hashed(pkt);
        if let (Decision::Forward(port), PacketKind::Probe) = (d, pkt.kind) {
            let p = &ctx.ports[port as usize];
            let backlog = p.backlog_bytes(ctx.now);
            let rec = IntRecord {
                switch: ctx.switch,
                port,
                queue_delay: p.rate.serialization(backlog),
                rate: p.rate,
                latency: p.latency,
                used_bps: self.used_bps(port, ctx.now, p.tx_bytes),
            };
            self.store.borrow_mut().append(pkt.tag, rec);
            pkt.size += self.record_bytes;
            self.records += 1;
        }
        d
    }

    fn counters(&self, out: &mut Vec<Counter>) {
        out.push(Counter::Sum("int_records", self.records));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn used_bandwidth_spans_one_to_two_windows() {
        let store = SharedStore::default();
        let mut p = FacaInt::new(store, SimTime::from_us(10), 16);
        // 12.5 kB per microsecond = 100 Gb/s, steadily.
        let bytes = |us: u64| us * 12_500;
        assert_eq!(p.used_bps(3, SimTime::ZERO, 0), 0.0);
        for us in [10u64, 12, 19, 20, 21, 35] {
            let bps = p.used_bps(3, SimTime::from_us(us), bytes(us));
            assert!((bps - 100e9).abs() < 1e3, "{us} us: {bps}");
        }
        let w = p.ports[&3];
        assert!(w.new.0 - w.old.0 >= SimTime::from_us(10));
    }
}
