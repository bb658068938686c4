//! PCF in the event loop: the contention-free periods of an 802.11b cell whose AP is a point
//! coordinator (`[cell] pcf = true`; IEEE 802.11-1999 clause 9.3; docs/model-pcf.md). The
//! timing and the polling policy are `super::pcf`'s; this drives them frame by frame, with the
//! frames' errors, the stations' and the AP's head-of-line frames, rate control and the
//! Bluetooth coupling as the DCF exchange has them.
//!
//! A CFP, as the simulation runs it:
//! - At a TBTT that starts one (`CfParams::starts_cfp`), every node sets its NAV until TBTT +
//!   CFPMaxDuration (`Dcf::set_nav`): no DCF access. The beacon (with the CF Parameter Set)
//!   waits PIFS of idle medium as any beacon; if the medium was busy at the TBTT the CFP is
//!   foreshortened, its end still TBTT + CFPMaxDuration.
//! - The whole CFP is one busy period of the medium. After the beacon and SIFS the PC sends,
//!   frame after frame:
//!   - to a station that is not CF-Pollable, the AP's head-of-line frame for it as Data; the
//!     station answers with an ACK after SIFS;
//!   - otherwise it polls the next station of its list (`PointCoordinator`): Data+CF-Poll when
//!     the AP's head-of-line frame is for that station, else CF-Poll; the station answers
//!     SIFS later with its own head-of-line frame (Data, +CF-Ack) or a Null;
//!   - the CF-Ack for a station's data rides on the PC's next frame (or on the CF-End), and
//!     the station learns its fate only if it decodes that frame.
//!   - An unanswered poll (the station did not decode it) or an answer the PC did not decode:
//!     the PC goes on PIFS after the end of the last frame on the air.
//!   - An exchange starts only if it and the CF-End fit before the CFP's end, reckoned with the
//!     links' current rates (`RateCtl::current`); the CFP ends with CF-End then, or earlier once
//!     a whole round of polls carried nothing.
//! - The CF-End resets every NAV: each node counts its backoff again from CF-End + DIFS.
//! - A TBTT inside the CFP: the PC sends that beacon as its next frame, when no CF-Ack is
//!   owed (otherwise after the exchange in progress).
//!
//! Deviations (docs/model-pcf.md): every station decodes the CF-End (it is short and at a
//! basic rate); an answer at a slower rate than the link's current one (a Minstrel sample)
//! can overrun CFPMaxDuration by the difference; frames of a CFP are not in `--pcap` captures;
//! the AP's channel monitor takes no SNR reports from them. A frame sent in a CFP resets the
//! sender's CW (it was delivered) but draws no new backoff: the DCF backoff procedure is not
//! invoked in a CFP.

use crate::ctx::{Ctx, DropCause, Req};
use crate::engine::Event;
use crate::phy::dsss::{self, DsssRate};
use crate::phy::error_rate::ErrMode;
use crate::radio::Dir;
use crate::time::Nanos;

use super::legacy::Legacy;
use super::medium::{link_index, DataPpdu, Medium, NO_STATION};
use super::pcf::{Cfp, CfpRecord, Phase, Step, CF_END_BYTES, NO_STEP, NULL_BYTES};
use crate::node::Node;
use crate::phy::TxRate;

impl Legacy {
    /// A TBTT in a PCF cell. Returns true when the PC takes care of the beacon itself (a TBTT
    /// inside a CFP); otherwise the beacon is due as usual, after the NAV is set if this TBTT
    /// starts a CFP.
    pub fn cfp_tbtt(&mut self, m: &mut Medium, cx: &mut Ctx) -> bool {
        let c = self.cfp.as_deref_mut().expect("a PCF cell");
        let k = c.tbtts;
        c.tbtts += 1;
        if c.active() {
            c.beacon_due = true;
            return true;
        }
        if c.params.starts_cfp(k) && !c.pc.list.is_empty() {
            c.armed = Some(cx.now);
            let until = cx.now + c.params.cfp_max_duration;
            m.set_nav(cx, until);
        }
        false
    }

