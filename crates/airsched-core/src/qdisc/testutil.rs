//! Test bench for disciplines: a packet arena, flows, and a fixed-rate link that drains a qdisc
//! fed by CBR sources. Used by every discipline's unit tests.

use super::{Enq, QCtx, Qdisc, QdiscImpl};
use crate::packet::{FlowKey, Packet, PacketId, Packets};
use crate::time::Nanos;

pub struct Bench {
    pub pkts: Packets,
    pub keys: Vec<FlowKey>,
    pub dropped: Vec<PacketId>,
}

impl Bench {
    /// `flows` UDP flows from 10.0.0.1 to 192.168.1.(2+i), source port 40000 + i, dport 5001.
    pub fn new(flows: usize) -> Bench {
        let keys = (0..flows)
            .map(|i| FlowKey {
                src_ip: 0x0a00_0001,
                dst_ip: 0xc0a8_0102 + i as u32,
                sport: 40000 + i as u16,
                dport: 5001,
                proto: 17,
                tos: 0,
                mark: 0,
                priority: 0,
            })
            .collect();
        Bench { pkts: Packets::with_capacity(1024), keys, dropped: Vec::new() }
    }

    /// A packet of flow `flow` with an IP datagram of `ip_len` bytes (qdisc length ip_len + 14).
    pub fn pkt(&mut self, flow: u32, ip_len: u32) -> PacketId {
        self.pkts.alloc(Packet {
            flow,
            ip_len,
            payload: ip_len.saturating_sub(28),
            created: Nanos::ZERO,
            enqueued: Nanos::ZERO,
            queue_delay: Nanos::ZERO,
        })
    }

    pub fn cx(&mut self) -> QCtx<'_> {
        QCtx { pkts: &mut self.pkts, keys: &self.keys, dropped: &mut self.dropped }
    }
}

/// A CBR source for [`run_link`].
#[derive(Clone, Copy, Debug)]
pub struct Source {
    pub flow: u32,
    /// Offered rate in bits per second of qdisc length (IP + 14).
    pub rate_bps: u64,
    pub ip_len: u32,
    pub start: Nanos,
    pub stop: Nanos,
}

#[derive(Clone, Debug, Default)]
pub struct LinkRun {
    /// Per flow: bytes (qdisc length) sent on the link after `measure_from`.
    pub bytes: Vec<u64>,
    pub packets: Vec<u64>,
    pub drops: Vec<u64>,
    /// Per flow: sum and maximum of queueing delays of packets sent after `measure_from`.
    pub delay_sum: Vec<u128>,
    pub delay_max: Vec<Nanos>,
    /// Every departure: (time it started on the link, flow, qdisc length).
    pub departures: Vec<(Nanos, u32, u32)>,
}

impl LinkRun {
    pub fn rate_bps(&self, flow: usize, seconds: f64) -> f64 {
        self.bytes[flow] as f64 * 8.0 / seconds
    }
    pub fn mean_delay(&self, flow: usize) -> Nanos {
        if self.packets[flow] == 0 {
            return Nanos::ZERO;
        }
        Nanos((self.delay_sum[flow] / self.packets[flow] as u128) as u64)
    }
}

/// Feed `q` from `sources` and drain it onto a link of `link_bps` for `duration`. Shapers are
/// polled again at their `next_wakeup`. Statistics count departures after `measure_from`.
pub fn run_link(
    q: &mut QdiscImpl,
    b: &mut Bench,
    sources: &[Source],
    link_bps: u64,
    duration: Nanos,
    measure_from: Nanos,
) -> LinkRun {
    let nf = b.keys.len();
    let mut r = LinkRun {
        bytes: vec![0; nf],
        packets: vec![0; nf],
        drops: vec![0; nf],
        delay_sum: vec![0; nf],
        delay_max: vec![Nanos::ZERO; nf],
        departures: vec![],
    };
    let mut next: Vec<Option<(Nanos, u64)>> = sources.iter().map(|s| Some((s.start, 0))).collect();
    let mut link_free = Nanos::ZERO;
    let mut wake: Option<Nanos> = None;
    let mut now;
    loop {
        // The next instant anything happens.
        let mut t = Nanos(u64::MAX);
        for n in next.iter().flatten() {
            t = t.min(n.0);
        }
        if link_free > Nanos::ZERO {
            t = t.min(link_free);
        }
        if let Some(w) = wake {
            t = t.min(w);
        }
        if t == Nanos(u64::MAX) || t > duration {
            break;
        }
        now = t;
        for (i, s) in sources.iter().enumerate() {
            while let Some((at, k)) = next[i] {
                if at != now {
                    break;
                }
                let id = b.pkt(s.flow, s.ip_len);
                let res = q.enqueue(id, &mut b.cx(), now);
                let _ = res == Enq::Dropped;
                let off = ((k + 1) as u128 * (s.ip_len as u128 + 14) * 8 * 1_000_000_000 / s.rate_bps as u128) as u64;
                let nt = s.start + Nanos(off);
                next[i] = if nt < s.stop { Some((nt, k + 1)) } else { None };
            }
        }
        for d in b.dropped.drain(..) {
            let f = b.pkts.get(d).flow as usize;
            r.drops[f] += 1;
            b.pkts.free(d);
        }
        if link_free <= now {
            link_free = Nanos::ZERO;
            wake = None;
            if let Some(p) = q.dequeue(&mut b.cx(), now) {
                let pk = *b.pkts.get(p);
                let len = pk.ip_len + 14;
                if now >= measure_from {
                    let f = pk.flow as usize;
                    r.bytes[f] += len as u64;
                    r.packets[f] += 1;
                    r.delay_sum[f] += pk.queue_delay.0 as u128;
                    r.delay_max[f] = r.delay_max[f].max(pk.queue_delay);
                }
                r.departures.push((now, pk.flow, len));
                b.pkts.free(p);
                link_free = now + Nanos::for_bits(len as u64 * 8, link_bps);
            } else if q.stats().qlen > 0 {
                wake = q.next_wakeup(now).map(|w| w.max(now + Nanos(1)));
            }
            for d in b.dropped.drain(..) {
                let f = b.pkts.get(d).flow as usize;
                r.drops[f] += 1;
                b.pkts.free(d);
            }
        }
    }
    r
}
