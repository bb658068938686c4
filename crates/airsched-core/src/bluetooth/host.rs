//! The host side of one direction of an ACL link, as Linux (BlueZ PAN over L2CAP) stacks it
//! under the `bnepN` netdev (reference next-capabilities.md section 1.4; Linux
//! net/bluetooth/bnep/netdev.c, core.c, l2cap_core.c, hci_core.c, hci_event.c):
//!
//! 1. The qdisc of `bnepN` dequeues into the BNEP session's write queue (`bnep_net_xmit`:
//!    `skb_queue_tail(&sk->sk_write_queue)`), which stops the netdev queue
//!    (`netif_stop_queue`) once it holds `BNEP_TX_QUEUE_LEN` = 20 frames.
//! 2. The `kbnepd` thread takes frames off the write queue, adds the BNEP header and sends them
//!    on the L2CAP socket (`bnep_tx_frame` -> `kernel_sendmsg`), which blocks while the bytes
//!    charged to the socket reach `sk_sndbuf` (`sock_alloc_send_skb`). Once the write queue is
//!    empty it wakes the netdev queue (`netif_wake_queue` at the end of the session loop).
//! 3. L2CAP adds its 4-byte basic header and cuts the PDU into HCI ACL fragments of
//!    `acl_mtu` bytes on the connection's data queue; a fragment's bytes stay charged to the
//!    socket until it is handed to the controller.
//! 4. `hci_sched_acl` hands fragments to the controller while it has credits (`acl_cnt`, from
//!    the controller's Read Buffer Size: `acl_pkts`); the Number Of Completed Packets event
//!    returns a credit per fragment the controller has delivered over the air.
//!
//! The threads run in zero time here (kbnepd moves a frame as soon as the socket has room,
//! the HCI scheduler runs whenever a credit returns), and the controller reports a fragment
//! complete as soon as its last byte is acknowledged over the air. The bytes charged to the
//! socket are the fragments' bytes (an skb's truesize overhead is not modelled).

use std::collections::VecDeque;

use crate::node::DevId;
use crate::packet::PacketId;

/// An L2CAP PDU below kbnepd: its packet (None once the receiver has it) and the stream offset
/// of its end.
#[derive(Clone, Copy, Debug)]
pub struct Pdu {
    pub pkt: Option<PacketId>,
    pub end: u64,
}

/// One baseband segment in flight (sent, not yet acknowledged).
#[derive(Clone, Copy, Debug)]
pub struct Seg {
    pub len: u32,
    pub ptype: super::PacketType,
    pub seqn: bool,
}

/// One direction of one ACL link: the sender's host queues, its controller's buffer and its
/// baseband ARQ state, and the receiver's reassembly state. Bytes are counted as offsets in
/// the direction's L2CAP byte stream.
#[derive(Clone, Debug)]
pub struct Tx {
    /// The device whose qdisc feeds this direction (AP `bnepN`, slave `bnep0`).
    pub dev: DevId,
    /// The BNEP session's write queue.
    pub bnep_q: VecDeque<PacketId>,
    /// The netdev queue is stopped (the write queue reached its limit).
    pub stopped: bool,
    pub pdus: VecDeque<Pdu>,
    /// PDUs popped from `pdus` so far (absolute index of its front).
    popped: u64,
    /// Stream offset of the end of the last PDU handed to L2CAP.
    pub queued: u64,
    /// Bytes handed to the controller.
    pub to_ctrl: u64,
    /// Absolute index of the PDU the next HCI fragment comes from.
    hci_pdu: u64,
    /// End offsets of the fragments the controller holds (each holds one credit).
    pub frags: VecDeque<u64>,
    /// Bytes the sender knows were acknowledged.
    pub acked: u64,
    pub inflight: Option<Seg>,
    /// SEQN of the next new segment.
    pub seqn: bool,
    /// Receiver: bytes received (duplicates filtered), the SEQN of the last segment accepted,
    /// and the absolute index of the PDU it is reassembling.
    pub rx_off: u64,
    pub rx_last_seqn: Option<bool>,
    rx_pdu: u64,
}

