//! The 802.11n frame exchange: an A-MPDU (or a lone MPDU) on the medium, per-MPDU errors,
//! the BlockAck (or ACK), the receiver's reordering buffer, and the TX status that retries or
//! drops each MPDU and reports airtime to the scheduler and AQL (docs/model-80211n-mac.md).

use crate::ctx::Ctx;
use crate::mac::minstrel_ht;
use crate::mac80211::{StationId, TinId, NUM_ACS};
use crate::packet::PacketId;
use crate::phy::dsss::Preamble;
use crate::phy::error_rate::ErrMode;
use crate::phy::{ht, ofdm};
use crate::radio::Dir;
use crate::time::Nanos;

use super::driver::{
    contender, node_ac, AckMap, Driver, Mpdu, MuPick, Source, HW_QUEUE_AGGS, NOT_DUE, RX_EMPTY, RX_SKIP,
};
use super::Ht;
use crate::node::Node;
use crate::phy::{TxRate, TxVector};
use crate::wifi::air::{AirTx, Outcome};
use crate::wifi::medium::{DataPpdu, Medium};

/// SNR lost per stream when the transmit power is split over 1-4 spatial streams (centi-dB,
/// 10 log10 N; two streams: 3 dB as the 802.11n model has always used).
pub(super) const STREAM_SPLIT_CDB: [i32; 5] = [0, 0, 300, 477, 602];

