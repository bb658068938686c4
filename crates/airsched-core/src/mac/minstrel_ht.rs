//! Minstrel-HT as Linux 4.11 has it (`net/mac80211/rc80211_minstrel_ht.c`, the kernel of the
//! Høiland-Jørgensen testbed's era), driving an ath9k-class multi-rate-retry (MRR) chain: rate
//! groups of 8 MCS per stream count, the EWMA of each rate's success probability folded every
//! 50 ms (`update_interval / 2`), the throughput estimate over the average A-MPDU length,
//! `max_tp_rate[0..4]` and `max_prob_rate`, the sampling of one A-MPDU every `16 + 2 ×
//! avg_ampdu_len` TX statuses from a random sample table, and the retry counts that
//! `minstrel_calc_retransmit` fits into the 6 ms segment. A sans-I/O state machine: it is
//! handed `now` and every TX status (docs/model-rate-control.md, "Minstrel-HT").
//!
//! VHT links (802.11ac) run on VHT groups only, as the kernel does by default
//! (`minstrel_vht_only`): one group of MCS 0-9 per stream count at the link's width and guard
//! interval, the combinations the standard excludes left unsupported
//! (`minstrel_get_valid_vht_rates`), the durations from the per-stream data bits per symbol of
//! the kernel's `BW2VBPS` table. The groups are Linux 5.10's (1 to 4 streams; durations per
//! frame of an average 16-frame A-MPDU, which separates rates that the 4.11 table's single
//! 1200-byte frame rounds to the same symbol count, such as VHT MCS 8 and 9 with two streams at
//! 80 MHz); 160 MHz, which 5.10's Minstrel-HT lacks, is added with the same arithmetic. The
//! algorithm that runs on them is the 4.11 one of this file: 5.10's other changes (the
//! probability filter of 5.7, the sampling rewrite of 5.11) are not followed. An HT-only link keeps groups of 8
//! rates and an 8-wide sample table, as the kernel before VHT support (3.18) had them; with VHT
//! support compiled in, the kernel's HT groups also take 10 slots (two never supported), which
//! changes only the order of the sample table's draws.
//!
//! Fixed-point values follow the kernel: probabilities in `MINSTREL_SCALE` = 12 bits, the EWMA
//! `old + (128 − 96) · (new − old) / 128` with C's truncating division, durations in ns.
//!
//! Deviations (documented in docs/model-rate-control.md): one guard interval and one channel
//! width per cell, so the groups are the cell's (1 and 2 streams), not every SGI/HT40
//! combination the station supports; no CCK group (5 GHz and HT-only); the fallback stages'
//! counts are `count_rts` as in the kernel, but no RTS/CTS is sent; the 50 ms interval is
//! compared in nanoseconds, not jiffies; the sample table is drawn per link from its seeded
//! stream, not once per boot.

use rand::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::phy::ht::{ChannelWidth, GuardInterval, HtMcs, HtTxVector};
use crate::phy::vht::{self, VhtTxVector};
use crate::phy::TxVector;
use crate::time::Nanos;

/// Rates per HT group (MCS 0-7 of one stream count).
pub const MCS_GROUP_RATES: usize = 8;
/// Rates per VHT group (MCS 0-9 of one stream count; the kernel's `MCS_GROUP_RATES` once VHT
/// groups exist).
pub const VHT_GROUP_RATES: usize = 10;
/// The rate slots of a group's arrays: the larger of the two.
const MAX_GROUP_RATES: usize = VHT_GROUP_RATES;
/// `MAX_THR_RATES`: the ranked max-throughput rates.
pub const MAX_THR_RATES: usize = 4;
/// `MINSTREL_SCALE`: fixed-point bits of probabilities.
pub const MINSTREL_SCALE: u32 = 12;
/// `EWMA_LEVEL` / `EWMA_DIV` (4.11): the old average keeps 75 %.
pub const EWMA_LEVEL: i32 = 96;
pub const EWMA_DIV: i32 = 128;
/// Statistics are folded when a TX status arrives more than `update_interval / 2` = 50 ms after
/// the last fold (`mp->update_interval = 100`).
pub const UPDATE_INTERVAL: Nanos = Nanos::from_ms(50);
/// `mp->segment_size`: the airtime (µs) one chain stage's tries should fit in.
pub const SEGMENT_US: u32 = 6000;
/// `mp->cw_min`, `mp->cw_max` and the `t_slot = 9 /* FIXME */` of `minstrel_calc_retransmit`.
pub const CW_MIN: u32 = 15;
pub const CW_MAX: u32 = 1023;
pub const T_SLOT_US: u32 = 9;
/// `AVG_PKT_SIZE`: the reference frame of the group duration tables.
pub const AVG_PKT_BYTES: u32 = 1200;
/// `SAMPLE_COLUMNS` of the sample table.
pub const SAMPLE_COLUMNS: usize = 10;
/// ath9k: `hw->max_rates = 4` (chain entries), `hw->max_rate_tries = 10` (`mp->max_retry`).
pub const ATH9K_MAX_RATES: usize = 4;
pub const ATH9K_MAX_RATE_TRIES: u32 = 10;

