//! The glue between the sans-I/O TCP state machines (`crate::tcp`) and the network: segments
//! and ACKs become packets on the flow and its ACK flow, and one timer event per connection
//! serves both ends' timers.

use super::source::Traffic;
use crate::ctx::Ctx;
use crate::engine::Event;
use crate::node::DevId;
use crate::packet::{Packet, PacketId};
use crate::tcp::{Ack, Segment};

impl Traffic {
    /// Hand the sender's segments to its first-hop queue while its windows allow.
    pub(super) fn tcp_push<X: FnMut(&mut Ctx, DevId, PacketId) -> bool>(&mut self, f: u32, cx: &mut Ctx, xmit: &mut X) {
        loop {
            let now = cx.now;
            let Some(conn) = self.tcp[f as usize].as_mut() else { return };
            // TCP Small Queues (Linux tcp_write_xmit → tcp_small_queue_check): while more than
            // the limit of this socket's bytes sit in its qdisc and device, it waits for one to
            // leave (refill_round wakes it).
            if let Some((limit_output, shift)) = conn.tsq {
                if conn.sender.has_outstanding()
                    && cx.flows[f as usize].queued > conn.sender.tsq_limit(limit_output, shift)
                {
                    conn.throttled = true;
                    break;
                }
            }
            let Some(seg) = conn.sender.poll_transmit(now) else { break };
            let id = cx.pkts.alloc(Packet {
                seq: seg.seq,
                // The TCP timestamp option: TSval on a segment, TSecr on an ACK.
                echo: seg.tsval,
                ..Packet::new(f, seg.ip_len(), seg.len, now)
            });
            cx.counters.flows[f as usize].sent_packets += 1;
            let hop = cx.flows[f as usize].first_hop;
            let local = cx.flows[f as usize].tcp_local;
            if !local {
                // Without a kernel era a segment the first hop refuses is lost like any
                // other: dupACKs or the RTO tell.
                xmit(cx, hop, id);
                continue;
            }
            let truesize = crate::tcp::skb_truesize(seg.len as u64);
            cx.flows[f as usize].queued += truesize;
            let drops = cx.counters.flows[f as usize].drops_queue;
            if !xmit(cx, hop, id) {
                // NET_XMIT_DROP: the segment never left (Ctx::refused_send freed it); TCP
                // enters CWR and stops until an ACK or its timer.
                cx.flows[f as usize].queued -= truesize;
                let conn = self.tcp[f as usize].as_mut().expect("still there");
                conn.sender.on_local_drop(now);
                break;
            }
            if cx.counters.flows[f as usize].drops_queue > drops {
                // NET_XMIT_CN: the qdisc made room by dropping another of this flow's packets.
                let conn = self.tcp[f as usize].as_mut().expect("still there");
                conn.sender.on_local_congestion(now);
            }
        }
        self.tcp_arm(f, cx);
    }