impl Ht {
    pub fn on_access(&mut self, m: &mut Medium, cx: &mut Ctx) {
        let ta = cx.now;
        // EDCA internal collisions: when several access categories of one node end their
        // backoff in the same slot, the highest one transmits and the others behave as after a
        // failed attempt (CW doubled, a new backoff) without going on the air; their aggregates
        // stay.
        m.dcf_mut().resolve_internal_collisions(|a, b| node_ac(a).0 == node_ac(b).0);
        self.ul_note_access(m);
        let mut busy_end = ta;
        let mut lead_wake = false;
        let band = self.band;
        if m.dcf().beacon_in_air() {
            let rate = self.beacon_rate;
            let d = ofdm::txtime(band, rate, m.beacon_bytes());
            busy_end = m.put_beacon(cx, ta, d, TxRate::Ofdm(rate));
        }
        let mut mu_on = false;
        for i in 0..m.dcf().transmitters().len() {
            let c = m.dcf().transmitters()[i];
            let (node, ac) = node_ac(c);
            m.dcf_mut().start_attempt(c as usize);
            if node == 0 && self.mu.is_some() {
                // OFDMA: the MU scheduler builds an HE MU PPDU (ofdma.rs) or sends a Basic
                // Trigger (ofdma_ul.rs).
                match self.mu_pick(m, ac, ta, cx) {
                    MuPick::On(end) => {
                        busy_end = busy_end.max(end);
                        mu_on = true;
                        continue;
                    }
                    MuPick::Nothing => {
                        // The access finds nothing to send: the AP releases the medium.
                        m.dcf_mut().on_ppdu_end(c as usize, true);
                        continue;
                    }
                    MuPick::Su => {}
                }
            }
            if node != 0 && self.at_access[node as usize - 1] && self.drivers[node as usize].head(ac).tries == 0 {
                self.rebuild_at_access(m, node, ac, cx);
            }
            let d = &mut self.drivers[node as usize];
            let agg = d.hw[ac].head_mut();
            let (s, t, n_mpdus, tx) = (agg.station as usize, agg.txtime, agg.mpdus.len(), agg.tx);
            let mcs = tx.mcs_index() as usize;
            // An MPDU's attempts count TX statuses (ath9k's software retries): a hardware retry
            // through the chain is not one.
            if agg.tries == 0 {
                for mp in agg.mpdus.iter_mut() {
                    mp.attempts += 1;
                }
            }
            let sc = &mut cx.counters.stations[s];
            let dir = (node != 0) as usize;
            sc.ampdu_mpdus[dir][n_mpdus.min(crate::metrics::AMPDU_HIST_LEN - 1)] += 1;
            sc.mcs_attempts[dir][mcs] += 1;
            if node == 0 && self.next.hw_queue_lead.is_some() {
                // The minimal hardware queue: when this exchange is expected to end.
                let agg = self.drivers[0].hw[ac].head();
                let resp = agg.tx.response_time(band, &self.basic, n_mpdus == 1, self.ba_bytes[s]);
                let due = ta + agg.txtime + band.sifs() + resp;
                self.drivers[0].hw[ac].due = due;
                lead_wake = true;
            }
            // `AirTx::node` holds the contender in an 802.11n cell.
            let f = DataPpdu { contender: c, node, station: s, start: ta, airtime: t, rate: tx.rate() };
            busy_end = busy_end.max(m.put_frame(cx, f));
        }
        // `ul_trigger_capture`: stations that decode a Trigger under another PPDU answer it.
        let captured = mu_on && m.collided() && self.ul_on_air() && self.ul_capture(m, ta, cx);
        if mu_on && (!m.collided() || captured) {
            let uplink = self.ul_on_air();
            if uplink && self.ul_defer(m, ta, cx) {
                // `ul_tb_fill = "tb-start"`: the stations fill their TB PPDUs SIFS after the
                // Trigger (`Ht::ul_tb_start` decides the exchange then).
                return;
            }
            let (outcome, end) = if uplink { self.ul_outcome(m, ta, cx) } else { self.mu_outcome(m, ta, busy_end, cx) };
            if cx.tap.is_some() {
                if uplink {
                    self.tap_ul(m, cx, ta, false);
                } else {
                    self.tap_mu(m, cx, ta, busy_end, false);
                }
            }
            // (Under a captured Trigger's exchange a station's PPDU may still be on the air.)
            let end = if captured { m.air().iter().map(|a| a.end).fold(end, Nanos::max) } else { end };
            m.set_outcome(outcome);
            m.busy_until(cx, ta, end);
            return;
        }
        if m.air().is_empty() {
            // Only an access that found nothing to send (uplink OFDMA).
            m.set_outcome(Outcome::DataLost);
            m.busy_until(cx, ta, ta);
            return;
        }
        let outcome = if m.collided() { Outcome::Collision } else { self.draw_outcome(m, cx, ta) };
        m.set_outcome(outcome);
        if self.mu.is_some() && matches!(outcome, Outcome::Success | Outcome::AckLost) {
            // Uplink OFDMA: the AP learns the Queue Size the station's frames carried.
            let (node, ac) = node_ac(m.air()[0].node);
            if node != 0 {
                let tin = self.drivers[node as usize].head(ac).tin;
                self.ul_report(node - 1, tin, cx);
            }
        }
        match outcome {
            Outcome::Success | Outcome::AckLost => {
                let (node, ac) = node_ac(m.air()[0].node);
                let ht = &*self;
                let agg = ht.drivers[node as usize].head(ac);
                let s = agg.station as usize;
                let resp = agg.tx.response_time(ht.band, &ht.basic, agg.mpdus.len() == 1, ht.ba_bytes[s]);
                busy_end = m.respond(cx, node, s, busy_end, band.sifs(), resp);
            }
            Outcome::DataLost => {
                let (node, ac) = node_ac(m.air()[0].node);
                let s = self.drivers[node as usize].head(ac).station as usize;
                cx.counters.stations[s].data_errors += 1;
            }
            Outcome::Collision if mu_on => {
                // The AP's MU PPDU collided: each of its users' frames did; a Trigger carries
                // no station's frame.
                m.count_collisions(cx, crate::mac80211::NUM_ACS as u32);
                if !self.ul_on_air() {
                    for u in &self.mu.as_deref().expect("OFDMA on").users {
                        cx.counters.stations[u.agg.station as usize].collisions += 1;
                    }
                }
            }
            Outcome::Collision => m.count_collisions(cx, 0),
        }
        if lead_wake {
            self.arm_lead_wake(cx);
        }
        if cx.tap.is_some() {
            if mu_on {
                // The AP's MU PPDU or Trigger collided (the others' frames below).
                if self.ul_on_air() {
                    self.tap_ul(m, cx, ta, true);
                } else {
                    self.tap_mu(m, cx, ta, busy_end, true);
                }
            }
            self.tap_exchange(m, cx, ta, mu_on);
        }
        m.busy_until(cx, ta, busy_end);
    }