    /// The beacon of an armed CFP goes on the air at `ta`: the CFP begins.
    pub fn cfp_begin(&mut self, m: &mut Medium, cx: &mut Ctx, ta: Nanos) {
        let rate = self.lowest_basic;
        let d = dsss::txtime(self.preamble, rate, m.beacon_bytes());
        let end = m.put_beacon(cx, ta, d, TxRate::Dsss(rate));
        if let Some(tap) = cx.tap.as_deref_mut() {
            m.tap_beacon(tap, ta);
        }
        let c = self.cfp.as_deref_mut().expect("a PCF cell");
        let tbtt = c.armed.take().expect("an armed CFP");
        c.deadline = tbtt + c.params.cfp_max_duration;
        c.owed = None;
        c.beacon_due = false;
        c.pc.begin_cfp();
        c.records.push(CfpRecord { tbtt, start: ta, ..CfpRecord::default() });
        // The busy period begins with the beacon; `on_air` accounts it.
        m.open_busy(ta);
        on_air(c, m, cx, ta, end, 0, end + dsss::SIFS, Phase::Next);
    }

    /// The PC's next step (`Event::Cfp`).
    pub fn on_cfp(&mut self, m: &mut Medium, cx: &mut Ctx) {
        match self.cfp.as_deref().expect("a PCF cell").phase {
            Phase::Next => self.cfp_next(m, cx),
            Phase::PcEnd => self.cfp_pc_end(m, cx),
            Phase::Answer => self.cfp_answer(m, cx),
            Phase::AnswerEnd => self.cfp_answer_end(m, cx),
            Phase::CfEnd => self.cfp_cf_end(m, cx),
            Phase::Idle => unreachable!("a CFP event outside a CFP"),
        }
    }

    /// The PC sends its next frame: the beacon of a TBTT that fell in the CFP, Data to a
    /// station that is not CF-Pollable, a (Data+)CF-Poll, or the CF-End.
    fn cfp_next(&mut self, m: &mut Medium, cx: &mut Ctx) {
        let t = cx.now;
        let c = self.cfp.as_deref_mut().expect("a PCF cell");
        let cf_end = c.timing.cf_end();
        let ctl = c.timing.ctl_rate;
        if c.beacon_due && c.owed.is_none() {
            let d = dsss::txtime(self.preamble, self.lowest_basic, m.beacon_bytes());
            if t + d + cf_end <= c.deadline {
                c.beacon_due = false;
                c.record().beacons += 1;
                let end = m.put_beacon(cx, t, d, TxRate::Dsss(self.lowest_basic));
                return on_air(c, m, cx, t, end, 0, end + dsss::SIFS, Phase::Next);
            }
        }
        let ap_to = m.dcf().frame(0).map(|p| (m.dcf().frame_station(0), p));
        let (station, polled) = match ap_to {
            Some((s, _)) if !c.pollable[s as usize] => (s, false),
            _ => match c.pc.peek() {
                Some(s) => (s, true),
                None => return self.cfp_send_end(m, cx),
            },
        };
        let down = ap_to.is_some_and(|(s, _)| s == station);
        // Will the exchange, and the CF-End after it, fit? Reckoned at the links' current rates.
        let est = |ctl_i: &crate::mac::rate::RateCtl| DsssRate::ALL[ctl_i.current() as usize];
        let down_link = link_index(0, station, self.n_stations);
        let up_link = link_index(station + 1, station, self.n_stations);
        let pc_bytes = match ap_to {
            Some((_, p)) if down => cx.pkts.get(p).ip_len + dsss::DATA_OVERHEAD_BYTES,
            _ => NULL_BYTES,
        };
        let pc_est =
            if down { dsss::txtime(self.preamble, est(&self.rate_ctl[down_link]), pc_bytes) } else { c.timing.null() };
        let answer_est = if !polled {
            self.ack_by_rate[est(&self.rate_ctl[down_link]) as usize]
        } else if let Some(p) = m.dcf().frame(station as usize + 1) {
            dsss::txtime(self.preamble, est(&self.rate_ctl[up_link]), cx.pkts.get(p).ip_len + dsss::DATA_OVERHEAD_BYTES)
        } else {
            c.timing.null()
        };
        if t + pc_est + dsss::SIFS + answer_est + dsss::SIFS + cf_end > c.deadline {
            return self.cfp_send_end(m, cx);
        }
        let acks = c.owed.take();
        let sc = &mut cx.counters.pcf.stations[station as usize];
        sc.polls += polled as u64;
        sc.data_down += down as u64;
        let r = c.record();
        r.polls += polled as u64;
        r.data_down += down as u64;
        let (pc_rate, end) = if down {
            let attempt = m.dcf_mut().start_attempt(0);
            let ri = self.rate_ctl[down_link].rate_for_attempt(t, attempt) as usize;
            let rate = DsssRate::ALL[ri];
            cx.counters.stations[station as usize].attempts_by_rate[0][ri] += 1;
            let d = dsss::txtime(self.preamble, rate, pc_bytes);
            let f = DataPpdu {
                contender: 0,
                node: 0,
                station: station as usize,
                start: t,
                airtime: d,
                rate: TxRate::Dsss(rate),
            };
            (rate, m.put_frame(cx, f))
        } else {
            (ctl, m.put_control(cx, 0, station, 0, t, c.timing.null()))
        };
        let c = self.cfp.as_deref_mut().expect("a PCF cell");
        c.step = Step { station, polled, down, pc_rate, pc_bytes, pc_start: t, acks, ..NO_STEP };
        on_air(c, m, cx, t, end, 0, end, Phase::PcEnd);
    }

