//! PFC (IEEE 802.1Qbb) between neighbours: a queue that asks for a pause
//! or resume (`QueueCtx::signals`) makes its switch send a pause frame on
//! the port back to the upstream node, in the control class; when the frame
//! arrives, the upstream port stops serving that class (a host NIC stops
//! pulling data) until the pause runs out or a resume comes. While the
//! congestion lasts the switch refreshes its pauses every half pause time
//! (IEEE 802.1Qbb: a receiver renews a pause before its quanta run out).
//! The packet on the wire always finishes; what was already sent lands in
//! the headroom.

use super::Simulation;
use crate::event::Event;
use crate::packet::{Packet, PacketId};
use crate::time::SimTime;

/// Bytes of a PFC frame on the wire: a minimum-size Ethernet MAC control
/// frame (IEEE 802.3 Annex 31B; 802.1Qbb pause frames are such frames).
pub const PFC_FRAME_BYTES: u32 = 64;

impl Simulation {
    /// Send the PFC frames queues asked for, each in its port's control class.
    #[cold]
    pub(super) fn send_pfc_frames(&mut self) {
        let mut signals = std::mem::take(&mut self.pfc_signals);
        for s in signals.drain(..) {
            let frame = Packet::pause(s.class, s.duration, PFC_FRAME_BYTES, self.now);
            let state = self.net.ports[s.port as usize].pfc.get_or_insert_with(Default::default);
            if s.duration > SimTime::ZERO {
                state.pauses_sent += 1;
                self.counters.pfc_pauses += 1;
                if !state.refresh_pending {
                    state.refresh_pending = true;
                    let at = self.now + SimTime(s.duration.ps() / 2);
                    self.events.push(at, Event::PfcRefresh { port: s.port });
                }
            } else {
                state.resumes_sent += 1;
                self.counters.pfc_resumes += 1;
            }
            self.counters.packets_sent += 1;
            let id = self.pool.alloc(frame);
            self.enqueue(s.port, id, None);
        }
        self.pfc_signals = signals;
    }

    /// Re-send the pauses the switch behind `port` still holds its upstream to.
    pub(super) fn on_pfc_refresh(&mut self, port: u32) {
        let p = &mut self.net.ports[port as usize];
        p.pfc
            .as_mut()
            .expect("a port that paused has PFC state")
            .refresh_pending = false;
        let crate::net::Node::Switch(sw) = p.from else { return };
        let (classes, duration) = self.net.buffers[sw as usize].pausing(p.local as usize);
        for class in (1..8u8).filter(|c| classes & (1 << c) != 0) {
            self.pfc_signals
                .push(crate::net::queue::PfcSignal { port, class, duration });
        }
        if !self.pfc_signals.is_empty() {
            self.send_pfc_frames();
        }
    }

    /// The deadlock watch: if no packet but PFC frames moved since the last
    /// look, none is being serialized now (a slow link still sending one is
    /// progress, however long the packet takes) and some port is paused, the
    /// run ends as a PFC deadlock.
    pub(super) fn on_pfc_watchdog(&mut self) {
        let Some((every, last)) = self.pfc_watch else { return };
        let sent: u64 = self.net.ports.iter().map(|p| p.tx_packets).sum();
        let moved = sent - (self.counters.pfc_pauses + self.counters.pfc_resumes);
        let now = self.now;
        // The packet on a busy line is the wire's newest.
        let serializing = |p: &crate::net::Port| {
            p.busy_until > now
                && p.wire
                    .back()
                    .is_some_and(|(_, pkt)| pkt.kind != crate::packet::PacketKind::Pause)
        };
        if moved == last && !self.net.ports.iter().any(serializing) && self.net.ports.iter().any(|p| p.paused != 0) {
            self.halt = Some(super::StopReason::PfcDeadlock);
            return;
        }
        self.pfc_watch = Some((every, moved));
        self.events.push(self.now + every, Event::PfcWatchdog);
    }

    /// Why the watchdog ended the run, in words (None if it did not).
    pub fn pfc_deadlock_note(&self) -> Option<String> {
        if self.stop_reason != Some(super::StopReason::PfcDeadlock) {
            return None;
        }
        let after = self.pfc_watch.map_or(SimTime::ZERO, |(every, _)| every);
        let paused = self.net.ports.iter().filter(|p| p.paused != 0).count();
        let stuck = self.flows.iter().filter(|f| f.tx.active && !f.is_done()).count();
        Some(format!(
            "pfc deadlock: nothing but PFC frames moved for {after} (queue.shared.deadlock_after) with {paused} paused port(s) \
             (the pfc table's paused_classes_at_end names them) and {stuck} started flows unfinished; stopped at {}",
            self.now
        ))
    }