    /// `[[station]] aggregation = "at-access"`: station `node` has won the medium for `ac`; its
    /// queued aggregates of `ac` are taken apart and the one that goes on the air is formed
    /// again from every frame it now holds, within the same limits (ns-3 3.44 forms the A-MPDU
    /// when the TXOP starts). Building the head loads it into the node's contender again; the
    /// contender is on the air, so that only redraws its backoff counter, which the exchange's
    /// end draws anew anyway.
    fn rebuild_at_access(&mut self, m: &mut Medium, node: u32, ac: usize, cx: &mut Ctx) {
        let tin = self.drivers[node as usize].head(ac).tin;
        self.unbuild_node(node, ac);
        self.build(m, node, tin, cx);
        debug_assert!(self.drivers[node as usize].hw[ac].len == 1, "the held frames form the head again");
    }

    /// Hand the busy period's frames to the capture (`--pcap`): the beacon, every MPDU of
    /// every aggregate (with a bad FCS unless its receiver decoded it; an A-MPDU's MPDUs share
    /// a reference number), and the (Block)Ack of a decoded lone aggregate. Reads the channel
    /// as `legacy::tap_exchange` does, drawing nothing.
    #[cold]
    fn tap_exchange(&self, m: &mut Medium, cx: &mut Ctx, ta: Nanos, mu_on: bool) {
        use crate::pcap::{Kind, Phy};
        let Some(tap) = cx.tap.as_deref_mut() else { return };
        let decoded = matches!(m.outcome(), Outcome::Success | Outcome::AckLost);
        let skip = m.tap_beacon(tap, ta);
        for i in skip..m.air().len() {
            let a = m.air()[i];
            let (node, ac) = node_ac(a.node);
            if mu_on && node == 0 {
                // The AP's MU PPDU or Trigger: `tap_mu` / `tap_ul`.
                continue;
            }
            let agg = self.drivers[node as usize].head(ac);
            let s = agg.station;
            let (to, dir, back) = if node == 0 { (s + 1, Dir::Down, Dir::Up) } else { (0, Dir::Up, Dir::Down) };
            let snr = m.radio_mut().snr_cdb(s as usize, ta, dir);
            let n = agg.mpdus.len();
            let reference = if n > 1 { Some(tap.next_ampdu_ref()) } else { None };
            for (k, mp) in agg.mpdus.iter().enumerate() {
                let pkt = *cx.pkts.get(mp.pkt);
                let key = cx.keys[pkt.flow as usize];
                let data = Kind::Data {
                    from: node,
                    to,
                    retry: mp.attempts > 1,
                    tid: Some(agg.tin_of(k).tid()),
                    seq: mp.sn as u16 & 0x0fff,
                    key,
                    pkt,
                };
                let fcs_ok = decoded && agg.ok.has(k);
                let len = match self.amsdu.as_deref() {
                    None => ht::qos_data_mpdu_bytes(pkt.ip_len),
                    Some(a) => a.mpdu_bytes(mp.pkt, &cx.pkts),
                };
                let ampdu = reference.map(|r| (r, k + 1 == n));
                tap.air_frame(data, Phy { start: ta, rate: a.rate, len, fcs_ok, snr_cdb: snr, ampdu });
            }
            if decoded {
                let start = ta + agg.txtime + self.band.sifs();
                let rate = TxRate::Ofdm(ofdm::control_response_rate(&self.basic, agg.tx.non_ht_reference_rate()));
                let snr = m.radio_mut().snr_cdb(s as usize, start, back);
                let block = n > 1;
                let len = if block { self.ba_bytes[s as usize] } else { ofdm::ACK_BYTES };
                let phy = Phy { start, rate, len, fcs_ok: m.outcome() == Outcome::Success, snr_cdb: snr, ampdu: None };
                tap.air_frame(Kind::Ack { from: to, to: node, block }, phy);
            }
        }
    }

