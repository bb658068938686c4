//! The Bluetooth side of a dual-radio cell: one BR/EDR piconet whose master is the AP (a
//! `bnepN` netdev per slave, as BlueZ's NAP gives each PANU its own) and whose slaves are the
//! `[[bluetooth]]` clients (each with a `bnep0`), running BNEP over L2CAP over ACL links
//! (docs/model-bluetooth.md).
//!
//! * [`packet`]: the ACL packet types, their payloads and on-air times.
//! * [`host`]: one direction of a link below its qdisc: the BNEP write queue that stops the
//!   netdev queue, the L2CAP socket's send buffer, HCI fragments and controller credits.
//! * [`hop`]: the hop sequence (and AFH's channel map).
//! * this file: the baseband. TDD on 625 us slots: at each of its transmit slots the master
//!   addresses the next slave in round-robin order (UCBT's pure round robin), with a data packet
//!   if it has data (or a retransmission) for it, else a POLL; the addressed slave answers in the
//!   slot after the master's packet ends with data or a NULL. ARQ: stop and wait, one bit of
//!   SEQN and one of ARQN; the ARQN of the master's packet rides on the slave's answer, the
//!   slave's on the master's next packet to it; a packet is retransmitted until acknowledged
//!   (BNEP's flush timeout is infinite, `BNEP_FLUSH_TO` = 0xffff), and duplicates are filtered
//!   by SEQN.
//!
//! Three events per exchange: the master's transmit slot ([`Bluetooth::on_master_tx`]), the end
//! of the master's packet ([`Bluetooth::on_master_end`]: its fate, the slave's reception and
//! answer) and the end of the slave's answer ([`Bluetooth::on_slave_end`]). A packet's fate is
//! decided at its end against the WLAN's air log (`crate::coex`) and, optionally, a fixed packet
//! error rate of the link.

pub mod hop;
pub mod host;
pub mod packet;

use rand::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::coex::OnAir;
use crate::ctx::{Ctx, Req};
use crate::engine::Event;
use crate::node::{DevId, Node};
use crate::packet::PacketId;
use crate::time::Nanos;

pub use host::{Seg, Tx};
pub use packet::{PacketType, SLOT};

/// Host and controller parameters of the piconet (`[piconet]`).
#[derive(Clone, Debug, PartialEq)]
pub struct HostParams {
    /// BNEP header bytes (15 general Ethernet, 3 compressed, 9 compressed source- or
    /// destination-only).
    pub bnep_header: u32,
    /// `BNEP_TX_QUEUE_LEN`.
    pub bnep_txq_len: u32,
    /// The L2CAP socket's `sk_sndbuf`, bytes.
    pub l2cap_sndbuf: u64,
    /// The controller's ACL buffers (Read Buffer Size): fragment size and count.
    pub acl_mtu: u32,
    pub acl_pkts: u32,
    /// T_poll in slots (LMP's default 40, Bluetooth Core 5.x Vol 2 Part C 4.1.8): the longest
    /// a slave the master has nothing for, and that had nothing to send, goes unpolled. 0: poll
    /// every slave at every turn.
    pub t_poll: u32,
}

/// L2CAP basic header: length 2 + channel id 2.
pub const L2CAP_HEADER: u32 = 4;

/// The MTU of a `bnepN` netdev: `bnep_net_setup` calls `ether_setup`, which sets Ethernet's 1500
/// (`ETH_DATA_LEN`); an IP packet larger than that is fragmented (or refused) by IP before it
/// reaches the device. IP fragmentation is not modelled, so the scenario parser refuses a flow
/// over a Bluetooth link whose packets would exceed it. BNEP's L2CAP MTU (`BNEP_MTU`, 1691) is
/// then never reached: 1500 + a BNEP header of at most 15 bytes (extension headers are not
/// sent) is 1515.
pub const BNEP_NETDEV_MTU: u32 = 1500;

/// BNEP's L2CAP MTU (`net/bluetooth/bnep/bnep.h` `BNEP_MTU`).
pub const BNEP_MTU: u32 = 1691;

// A full bnep frame with the longest BNEP header (general Ethernet, 15 bytes) fits BNEP's MTU.
const _: () = assert!(BNEP_NETDEV_MTU + 15 <= BNEP_MTU);

