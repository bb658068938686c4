//! Interframe spaces after a busy period, in one place for both exchanges: DIFS or AIFS, EIFS
//! after a frame a node could not decode, ACKTimeout after a node's own failed frame
//! (IEEE 802.11-2016 10.3.2.3 and 10.3.7, 10.22.2.4 for EDCA; as ns-3-dev
//! `channel-access-manager.cc` and `wifi-utils.cc` `GetEstimatedAckTxTime` implement them).
//!
//! Every node resumes counting its backoff at `ifs_end`, which the rules below set when the
//! medium turns idle at `te`:
//! - bystanders: `te + AIFS` after a decoded exchange, `te + EIFS` after a collision;
//! - colliders: their own frame's end + ACKTimeout, then AIFS; under the `eifs` convention never
//!   before the bystanders' EIFS;
//! - a lone frame that was not decoded: its receiver `te + EIFS`, its sender its frame's end +
//!   ACKTimeout + AIFS;
//! - a lost (Block)Ack: the sender `te + EIFS` of the response.
//!
//! EIFS is written as an extra over the node's own AIFS (DIFS under DCF): SIFS + the estimated
//! ACK time of the frame that caused it, or the 802.11-1999 constant 364 µs (`eifs = "legacy"`).
//! The frame a collision's EIFS is reckoned from differs by standard, as the two models were
//! validated: 802.11b takes the frame that ended last (the one a receiver saw end), 802.11n the
//! slowest MCS in the air.

use crate::mac::dcf::Dcf;
use crate::phy::dsss::{self, DsssRate, Preamble};
use crate::phy::ht;
use crate::phy::ofdm;
use crate::time::Nanos;
use crate::words::words;

use super::air::{AirTx, Outcome};
use crate::phy::TxRate;

/// How long bystanders defer after a frame they could not decode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EifsRule {
    /// 802.11-2016 / ns-3: SIFS + EstimatedAckTxTime(PPDU that caused the EIFS) + DIFS.
    Estimated,
    /// 802.11-1999/2007: SIFS + ACK at 1 Mb/s long preamble + DIFS = 364 us.
    Legacy,
}

words!(EifsRule: "estimated" => EifsRule::Estimated, "legacy" => EifsRule::Legacy);

/// How the stations whose frames collided defer once the medium is idle again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CollisionDefer {
    /// Everyone who heard the collision, the colliders included, treats it as a corrupted frame
    /// and defers EIFS from its end; a collider also never resumes before its ACKTimeout + DIFS.
    /// This is the convention of the analytical models and the Monte Carlo of reference 9.
    Eifs,
    /// Each collider waits ACKTimeout after its own frame, then DIFS once the medium is idle
    /// (ns-3's timing): with frames of unequal length, the shorter collider resumes first.
    AckTimeout,
}

words!(CollisionDefer: "eifs" => CollisionDefer::Eifs, "ack-timeout" => CollisionDefer::AckTimeout);

/// What the stations that did not transmit defer after a collision in an 802.11n/ac/ax cell
/// (`[cell] collision_ifs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CollisionIfs {
    /// EIFS (IEEE 802.11-2020 10.3.2.3.7): their PHY began a reception that did not end in a
    /// frame with a correct FCS. airsched's model so far.
    Eifs,
    /// AIFS: their PHY did not detect a preamble under the collision (two PPDUs of about equal
    /// power, SINR near 0 dB), so the medium was only CCA-busy and no reception failed. This is
    /// ns-3 3.44's usual case (`ThresholdPreambleDetectionModel`, 4 dB minimum SNR; the EIFS
    /// of `ChannelAccessManager::GetAccessGrantStart` follows only a `NotifyRxEndError`).
    /// The colliders still wait their ACKTimeout, then AIFS.
    Aifs,
}

words!(CollisionIfs: "eifs" => CollisionIfs::Eifs, "aifs" => CollisionIfs::Aifs);