    /// A lone A-MPDU on the air: which MPDUs does the receiver decode, and does the sender
    /// decode the BlockAck? One uniform per MPDU and one for the response, from the sender's
    /// stream; a perfect channel draws nothing. The preamble and HT-SIG are taken to succeed
    /// whenever an MPDU does (their error rate at BPSK ½ is far below the data's).
    fn draw_outcome(&mut self, m: &mut Medium, cx: &Ctx, ta: Nanos) -> Outcome {
        let (node, ac) = node_ac(m.air()[0].node);
        let node = node as usize;
        let ht = &mut *self;
        let agg = ht.drivers[node].hw[ac].head_mut();
        let s = agg.station as usize;
        let r = m.radio_mut();
        if !r.has_channel(s) {
            agg.ok = AckMap::first(agg.mpdus.len());
            return Outcome::Success;
        }
        let (data_dir, ack_dir) = if node == 0 { (Dir::Down, Dir::Up) } else { (Dir::Up, Dir::Down) };
        let tx = agg.tx;
        let mode = match tx {
            // HT: the non-HT reference rate's curve (MCS 7 on 64-QAM 3/4's, as always here).
            TxVector::Ht(_) => ErrMode::nist(tx.non_ht_reference_rate()),
            _ => crate::phy::vht::error_mode(tx.mcs_index()),
        };
        // The spatial streams share the transmit power: with two each sees 3 dB less SNR.
        let snr = r.snr_cdb(s, ta, data_dir).expect("a channel") - STREAM_SPLIT_CDB[tx.nss() as usize];
        agg.ok = AckMap::NONE;
        let am = ht.amsdu.as_deref();
        for (i, mp) in agg.mpdus.iter().enumerate() {
            // One error loses the MPDU, every MSDU of an A-MSDU with it.
            let bytes = match am {
                None => ht::qos_data_mpdu_bytes(cx.pkts.get(mp.pkt).ip_len),
                Some(a) => a.mpdu_bytes(mp.pkt, &cx.pkts),
            };
            if r.decodes(node, mode, Preamble::Long, snr, bytes) {
                agg.ok.set(i);
            }
        }
        if agg.ok.is_empty() {
            return Outcome::DataLost;
        }
        if data_dir == Dir::Up {
            r.queue_report(s as u32, snr);
        }
        let resp_rate = ofdm::control_response_rate(&ht.basic, tx.non_ht_reference_rate());
        let resp_bytes = if agg.mpdus.len() == 1 { ofdm::ACK_BYTES } else { ht.ba_bytes[s] };
        let ack_snr = r.snr_cdb(s, ta + agg.txtime + ht.band.sifs(), ack_dir).expect("a channel");
        if !r.decodes(node, ErrMode::nist(resp_rate), Preamble::Long, ack_snr, resp_bytes) {
            return Outcome::AckLost;
        }
        if ack_dir == Dir::Up {
            r.queue_report(s as u32, ack_snr);
        }
        Outcome::Success
    }

    /// End of a decoded A-MPDU: the receiver passes up every MPDU it decoded that it did not
    /// have. With the BlockAck lost the sender keeps them and the receiver gets copies.
    /// Delivery is in the order of the aggregate; there is no reordering buffer.
    pub fn on_tx_end(&mut self, m: &mut Medium, cx: &mut Ctx) {
        if self.mu.as_deref().is_some_and(|mu| mu.on_air()) {
            return self.mu_tx_end(m, cx);
        }
        if self.ul_on_air() {
            return self.ul_tx_end(m, cx);
        }
        let (node, ac) = node_ac(m.air()[0].node);
        let acked = m.outcome() == Outcome::Success;
        let n_mpdus = self.drivers[node as usize].head(ac).mpdus.len();
        let fw_on = node == 0 && self.fw.is_some();
        for i in 0..n_mpdus {
            let d = &mut self.drivers[node as usize];
            let agg = d.hw[ac].head_mut();
            if !agg.ok.has(i) || agg.mpdus[i].delivered {
                continue;
            }
            let station = agg.station;
            let (tin, sn) = (agg.tin_of(i), agg.mpdus[i].sn);
            let pkt = agg.mpdus[i].pkt;
            cx.counters.stations[station as usize].tx_frames += 1;
            let deliver = if acked {
                if fw_on {
                    // The frame leaves the firmware (its bytes are known only while the sender
                    // owns it).
                    self.fw_left(tin, pkt, cx);
                }
                if node == 0 && self.policy_on {
                    let bytes = self.msdu_payload(pkt, cx);
                    self.drivers[0].sched.on_delivered(tin, bytes, cx.now);
                }
                // Ownership passes to the receiver; the slot is released at the exchange end.
                self.msdus_left(m, node, pkt, cx);
                let d = &mut self.drivers[node as usize];
                let agg = d.hw[ac].head_mut();
                agg.mpdus[i].delivered = true;
                agg.mpdus[i].pkt = PacketId(u32::MAX);
                pkt
            } else {
                agg.mpdus[i].delivered = true;
                self.copy_msdus(pkt, cx)
            };
            self.rx(node, tin, sn, deliver.0, cx);
        }
    }

