//! A-MSDU inside A-MPDU at the AP, as Linux mac80211 builds it in software for a driver that
//! advertises TX A-MSDU (`IEEE80211_HW_TX_AMSDU`: mt76 does, ath9k does not): several packets
//! (MSDUs) of one flow of a TXQ travel in one MPDU, which the A-MPDU then carries as one
//! subframe (docs/model-vht-he.md, "A-MSDU").
//!
//! Followed: Linux 6.1 `net/mac80211/tx.c` `ieee80211_amsdu_aggregate`. A packet joins the
//! MPDU of its flow while
//! - `skb->len + head->len <= max_amsdu_len`, where `skb->len` is the new packet's 802.3 frame
//!   (14 + IP bytes) and `head->len` the MPDU so far without its FCS: a lone frame's QoS data
//!   header and LLC/SNAP (34 + IP), an A-MSDU's QoS data header and subframes (26 + A-MSDU);
//! - the MSDUs (skbs; a simulated packet is one linear buffer) stay within the driver's
//!   `hw->max_tx_fragments` (mt7915 and mt7921: 4);
//! - `max_amsdu_len` is the station's advertised maximum (HT: 3839 or 7935; VHT and HE: the VHT
//!   maximum MPDU length 3895, 7991 or 11454) capped by rate control's `max_rc_amsdu_len`, which
//!   Minstrel-HT (`minstrel_ht_get_max_amsdu_len`) holds at 4095 for a station without VHT (an
//!   HT A-MPDU's MPDU length field has 12 bits) and leaves unlimited for VHT and HE at a good
//!   rate.
//!
//! Each subframe is the 14-byte subframe header (DA, SA, length), the 8-byte LLC/SNAP and the
//! IP datagram, padded to 4 bytes unless it is the last (802.11-2020 9.3.2.2). The MPDU is the
//! 26-byte QoS data header, the A-MSDU and the 4-byte FCS. A lone packet stays a plain MPDU.
//!
//! Deviations, each documented: the kernel merges at enqueue into the tail packet of the flow's
//! FQ-MAC queue (its comment says dequeue would be better); here the driver merges at dequeue,
//! while it builds the A-MPDU, the packets FQ-MAC hands it back to back for the same flow, so
//! FQ-MAC and CoDel see packets, not A-MSDUs, and an A-MSDU is cut where the A-MPDU's limits
//! fall (as ns-3 3.44 cuts it); the packet that did not fit is held and joins the first MPDU of
//! the next A-MPDU. Compared with ns-3 3.44's `MsduAggregator` in tests/amsdu_ns3.rs. Besides the kernel's test the standard's bounds
//! hold too (an HT A-MSDU within 3839/7935 and its MPDU within 4095; a VHT/HE MPDU within the
//! advertised length), which the kernel's arithmetic can pass by a few bytes. Minstrel-HT's
//! shorter limits at low rates or poor delivery (1, 500, 1600, 3200) are not modelled.
//!
//! The MSDUs of an MPDU are chained by packet id in [`Amsdu::next`]: the MPDU's `pkt` is the
//! first, and the chain is walked to deliver, drop, copy or count the others. Off by default:
//! with `[ap] amsdu = "off"` the cell has no [`Amsdu`] and nothing here runs.

use crate::ctx::Ctx;
use crate::mac80211::aql::tx_time_est;
use crate::mac80211::TinId;
use crate::packet::{PacketId, Packets};
use crate::phy::ht::{self, AmpduLimits};
use crate::phy::TxVector;
use crate::wifi::medium::Medium;

use super::driver::Mpdu;
use super::{Fill, Ht};

/// `[ap] amsdu`: whether the AP's driver lets mac80211 build A-MSDUs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AmsduMode {
    /// One MSDU per MPDU (ath9k; the default, as before).
    #[default]
    Off,
    /// mac80211's software A-MSDU (`IEEE80211_HW_TX_AMSDU`, as mt76 sets it), Linux 6.1.
    Mac80211,
}

crate::words::words!(AmsduMode: "off" => AmsduMode::Off, "mac80211" => AmsduMode::Mac80211);

