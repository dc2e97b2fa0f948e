//! The receiving side: data reaches a flow's receiver half, which answers
//! as its ACK policy says; a message made whole releases the flows waiting
//! for it (`release`); the receiving hosts' congestion-control agent (EQDS's credit
//! pacers) sees every arrival and paces its grants.

use super::Simulation;
use crate::cc::CongestionControl;
use crate::event::Event;
use crate::packet::{Packet, PacketKind};
use crate::scenario::Release;
use crate::transport::receiver::{Batch, Reply};
use crate::transport::Receive;

impl Simulation {
    pub(super) fn receive_data(&mut self, host: u32, pkt: Packet) {
        let now = self.now;
        let npkts = self.flows[pkt.flow as usize].npkts();
        if pkt.seq >= npkts {
            return self.receive_timeout_rts(pkt); // a lost RTS sent again as data
        }
        if let Some(agent) = &mut self.receiver_cc {
            if let Some(at) = agent.on_data(host, &pkt, npkts, now) {
                self.events.push(at, Event::ReceiverCc { host });
            }
        }
        let f = &mut self.flows[pkt.flow as usize];
        if pkt.seq + 1 < f.rx_next {
            self.counters.reordered_arrivals += 1;
        }
        f.rx_next = f.rx_next.max(pkt.seq + 1);
        let arrival = f.rx.on_data(&pkt, npkts, now, &self.params.transport.acks);
        if arrival.new {
            let payload = f.tx.payload_of(pkt.seq) as u64;
            f.delivered += payload;
            self.counters.payload_delivered += payload;
        }
        if arrival.complete {
            self.flows_done += 1;
            self.on_flow_done(pkt.flow, Release::Arrival);
        }
        self.reply(&pkt, arrival.reply);
    }

    /// Answer a data packet as the receiver decided.
    fn reply(&mut self, data: &Packet, reply: Reply) {
        match reply {
            Reply::Nothing => {}
            Reply::Echo(kind) => self.send_control(Packet::reply(data, kind, self.params.control_bytes)),
            Reply::Batch => self.send_ack_batch(data.flow),
            Reply::FlushAt(at) => self.events.push(at, Event::AckFlush { flow: data.flow }),
            Reply::Sack(index) => {
                let ack = Packet {
                    seq: index,
                    ..Packet::reply(data, PacketKind::SackAck, self.params.control_bytes)
                };
                self.send_control(ack);
            }
            Reply::Cumulative {
                kind,
                cumulative,
                sacked,
                cnp,
            } => {
                let answer = Packet {
                    seq: cumulative,
                    span: sacked,
                    ecn: cnp,
                    ..Packet::reply(data, kind, self.params.control_bytes)
                };
                self.send_control(answer);
            }
        }
    }

    /// Acknowledge a flow's pending batch, echoing its latest packet.
    fn send_ack_batch(&mut self, flow: u32) {
        let f = &mut self.flows[flow as usize];
        let (host, sender) = (f.spec.dst, f.spec.src);
        let b = if self.params.transport.acks.cumulative {
            let (index, echo) = f.rx.take_sack(f.tx.npkts);
            Batch {
                start: index,
                span: echo.ack_requested as u16, // a SACK's span: its bitmap starts at the trigger
                echo,
            }
        } else {
            f.rx.take_batch()
        };
        let kind = match self.params.transport.acks.cumulative {
            true => PacketKind::SackAck,
            false => PacketKind::AckBatch,
        };
        let ack = Packet {
            seq: b.start,
            span: b.span,
            ev: b.echo.ev,
            ecn: b.echo.ecn,
            route: b.echo.route,
            ..Packet::new(kind, flow, host, sender, self.params.control_bytes, b.echo.sent_at)
        };
        self.send_control(ack);
    }

    /// A flush the receiver asked for is due.
    pub(super) fn on_ack_flush(&mut self, flow: u32) {
        let acks = self.params.transport.acks;
        match self.flows[flow as usize].rx.on_flush(self.now, &acks) {
            Reply::Batch => self.send_ack_batch(flow),
            Reply::FlushAt(at) => self.events.push(at, Event::AckFlush { flow }),
            Reply::Nothing | Reply::Echo(_) | Reply::Sack(_) | Reply::Cumulative { .. } => {}
        }
    }

    /// A control packet for the receiving side (an RTS) reaches its agent.
    pub(super) fn receive_request(&mut self, host: u32, pkt: Packet) {
        // A window CC's RTS is a timeout RTS (EQDS's, whose CC has no window, goes to its agent).
        if self.params.transport.timeout_rts && self.flows[pkt.flow as usize].cc.window().is_some() {
            return self.receive_timeout_rts(pkt);
        }
        let Some(agent) = &mut self.receiver_cc else { return };
        let npkts = self.flows[pkt.flow as usize].npkts();
        if let Some(at) = agent.on_control(host, &pkt, npkts, self.now) {
            self.events.push(at, Event::ReceiverCc { host });
        }
    }

    /// A window-limited sender's timeout RTS (`transport::timeout_rts`):
    /// its receiver acknowledges it; it carries no payload.
    fn receive_timeout_rts(&mut self, pkt: Packet) {
        let f = &mut self.flows[pkt.flow as usize];
        let reply = f.rx.on_rts(&pkt, f.tx.npkts, &self.params.transport.acks);
        self.reply(&pkt, reply);
    }

    /// The receiving host's agent may send its next grant (an EQDS credit).
    pub(super) fn on_receiver_cc(&mut self, host: u32) {
        let Some(agent) = &mut self.receiver_cc else { return };
        let flows = &self.flows;
        let complete = |f: u32| flows[f as usize].rx.finish().is_some();
        let (grant, next) = agent.on_wake(host, self.now, &self.net.ports, &complete);
        if let Some(at) = next {
            self.events.push(at, Event::ReceiverCc { host });
        }
        let Some(g) = grant else { return };
        let f = &self.flows[g.flow as usize];
        let pkt = Packet {
            seq: g.seq,
            ev: g.ev,
            route: f.route,
            ..Packet::new(g.kind, g.flow, host, f.spec.src, self.params.control_bytes, self.now)
        };
        self.send_control(pkt);
    }
}