    /// The receiver of `node`'s tin `tin` gets sequence number `sn` (`what`: a packet id, or
    /// `RX_SKIP` when the sender gave it up): pass up everything now in order.
    pub(super) fn rx(&mut self, node: u32, tin: TinId, sn: u32, what: u32, cx: &mut Ctx) {
        let to = if node == 0 { Node::Station(tin.station().0 as u32) } else { Node::Ap };
        let r = &mut self.drivers[node as usize].rx[tin.index()];
        let ahead = sn.wrapping_sub(r.next);
        if ahead >= u32::MAX / 2 {
            // Older than the window: a duplicate.
            if what != RX_SKIP {
                self.free_msdus(PacketId(what), cx);
            }
            return;
        }
        let idx = ahead as usize;
        while r.buf.len() <= idx {
            r.buf.push_back(RX_EMPTY);
        }
        r.buf[idx] = what;
        loop {
            let r = &mut self.drivers[node as usize].rx[tin.index()];
            let Some(&x) = r.buf.front() else { break };
            if x == RX_EMPTY {
                break;
            }
            r.buf.pop_front();
            r.next = r.next.wrapping_add(1);
            if x != RX_SKIP {
                self.deliver_msdus(to, PacketId(x), cx);
            }
        }
    }

    /// A lone aggregate's (Block)Ack rate (a legacy OFDM rate) and its receiver's contenders:
    /// every access category of the receiver saw it.
    pub fn lone_frame(&self, a: AirTx) -> (TxRate, std::ops::Range<usize>) {
        let (node, ac) = node_ac(a.node);
        if node == 0 && self.mu.as_deref().is_some_and(|mu| mu.on_air()) {
            return self.mu_lone_frame();
        }
        if node == 0 && self.ul_on_air() {
            return self.ul_lone_frame();
        }
        let head = self.drivers[node as usize].head(ac);
        let receiver = if node == 0 { head.station + 1 } else { 0 };
        let r0 = contender(receiver, 0) as usize;
        (TxRate::Ofdm(ofdm::control_response_rate(&self.basic, head.tx.non_ht_reference_rate())), r0..r0 + NUM_ACS)
    }

    /// TX status of every transmitted aggregate at the end of the busy period.
    pub fn complete(&mut self, m: &mut Medium, cx: &mut Ctx) {
        // `ul_trigger_capture = "ring"`: the stations that detected a preamble under a collision.
        self.ul_ring_eifs(m, cx.now);
        let acked = m.outcome() == Outcome::Success;
        // A captured Trigger's exchange succeeded; the stations' PPDUs under it did not.
        let captured = self.ul.as_deref_mut().is_some_and(|ul| std::mem::take(&mut ul.captured));
        if self.ul.is_some() {
            // (A beacon is the first frame on the air when there is one.)
            let beacon = m.dcf().beacon_in_air() as usize;
            if m.air().iter().skip(beacon).any(|a| node_ac(a.node).0 == 0) {
                self.ul_ap_exchange_ended(cx.now);
            }
        }
        for i in 0..m.air().len() {
            let a = m.air()[i];
            if i == 0 && m.dcf().beacon_in_air() {
                continue;
            }
            let decoded = matches!(m.outcome(), Outcome::Success | Outcome::AckLost);
            let (node, ac) = node_ac(a.node);
            if node == 0 && self.mu.as_deref().is_some_and(|mu| mu.on_air()) {
                self.mu_complete(m, ac, m.outcome() == Outcome::Collision, cx);
                continue;
            }
            if node == 0 && self.ul_on_air() {
                self.ul_complete(m, ac, m.outcome() == Outcome::Collision, cx);
                continue;
            }
            self.complete_head(m, a.node, acked && !captured, decoded && !captured, cx);
        }
    }