/// The A-MSDU subframe header: DA, SA and the length (802.11-2020 Figure 9-70).
pub const SUBFRAME_HEADER_BYTES: u32 = 14;
/// An 802.3 frame's header in front of the IP datagram (`skb->len` before 802.11 framing).
pub const ETH_HEADER_BYTES: u32 = 14;
/// The largest MPDU an HT BlockAck session carries (`IEEE80211_MAX_MPDU_LEN_HT_BA`: the A-MPDU
/// delimiter's 12-bit length field).
pub const HT_BA_MAX_MPDU_BYTES: u32 = 4095;
/// An HT station's maximum A-MSDU length (HT Capabilities, 802.11-2020 9.4.2.55.2).
pub const HT_MAX_AMSDU: [u32; 2] = [3839, 7935];
/// A VHT (and HE) station's maximum MPDU length (VHT Capabilities, 802.11-2020 9.4.2.157.2).
pub const VHT_MAX_MPDU: [u32; 3] = [3895, 7991, 11454];
/// `hw->max_tx_fragments` of mt7915 and mt7921 (Linux 6.1): MSDUs per A-MSDU.
pub const MAX_TX_FRAGMENTS: u32 = 4;
/// The most `[ap] max_tx_fragments` accepts (mt76x2's USB scatter-gather: 16... and beyond).
pub const MAX_TX_FRAGMENTS_LIMIT: u32 = 64;

/// `[ap] amsdu`, `[ap] max_tx_fragments` and each station's `max_amsdu_len`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AmsduConfig {
    pub mode: AmsduMode,
    /// `hw->max_tx_fragments` (default [`MAX_TX_FRAGMENTS`]; 0 here means the default).
    pub max_tx_fragments: u32,
    /// Per station: its advertised maximum (`max_amsdu_len`, octets); 0: the largest its
    /// standard defines (HT 7935, VHT/HE 11454).
    pub station_max_len: Vec<u32>,
}

/// The length limit a station's standard gives its A-MSDUs: the HT A-MSDU values for an HT
/// station, the VHT MPDU values for VHT and HE.
pub fn allowed_lengths(tx: Option<TxVector>) -> &'static [u32] {
    match tx {
        Some(TxVector::Vht(_)) | Some(TxVector::He(_)) => &VHT_MAX_MPDU,
        _ => &HT_MAX_AMSDU,
    }
}

/// One subframe: header, LLC/SNAP and the datagram (unpadded).
#[inline]
pub const fn subframe_bytes(ip_len: u32) -> u32 {
    SUBFRAME_HEADER_BYTES + ht::LLC_SNAP_BYTES + ip_len
}

/// The MPDU carrying an A-MSDU of `amsdu` bytes: QoS data header, A-MSDU, FCS.
#[inline]
pub const fn amsdu_mpdu_bytes(amsdu: u32) -> u32 {
    ht::QOS_DATA_HEADER_BYTES + amsdu + ht::FCS_BYTES
}

/// The cell's A-MSDU state: per station the limits, per packet the chain.
pub struct Amsdu {
    /// Per station: the kernel's `max_amsdu_len` (advertised, capped by rate control).
    kernel_max: Vec<u32>,
    /// Per station: the standard's bound on the A-MSDU (HT) and on the MPDU.
    std_amsdu_max: Vec<u32>,
    std_mpdu_max: Vec<u32>,
    max_frags: u32,
    /// Per packet id: the next MSDU of its A-MSDU, `NONE` for the last (or a lone packet).
    next: Vec<u32>,
}

const NONE: u32 = u32::MAX;

/// An MPDU's MSDUs as the builder sees them: how many, the A-MSDU so far (last subframe
/// unpadded), and the last packet (where the next joins).
#[derive(Clone, Copy)]
struct Shape {
    n: u32,
    amsdu: u32,
    last: PacketId,
}