/// `MINSTREL_FRAC(val, div)`.
pub const fn frac(val: i32, div: i32) -> i32 {
    (val << MINSTREL_SCALE) / div
}

/// `MINSTREL_TRUNC(val)`.
pub const fn trunc(val: i32) -> i32 {
    val >> MINSTREL_SCALE
}

/// `minstrel_ewma` of 4.11: `old + (EWMA_DIV − weight) · (new − old) / EWMA_DIV`, truncating.
pub const fn ewma(old: i32, new: i32, weight: i32) -> i32 {
    old + (EWMA_DIV - weight) * (new - old) / EWMA_DIV
}

/// `ieee80211_frame_duration(band, len, 60, erp = 1, …)` in µs: an OFDM frame of `len` bytes
/// at 6 Mb/s with SIFS, as `minstrel_ht_update_caps` sizes the per-A-MPDU overhead.
pub const fn ofdm6_frame_duration_us(len: u32) -> u32 {
    16 + 16 + 4 + 4 * (((16 + 8 * (len + 4) + 6) * 10).div_ceil(4 * 60))
}

/// `MCS_DURATION(streams, sgi, bps)`: ns to send `AVG_PKT_SIZE` at `bps` data bits per symbol
/// per stream (the group tables of the kernel).
pub const fn mcs_duration_ns(streams: u32, sgi: bool, bps: u32) -> u32 {
    let syms = (AVG_PKT_BYTES * 8).div_ceil(streams * bps);
    if sgi {
        (syms * 18000 + 4000) / 5
    } else {
        syms * 4000
    }
}

/// One rate group: the MCS of one stream count at the link's width and guard interval (8 HT
/// MCS, or 10 VHT MCS).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Group {
    pub streams: u8,
    /// Rates in the group: [`MCS_GROUP_RATES`] (HT) or [`VHT_GROUP_RATES`].
    pub rates: u8,
    /// Bit i: the group's rate i is supported (HT MCS `(streams − 1) · 8 + i`, VHT MCS i).
    pub supported: u16,
    /// `duration[i]`, ns.
    pub duration: [u32; MAX_GROUP_RATES],
}

impl Group {
    /// The groups of a link whose top MCS is `top` (MCS 0 to `top` supported).
    pub fn for_link(top: HtMcs, width: ChannelWidth, gi: GuardInterval) -> Vec<Group> {
        let sgi = gi == GuardInterval::Short;
        (1..=top.n_ss())
            .map(|s| {
                let mut supported = 0u16;
                let mut duration = [0; MAX_GROUP_RATES];
                for (i, d) in duration.iter_mut().enumerate().take(MCS_GROUP_RATES) {
                    let mcs = (s - 1) as u8 * 8 + i as u8;
                    if mcs <= top.index() {
                        supported |= 1 << i;
                    }
                    let bps = HtMcs::new(i as u8).expect("MCS 0-7").n_dbps(width);
                    *d = mcs_duration_ns(s, sgi, bps);
                }
                Group { streams: s as u8, rates: MCS_GROUP_RATES as u8, supported, duration }
            })
            .collect()
    }
}

