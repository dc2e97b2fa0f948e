//! The sending side: a flow starts, answers (ACK, NACK, credit) reach its
//! sender half, and its one lazy retransmission timer fires. What each of
//! them does to the flow is `transport::Flow`'s; here are the events,
//! counters and packets around it.

use super::Simulation;
use crate::cc::CongestionControl;
use crate::event::Event;
use crate::lb::LoadBalancer;
use crate::packet::Packet;
use crate::scenario::Release;
use crate::time::SimTime;

impl Simulation {
    pub(super) fn on_flow_start(&mut self, flow: u32) {
        self.catch_up_nic(self.flows[flow as usize].spec.src);
        let f = &mut self.flows[flow as usize];
        f.start();
        f.started_at = self.now;
        if let Some(memory) = &mut self.pair_memory {
            memory.resume(f);
        }
        // A balancer with a host agent (FaCa) pins the flow's EV now; one branch when there is none.
        if let Some(agent) = &mut self.lb_agent {
            let s = &f.spec;
            if let Some(ev) = agent.flow_ev(self.now, flow, s.src, s.dst, s.size) {
                f.lb.pin(ev);
            }
        }
        self.make_ready(flow);
    }

    pub(super) fn on_ack(&mut self, ack: Packet) {
        let now = self.now;
        let f = &mut self.flows[ack.flow as usize];
        if f.is_done() {
            return;
        }
        if let Some(obs) = self.observer.as_mut().filter(|o| o.rtt) {
            obs.rtt_sample(ack.flow, now, now - ack.sent_at);
        }
        if f.on_ack(&ack, now, &self.params.transport) {
            self.sender_finished(ack.flow);
            return;
        }
        self.make_ready(ack.flow);
    }

    pub(super) fn on_nack(&mut self, nack: Packet) {
        let f = &mut self.flows[nack.flow as usize];
        if f.is_done() {
            return;
        }
        if f.on_nack(&nack, self.now) {
            self.sender_finished(nack.flow);
            return;
        }
        self.make_ready(nack.flow);
    }

    /// Every packet of `flow` is acknowledged: free its state, and leave
    /// its balancer and window to its pair's next flow if asked to.
    fn sender_finished(&mut self, flow: u32) {
        let f = &mut self.flows[flow as usize];
        if let Some(memory) = &mut self.pair_memory {
            memory.save(f);
        }
        f.finish_sender(self.now);
        self.senders_done += 1;
        self.on_flow_done(flow, Release::Ack);
    }

    /// A rate-paced flow's next packet may leave.
    #[inline(never)]
    pub(super) fn on_flow_pace(&mut self, flow: u32) {
        let f = &mut self.flows[flow as usize];
        if f.pace_at == self.now {
            f.pace_at = SimTime::MAX;
        }
        self.make_ready(flow);
    }

    pub(super) fn on_credit(&mut self, credit: Packet) {
        let f = &mut self.flows[credit.flow as usize];
        if f.is_done() {
            return;
        }
        f.cc.on_credit(credit.seq);
        self.make_ready(credit.flow);
    }

    pub(super) fn on_flow_timer(&mut self, flow: u32) {
        self.catch_up_nic(self.flows[flow as usize].spec.src);
        let now = self.now;
        let f = &mut self.flows[flow as usize];
        f.timer_pending = false;
        if f.is_done() {
            return;
        }
        let nic = self.net.hosts[f.spec.src as usize].nic;
        let nic_free = self.net.ports[nic as usize].busy_until <= now;
        let out = f.on_timer(now, &self.params.transport, nic_free, &mut self.lost_scratch);
        self.counters.timeouts += out.lost;
        if let Some(at) = out.rearm {
            f.timer_pending = true;
            self.events.push(at, Event::FlowTimer { flow });
        }
        let rts = out.rts.then(|| f.timeout_rts_packet(flow, now));
        let request = out
            .request
            .map(|req| f.control_packet(flow, req, self.params.control_bytes, now));
        for pkt in [rts, request].into_iter().flatten() {
            self.send_control(pkt);
        }
        self.make_ready(flow);
        if out.first_loss && self.params.transport.timeout_nic_turn {
            self.take_extra_turn(flow);
        }
    }
}