    /// A pause frame arrived over `link`: the port back over it pauses (or
    /// resumes) the frame's class.
    pub(super) fn on_pause_frame(&mut self, link: u32, id: PacketId) {
        self.counters.delivered += 1;
        let frame = *self.pool.get(id);
        self.pool.free(id);
        let (class, now) = (frame.span as u8, self.now);
        let duration = SimTime(frame.seq as u64 * 1000);
        let target = self.net.ports[link as usize].reverse;
        let port = &mut self.net.ports[target as usize];
        let state = port.pfc.get_or_insert_with(Default::default);
        if duration == SimTime::ZERO {
            state.pause_until[class as usize] = now;
            self.end_pauses(target);
            return;
        }
        state.pauses_received += 1;
        state.pause_until[class as usize] = now + duration;
        if port.paused == 0 {
            state.paused_since = Some(now);
        }
        port.paused |= 1 << class;
        if state.end_event_at.is_none_or(|t| t > now + duration) {
            state.end_event_at = Some(now + duration);
            self.events.push(now + duration, Event::PauseEnd { port: target });
        }
    }

    /// A pause may have run out at `port`.
    pub(super) fn on_pause_end(&mut self, port: u32) {
        let state = self.net.ports[port as usize]
            .pfc
            .as_mut()
            .expect("a paused port has PFC state");
        if state.end_event_at == Some(self.now) {
            state.end_event_at = None;
        }
        self.end_pauses(port);
    }

    /// Lift every pause of `port` that has run out; wake the port if any
    /// was lifted, and wait for the next one to run out.
    fn end_pauses(&mut self, port_id: u32) {
        let now = self.now;
        let port = &mut self.net.ports[port_id as usize];
        let state = port.pfc.as_mut().expect("a paused port has PFC state");
        let before = port.paused;
        for c in 0..8 {
            if port.paused & (1 << c) != 0 && state.pause_until[c] <= now {
                port.paused &= !(1 << c);
            }
        }
        if port.paused == 0 {
            if let Some(since) = state.paused_since.take() {
                state.paused_total += now - since;
            }
        } else if state.end_event_at.is_none() {
            let next = (0..8)
                .filter(|&c| port.paused & (1 << c) != 0)
                .map(|c| state.pause_until[c])
                .min();
            let next = next.expect("some class is paused");
            state.end_event_at = Some(next);
            self.events.push(next, Event::PauseEnd { port: port_id });
        }
        if port.paused != before {
            self.kick(port_id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::StopReason;

    /// A host paused for a second, with nobody left to resume it: nothing
    /// moves, pauses are in force, and after `deadlock_after` the run ends
    /// as a PFC deadlock naming the paused port, instead of running on.
    #[test]
    fn a_run_where_nothing_moves_under_pauses_ends_as_a_pfc_deadlock() {
        let dir = std::env::temp_dir().join(format!("lbsim-deadlock-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("f.csv"), "src,dst,size_bytes,start_us\n1,9,1048576,0\n").unwrap();
        let toml = "[topology]\nhosts = 16\nlink_rate = \"100Gbps\"\n[queue]\nkind = \"shared\"\necn_kmin = \"100KB\"\necn_kmax = \"400KB\"\n\
                    [queue.shared]\nsize = \"2MiB\"\negress_alpha = 1.0\negress_limits_lossless = false\ndata_class = 3\nscheduling = \"round_robin\"\n\
                    pfc = true\npfc_alpha = 0.0625\nheadroom = \"auto\"\nhysteresis = \"2pkt\"\n\
                    pause_time = \"5us\"\ndeadlock_after = \"100us\"\n\
                    [workload]\nkind = \"flows\"\nfile = \"f.csv\"\n";
        let s = crate::Scenario::from_toml(toml).unwrap();
        let mut sim = crate::build::build(&s, Some(&dir)).unwrap();
        let down = sim.net.port_by_name("t0_0->h1").unwrap();
        let frame = Packet::pause(3, SimTime::from_us(1_000_000), PFC_FRAME_BYTES, SimTime::ZERO);
        sim.counters.packets_sent += 1;
        sim.counters.pfc_pauses += 1;
        let id = sim.pool.alloc(frame);
        sim.enqueue(down, id, None);
        assert_eq!(sim.run(), StopReason::PfcDeadlock);
        assert!(
            sim.now() < SimTime::from_us(300),
            "ended {} after the first quiet look",
            sim.now()
        );
        let tables = sim.extra_tables(&sim.message_records());
        let pfc = tables.iter().find(|t| t.name == "pfc").expect("a pfc table");
        let Some(crate::table::Column::Str(ports)) = pfc.column("port") else {
            panic!()
        };
        let Some(crate::table::Column::U64(paused)) = pfc.column("paused_classes_at_end") else {
            panic!()
        };
        let i = ports
            .iter()
            .position(|p| p == "h1->t0_0")
            .expect("the paused NIC is listed");
        assert_eq!(paused[i], 1 << 3);
        assert!(!sim.flow_records()[0].finished);
        let note = sim.stop_note().expect("a deadlock is explained");
        assert!(
            note.starts_with("pfc deadlock") && note.contains("1 paused port(s)"),
            "{note}"
        );
        assert_eq!(sim.invariant_violations(), Vec::<String>::new());
    }
}