    /// TX status of the head aggregate of `node`: acknowledged MPDUs leave, the others are
    /// retried from the head of their tin or dropped at the retry limit; airtime is reported
    /// to the scheduler and AQL; the next aggregate in the hardware queue takes the MAC.
    fn complete_head(&mut self, m: &mut Medium, c: u32, acked: bool, decoded: bool, cx: &mut Ctx) {
        let (node, ac) = node_ac(c);
        let n = node as usize;
        let now = cx.now;
        let limit = self.mpdu_retry_limit;
        let d = &mut self.drivers[n];
        let head = d.hw[ac].head;
        let (tin, station, txtime) = (d.hw[ac].aggs[head].tin, d.hw[ac].aggs[head].station, d.hw[ac].aggs[head].txtime);
        let tx_us = (txtime.0 / 1000) as u32;
        if node != 0 && decoded {
            // The AP received this PPDU from the station: RX airtime of the station's TXQ.
            let ap_tin = self.sched_tin(TinId::new(StationId(station as u16), tin.tid()));
            self.drivers[0].sched.report_airtime(ap_tin, 0, tx_us, now);
        }
        let budget = if node == 0 { self.next.retry_budget.map(|b| b.budget_us) } else { None };
        let d = &mut self.drivers[n];
        let agg = &mut d.hw[ac].aggs[head];
        let mrr = agg.chain.len > 0;
        let tries = agg.tries as u32 + 1;
        let mut budget_ends_chain = false;
        if let Some(b) = budget {
            // The retry budget counts the air of every try that carried the MPDU.
            for mp in agg.mpdus.iter_mut() {
                mp.spent_us = mp.spent_us.saturating_add(tx_us);
            }
            if mrr && !acked && tries < agg.chain.total_tries() {
                // The hardware retries only if the next try fits every MPDU's budget; else the
                // chain ends here with a TX status (the driver would have cut it at build).
                let stage = agg.chain.stage_of_try(tries).expect("a try within the chain");
                let next = minstrel_ht::vector_at(agg.tx, agg.chain.s[stage].rate);
                let lone = if agg.mpdus.len() == 1 { ht::MPDU_DELIMITER_BYTES } else { 0 };
                let next_us = (next.txtime(self.band, agg.psdu - lone).0 / 1000) as u32;
                budget_ends_chain = agg.mpdus.iter().any(|mp| !mp.delivered && mp.spent_us.saturating_add(next_us) > b);
            }
        }
        if mrr && !acked && tries < agg.chain.total_tries() && !budget_ends_chain {
            // ath9k: no BlockAck, and the chain has tries left: the hardware sends the whole
            // A-MPDU again at the try's series rate after a new backoff (CW doubled), with no TX
            // status to the software. The receiver keeps what it decoded.
            agg.tries = tries as u8;
            agg.air_us += tx_us;
            let stage = agg.chain.stage_of_try(tries).expect("a try within the chain");
            agg.tx = minstrel_ht::vector_at(agg.tx, agg.chain.s[stage].rate);
            agg.txtime = agg.tx.txtime(self.band, agg.psdu);
            agg.ok = AckMap::NONE;
            self.drivers[n].hw[ac].due = NOT_DUE;
            m.dcf_mut().on_ppdu_end(c as usize, false);
            self.load_head(m, node, ac);
            return;
        }
        // TX status. The airtime of every try is charged now, at TX completion: ath9k 4.11's
        // `ath_tx_count_airtime` (the final rate's duration times its tries plus each earlier
        // series' duration times its count), as 6.x hands the same sum to
        // `ieee80211_sta_register_airtime`.
        let air_us = agg.air_us + tx_us;
        let built_us = agg.built_us;
        let sched_tin = if node == 0 { self.sched_tin(tin) } else { tin };
        let d = &mut self.drivers[n];
        d.sched.report_airtime(sched_tin, air_us, 0, now);
        if node == 0 && self.policy_on {
            // Groups' shares count PPDU airtime (as the deficits do); caps also the
            // (Block)Ack exchange of every try, as `build` estimated it.
            let agg = &self.drivers[0].hw[ac].aggs[head];
            let resp =
                agg.tx.response_time(self.band, &self.basic, agg.mpdus.len() == 1, self.ba_bytes[station as usize]);
            let exchange_us = ((self.band.sifs() + resp).0 / 1000) as u32 * tries;
            self.drivers[0].sched.report_policy_airtime(sched_tin, air_us, exchange_us, built_us, now);
        }
        let d = &mut self.drivers[n];
        let agg_ok = d.hw[ac].aggs[head].ok;
        let vo_head = d.hw[ac].aggs[head].vo_head as usize;
        let vo_tin = TinId::new(tin.station(), d.hw[ac].aggs[head].vo_tid);
        let n_mpdus = d.hw[ac].aggs[head].mpdus.len();
        let (rate_idx, mcs) = (d.hw[ac].aggs[head].rate_idx, d.hw[ac].aggs[head].tx.mcs_index() as usize);
        if acked {
            cx.counters.stations[station as usize].mcs_acked[(node != 0) as usize][mcs] += 1;
        }
        // Rate control learns the fate of every MPDU of the attempt.
        let link = crate::wifi::medium::link_index(node, station, self.n_stations);
        if let Some(r) = self.mrr[link].as_mut() {
            let chain = self.drivers[n].hw[ac].aggs[head].chain;
            let stage = chain.stage_of_try(tries - 1).expect("a try within the chain");
            let before: u32 = chain.series()[..stage].iter().map(|s| s.count as u32).sum();
            let acked_mpdus = if acked { agg_ok.count() } else { 0 };
            r.tx_status(now, &chain, stage, (tries - before) as u8, n_mpdus as u32, acked_mpdus);
        }
        if let Some(r) = self.rc[link].as_mut() {
            for i in 0..n_mpdus {
                r.ctl.on_attempt(now, rate_idx, acked && agg_ok.has(i));
            }
            r.ctl.on_frame_end(now, acked);
        }
        // Failed MPDUs go back to the head of the tin in their original order.
        let fw_on = node == 0 && self.fw.is_some();
        for i in (0..n_mpdus).rev() {
            let d = &mut self.drivers[n];
            let mp = d.hw[ac].aggs[head].mpdus[i];
            let mp_tin = if i < vo_head { vo_tin } else { tin };
            let ok = acked && agg_ok.has(i);
            // The time-based retry limit: no further try fits what is left of the budget.
            let spent = match budget {
                Some(b) => self.budget_spent(mp, tries, b),
                None => false,
            };
            if ok || (mp.attempts as u32) >= limit || spent {
                if ok {
                    if fw_on && mp.pkt.0 != u32::MAX {
                        // Acknowledged now, delivered by an earlier try: leaves the firmware.
                        self.fw_left(mp_tin, mp.pkt, cx);
                    }
                    let d = &mut self.drivers[n];
                    d.frames -= 1;
                    if mp.est_us > 0 {
                        d.aql.on_completed(mp_tin.station(), mp_tin.ac(), mp.est_us);
                    }
                    cx.counters.stations[station as usize].acked_mpdus += 1;
                    if mp.pkt.0 != u32::MAX {
                        // The receiver had it already (an earlier BlockAck was lost).
                        self.msdus_left(m, node, mp.pkt, cx);
                        self.free_msdus(mp.pkt, cx);
                    }
                } else {
                    if spent && !mp.delivered && (mp.attempts as u32) < limit {
                        self.next_stats.budget_drops += 1;
                    }
                    self.give_up(m, node, mp_tin, mp, cx);
                }
            } else {
                cx.counters.stations[station as usize].retries += 1;
                self.drivers[n].held[mp_tin.index()].push_front(mp);
            }
        }
        if node == 0 {
            if let Some(fw) = self.fw.as_deref_mut() {
                for a in 0..NUM_ACS {
                    fw.report(a, now);
                }
                // A retried MPDU stays in the firmware: its TID is served again.
                for t in [tin, vo_tin] {
                    if !self.drivers[0].held[t.index()].is_empty() && !fw.listed[t.index()] {
                        fw.listed[t.index()] = true;
                        fw.order[t.ac().index()].push_back(t);
                    }
                }
            }
        }
        let fw = node == 0 && self.fw.is_some();
        let vo_sched = if node == 0 { self.sched_tin(vo_tin) } else { vo_tin };
        let d = &mut self.drivers[n];
        d.hw[ac].aggs[head].mpdus.clear();
        d.hw[ac].head = (head + 1) % HW_QUEUE_AGGS;
        d.hw[ac].len -= 1;
        d.hw[ac].due = NOT_DUE;
        let has = |t: TinId| if fw { Driver::src_has(&d.src, t) } else { Driver::has_frames(&d.src, &d.held, t) };
        if has(tin) {
            d.sched.wake(sched_tin, now, &d.aql);
        }
        if vo_head > 0 && has(vo_tin) {
            d.sched.wake(vo_sched, now, &d.aql);
        }
        // A chain that ran out resets CW as the retry limit does (802.11-2016 10.3.3).
        m.dcf_mut().on_ppdu_end(c as usize, acked || mrr);
        if self.drivers[n].hw[ac].len > 0 {
            // Planned by `end_busy` like any node holding a frame.
            self.load_head(m, node, ac);
        }
    }