/// `AVG_AMPDU_SIZE` of the VHT groups' durations (Linux 5.10).
pub const AVG_AMPDU_SIZE: u32 = 16;

/// Per-stream data bits per symbol of VHT MCS `mcs` at `width` (the kernel's `BW2VBPS`
/// table: the standard's N_DBPS of one stream, rounded down, defined for MCS 9 at 20 MHz too).
fn vht_bps(mcs: u8, width: vht::Width) -> u32 {
    let (bpscs, num, den) = vht::modulation_and_rate(mcs);
    vht::n_sd(width) * bpscs * num / den
}

/// `MCS_DURATION` of the VHT groups as Linux 5.10 computes it: ns per 1200-byte frame of an
/// average 16-frame A-MPDU, `MCS_SYMBOL_TIME(sgi, ceil(1200 · 16 · 8 / (streams · bps))) / 16`.
pub const fn vht_duration_ns(streams: u32, sgi: bool, bps: u32) -> u32 {
    let syms = (AVG_PKT_BYTES * AVG_AMPDU_SIZE * 8).div_ceil(streams * bps);
    let t = if sgi { (syms * 18000 + 4000) / 5 } else { syms * 4000 };
    t / AVG_AMPDU_SIZE
}

/// The VHT groups of a link whose top rate is `top`: one per stream count up to `top.nss`, MCS 0
/// to `top.mcs` in each, without the combinations the standard excludes
/// (`minstrel_get_valid_vht_rates`), at `top`'s width and guard interval. The durations are
/// Linux 5.10's for VHT groups ([`vht_duration_ns`] with the kernel's per-stream data bits per
/// symbol, `BW2VBPS`: 26 to 346 at 20 MHz, 54 to 720 at 40, 117 to 1560 at 80; 160 MHz, which
/// 5.10's Minstrel-HT lacks, 234 to 3120 as its airtime table has them), stored with the
/// group's shift as the kernel stores them.
pub fn vht_groups(top: VhtTxVector) -> Vec<Group> {
    let sgi = top.gi == GuardInterval::Short;
    (1..=top.nss)
        .map(|s| {
            let mut supported = 0u16;
            let mut duration = [0; MAX_GROUP_RATES];
            for (i, d) in duration.iter_mut().enumerate() {
                let mcs = i as u8;
                if mcs <= top.mcs && vht::combination_allowed(mcs, top.width, s) {
                    supported |= 1 << i;
                }
                *d = vht_duration_ns(s as u32, sgi, vht_bps(mcs, top.width));
            }
            // The kernel keeps durations in 16 bits, shifted right by the group's shift (from
            // its MCS 0 duration), and shifts them back when it uses them.
            let shift = 16u32.saturating_sub(vht_duration_ns(s as u32, sgi, vht_bps(0, top.width)).leading_zeros());
            for d in duration.iter_mut() {
                *d = (*d >> shift) << shift;
            }
            Group { streams: s, rates: VHT_GROUP_RATES as u8, supported, duration }
        })
        .collect()
}

/// The rate groups Minstrel-HT runs on a link whose top rate is `top`: HT groups for an HT link,
/// VHT groups only for a VHT one (the kernel's default `minstrel_vht_only`).
pub fn groups_for(top: TxVector) -> Vec<Group> {
    match top {
        TxVector::Ht(t) => Group::for_link(t.mcs, t.width, t.gi),
        TxVector::Vht(t) => vht_groups(t),
        TxVector::He(_) | TxVector::NonHt(_) => {
            unreachable!("HE and non-HT links take fixed rates (checked when the scenario is read)")
        }
    }
}

/// The transmit vector of rate index `index` on the link whose current vector is `link` (its
/// format, width and guard interval are the link's): HT MCS `index` (`group · 8 + i`), or VHT
/// MCS `i` with `group + 1` streams (`group · 10 + i`).
#[inline]
pub fn vector_at(link: TxVector, index: u8) -> TxVector {
    match link {
        TxVector::Ht(h) => {
            TxVector::Ht(HtTxVector::new(HtMcs::new(index).expect("HT groups hold MCS 0-15"), h.width, h.gi))
        }
        TxVector::Vht(v) => TxVector::Vht(VhtTxVector {
            mcs: index % VHT_GROUP_RATES as u8,
            nss: index / VHT_GROUP_RATES as u8 + 1,
            ..v
        }),
        TxVector::He(_) | TxVector::NonHt(_) => unreachable!("HE and non-HT links take fixed rates"),
    }
}