/// Counters of one direction of a link.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DirStats {
    /// Data packets sent (first transmissions).
    pub data_packets: u64,
    /// Retransmissions of data packets.
    pub retransmissions: u64,
    /// POLL (master) or NULL (slave) packets.
    pub empty_packets: u64,
    /// L2CAP bytes acknowledged.
    pub bytes_acked: u64,
    /// Slots the direction's packets occupied.
    pub slots: u64,
    pub airtime_ns: u64,
    /// Packets (any kind) lost to a WLAN frame, and to the link's own error rate.
    pub hit_by_wlan: u64,
    pub lost_errors: u64,
    /// Duplicates the receiver discarded (SEQN).
    pub duplicates: u64,
    /// IP packets the receiver reassembled.
    pub delivered: u64,
}

/// One slave's ACL link.
pub struct Link {
    pub name: String,
    pub down: Tx,
    pub up: Tx,
    /// Packet types allowed on the link.
    pub types: Vec<PacketType>,
    /// The master's ARQN for the slave's last packet (true: ACK).
    arqn_to_slave: bool,
    /// The slave's controller credits.
    slave_cnt: u32,
    /// When the master last addressed the slave, and whether the slave's last answer that
    /// reached it carried data (an active slave is polled at every turn).
    last_poll: Option<Nanos>,
    slave_busy: bool,
    /// Fixed baseband packet error rate (both directions) and its draws.
    per: f64,
    rng: Xoshiro256PlusPlus,
    pub stats: [DirStats; 2],
}

/// What is on the air in the current exchange.
#[derive(Clone, Copy, Debug)]
struct Exchange {
    t0: Nanos,
    slave: usize,
    /// The master's packet: its data segment (None: POLL), slots, channel, end.
    m_seg: Option<Seg>,
    m_slots: u64,
    m_chan: u32,
    /// The slave's answer: data segment (None: NULL), slots, channel, start and end.
    s_seg: Option<Seg>,
    s_slots: u64,
    s_chan: u32,
    s_start: Nanos,
}

pub struct Bluetooth {
    pub links: Vec<Link>,
    pub params: HostParams,
    /// The master controller's credits (shared by its links).
    master_cnt: u32,
    /// The slave addressed next.
    rr: usize,
    pub hop: hop::Hopper,
    cur: Exchange,
    /// Statistics at the end of the warm-up.
    pub at_warmup: Option<(Vec<[DirStats; 2]>, crate::coex::CoexCounters)>,
}

impl Bluetooth {
    pub fn new(links: Vec<Link>, params: HostParams, hop: hop::Hopper) -> Bluetooth {
        let master_cnt = params.acl_pkts;
        Bluetooth {
            links,
            params,
            master_cnt,
            rr: 0,
            hop,
            cur: Exchange {
                t0: Nanos::ZERO,
                slave: 0,
                m_seg: None,
                m_slots: 1,
                m_chan: 0,
                s_seg: None,
                s_slots: 1,
                s_chan: 0,
                s_start: Nanos::ZERO,
            },
            at_warmup: None,
        }
    }

    /// The slave's link: name, devices, allowed types (sorted), error rate and its stream.
    pub fn link(
        name: String,
        down_dev: DevId,
        up_dev: DevId,
        mut types: Vec<PacketType>,
        per: f64,
        rng: Xoshiro256PlusPlus,
        acl_pkts: u32,
    ) -> Link {
        types.sort();
        types.dedup();
        Link {
            name,
            down: Tx::new(down_dev),
            up: Tx::new(up_dev),
            types,
            arqn_to_slave: true,
            slave_cnt: acl_pkts,
            last_poll: None,
            slave_busy: false,
            per,
            rng,
            stats: [DirStats::default(); 2],
        }
    }

    fn pdu_overhead(&self) -> u32 {
        self.params.bnep_header + L2CAP_HEADER
    }