    /// The driver gives up `mp` of `node`'s tin `tin` (retry limit, retry budget): it leaves the
    /// driver; a frame the receiver has is freed, any other is a retry drop, and the receiver's
    /// window moves past it.
    pub(super) fn give_up(&mut self, m: &Medium, node: u32, tin: TinId, mp: Mpdu, cx: &mut Ctx) {
        if node == 0 && self.fw.is_some() {
            self.fw_left(tin, mp.pkt, cx);
        }
        let d = &mut self.drivers[node as usize];
        d.frames -= 1;
        if mp.est_us > 0 {
            d.aql.on_completed(tin.station(), tin.ac(), mp.est_us);
        }
        self.msdus_left(m, node, mp.pkt, cx);
        if mp.delivered {
            self.free_msdus(mp.pkt, cx);
        } else {
            self.drop_msdus(m, node, mp.pkt, cx);
            self.rx(node, tin, mp.sn, RX_SKIP, cx);
        }
    }

    /// The AP's MPDU `pkt` of `tin` leaves the firmware (acknowledged or given up).
    #[cold]
    fn fw_left(&mut self, tin: TinId, pkt: PacketId, cx: &Ctx) {
        let bytes = ht::qos_data_mpdu_bytes(cx.pkts.get(pkt).ip_len);
        if let Some(fw) = self.fw.as_deref_mut() {
            fw.left(tin.ac().index(), bytes);
        }
    }