impl Amsdu {
    /// The A-MSDU state of a cell whose stations send at `tx`, or None when `cfg` is off.
    pub fn new(cfg: &AmsduConfig, tx: &[TxVector]) -> Option<Box<Amsdu>> {
        if cfg.mode == AmsduMode::Off {
            return None;
        }
        let mut a = Amsdu {
            kernel_max: Vec::with_capacity(tx.len()),
            std_amsdu_max: Vec::with_capacity(tx.len()),
            std_mpdu_max: Vec::with_capacity(tx.len()),
            max_frags: if cfg.max_tx_fragments == 0 { MAX_TX_FRAGMENTS } else { cfg.max_tx_fragments },
            next: Vec::new(),
        };
        for (s, &t) in tx.iter().enumerate() {
            let allowed = allowed_lengths(Some(t));
            let adv = cfg.station_max_len.get(s).copied().filter(|&l| l != 0).unwrap_or(allowed[allowed.len() - 1]);
            match t {
                // A non-HT (802.11a/g) station has no HT capabilities, so no A-MSDU: nothing
                // joins its MPDUs.
                TxVector::NonHt(_) => {
                    a.kernel_max.push(0);
                    a.std_amsdu_max.push(0);
                    a.std_mpdu_max.push(0);
                }
                TxVector::Ht(_) => {
                    a.kernel_max.push(adv.min(HT_BA_MAX_MPDU_BYTES));
                    a.std_amsdu_max.push(adv);
                    a.std_mpdu_max.push(HT_BA_MAX_MPDU_BYTES);
                }
                _ => {
                    a.kernel_max.push(adv);
                    a.std_amsdu_max.push(u32::MAX);
                    a.std_mpdu_max.push(adv);
                }
            }
        }
        Some(Box::new(a))
    }

    /// The MSDU after `p` in its A-MSDU.
    #[inline]
    pub fn next_of(&self, p: PacketId) -> Option<PacketId> {
        match self.next.get(p.0 as usize) {
            Some(&x) if x != NONE => Some(PacketId(x)),
            _ => None,
        }
    }

    /// Unlink `p` from its successor (it is being freed or handed on) and return the successor.
    #[inline]
    pub fn unlink(&mut self, p: PacketId) -> Option<PacketId> {
        let x = self.next.get_mut(p.0 as usize)?;
        let n = std::mem::replace(x, NONE);
        (n != NONE).then_some(PacketId(n))
    }

    fn link(&mut self, after: PacketId, p: PacketId) {
        let need = after.0.max(p.0) as usize + 1;
        if self.next.len() < need {
            self.next.resize(need.next_power_of_two(), NONE);
        }
        self.next[after.0 as usize] = p.0;
        self.next[p.0 as usize] = NONE;
    }

    fn shape(&self, head: PacketId, pkts: &Packets) -> Shape {
        let mut s = Shape { n: 1, amsdu: subframe_bytes(pkts.get(head).ip_len), last: head };
        let mut p = head;
        while let Some(q) = self.next_of(p) {
            s.n += 1;
            s.amsdu = s.amsdu.next_multiple_of(4) + subframe_bytes(pkts.get(q).ip_len);
            s.last = q;
            p = q;
        }
        s
    }

    /// The MPDU length of the MPDU whose first MSDU is `head`: a plain QoS data MPDU when it
    /// holds one packet, else the A-MSDU's.
    #[inline]
    pub fn mpdu_bytes(&self, head: PacketId, pkts: &Packets) -> u32 {
        match self.next_of(head) {
            None => ht::qos_data_mpdu_bytes(pkts.get(head).ip_len),
            Some(_) => amsdu_mpdu_bytes(self.shape(head, pkts).amsdu),
        }
    }

    /// Whether a packet of `ip_len` bytes may join the MPDU of `shape` for `station`: the
    /// kernel's test and the standard's bounds. Returns the MPDU length with it.
    fn joins(&self, station: usize, shape: Shape, ip_len: u32) -> Option<u32> {
        if shape.n + 1 > self.max_frags {
            return None;
        }
        let head_len = if shape.n == 1 {
            ht::QOS_DATA_HEADER_BYTES + shape.amsdu - SUBFRAME_HEADER_BYTES
        } else {
            ht::QOS_DATA_HEADER_BYTES + shape.amsdu
        };
        if ETH_HEADER_BYTES + ip_len + head_len > self.kernel_max[station] {
            return None;
        }
        let amsdu = shape.amsdu.next_multiple_of(4) + subframe_bytes(ip_len);
        let mpdu = amsdu_mpdu_bytes(amsdu);
        (amsdu <= self.std_amsdu_max[station] && mpdu <= self.std_mpdu_max[station]).then_some(mpdu)
    }