    /// The qdisc of a Bluetooth device offers packets (`run_dev`): the BNEP write queue takes
    /// them until it stops the netdev queue; kbnepd and the HCI scheduler move them down.
    /// `slave`, `up`: which direction of which link. Returns whether it looked at the queue.
    pub fn pull(
        &mut self,
        slave: usize,
        up: bool,
        cx: &mut Ctx,
        mut dequeue: impl FnMut(&mut Ctx) -> Option<PacketId>,
    ) -> bool {
        let (ovh, sndbuf, qlen) = (self.pdu_overhead(), self.params.l2cap_sndbuf, self.params.bnep_txq_len as usize);
        let tx = if up { &mut self.links[slave].up } else { &mut self.links[slave].down };
        if tx.stopped {
            return false;
        }
        while !tx.stopped {
            let Some(p) = dequeue(cx) else { break };
            tx.bnep_q.push_back(p);
            tx.kbnepd(&cx.pkts, ovh, sndbuf);
            if tx.bnep_q.len() >= qlen {
                tx.stopped = true;
            }
        }
        self.hci_sched(slave, up, cx);
        true
    }

    /// `hci_sched_acl`: hand fragments to the controller while it has credits. The master's
    /// controller is shared by its links: the link with the fewest fragments outstanding in
    /// the controller goes first, with a quote of credits / ready links (at least 1), as
    /// `hci_low_sent` and `hci_quote_sent` do. Then kbnepd refills L2CAP (and may wake the
    /// netdev queue).
    fn hci_sched(&mut self, slave: usize, up: bool, cx: &mut Ctx) {
        let (ovh, sndbuf, mtu) = (self.pdu_overhead(), self.params.l2cap_sndbuf, self.params.acl_mtu);
        if up {
            let l = &mut self.links[slave];
            loop {
                while l.slave_cnt > 0 && l.up.hci_ready() {
                    l.up.send_fragment(mtu);
                    l.slave_cnt -= 1;
                }
                // kbnepd moves more into L2CAP as the socket's buffer drains.
                let before = l.up.queued;
                if l.up.kbnepd(&cx.pkts, ovh, sndbuf) {
                    cx.out.push(Req::Wake { dev: l.up.dev });
                }
                if l.up.queued == before || l.slave_cnt == 0 {
                    break;
                }
            }
            return;
        }
        loop {
            while self.master_cnt > 0 {
                let ready = self.links.iter().filter(|l| l.down.hci_ready()).count() as u32;
                let Some(i) = (0..self.links.len())
                    .filter(|&i| self.links[i].down.hci_ready())
                    .min_by_key(|&i| self.links[i].down.frags.len())
                else {
                    break;
                };
                let quote = (self.master_cnt / ready).max(1);
                let l = &mut self.links[i];
                for _ in 0..quote {
                    if !l.down.hci_ready() {
                        break;
                    }
                    l.down.send_fragment(mtu);
                    self.master_cnt -= 1;
                }
            }
            let mut moved = false;
            for l in &mut self.links {
                let before = l.down.queued;
                if l.down.kbnepd(&cx.pkts, ovh, sndbuf) {
                    cx.out.push(Req::Wake { dev: l.down.dev });
                }
                moved |= l.down.queued != before;
            }
            if !moved || self.master_cnt == 0 {
                break;
            }
        }
    }

    /// Room was made below a running netdev queue (credits returned, the socket's buffer
    /// drained): its device runs again, so that what waits in its qdisc, and the saturating
    /// sources that feed it, move down (a stopped queue runs when kbnepd wakes it).
    fn room_below(&self, slave: usize, up: bool, cx: &mut Ctx) {
        let l = &self.links[slave];
        let tx = if up { &l.up } else { &l.down };
        if !tx.stopped {
            cx.out.push(Req::Wake { dev: tx.dev });
        }
    }

    /// The type of a new segment of `avail` bytes: the allowed type with the fewest slots that
    /// carries it whole (the shorter on-air time among equals), else the largest allowed
    /// payload.
    fn pick(types: &[PacketType], avail: u32) -> (PacketType, u32) {
        let fit = types.iter().filter(|t| t.max_payload() >= avail).min_by_key(|t| (t.slots(), t.airtime(avail)));
        match fit {
            Some(&t) => (t, avail),
            None => {
                let t = *types
                    .iter()
                    .max_by_key(|t| (t.max_payload(), std::cmp::Reverse(t.slots())))
                    .expect("a link allows a type");
                (t, t.max_payload())
            }
        }
    }