/// One entry of the multi-rate retry chain: a rate index and its tries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Series {
    pub rate: u8,
    pub count: u8,
}

/// The rate chain of one A-MPDU (`info->control.rates`): up to four series; `probe` marks a
/// sampling frame (`IEEE80211_TX_CTL_RATE_CTRL_PROBE`), which ath9k does not aggregate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct RateChain {
    pub s: [Series; ATH9K_MAX_RATES],
    pub len: u8,
    pub probe: bool,
}

impl RateChain {
    /// A chain of one rate tried `count` times.
    #[cfg(test)]
    pub fn single(rate: u8, count: u8) -> RateChain {
        let mut c = RateChain::default();
        c.s[0] = Series { rate, count };
        c.len = 1;
        c
    }

    pub fn series(&self) -> &[Series] {
        &self.s[..self.len as usize]
    }

    /// Tries of the whole chain before the hardware gives up.
    pub fn total_tries(&self) -> u32 {
        self.series().iter().map(|s| s.count as u32).sum()
    }

    /// The series of 0-based try `k`, or None past the chain's end.
    pub fn stage_of_try(&self, k: u32) -> Option<usize> {
        let mut left = k;
        for (i, s) in self.series().iter().enumerate() {
            if left < s.count as u32 {
                return Some(i);
            }
            left -= s.count as u32;
        }
        None
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct Stats {
    attempts: u32,
    success: u32,
    att_hist: u64,
    prob_ewma: i32,
    sample_skipped: u32,
    retry_count: u8,
    retry_count_rtscts: u8,
    retry_updated: bool,
}

/// Per-group selection state (`struct minstrel_mcs_group_data`).
#[derive(Clone, Copy, Debug, Default)]
struct GroupData {
    index: usize,
    column: usize,
    max_group_tp_rate: [u8; MAX_THR_RATES],
    max_group_prob_rate: u8,
}

/// The Minstrel-HT state of one link (`struct minstrel_ht_sta`).
#[derive(Clone, Debug)]
pub struct MinstrelHt {
    groups: Vec<Group>,
    gd: Vec<GroupData>,
    stats: Vec<[Stats; MAX_GROUP_RATES]>,
    /// Rates per group: [`MCS_GROUP_RATES`] (HT) or [`VHT_GROUP_RATES`]; a rate's index is
    /// `group · rates + i`.
    rates: usize,
    max_tp_rate: [u8; MAX_THR_RATES],
    max_prob_rate: u8,
    avg_ampdu_len: i32,
    ampdu_len: u32,
    ampdu_packets: u32,
    sample_wait: i32,
    sample_tries: i32,
    sample_count: i32,
    sample_slow: i32,
    sample_group: usize,
    sample_table: [[u8; MAX_GROUP_RATES]; SAMPLE_COLUMNS],
    last_stats_update: Nanos,
    overhead_us: u32,
    overhead_rtscts_us: u32,
    /// The station's rate table (`rate_control_set_rates`).
    table: RateChain,
    /// Counters for tests and reports: chains handed out and how many were probes.
    pub frames: u64,
    pub probes: u64,
}

impl MinstrelHt {
    /// `minstrel_ht_update_caps` at association (`now`), with the MRR defaults (sample count 16,
    /// no wait, 4 tries) and a sample table drawn from `rng`.
    pub fn new(groups: Vec<Group>, now: Nanos, rng: &mut Xoshiro256PlusPlus) -> MinstrelHt {
        assert!(!groups.is_empty() && groups[0].supported & 1 != 0, "MCS 0 is always supported");
        let ack = ofdm6_frame_duration_us(10);
        let overhead_us = ofdm6_frame_duration_us(0) + ack;
        // `init_sample_table`: column by column, each rate at a random offset, probing on.
        let rates = groups[0].rates as usize;
        assert!(groups.iter().all(|g| g.rates as usize == rates), "one kind of group per link");
        let mut sample_table = [[0xffu8; MAX_GROUP_RATES]; SAMPLE_COLUMNS];
        for col in sample_table.iter_mut() {
            for i in 0..rates {
                let rnd: u8 = rng.random();
                let mut new_idx = (i + rnd as usize) % rates;
                while col[new_idx] != 0xff {
                    new_idx = (new_idx + 1) % rates;
                }
                col[new_idx] = i as u8;
            }
        }
        let n = groups.len();
        let mut m = MinstrelHt {
            gd: vec![GroupData::default(); n],
            stats: vec![[Stats::default(); MAX_GROUP_RATES]; n],
            rates,
            groups,
            max_tp_rate: [0; MAX_THR_RATES],
            max_prob_rate: 0,
            avg_ampdu_len: frac(1, 1),
            ampdu_len: 0,
            ampdu_packets: 0,
            sample_wait: 0,
            sample_tries: 4,
            sample_count: 16,
            sample_slow: 0,
            sample_group: 0,
            sample_table,
            last_stats_update: now,
            overhead_us,
            overhead_rtscts_us: overhead_us + 2 * ack,
            table: RateChain::default(),
            frames: 0,
            probes: 0,
        };
        m.update_stats(now);
        m.update_rates();
        m
    }

    fn st(&self, index: u8) -> &Stats {
        &self.stats[index as usize / self.rates][index as usize % self.rates]
    }

    fn st_mut(&mut self, index: u8) -> &mut Stats {
        &mut self.stats[index as usize / self.rates][index as usize % self.rates]
    }

    fn duration(&self, index: u8) -> u32 {
        self.groups[index as usize / self.rates].duration[index as usize % self.rates]
    }

    fn streams(&self, index: u8) -> u8 {
        self.groups[index as usize / self.rates].streams
    }

    /// The rate table the hardware currently uses.
    #[cfg(test)]
    pub fn rate_table(&self) -> RateChain {
        self.table
    }

    #[cfg(test)]
    pub fn max_tp_rate(&self) -> [u8; MAX_THR_RATES] {
        self.max_tp_rate
    }

    #[cfg(test)]
    pub fn max_prob_rate(&self) -> u8 {
        self.max_prob_rate
    }

    /// A rate's success probability, `MINSTREL_SCALE` fixed point.
    #[cfg(test)]
    pub fn prob_ewma(&self, index: u8) -> i32 {
        self.st(index).prob_ewma
    }

    /// `mi->avg_ampdu_len`, fixed point.
    #[cfg(test)]
    pub fn avg_ampdu_len(&self) -> i32 {
        self.avg_ampdu_len
    }

    /// `minstrel_ht_get_tp_avg`: the expected throughput of a rate at probability `prob`.
    pub fn tp_avg(&self, index: u8, prob: i32) -> i32 {
        if prob < frac(10, 100) {
            return 0;
        }
        let nsecs = (1000 * self.overhead_us as i64 / trunc(self.avg_ampdu_len).max(1) as i64
            + self.duration(index) as i64)
            .max(1);
        let p = prob.min(frac(90, 100)) as i64;
        ((100_000 * ((p * 1000) / nsecs)) >> MINSTREL_SCALE) as i32
    }

    /// The chain for the next A-MPDU (`minstrel_ht_get_rate`, then the rate table merged in as
    /// `rate_control_fill_sta_table` does): a sample rate tried once ahead of the table, or the
    /// table itself.
    pub fn get_rates(&mut self) -> RateChain {
        self.frames += 1;
        match self.get_sample_rate() {
            None => self.table,
            Some(sample) => {
                self.probes += 1;
                let mut c = RateChain { probe: true, ..RateChain::default() };
                c.s[0] = Series { rate: sample, count: 1 };
                let mut len = 1;
                for s in self.table.series() {
                    if len == ATH9K_MAX_RATES {
                        break;
                    }
                    c.s[len] = *s;
                    len += 1;
                }
                c.len = len as u8;
                c
            }
        }
    }

    /// `minstrel_get_sample_rate` (4.11).
    fn get_sample_rate(&mut self) -> Option<u8> {
        if self.sample_wait > 0 {
            self.sample_wait -= 1;
            return None;
        }
        if self.sample_tries == 0 {
            return None;
        }
        let g = self.sample_group;
        let gd = self.gd[g];
        let i = self.sample_table[gd.column][gd.index];
        let sample_idx = (g * self.rates) as u8 + i;
        self.next_sample_idx();
        if self.groups[g].supported & (1 << i) == 0 {
            // The kernel's table holds only supported rates' stats; an unsupported one is
            // never chosen (its `mrs` would be empty): treat as a refused sample.
            return None;
        }
        // Sampling adds overhead (no aggregation): not for the rates in use.
        if sample_idx == self.max_tp_rate[0] || sample_idx == self.max_tp_rate[1] || sample_idx == self.max_prob_rate {
            return None;
        }
        // No sampling above 95 %, to save airtime.
        let mrs = *self.st(sample_idx);
        if mrs.prob_ewma > frac(95, 100) {
            return None;
        }
        // Lower rates are sampled only occasionally if the link works well.
        let sample_dur = self.duration(sample_idx);
        let cur_max_tp_streams = self.streams(self.max_tp_rate[0]);
        if sample_dur >= self.duration(self.max_tp_rate[1])
            && (cur_max_tp_streams - 1 < self.groups[g].streams || sample_dur >= self.duration(self.max_prob_rate))
        {
            if mrs.sample_skipped < 20 {
                return None;
            }
            let slow = self.sample_slow;
            self.sample_slow += 1;
            if slow > 2 {
                return None;
            }
        }
        self.sample_tries -= 1;
        Some(sample_idx)
    }

    /// `minstrel_next_sample_idx`: the next supported group, its next table position.
    fn next_sample_idx(&mut self) {
        loop {
            self.sample_group = (self.sample_group + 1) % self.groups.len();
            let g = self.sample_group;
            if self.groups[g].supported == 0 {
                continue;
            }
            let gd = &mut self.gd[g];
            gd.index += 1;
            if gd.index >= self.rates {
                gd.index = 0;
                gd.column += 1;
                if gd.column >= SAMPLE_COLUMNS {
                    gd.column = 0;
                }
            }
            break;
        }
    }

    /// `minstrel_ht_tx_status` for one A-MPDU: `chain` as sent, `final_stage` the series the
    /// last try used and `final_tries` its tries there (ath9k reports earlier series with their
    /// full counts), `ampdu_len` MPDUs of which `ampdu_ack_len` were acknowledged.
    pub fn tx_status(
        &mut self,
        now: Nanos,
        chain: &RateChain,
        final_stage: usize,
        final_tries: u8,
        ampdu_len: u32,
        ampdu_ack_len: u32,
    ) {
        self.ampdu_packets += 1;
        self.ampdu_len += ampdu_len;
        if self.sample_wait == 0 && self.sample_tries == 0 && self.sample_count > 0 {
            self.sample_wait = 16 + 2 * trunc(self.avg_ampdu_len);
            self.sample_tries = 1;
            self.sample_count -= 1;
        }
        for (i, s) in chain.series().iter().enumerate().take(final_stage + 1) {
            let count = if i == final_stage { final_tries } else { s.count };
            let st = self.st_mut(s.rate);
            if i == final_stage {
                st.success += ampdu_ack_len;
            }
            st.attempts += count as u32 * ampdu_len;
        }
        let mut update = false;
        // Sudden death of spatial multiplexing: fall back to fewer streams.
        for k in 0..2 {
            let r = *self.st(self.max_tp_rate[k]);
            if r.attempts > 30 && frac(r.success as i32, r.attempts as i32) < frac(20, 100) {
                self.downgrade_rate(k);
                update = true;
            }
        }
        if now > self.last_stats_update + UPDATE_INTERVAL {
            update = true;
            self.update_stats(now);
        }
        if update {
            self.update_rates();
        }
    }

    /// `minstrel_downgrade_rate`: the best rate (primary) or second best of the next group
    /// down with no more streams.
    fn downgrade_rate(&mut self, k: usize) {
        let orig = self.max_tp_rate[k] as usize / self.rates;
        let mut g = orig;
        while g > 0 {
            g -= 1;
            if self.groups[g].supported == 0 || self.groups[g].streams > self.groups[orig].streams {
                continue;
            }
            self.max_tp_rate[k] = self.gd[g].max_group_tp_rate[k];
            break;
        }
    }

    /// `minstrel_calc_rate_stats` of one rate.
    fn calc_rate_stats(st: &mut Stats) {
        if st.attempts > 0 {
            st.sample_skipped = 0;
            let cur_prob = frac(st.success as i32, st.attempts as i32);
            st.prob_ewma = if st.att_hist == 0 { cur_prob } else { ewma(st.prob_ewma, cur_prob, EWMA_LEVEL) };
            st.att_hist += st.attempts as u64;
        } else {
            st.sample_skipped += 1;
        }
        st.success = 0;
        st.attempts = 0;
    }

    /// `minstrel_ht_sort_best_tp_rates`: insert `index` into the ranked list.
    fn sort_best_tp_rates(&self, index: u8, list: &mut [u8; MAX_THR_RATES]) {
        let cur_prob = self.st(index).prob_ewma;
        let cur_tp = self.tp_avg(index, cur_prob);
        let mut j = MAX_THR_RATES;
        while j > 0 {
            let t = list[j - 1];
            let tmp_prob = self.st(t).prob_ewma;
            let tmp_tp = self.tp_avg(t, tmp_prob);
            if cur_tp < tmp_tp || (cur_tp == tmp_tp && cur_prob <= tmp_prob) {
                break;
            }
            j -= 1;
        }
        if j < MAX_THR_RATES - 1 {
            list.copy_within(j..MAX_THR_RATES - 1, j + 1);
        }
        if j < MAX_THR_RATES {
            list[j] = index;
        }
    }

    /// `minstrel_ht_set_best_prob_rate`: above 75 % the best throughput wins, below it the best
    /// probability; per group and overall.
    fn set_best_prob_rate(&mut self, index: u8) {
        let g = index as usize / self.rates;
        let cur_prob = self.st(index).prob_ewma;
        let tmp_prob = self.st(self.max_prob_rate).prob_ewma;
        let tmp_tp = self.tp_avg(self.max_prob_rate, tmp_prob);
        let gpr = self.gd[g].max_group_prob_rate;
        let gpr_prob = self.st(gpr).prob_ewma;
        if cur_prob > frac(75, 100) {
            let cur_tp = self.tp_avg(index, cur_prob);
            if cur_tp > tmp_tp {
                self.max_prob_rate = index;
            }
            if cur_tp > self.tp_avg(gpr, gpr_prob) {
                self.gd[g].max_group_prob_rate = index;
            }
        } else {
            if cur_prob > tmp_prob {
                self.max_prob_rate = index;
            }
            if cur_prob > gpr_prob {
                self.gd[g].max_group_prob_rate = index;
            }
        }
    }

    /// `minstrel_ht_update_stats` (4.11).
    fn update_stats(&mut self, now: Nanos) {
        if self.ampdu_packets > 0 {
            self.avg_ampdu_len =
                ewma(self.avg_ampdu_len, frac(self.ampdu_len as i32, self.ampdu_packets as i32), EWMA_LEVEL);
            self.ampdu_len = 0;
            self.ampdu_packets = 0;
        }
        self.sample_slow = 0;
        self.sample_count = 0;
        let mut tmp_mcs_tp_rate = [0u8; MAX_THR_RATES];
        for g in 0..self.groups.len() {
            if self.groups[g].supported == 0 {
                continue;
            }
            self.sample_count += 1;
            // The kernel's quirk: the group list starts filled with the group number.
            let mut tmp_group_tp_rate = [g as u8; MAX_THR_RATES];
            for i in 0..self.rates {
                if self.groups[g].supported & (1 << i) == 0 {
                    continue;
                }
                let index = (g * self.rates + i) as u8;
                let st = &mut self.stats[g][i];
                st.retry_updated = false;
                Self::calc_rate_stats(st);
                let prob = st.prob_ewma;
                if self.tp_avg(index, prob) == 0 {
                    continue;
                }
                self.sort_best_tp_rates(index, &mut tmp_mcs_tp_rate);
                self.sort_best_tp_rates(index, &mut tmp_group_tp_rate);
                self.set_best_prob_rate(index);
            }
            self.gd[g].max_group_tp_rate = tmp_group_tp_rate;
        }
        self.max_tp_rate = tmp_mcs_tp_rate;
        self.prob_rate_reduce_streams();
        // Try to sample every group 8 times per interval.
        self.sample_count *= 8;
        self.last_stats_update = now;
    }

    /// `minstrel_ht_prob_rate_reduce_streams`: prefer a max-probability rate with fewer streams
    /// than `max_tp_rate[0]`.
    fn prob_rate_reduce_streams(&mut self) {
        let max_streams = self.streams(self.max_tp_rate[0]);
        let mut tmp_tp = 0;
        for g in 0..self.groups.len() {
            if self.groups[g].supported == 0 {
                continue;
            }
            let r = self.gd[g].max_group_prob_rate;
            let tp = self.tp_avg(r, self.st(r).prob_ewma);
            if tmp_tp < tp && self.groups[g].streams < max_streams {
                self.max_prob_rate = r;
                tmp_tp = tp;
            }
        }
    }

    /// `minstrel_calc_retransmit`: how many tries of `index` fit into the 6 ms segment at the
    /// average A-MPDU length, with and without RTS/CTS.
    fn calc_retransmit(&mut self, index: u8) {
        let ampdu_len = trunc(self.avg_ampdu_len) as u32;
        let tx_time_data = self.duration(index) * ampdu_len / 1000;
        let (overhead, overhead_rtscts) = (self.overhead_us, self.overhead_rtscts_us);
        let st = self.st_mut(index);
        if st.prob_ewma < frac(1, 10) {
            st.retry_count = 1;
            st.retry_count_rtscts = 1;
            return;
        }
        st.retry_count = 2;
        st.retry_count_rtscts = 2;
        st.retry_updated = true;
        let mut cw = CW_MIN;
        // Contention of the first two tries.
        let mut ctime = (T_SLOT_US * cw) >> 1;
        cw = ((cw << 1) | 1).min(CW_MAX);
        ctime += (T_SLOT_US * cw) >> 1;
        cw = ((cw << 1) | 1).min(CW_MAX);
        let mut tx_time = ctime + 2 * (overhead + tx_time_data);
        let mut tx_time_rtscts = ctime + 2 * (overhead_rtscts + tx_time_data);
        loop {
            let ctime = (T_SLOT_US * cw) >> 1;
            cw = ((cw << 1) | 1).min(CW_MAX);
            tx_time += ctime + overhead + tx_time_data;
            tx_time_rtscts += ctime + overhead_rtscts + tx_time_data;
            if tx_time_rtscts < SEGMENT_US {
                st.retry_count_rtscts += 1;
            }
            if tx_time >= SEGMENT_US {
                break;
            }
            st.retry_count += 1;
            if st.retry_count as u32 >= ATH9K_MAX_RATE_TRIES {
                break;
            }
        }
    }

    /// `minstrel_ht_set_rate`: the series for `index` at chain position `offset`.
    fn set_rate(&mut self, offset: usize, index: u8) -> Series {
        if !self.st(index).retry_updated {
            self.calc_retransmit(index);
        }
        let st = *self.st(index);
        let count = if st.prob_ewma < frac(20, 100) || st.retry_count == 0 {
            2
        } else if offset > 0 {
            // Fallback stages use the RTS/CTS count (the kernel also sets RTS/CTS; not modelled).
            st.retry_count_rtscts
        } else {
            st.retry_count
        };
        Series { rate: index, count }
    }

    /// `minstrel_ht_update_rates` for hardware with 4 rates: `max_tp_rate[0]`, `max_tp_rate[1]`,
    /// `max_prob_rate`.
    fn update_rates(&mut self) {
        let mut c = RateChain::default();
        c.s[0] = self.set_rate(0, self.max_tp_rate[0]);
        c.s[1] = self.set_rate(1, self.max_tp_rate[1]);
        c.s[2] = self.set_rate(2, self.max_prob_rate);
        c.len = 3;
        self.table = c;
    }
}

#[cfg(test)]
mod tests;