    /// The packets of the MPDU whose first MSDU is `head`, in order (a lone packet: itself).
    pub fn msdus(&self, head: PacketId) -> impl Iterator<Item = PacketId> + '_ {
        std::iter::successors(Some(head), move |&p| self.next_of(p))
    }
}

impl Ht {
    /// The MPDU length of `mp`: its A-MSDU's when it carries several packets.
    #[inline]
    pub(super) fn mpdu_bytes(&self, mp: &Mpdu, cx: &Ctx) -> u32 {
        match self.amsdu.as_deref() {
            None => ht::qos_data_mpdu_bytes(cx.pkts.get(mp.pkt).ip_len),
            Some(a) => a.mpdu_bytes(mp.pkt, &cx.pkts),
        }
    }

    /// `fill`'s hook at the AP with A-MSDU on: grow the new MPDU `mp` of `from` with the
    /// packets FQ-MAC hands next for the same flow while they join (the kernel's limits) and
    /// the MPDU still fits the A-MPDU being built (`f`, `limits` at `tx_limit`). A packet of
    /// another flow, or one that does not join, waits at the head of the tin as the next
    /// MPDU. Returns the MPDU's length.
    #[allow(clippy::too_many_arguments)]
    #[cold]
    pub(super) fn amsdu_grow(
        &mut self,
        m: &Medium,
        from: TinId,
        mp: &mut Mpdu,
        f: &Fill,
        limits: AmpduLimits,
        tx_limit: TxVector,
        cx: &mut Ctx,
    ) -> u32 {
        let station = from.station().0 as u32;
        let a = self.amsdu.as_deref().expect("A-MSDU on");
        let mut shape = a.shape(mp.pkt, &cx.pkts);
        let mut mpdu = if shape.n == 1 {
            ht::qos_data_mpdu_bytes(cx.pkts.get(mp.pkt).ip_len)
        } else {
            amsdu_mpdu_bytes(shape.amsdu)
        };
        // Only a frame never sent takes more packets.
        if mp.attempts > 0 {
            return mpdu;
        }
        let flow = cx.pkts.get(mp.pkt).flow;
        let band = self.band;
        let max_frags = self.amsdu.as_deref().expect("A-MSDU on").max_frags;
        while shape.n < max_frags {
            let Some(x) = self.next_to_join(m, from, cx) else { break };
            let a = self.amsdu.as_deref().expect("A-MSDU on");
            let pk = cx.pkts.get(x.pkt);
            let joined = match (pk.flow == flow).then(|| a.joins(station as usize, shape, pk.ip_len)).flatten() {
                Some(with_mpdu) => {
                    let with = f.padded + ht::MPDU_DELIMITER_BYTES + with_mpdu;
                    let fits = with <= limits.max_bytes
                        && tx_limit.txtime(band, with) - band.signal_extension() <= limits.max_duration;
                    fits.then_some(with_mpdu)
                }
                None => None,
            };
            let Some(with_mpdu) = joined else {
                // It goes out as the next MPDU (its sequence number is the next one).
                self.drivers[0].held[from.index()].push_front(x);
                break;
            };
            let ip_len = pk.ip_len;
            let a = self.amsdu.as_deref_mut().expect("A-MSDU on");
            a.link(shape.last, x.pkt);
            shape =
                Shape { n: shape.n + 1, amsdu: shape.amsdu.next_multiple_of(4) + subframe_bytes(ip_len), last: x.pkt };
            mpdu = with_mpdu;
            // One MPDU: the packet gives back its sequence number and the driver's frame count,
            // and AQL charges the A-MSDU's estimate once (as the kernel estimates one skb).
            let d = &mut self.drivers[0];
            d.next_sn[from.index()] = x.sn;
            d.frames -= 1;
            if x.est_us > 0 || mp.est_us > 0 {
                let est = tx_time_est(super::est_airtime_us(self.tx[station as usize], mpdu, from.ac()));
                let d = &mut self.drivers[0];
                d.aql.on_completed(from.station(), from.ac(), mp.est_us + x.est_us);
                d.aql.on_queued(from.station(), from.ac(), est);
                mp.est_us = est;
            }
        }
        mpdu
    }