    /// The sender's next packet on `tx`: its retransmission, a new segment, or None (POLL or
    /// NULL).
    fn next_segment(tx: &mut Tx, types: &[PacketType], st: &mut DirStats) -> Option<Seg> {
        if let Some(seg) = tx.inflight {
            st.retransmissions += 1;
            return Some(seg);
        }
        let avail = tx.ready_bytes();
        if avail == 0 {
            return None;
        }
        let (ptype, len) = Self::pick(types, avail);
        let seg = Seg { len, ptype, seqn: tx.seqn };
        tx.inflight = Some(seg);
        st.data_packets += 1;
        Some(seg)
    }

    fn record(cx: &mut Ctx, start: Nanos, d: Nanos, chan: u32, from: u32) {
        if let Some(c) = cx.coex.as_deref_mut() {
            let in_band = c.in_band(chan);
            c.bt.push(OnAir { start, end: start + d, chan: chan as u8, in_band, from });
        }
    }

    /// Whether a packet over [start, start + d) on `chan` of slave `slave`'s link, direction
    /// `dir` (0 master to slave, 1 slave to master), is lost: to a WLAN frame, or to the link's
    /// error rate.
    fn lost(link: &mut Link, cx: &Ctx, start: Nanos, d: Nanos, chan: u32, slave: usize, dir: usize) -> bool {
        // Bluetooth node ids: 0 the master, i + 1 slave i.
        let (from, to) = if dir == 0 { (0, slave as u32 + 1) } else { (slave as u32 + 1, 0) };
        if cx.coex.as_deref().is_some_and(|c| c.bt_hit(start, start + d, chan, from, to)) {
            link.stats[dir].hit_by_wlan += 1;
            return true;
        }
        if link.per > 0.0 && link.rng.random::<f64>() < link.per {
            link.stats[dir].lost_errors += 1;
            return true;
        }
        false
    }

    /// A master transmit slot: address the next slave.
    pub fn on_master_tx(&mut self, cx: &mut Ctx) {
        let t0 = cx.now;
        let n = self.links.len();
        let t_poll = Nanos(SLOT.0 * self.params.t_poll as u64);
        // Round robin over the slaves worth a packet now: data (or a retransmission) for it, a
        // slave that answered with data, or one unpolled for T_poll. With none, the master
        // leaves the slot pair empty (no packet, no hop on the air) and looks again at the next.
        let wanted = |l: &Link| {
            l.down.inflight.is_some()
                || l.down.ready_bytes() > 0
                || l.slave_busy
                || l.last_poll.is_none_or(|p| t0 >= p + t_poll)
        };
        let Some(slave) = (0..n).map(|k| (self.rr + k) % n).find(|&s| wanted(&self.links[s])) else {
            cx.schedule(t0 + Nanos(2 * SLOT.0), Event::BtMasterTx);
            return;
        };
        self.rr = (slave + 1) % n;
        let l = &mut self.links[slave];
        l.last_poll = Some(t0);
        let seg = Self::next_segment(&mut l.down, &l.types, &mut l.stats[0]);
        let (slots, d) = match seg {
            Some(s) => (s.ptype.slots(), s.ptype.airtime(s.len)),
            None => (1, packet::POLL_NULL),
        };
        let st = &mut l.stats[0];
        st.slots += slots;
        st.airtime_ns += d.0;
        if seg.is_none() {
            st.empty_packets += 1;
        }
        let chan = self.hop.channel(t0);
        Self::record(cx, t0, d, chan, 0);
        self.cur = Exchange {
            t0,
            slave,
            m_seg: seg,
            m_slots: slots,
            m_chan: chan,
            s_seg: None,
            s_slots: 0,
            s_chan: 0,
            s_start: Nanos::ZERO,
        };
        cx.schedule(t0 + d, Event::BtMasterEnd);
    }