/// The cell's IFS conventions.
#[derive(Clone, Copy, Debug)]
pub enum IfsRules {
    /// 802.11b DCF.
    Dsss { preamble: Preamble, eifs: EifsRule, defer: CollisionDefer },
    /// 802.11n EDCA (EIFS as in 802.11-2016; colliders defer as under `CollisionDefer::Eifs`,
    /// bystanders of a collision as `collision` says).
    Ht { sifs: Nanos, collision: CollisionIfs },
}

impl IfsRules {
    /// EIFS beyond the node's AIFS after a frame at `rate` it could not decode.
    pub fn eifs_extra(&self, rate: TxRate) -> Nanos {
        match (*self, rate) {
            (IfsRules::Dsss { eifs: EifsRule::Legacy, .. }, _) => dsss::EIFS_LEGACY - dsss::DIFS,
            (IfsRules::Dsss { preamble, .. }, TxRate::Dsss(r)) => dsss::SIFS + dsss::estimated_ack_time(preamble, r),
            (IfsRules::Ht { sifs, .. }, TxRate::Ht(m)) => sifs + ht::estimated_ack_time(m),
            (IfsRules::Ht { sifs, .. }, TxRate::Ofdm(r)) => sifs + ofdm::estimated_ack_time(r),
            (IfsRules::Ht { sifs, .. }, TxRate::Vht(t)) => sifs + crate::phy::estimated_ack_time_mcs(t.mcs),
            (IfsRules::Ht { sifs, .. }, TxRate::He(t)) => sifs + crate::phy::estimated_ack_time_mcs(t.mcs),
            (rules, rate) => unreachable!("{rate:?} in a cell with {rules:?}"),
        }
    }

    fn defer(&self) -> CollisionDefer {
        match self {
            IfsRules::Dsss { defer, .. } => *defer,
            IfsRules::Ht { .. } => CollisionDefer::Eifs,
        }
    }

    /// The frame a collision's EIFS is reckoned from (see the module documentation).
    fn collision_basis(&self, air: &[AirTx], beacon_in_air: bool) -> Option<TxRate> {
        match self {
            IfsRules::Dsss { .. } => {
                let dsss_rate = |a: &AirTx| match a.rate {
                    TxRate::Dsss(r) => r,
                    _ => DsssRate::R1,
                };
                air.iter().max_by_key(|a| (a.end, dsss_rate(a))).map(|a| a.rate)
            }
            IfsRules::Ht { .. } => {
                let data = air.iter().enumerate().filter(|(i, _)| !(*i == 0 && beacon_in_air)).map(|(_, a)| a.rate);
                let ht = data
                    .clone()
                    .filter_map(|r| match r {
                        TxRate::Ht(m) => Some(m),
                        _ => None,
                    })
                    .min()
                    .map(TxRate::Ht);
                // Without an HT frame among them, the VHT/HE frame of the lowest MCS (a
                // collision of HT with VHT/HE frames is reckoned from the HT one).
                ht.or_else(|| {
                    data.filter_map(|r| match r {
                        TxRate::Vht(t) => Some((t.mcs, r)),
                        TxRate::He(t) => Some((t.mcs, r)),
                        _ => None,
                    })
                    .min_by_key(|(m, _)| *m)
                    .map(|(_, r)| r)
                })
            }
        }
    }