    /// The end of the PC's frame: did its station decode it (and the station it acknowledges)?
    /// The station answers SIFS later (`cfp_answer`, once a frame the CF-Ack released has
    /// been replaced from its queue); without an answer the PC goes on after PIFS.
    fn cfp_pc_end(&mut self, m: &mut Medium, cx: &mut Ctx) {
        let now = cx.now;
        let st = self.cfp.as_deref().expect("a PCF cell").step;
        let s = st.station;
        let heard = self.cf_heard(m, cx, s, Dir::Down, st.pc_rate, st.pc_bytes, st.pc_start, st.down);
        if let Some((p, rate)) = st.acks {
            let got = if p == s {
                heard
            } else {
                self.cf_heard(m, cx, p, Dir::Down, st.pc_rate, st.pc_bytes, st.pc_start, false)
            };
            self.cf_sender_result(m, cx, p + 1, p, rate, got);
        }
        if st.down && heard {
            cf_deliver(m, cx, 0, s);
        }
        if !heard {
            if st.down {
                self.cf_sender_result(m, cx, 0, s, st.pc_rate, false);
            }
            let c = self.cfp.as_deref_mut().expect("a PCF cell");
            cx.counters.pcf.stations[s as usize].unanswered += 1;
            if st.polled {
                c.pc.polled(st.down);
            }
            c.phase = Phase::Next;
            let next = now + dsss::PIFS;
            m.busy_to(cx, next);
            cx.schedule(next, Event::Cfp);
            return;
        }
        let c = self.cfp.as_deref_mut().expect("a PCF cell");
        c.phase = Phase::Answer;
        cx.schedule(now, Event::Cfp);
    }

    /// The polled station answers, SIFS after the PC's frame: its head-of-line frame, a Null,
    /// or an ACK to Data when it is not CF-Pollable.
    fn cfp_answer(&mut self, m: &mut Medium, cx: &mut Ctx) {
        let st = self.cfp.as_deref().expect("a PCF cell").step;
        let s = st.station;
        let start = cx.now + dsss::SIFS;
        let node = s + 1;
        let c = self.cfp.as_deref_mut().expect("a PCF cell");
        let ctl = c.timing.ctl_rate;
        let (up, rate, bytes, end) = if !st.polled {
            let rate = self.ack_rate[st.pc_rate as usize];
            (false, rate, dsss::ACK_BYTES, m.put_control(cx, node, s, 0, start, self.ack_by_rate[st.pc_rate as usize]))
        } else if let Some(p) = m.dcf().frame(node as usize) {
            let link = link_index(node, s, self.n_stations);
            let attempt = m.dcf_mut().start_attempt(node as usize);
            let ri = self.rate_ctl[link].rate_for_attempt(start, attempt) as usize;
            let rate = DsssRate::ALL[ri];
            let bytes = cx.pkts.get(p).ip_len + dsss::DATA_OVERHEAD_BYTES;
            cx.counters.stations[s as usize].attempts_by_rate[1][ri] += 1;
            cx.counters.pcf.stations[s as usize].data_up += 1;
            c.record().data_up += 1;
            let d = dsss::txtime(self.preamble, rate, bytes);
            let f =
                DataPpdu { contender: node, node, station: s as usize, start, airtime: d, rate: TxRate::Dsss(rate) };
            (true, rate, bytes, m.put_frame(cx, f))
        } else {
            cx.counters.pcf.stations[s as usize].nulls += 1;
            (false, ctl, NULL_BYTES, m.put_control(cx, node, s, 1, start, c.timing.null()))
        };
        let c = self.cfp.as_deref_mut().expect("a PCF cell");
        c.step.up = up;
        c.step.answer_rate = rate;
        c.step.answer_bytes = bytes;
        c.step.answer_start = start;
        on_air(c, m, cx, start, end, node, end, Phase::AnswerEnd);
    }