    /// The packet that may join the MPDU being grown for `from`: a new one from FQ-MAC when
    /// nothing is held behind it, or the one frame held behind it if that is a lone packet
    /// never sent and the last given a sequence number (it did not fit the previous A-MPDU:
    /// the packet after an A-MSDU that reached the A-MPDU's limit), as the kernel, merging at
    /// enqueue, would have merged it. Anything else held (retries) would be overtaken: none.
    fn next_to_join(&mut self, m: &Medium, from: TinId, cx: &mut Ctx) -> Option<Mpdu> {
        let a = self.amsdu.as_deref().expect("A-MSDU on");
        let d = &mut self.drivers[0];
        let held = &mut d.held[from.index()];
        match held.front() {
            None => self.take_new(m, 0, from, cx),
            Some(x)
                if held.len() == 1
                    && x.attempts == 0
                    && a.next_of(x.pkt).is_none()
                    && x.sn.wrapping_add(1) == d.next_sn[from.index()] =>
            {
                held.pop_front()
            }
            Some(_) => None,
        }
    }

    /// A copy of the MPDU whose first MSDU is `head` (the receiver's, when the BlockAck was
    /// lost): every MSDU copied and chained alike. Returns the copy's first packet.
    pub(super) fn copy_msdus(&mut self, head: PacketId, cx: &mut Ctx) -> PacketId {
        let first = *cx.pkts.get(head);
        let copy = cx.pkts.alloc(first);
        let Some(a) = self.amsdu.as_deref_mut() else { return copy };
        let mut last = copy;
        let mut p = head;
        if let Some(slot) = a.next.get_mut(copy.0 as usize) {
            *slot = NONE;
        }
        while let Some(q) = a.next_of(p) {
            let c = cx.pkts.alloc(*cx.pkts.get(q));
            a.link(last, c);
            last = c;
            p = q;
        }
        copy
    }

    /// Each packet of the MPDU whose first MSDU is `head` leaves the first hop at `node`.
    pub(super) fn msdus_left(&self, m: &Medium, node: u32, head: PacketId, cx: &mut Ctx) {
        match self.amsdu.as_deref() {
            None => cx.left_first_hop(m.dev(node), head),
            Some(a) => a.msdus(head).for_each(|p| cx.left_first_hop(m.dev(node), p)),
        }
    }

    /// Free every packet of the MPDU whose first MSDU is `head` (a sender's copy).
    pub(super) fn free_msdus(&mut self, head: PacketId, cx: &mut Ctx) {
        let mut p = Some(head);
        while let Some(q) = p {
            p = self.amsdu.as_deref_mut().and_then(|a| a.unlink(q));
            cx.pkts.free(q);
        }
    }

    /// Drop every packet of the MPDU whose first MSDU is `head` at the retry limit.
    pub(super) fn drop_msdus(&mut self, m: &Medium, node: u32, head: PacketId, cx: &mut Ctx) {
        let mut p = Some(head);
        while let Some(q) = p {
            p = self.amsdu.as_deref_mut().and_then(|a| a.unlink(q));
            cx.drop_packet(q, m.acct(node), crate::ctx::DropCause::Retry);
        }
    }

    /// Deliver every packet of the MPDU whose first MSDU is `head` to `to`, in order.
    pub(super) fn deliver_msdus(&mut self, to: crate::node::Node, head: PacketId, cx: &mut Ctx) {
        let mut p = Some(head);
        while let Some(q) = p {
            p = self.amsdu.as_deref_mut().and_then(|a| a.unlink(q));
            cx.deliver(to, q);
        }
    }

    /// The UDP payload bytes of the MPDU whose first MSDU is `head`.
    pub(super) fn msdu_payload(&self, head: PacketId, cx: &Ctx) -> u32 {
        match self.amsdu.as_deref() {
            None => cx.pkts.get(head).payload,
            Some(a) => a.msdus(head).map(|p| cx.pkts.get(p).payload).sum(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subframes_follow_the_standard() {
        // 1500-byte datagram: 14 + 8 + 1500 = 1522, padded to 1524 unless last.
        assert_eq!(subframe_bytes(1500), 1522);
        // Two: 1524 + 1522 = 3046; MPDU 26 + 3046 + 4 = 3076.
        assert_eq!(amsdu_mpdu_bytes(1524 + 1522), 3076);
    }
}