    /// Arm the connection's timer at the earlier of the sender's and receiver's timers.
    ///
    /// The timer is re-armed rather than re-scheduled: a timer pushed later (every ACK moves
    /// the retransmission timer forward) schedules nothing while an event at or before its new
    /// time is queued; that event, when it fires before the timer is due, schedules one at
    /// the timer's time and does nothing else (`on_tcp_timer`). Only a timer moved earlier
    /// than the queued event schedules a new one (and the old one goes stale through `gen`).
    /// The expiry is handled at the same instant, class and component as with one event per
    /// arming (events of one flow's timer at one instant other than the live one change
    /// nothing), so the results are those of one event per arming; only the count of events
    /// changes, and the queue no longer fills with stale timers.
    fn tcp_arm(&mut self, f: u32, cx: &mut Ctx) {
        let Some(conn) = self.tcp[f as usize].as_mut() else { return };
        // The application's reads are not timers: `flush_reads` runs them.
        let next = match (conn.sender.next_timer(), conn.receiver.delack_timer()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if next != conn.armed {
            conn.armed = next;
            if let Some(t) = next {
                if t <= self.end {
                    let t = t.max(cx.now);
                    if conn.queued.is_none_or(|q| q > t) {
                        conn.gen += 1;
                        conn.queued = Some(t);
                        cx.schedule(t, Event::TcpTimer { flow: f, gen: conn.gen });
                    }
                }
            }
        }
    }

    pub fn on_tcp_timer<X: FnMut(&mut Ctx, DevId, PacketId) -> bool>(
        &mut self,
        f: u32,
        gen: u64,
        cx: &mut Ctx,
        xmit: &mut X,
    ) {
        let now = cx.now;
        let Some(conn) = self.tcp[f as usize].as_mut() else { return };
        if gen == u64::MAX {
            // The application stops sending at the flow's `stop`.
            conn.sender.close();
            self.flows[f as usize].active = false;
            return;
        }
        if gen != conn.gen {
            return;
        }
        conn.queued = None;
        match conn.armed {
            None => return,
            Some(t) if t > now => {
                // Pushed back since this event was scheduled: re-arm at the timer's time.
                if t <= self.end {
                    conn.gen += 1;
                    conn.queued = Some(t);
                    cx.schedule(t, Event::TcpTimer { flow: f, gen: conn.gen });
                }
                return;
            }
            Some(_) => {}
        }
        conn.armed = None;
        if conn.receiver.delack_timer().is_some_and(|t| t <= now) {
            if let Some(ack) = conn.receiver.on_timer(now) {
                self.tcp_send_ack(f, ack, cx, xmit);
            }
        }
        let conn = self.tcp[f as usize].as_mut().expect("still there");
        if conn.sender.next_timer().is_some_and(|t| t <= now) {
            conn.sender.on_timer(now);
        }
        self.tcp_push(f, cx, xmit);
    }

    /// A data segment reaches the receiver: count what it delivers in order, maybe ACK.
    pub(super) fn tcp_segment_arrived<X: FnMut(&mut Ctx, DevId, PacketId) -> bool>(
        &mut self,
        p: &Packet,
        cx: &mut Ctx,
        xmit: &mut X,
    ) {
        let f = p.flow;
        let now = cx.now;
        let Some(conn) = self.tcp[f as usize].as_mut() else { return };
        let seg = Segment { seq: p.seq, len: p.payload, tsval: p.echo, retransmission: false };
        let listed = conn.receiver.read_pending();
        let ack = conn.receiver.on_segment(now, seg);
        if !listed && conn.receiver.read_pending() {
            self.reads_due.push(f);
        }
        let delivered = conn.receiver.bytes_received();
        let new = delivered - conn.delivered;
        conn.delivered = delivered;
        // Goodput counts bytes delivered in order, not segment payloads (a retransmitted
        // duplicate delivers nothing; a segment filling a hole delivers what it releases).
        let c = &mut cx.counters.flows[f as usize];
        c.received_payload_bytes = c.received_payload_bytes - p.payload as u64 + new;
        if let Some(ack) = ack {
            self.tcp_send_ack(f, ack, cx, xmit);
        }
        self.tcp_arm(f, cx);
    }

    /// The applications read what arrived during the event just handled: every segment one
    /// event delivers (all MPDUs of an A-MPDU, released together) is one read
    /// (`TcpReceiver::read_now`, docs/model-tcp.md "The application's reads"). The simulator
    /// calls this after each event that left reads due.
    pub fn flush_reads<X: FnMut(&mut Ctx, DevId, PacketId) -> bool>(&mut self, cx: &mut Ctx, xmit: &mut X) {
        let mut due = std::mem::take(&mut self.reads_due);
        for &f in &due {
            let Some(conn) = self.tcp[f as usize].as_mut() else { continue };
            if let Some(ack) = conn.receiver.read_now(cx.now) {
                self.tcp_send_ack(f, ack, cx, xmit);
            }
            self.tcp_arm(f, cx);
        }
        due.clear();
        self.reads_due = due;
    }

    fn tcp_send_ack<X: FnMut(&mut Ctx, DevId, PacketId) -> bool>(
        &mut self,
        f: u32,
        ack: Ack,
        cx: &mut Ctx,
        xmit: &mut X,
    ) {
        let Some(r) = self.reply_of[f as usize] else { return };
        let id = cx.pkts.alloc(Packet {
            echo: ack.tsecr,
            ack: ack.ack,
            wnd: ack.rwnd,
            sack: ack.sack.to_offsets(ack.ack),
            // The SACK option lengthens the ACK (and its airtime).
            ..Packet::new(r, ack.ip_len(), 0, cx.now)
        });
        cx.counters.flows[r as usize].sent_packets += 1;
        let hop = cx.flows[r as usize].first_hop;
        xmit(cx, hop, id);
    }

    /// An ACK reaches the sender.
    pub(super) fn tcp_ack_arrived<X: FnMut(&mut Ctx, DevId, PacketId) -> bool>(
        &mut self,
        p: &Packet,
        cx: &mut Ctx,
        xmit: &mut X,
    ) {
        let f = self.ping_of[p.flow as usize];
        let now = cx.now;
        let Some(conn) = self.tcp[f as usize].as_mut() else { return };
        conn.sender.on_ack(
            now,
            Ack { ack: p.ack, rwnd: p.wnd, tsecr: p.echo, sack: crate::tcp::SackBlocks::from_offsets(p.ack, &p.sack) },
        );
        if let Some(size) = conn.file.filter(|&n| conn.sender.snd_una() >= (conn.files_done + 1) * n) {
            {
                // The last byte of the file is acknowledged: one transfer done.
                conn.files_done += 1;
                conn.file_time_sum += now - conn.file_started;
                conn.first_done.get_or_insert(now);
                if conn.repeat && self.flows[f as usize].active {
                    // The application writes the file again on the same connection.
                    conn.file_started = now;
                    conn.sender.write_more(size);
                } else {
                    self.flows[f as usize].active = false;
                }
            }
        }
        self.tcp_push(f, cx, xmit);
    }
}
