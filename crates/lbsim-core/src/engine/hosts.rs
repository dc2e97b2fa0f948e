//! Host NICs. A NIC serves its control queue (ACKs, NACKs, credits, RTS)
//! first, then its ready flows round-robin, one data packet per turn, each
//! as its congestion control allows. What reaches a host goes to the flow's
//! receiver half (data, RTS) or sender half (ACK, NACK, credit).

use super::Simulation;
use crate::cc::CongestionControl;
use crate::event::Event;
use crate::packet::{Packet, PacketId, PacketKind};
use crate::time::SimTime;

impl Simulation {
    /// Queue a flow for its host's NIC if it can send, and wake the NIC.
    pub(super) fn make_ready(&mut self, flow: u32) {
        let f = &mut self.flows[flow as usize];
        if f.in_ready || !f.can_send() {
            return;
        }
        f.in_ready = true;
        let host = f.spec.src;
        self.net.hosts[host as usize].ready.push_back(flow);
        let nic = self.net.hosts[host as usize].nic;
        self.kick(nic);
    }

    /// Bring a host's lazy NIC line up to now before anything changes what
    /// it would have sent (a `TxDone` of this instant would have run first).
    /// (One predictable branch where NICs are eager: the NIC's line is not read.)
    #[inline(always)]
    pub(super) fn catch_up_nic(&mut self, host: u32) {
        if self.lazy_nics {
            let nic = self.net.hosts[host as usize].nic;
            self.catch_up(nic, self.now);
        }
    }

    /// The REPS artifact's NIC (`transport.timeout_nic_turn`): a flow that
    /// can send asks for a turn although it may hold one, and gets another.
    pub(super) fn take_extra_turn(&mut self, flow: u32) {
        let f = &mut self.flows[flow as usize];
        if f.can_send() {
            let host = f.spec.src;
            self.net.hosts[host as usize].ready.push_back(flow);
        }
    }

    /// The NIC is free at `at` (now, or for a lazy line the time it freed):
    /// take one data packet from the next ready flow.
    pub(super) fn host_pull(&mut self, host: u32, at: SimTime) -> Option<(PacketId, u32)> {
        while let Some(fid) = self.net.hosts[host as usize].ready.pop_front() {
            let f = &mut self.flows[fid as usize];
            // This turn is taken; the flow asks for the next below. (With
            // `transport.timeout_nic_turn` a flow may hold more turns than one.)
            f.in_ready = false;
            if !f.can_send() {
                continue;
            }
            if let Some(wake) = self.params.paced.then(|| f.cc.paced_until(at)).flatten() {
                // Rate-paced (DCQCN): wake the flow when it may go.
                if wake < f.pace_at {
                    f.pace_at = wake;
                    self.events.push(wake, Event::FlowPace { flow: fid });
                }
                continue;
            }
            let (pkt, rtx) = f.next_packet(fid, at, self.params.transport.ack_request);
            let arm_timer = !f.timer_pending;
            f.timer_pending = true;
            if f.can_send() {
                f.in_ready = true;
                self.net.hosts[host as usize].ready.push_back(fid);
            }
            if arm_timer {
                let due = f.tx.timer_due(at + self.params.transport.rto);
                self.events.push(due, Event::FlowTimer { flow: fid });
            }
            self.counters.packets_sent += 1;
            self.counters.data_sent += 1;
            self.counters.retransmissions += rtx as u64;
            return Some((self.pool.alloc(pkt), pkt.size));
        }
        None
    }

    /// A packet reached `host` over `link`.
    pub(super) fn host_receive(&mut self, host: u32, link: u32, id: PacketId) {
        self.catch_up_nic(host);
        let pkt = *self.pool.get(id);
        if pkt.kind == PacketKind::Pause {
            return self.on_pause_frame(link, id); // counts it delivered
        }
        if let Some(ber) = &mut self.bit_errors {
            if ber.take(&pkt) {
                return self.drop_packet(id, true); // the artifact's receiver drops it silently
            }
        }
        self.counters.delivered += 1;
        self.pool.free(id);
        debug_assert_eq!(pkt.dst, host);
        match pkt.kind {
            PacketKind::Data => self.receive_data(host, pkt),
            PacketKind::Ack | PacketKind::AckBatch | PacketKind::SackAck => self.on_ack(pkt),
            PacketKind::Nack => self.on_nack(pkt),
            PacketKind::Credit => self.on_credit(pkt),
            PacketKind::Rts => self.receive_request(host, pkt),
            PacketKind::Pause => unreachable!("PFC frames are taken above"),
            PacketKind::Probe | PacketKind::ProbeEcho => self.agent_receive(host, pkt),
            PacketKind::SwitchControl => {
                debug_assert!(false, "a switch policy let its control packet reach host {host}")
            }
        }
    }

    /// Put a control packet (ACK, NACK, credit, RTS) on its source host's NIC.
    pub(super) fn send_control(&mut self, pkt: Packet) {
        self.counters.packets_sent += 1;
        self.counters.count_control(pkt.kind);
        let nic = self.net.hosts[pkt.src as usize].nic;
        let id = self.pool.alloc(pkt);
        self.enqueue(nic, id, None);
    }

    /// A host agent's packet (a FaCa probe or echo) reached `host`.
    fn agent_receive(&mut self, host: u32, pkt: Packet) {
        if let Some(agent) = &mut self.lb_agent {
            agent.on_packet(self.now, host, &pkt, &mut self.agent_out);
            self.apply_agent_out();
        }
    }

    /// A host agent's timer fired.
    pub(super) fn on_lb_agent(&mut self, host: u32) {
        if let Some(agent) = &mut self.lb_agent {
            agent.on_timer(self.now, host, &mut self.agent_out);
            self.apply_agent_out();
        }
    }

    /// Send what the host agent asked to, and arm its timers.
    pub(super) fn apply_agent_out(&mut self) {
        let mut out = std::mem::take(&mut self.agent_out);
        for pkt in out.send.drain(..) {
            self.send_control(pkt);
        }
        for (at, host) in out.timers.drain(..) {
            self.events.push(at, Event::LbAgent { host });
        }
        self.agent_out = out;
    }

    /// What the host agent counted, for the summary.
    pub(super) fn lb_agent_summary(&self) -> std::collections::BTreeMap<String, f64> {
        let mut out = std::collections::BTreeMap::new();
        if let Some(agent) = &self.lb_agent {
            agent.summary(self.now, &mut out);
        }
        out
    }
}