impl Tx {
    pub fn new(dev: DevId) -> Tx {
        Tx {
            dev,
            bnep_q: VecDeque::with_capacity(32),
            stopped: false,
            pdus: VecDeque::with_capacity(64),
            popped: 0,
            queued: 0,
            to_ctrl: 0,
            hci_pdu: 0,
            frags: VecDeque::with_capacity(16),
            acked: 0,
            inflight: None,
            seqn: false,
            rx_off: 0,
            rx_last_seqn: None,
            rx_pdu: 0,
        }
    }

    /// kbnepd: move frames from the write queue into L2CAP while the socket's send buffer has
    /// room (`pdu_overhead`: BNEP + L2CAP header bytes). Returns whether the netdev queue is to
    /// be woken (it was stopped and the write queue is now empty).
    pub fn kbnepd(&mut self, pkts: &crate::packet::Packets, pdu_overhead: u32, sndbuf: u64) -> bool {
        while self.queued - self.to_ctrl < sndbuf {
            let Some(p) = self.bnep_q.pop_front() else { break };
            self.queued += (pkts.get(p).ip_len + pdu_overhead) as u64;
            self.pdus.push_back(Pdu { pkt: Some(p), end: self.queued });
        }
        if self.stopped && self.bnep_q.is_empty() {
            self.stopped = false;
            return true;
        }
        false
    }

    /// Whether L2CAP holds bytes not yet handed to the controller.
    #[inline]
    pub fn hci_ready(&self) -> bool {
        self.to_ctrl < self.queued
    }

    /// Hand the next HCI fragment (at most `mtu` bytes, never across a PDU) to the controller.
    pub fn send_fragment(&mut self, mtu: u32) {
        let pdu = self.pdus[(self.hci_pdu - self.popped) as usize];
        let len = (pdu.end - self.to_ctrl).min(mtu as u64);
        self.to_ctrl += len;
        self.frags.push_back(self.to_ctrl);
        if self.to_ctrl == pdu.end {
            self.hci_pdu += 1;
        }
    }

    /// Bytes of the current PDU the controller holds and has not had acknowledged: what the
    /// next new baseband segment may carry (a segment never spans two PDUs: a PDU's first
    /// segment is an L2CAP start, LLID 10).
    pub fn ready_bytes(&self) -> u32 {
        let Some(front) = self.pdus.front() else { return 0 };
        (self.to_ctrl.min(front.end) - self.acked.min(front.end)) as u32
    }

    /// The receiver got a segment: filter a duplicate by SEQN, else take its bytes and return
    /// the packet whose PDU it completes, if any. `Err(Duplicate)`: a duplicate.
    pub fn receive(&mut self, seg: Seg) -> Result<Option<PacketId>, Duplicate> {
        if self.rx_last_seqn == Some(seg.seqn) {
            return Err(Duplicate);
        }
        self.rx_last_seqn = Some(seg.seqn);
        self.rx_off += seg.len as u64;
        let i = (self.rx_pdu - self.popped) as usize;
        let pdu = &mut self.pdus[i];
        if self.rx_off == pdu.end {
            self.rx_pdu += 1;
            return Ok(pdu.pkt.take());
        }
        debug_assert!(self.rx_off < pdu.end, "a segment never spans two PDUs");
        Ok(None)
    }

    /// The sender learns its segment in flight was acknowledged: returns how many HCI
    /// fragments the controller has completed (credits to return).
    pub fn acknowledged(&mut self) -> u32 {
        let Some(seg) = self.inflight.take() else { return 0 };
        self.acked += seg.len as u64;
        self.seqn = !self.seqn;
        while self.pdus.front().is_some_and(|p| p.end <= self.acked) {
            let p = self.pdus.pop_front().expect("checked");
            debug_assert!(p.pkt.is_none(), "the receiver has every PDU the sender saw acknowledged");
            self.popped += 1;
        }
        let mut done = 0;
        while self.frags.front().is_some_and(|&e| e <= self.acked) {
            self.frags.pop_front();
            done += 1;
        }
        done
    }

    /// Every packet this direction holds (write queue and L2CAP/controller), for the
    /// conservation check.
    pub fn for_each_held(&self, mut count: impl FnMut(PacketId)) {
        self.bnep_q.iter().for_each(|&p| count(p));
        self.pdus.iter().filter_map(|p| p.pkt).for_each(count);
    }
}

/// A baseband segment the receiver already had (the same SEQN again: its ACK was lost).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Duplicate;