    /// The end of the station's answer: the PC decoded it or not. Its (CF-)Ack settles the
    /// AP's frame; its data reaches the AP, to be acknowledged on the PC's next frame.
    fn cfp_answer_end(&mut self, m: &mut Medium, cx: &mut Ctx) {
        let now = cx.now;
        let st = self.cfp.as_deref().expect("a PCF cell").step;
        let s = st.station;
        let got = self.cf_heard(m, cx, s, Dir::Up, st.answer_rate, st.answer_bytes, st.answer_start, st.up);
        if st.down {
            self.cf_sender_result(m, cx, 0, s, st.pc_rate, got);
        }
        let c = self.cfp.as_deref_mut().expect("a PCF cell");
        if st.up {
            if got {
                c.owed = Some((s, st.answer_rate));
                cf_deliver(m, cx, s + 1, s);
            } else {
                self.cf_sender_result(m, cx, s + 1, s, st.answer_rate, false);
            }
        }
        let c = self.cfp.as_deref_mut().expect("a PCF cell");
        if st.polled {
            c.pc.polled(st.down || st.up);
        }
        c.phase = Phase::Next;
        let next = now + if got { dsss::SIFS } else { dsss::PIFS };
        m.busy_to(cx, next);
        cx.schedule(next, Event::Cfp);
    }

    /// The PC ends the CFP: CF-End (+CF-Ack when it owes one).
    fn cfp_send_end(&mut self, m: &mut Medium, cx: &mut Ctx) {
        let t = cx.now;
        let c = self.cfp.as_deref_mut().expect("a PCF cell");
        let idle = c.pc.peek().is_none();
        c.record().idle = idle;
        let d = c.timing.cf_end();
        let acks = c.owed.take();
        c.step = Step { acks, pc_start: t, pc_rate: c.timing.ctl_rate, pc_bytes: CF_END_BYTES, ..NO_STEP };
        let end = m.put_control(cx, 0, NO_STATION, 0, t, d);
        on_air(c, m, cx, t, end, 0, end, Phase::CfEnd);
    }

    /// The CF-End has ended: the CF-Ack it carried is settled, and the busy period ends.
    fn cfp_cf_end(&mut self, m: &mut Medium, cx: &mut Ctx) {
        let st = self.cfp.as_deref().expect("a PCF cell").step;
        if let Some((p, rate)) = st.acks {
            let got = self.cf_heard(m, cx, p, Dir::Down, st.pc_rate, st.pc_bytes, st.pc_start, false);
            self.cf_sender_result(m, cx, p + 1, p, rate, got);
        }
        cx.schedule(cx.now, Event::ExchangeEnd);
    }

    /// The busy period of the CFP ends (`Wifi::on_exchange_end`): the NAV is reset and every
    /// node counts its backoff again after DIFS; a beacon the CFP could not fit is due now.
    pub fn cfp_finish(&mut self, m: &mut Medium, cx: &mut Ctx) {
        let now = cx.now;
        let c = self.cfp.as_deref_mut().expect("a PCF cell");
        c.phase = Phase::Idle;
        c.record().end = now;
        let dcf = m.dcf_mut();
        dcf.clear_nav();
        dcf.set_all_ifs_after(now);
        if std::mem::take(&mut c.beacon_due) {
            // The medium is still busy: the beacon waits PIFS after it.
            dcf.beacon_due(now);
        }
    }