    /// The master's packet ends: did the slave receive it? If so it takes the data, learns the
    /// fate of its own last packet (ARQN) and answers in the next slot.
    pub fn on_master_end(&mut self, cx: &mut Ctx) {
        let x = self.cur;
        let l = &mut self.links[x.slave];
        let d = cx.now - x.t0;
        if Self::lost(l, cx, x.t0, d, x.m_chan, x.slave, 0) {
            // The slave did not sync on it and stays silent; the master listens for one slot.
            cx.schedule(x.t0 + Nanos(SLOT.0 * (x.m_slots + 1)), Event::BtMasterTx);
            return;
        }
        // ARQN for the slave's last packet.
        if l.arqn_to_slave && l.up.inflight.is_some() {
            let n = l.up.inflight.map_or(0, |s| s.len);
            l.stats[1].bytes_acked += n as u64;
            let done = l.up.acknowledged();
            l.slave_cnt += done;
            if done > 0 {
                self.hci_sched(x.slave, true, cx);
                self.room_below(x.slave, true, cx);
            }
        }
        let l = &mut self.links[x.slave];
        if let Some(seg) = x.m_seg {
            match l.down.receive(seg) {
                Err(host::Duplicate) => l.stats[0].duplicates += 1,
                Ok(Some(pkt)) => {
                    l.stats[0].delivered += 1;
                    cx.deliver(Node::BtSlave(x.slave as u32), pkt);
                }
                Ok(None) => {}
            }
        }
        // The slave's answer.
        let seg = Self::next_segment(&mut l.up, &l.types, &mut l.stats[1]);
        l.slave_busy = seg.is_some();
        let (slots, d) = match seg {
            Some(s) => (s.ptype.slots(), s.ptype.airtime(s.len)),
            None => (1, packet::POLL_NULL),
        };
        let st = &mut l.stats[1];
        st.slots += slots;
        st.airtime_ns += d.0;
        if seg.is_none() {
            st.empty_packets += 1;
        }
        let start = x.t0 + Nanos(SLOT.0 * x.m_slots);
        let chan = self.hop.channel(start);
        Self::record(cx, start, d, chan, x.slave as u32 + 1);
        self.cur = Exchange { s_seg: seg, s_slots: slots, s_chan: chan, s_start: start, ..x };
        cx.schedule(start + d, Event::BtSlaveEnd);
    }

    /// The slave's answer ends: did the master receive it? Its ARQN acknowledges the master's
    /// packet; its data goes up. The master transmits again in the next even slot.
    pub fn on_slave_end(&mut self, cx: &mut Ctx) {
        let x = self.cur;
        let l = &mut self.links[x.slave];
        let d = cx.now - x.s_start;
        let next = x.t0 + Nanos(SLOT.0 * (x.m_slots + x.s_slots));
        cx.schedule(next, Event::BtMasterTx);
        if Self::lost(l, cx, x.s_start, d, x.s_chan, x.slave, 1) {
            l.arqn_to_slave = false;
            return;
        }
        l.arqn_to_slave = true;
        if let Some(seg) = x.s_seg {
            match l.up.receive(seg) {
                Err(host::Duplicate) => l.stats[1].duplicates += 1,
                Ok(Some(pkt)) => {
                    l.stats[1].delivered += 1;
                    cx.deliver(Node::Ap, pkt);
                }
                Ok(None) => {}
            }
        }
        if x.m_seg.is_some() {
            let n = l.down.inflight.map_or(0, |s| s.len);
            l.stats[0].bytes_acked += n as u64;
            let done = l.down.acknowledged();
            self.master_cnt += done;
            if done > 0 {
                self.hci_sched(x.slave, false, cx);
                for i in 0..self.links.len() {
                    self.room_below(i, false, cx);
                }
            }
        }
    }

    /// Every packet the piconet holds below the qdiscs, for the conservation check.
    pub fn for_each_held(&self, mut count: impl FnMut(PacketId)) {
        for l in &self.links {
            l.down.for_each_held(&mut count);
            l.up.for_each_held(&mut count);
        }
    }

    /// Snapshot the statistics at the end of the warm-up.
    pub fn snapshot(&mut self, coex: &crate::coex::CoexCounters) {
        self.at_warmup = Some((self.links.iter().map(|l| l.stats).collect(), coex.clone()));
    }
}

#[cfg(test)]
mod tests;