    /// The retry budget at a TX status of `mp` after `tries` hardware tries: whether it is spent
    /// (no try can fit). Also keeps the worst air any retried MPDU had taken.
    #[cold]
    fn budget_spent(&mut self, mp: Mpdu, tries: u32, budget: u32) -> bool {
        if mp.attempts >= 2 || tries >= 2 {
            let worst = &mut self.next_stats.budget_worst_retried_us;
            *worst = (*worst).max(mp.spent_us);
        }
        mp.spent_us >= budget
    }

    /// Packets held by the 802.11n drivers, for the conservation check: `count` for each one
    /// in flight; returns how many are senders' copies of frames already delivered.
    pub fn for_each_held(&self, mut count: impl FnMut(PacketId)) -> u64 {
        let ht = self;
        let mut copies = 0;
        // Every MSDU of an MPDU (its A-MSDU's when A-MSDU is on).
        let msdus = |p: PacketId, f: &mut dyn FnMut(PacketId)| match ht.amsdu.as_deref() {
            None => f(p),
            Some(a) => a.msdus(p).for_each(f),
        };
        let mut mpdu = |m: &Mpdu, count: &mut dyn FnMut(PacketId)| {
            if m.pkt.0 == u32::MAX {
                return;
            }
            if m.delivered {
                msdus(m.pkt, &mut |_| copies += 1);
            } else {
                msdus(m.pkt, count);
            }
        };
        // DL MU MPDUs in flight after a missed first BlockAck (`mu_missed_ba = "in-flight"`).
        for q in ht.mu.as_deref().map_or(&[][..], |mu| &mu.in_flight[..]) {
            for m in q {
                mpdu(m, &mut count);
            }
        }
        for d in &ht.drivers {
            match &d.src {
                Source::Fifo { q, .. } => q.iter().flatten().for_each(|&p| count(p)),
                Source::Fq(fq) => fq.for_each_queued(&mut count),
            }
            for h in &d.held {
                for m in h {
                    mpdu(m, &mut count);
                }
            }
            for q in &d.hw {
                for k in 0..q.len {
                    for m in &q.aggs[(q.head + k) % HW_QUEUE_AGGS].mpdus {
                        mpdu(m, &mut count);
                    }
                }
            }
            for r in &d.rx {
                r.buf.iter().filter(|&&x| x != RX_EMPTY && x != RX_SKIP).for_each(|&x| msdus(PacketId(x), &mut count));
            }
        }
        // The users of an MU PPDU on the air (downlink OFDMA).
        for u in ht.mu.iter().flat_map(|mu| mu.users.iter()) {
            for m in &u.agg.mpdus {
                mpdu(m, &mut count);
            }
        }
        // The stations of an uplink exchange on the air.
        for u in ht.ul.iter().flat_map(|ul| ul.users.iter()) {
            for m in &u.agg.mpdus {
                mpdu(m, &mut count);
            }
        }
        copies
    }
}