    /// Did station `s`'s end of the link decode a frame of the CFP (sent by the AP for `Down`,
    /// by the station for `Up`) of `bytes` at `rate` that started at `start` and ends now?
    /// Its channel's errors (as DCF frames draw them, from the sender's stream), then, next to
    /// Bluetooth, an overlapping Bluetooth packet in the WLAN's band. `data`: count it in the
    /// coexistence table's data frames.
    #[allow(clippy::too_many_arguments)]
    fn cf_heard(
        &mut self,
        m: &mut Medium,
        cx: &mut Ctx,
        s: u32,
        dir: Dir,
        rate: DsssRate,
        bytes: u32,
        start: Nanos,
        data: bool,
    ) -> bool {
        let (sender, to) = if dir == Dir::Down { (0, s + 1) } else { (s + 1, 0) };
        let r = m.radio_mut();
        if let Some(snr) = r.snr_cdb(s as usize, start, dir) {
            if !r.decodes(sender as usize, ErrMode::Dsss(rate), self.preamble, snr, bytes) {
                if data {
                    cx.counters.stations[s as usize].data_errors += 1;
                }
                return false;
            }
        }
        if let Some(co) = cx.coex.as_deref_mut() {
            let d = (dir == Dir::Up) as usize;
            let hit = co.wlan_hit(start, cx.now, sender, to, rate as usize);
            if data {
                co.counters.wlan_data_checked[s as usize][d] += 1;
                co.counters.wlan_data_hit[s as usize][d] += hit as u64;
            }
            if hit {
                if data {
                    cx.counters.stations[s as usize].data_errors += 1;
                }
                return false;
            }
        }
        true
    }

    /// The sender `node` (0 the AP) of a data frame to or from station `s` sent at `rate` in
    /// the CFP learns its fate: `acked` (an ACK or CF-Ack it decoded) releases the frame and
    /// the node takes its next; otherwise it retries at a later poll, or drops the frame at
    /// the retry limit. Rate control learns the attempt.
    fn cf_sender_result(&mut self, m: &mut Medium, cx: &mut Ctx, node: u32, s: u32, rate: DsssRate, acked: bool) {
        let now = cx.now;
        let link = link_index(node, s, self.n_stations);
        let ctl = &mut self.rate_ctl[link];
        ctl.on_attempt(now, rate as u8, acked);
        let dir = (node != 0) as usize;
        let n = node as usize;
        let done = if acked {
            cx.counters.stations[s as usize].acked_by_rate[dir][rate as usize] += 1;
            ctl.on_frame_end(now, true);
            // The receiver has its copy (`cf_deliver`).
            let (pkt, _) = m.dcf_mut().release_in_cfp(n);
            cx.pkts.free(pkt);
            true
        } else if m.dcf().at_retry_limit(n) {
            ctl.on_frame_end(now, false);
            let (pkt, delivered) = m.dcf_mut().release_in_cfp(n);
            if delivered {
                cx.pkts.free(pkt);
            } else {
                cx.drop_packet(pkt, m.acct(node), DropCause::Retry);
            }
            true
        } else {
            cx.counters.stations[s as usize].retries += 1;
            false
        };
        if done {
            cx.out.push(Req::Wake { dev: m.dev(node) });
        }
    }
}

/// The receiver decoded the data frame `node` (0 the AP) holds for or from station `s`: it
/// passes a copy up, unless it has it already (a retransmission after a lost CF-Ack); the
/// sender keeps its frame until it learns the frame was acknowledged.
fn cf_deliver(m: &mut Medium, cx: &mut Ctx, node: u32, s: u32) {
    let n = node as usize;
    if m.dcf().delivered(n) {
        return;
    }
    m.dcf_mut().mark_delivered(n);
    let pkt = m.dcf().frame(n).expect("the sender holds its frame");
    cx.counters.stations[s as usize].tx_frames += 1;
    let copy = *cx.pkts.get(pkt);
    let c = cx.pkts.alloc(copy);
    let to = if node == 0 { Node::Station(s) } else { Node::Ap };
    cx.deliver(to, c);
}

/// A frame of the CFP from WiFi node `from` is on the air over [start, end): the Bluetooth
/// piconet beside the cell sees it, and the PC's next step (`phase`) comes at `at`, to which
/// the busy period is accounted.
#[allow(clippy::too_many_arguments)]
fn on_air(c: &mut Cfp, m: &mut Medium, cx: &mut Ctx, start: Nanos, end: Nanos, from: u32, at: Nanos, phase: Phase) {
    if let Some(co) = cx.coex.as_deref_mut() {
        co.wlan.push(crate::coex::OnAir { start, end, chan: 0, in_band: true, from });
    }
    c.phase = phase;
    m.busy_to(cx, at);
    cx.schedule(at, Event::Cfp);
}