    /// Set every contender's `ifs_end` for the busy period that ends at `te`. `air` lists the
    /// frames of the period (a beacon first, flagged by `Dcf::beacon_in_air`), `outcome` what became
    /// of a lone frame, `response` the rate of its (Block)Ack, and `receiver` the contenders of
    /// the lone frame's receiver.
    #[allow(clippy::too_many_arguments)]
    pub fn after_busy(
        &self,
        dcf: &mut Dcf,
        air: &[AirTx],
        outcome: Outcome,
        response: Option<TxRate>,
        receiver: std::ops::Range<usize>,
        te: Nanos,
    ) {
        let ack_timeout = dcf.params().ack_timeout;
        let beacon_in_air = dcf.beacon_in_air();
        let collided = air.len() > 1;
        let no_eifs = matches!(self, IfsRules::Ht { collision: CollisionIfs::Aifs, .. });
        let bystander_extra = if collided && !no_eifs {
            self.collision_basis(air, beacon_in_air).map_or(Nanos::ZERO, |r| self.eifs_extra(r))
        } else {
            Nanos::ZERO
        };
        dcf.set_all_ifs_after(te + bystander_extra);
        match outcome {
            Outcome::Collision => {
                for (i, a) in air.iter().enumerate() {
                    // A beacon expects no ACK.
                    let is_beacon = i == 0 && beacon_in_air;
                    let own = if is_beacon { a.end } else { a.end + ack_timeout };
                    // Its AIFS after the later of that and the medium's end (and, under the EIFS
                    // rule, the bystanders' EIFS).
                    let after_ack_timeout = own.max(te);
                    let t = match self.defer() {
                        CollisionDefer::AckTimeout => after_ack_timeout,
                        CollisionDefer::Eifs => after_ack_timeout.max(te + bystander_extra),
                    };
                    dcf.set_ifs_after(a.node as usize, t);
                }
            }
            Outcome::DataLost => {
                // The receiver saw a frame it could not decode; others are assumed to have
                // decoded it. The sender waits for its ACKTimeout.
                let a = air[0];
                let extra = self.eifs_extra(a.rate);
                for r in receiver {
                    dcf.set_ifs_after(r, te + extra);
                }
                dcf.set_ifs_after(a.node as usize, a.end + ack_timeout);
            }
            Outcome::AckLost => {
                let a = air[0];
                let resp = response.expect("a lost response has a rate");
                dcf.set_ifs_after(a.node as usize, te + self.eifs_extra(resp));
            }
            Outcome::Success => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mac::dcf::DcfParams;

    fn dcf(n: usize) -> Dcf {
        let p = DcfParams::dsss(31, 1023, 7);
        Dcf::new(n, p, 1)
    }

    const RULES: IfsRules =
        IfsRules::Dsss { preamble: Preamble::Long, eifs: EifsRule::Estimated, defer: CollisionDefer::Eifs };

    /// An 802.11n collision of two HT frames (MCS 7 and MCS 3, ending at 300 and 500 us): the
    /// bystanders defer EIFS (SIFS + the ACK estimated from the slower frame, MCS 3: 32 us)
    /// or, under `collision_ifs = "aifs"`, AIFS only; the colliders wait their ACKTimeout (45
    /// us at 5 GHz) after their own frame, then AIFS, and under EIFS never before the others.
    #[test]
    fn an_ht_collision_defers_eifs_or_aifs_as_the_cell_says() {
        use crate::mac::dcf::BackoffCountdown;
        use crate::phy::ht::HtMcs;
        let p = DcfParams {
            slot: Nanos::from_us(9),
            difs: Nanos::from_us(34),
            pifs: Nanos::from_us(25),
            ack_timeout: Nanos::from_us(45),
            cw_min: 15,
            cw_max: 1023,
            retry_limit: 7,
            countdown: BackoffCountdown::SlotEnd,
            cw_at_limit: crate::mac::dcf::CwAtRetryLimit::Double,
        };
        let te = Nanos::from_us(500);
        let ht = |mcs: u8| TxRate::Ht(HtMcs::new(mcs).unwrap());
        let air = [AirTx { node: 1, end: Nanos::from_us(300), rate: ht(7) }, AirTx { node: 2, end: te, rate: ht(3) }];
        let sifs = Nanos::from_us(16);
        let eifs_extra = sifs + ht::estimated_ack_time(HtMcs::new(3).unwrap());
        assert_eq!(eifs_extra, Nanos::from_us(16 + 32));
        for (collision, bystander) in [(CollisionIfs::Eifs, te + eifs_extra), (CollisionIfs::Aifs, te)] {
            let mut d = Dcf::new(4, p, 1);
            IfsRules::Ht { sifs, collision }.after_busy(&mut d, &air, Outcome::Collision, None, 0..0, te);
            let aifs = p.difs;
            assert_eq!(d.ifs_end(0), bystander + aifs, "{collision:?}: bystander");
            assert_eq!(d.ifs_end(3), bystander + aifs, "{collision:?}: bystander");
            // The shorter collider: its ACKTimeout ends before the medium does.
            assert_eq!(d.ifs_end(1), bystander.max(te) + aifs, "{collision:?}: shorter collider");
            assert_eq!(d.ifs_end(2), (te + p.ack_timeout).max(bystander) + aifs, "{collision:?}: longer collider");
        }
    }

    #[test]
    fn after_a_decoded_exchange_everyone_waits_difs() {
        let mut d = dcf(3);
        let te = Nanos::from_us(1000);
        let air = [AirTx { node: 1, end: Nanos::from_us(800), rate: TxRate::Dsss(DsssRate::R11) }];
        RULES.after_busy(&mut d, &air, Outcome::Success, None, 0..1, te);
        assert!((0..3).all(|n| d.ifs_end(n) == te + dsss::DIFS));
    }

    #[test]
    fn a_lost_frame_gives_its_receiver_eifs_and_its_sender_ack_timeout() {
        let mut d = dcf(3);
        let end = Nanos::from_us(800);
        let air = [AirTx { node: 2, end, rate: TxRate::Dsss(DsssRate::R11) }];
        RULES.after_busy(&mut d, &air, Outcome::DataLost, None, 0..1, end);
        // EIFS = SIFS + the estimated ACK time of an 11 Mb/s frame + DIFS.
        let eifs = dsss::SIFS + dsss::estimated_ack_time(Preamble::Long, DsssRate::R11) + dsss::DIFS;
        assert_eq!(d.ifs_end(0), end + eifs);
        assert_eq!(d.ifs_end(2), end + dsss::ACK_TIMEOUT + dsss::DIFS);
        assert_eq!(d.ifs_end(1), end + dsss::DIFS, "a bystander decoded it");
    }

    #[test]
    fn colliders_wait_for_their_ack_timeout_and_at_least_eifs() {
        let mut d = dcf(3);
        let short = AirTx { node: 1, end: Nanos::from_us(300), rate: TxRate::Dsss(DsssRate::R11) };
        let long = AirTx { node: 2, end: Nanos::from_us(1300), rate: TxRate::Dsss(DsssRate::R2) };
        let te = long.end;
        RULES.after_busy(&mut d, &[short, long], Outcome::Collision, None, 0..0, te);
        let eifs = dsss::SIFS + dsss::estimated_ack_time(Preamble::Long, DsssRate::R2) + dsss::DIFS;
        assert_eq!(d.ifs_end(0), te + eifs, "EIFS from the frame that ended last");
        assert_eq!(d.ifs_end(1), te + eifs, "the short collider's ACKTimeout is over, EIFS holds it");
        assert_eq!(d.ifs_end(2), (te + dsss::ACK_TIMEOUT + dsss::DIFS).max(te + eifs));
        let ns3 =
            IfsRules::Dsss { preamble: Preamble::Long, eifs: EifsRule::Estimated, defer: CollisionDefer::AckTimeout };
        let mut d = dcf(3);
        ns3.after_busy(&mut d, &[short, long], Outcome::Collision, None, 0..0, te);
        assert_eq!(d.ifs_end(1), te + dsss::DIFS, "ns-3: ACKTimeout after its own frame, then DIFS");
    }

    #[test]
    fn the_legacy_eifs_is_the_1999_constant() {
        let r = IfsRules::Dsss { preamble: Preamble::Short, eifs: EifsRule::Legacy, defer: CollisionDefer::Eifs };
        assert_eq!(r.eifs_extra(TxRate::Dsss(DsssRate::R11)) + dsss::DIFS, Nanos::from_us(364));
    }
}
