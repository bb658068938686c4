//! The ns-3 anchor tables under bench/ns3 (`ofdma_dl.csv`, `ofdma_ul.csv`, `su_ul.csv`, written
//! by bench/ns3/run_ofdma.sh): one row per station, `n,load,rate_mbps,sta,goodput_mbps,
//! mean_delay_ms,ppdu_end_delay_ms`, read into one case per station count and load.

/// One case of an ns-3 table: its stations' goodputs and mean delays.
pub struct Case {
    pub n: u32,
    pub load: String,
    /// Each station's offered load.
    pub rate_mbps: f64,
    pub goodput: Vec<f64>,
    /// ns-3's mean one-way delay to the end of the PPDU that carried each packet (airsched
    /// delivers an A-MPDU's MPDUs at the PPDU's end; ns-3 passes each up as it ends, which
    /// its own mean delay, the CSV's `mean_delay_ms`, shows).
    pub delay_ms: Vec<f64>,
    /// The collision probability per attempt, where a contention summary gives it (else 0).
    pub p_collision: f64,
}

/// The cases of `csv`, in the table's order.
pub fn cases(csv: &str) -> Vec<Case> {
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("n,load,rate_mbps,sta,goodput_mbps,mean_delay_ms,ppdu_end_delay_ms"));
    let mut out: Vec<Case> = Vec::new();
    for l in lines {
        let f: Vec<&str> = l.split(',').collect();
        let (n, load, rate) = (f[0].parse().unwrap(), f[1].to_string(), f[2].parse().unwrap());
        if out.last().is_none_or(|c| c.n != n || c.load != load) {
            out.push(Case { n, load, rate_mbps: rate, goodput: Vec::new(), delay_ms: Vec::new(), p_collision: 0.0 });
        }
        let c = out.last_mut().unwrap();
        c.goodput.push(f[4].parse().unwrap());
        c.delay_ms.push(f[6].parse().unwrap());
    }
    out
}

/// ns-3 3.44's stations in airsched's keys: each forms its A-MPDU when it wins the medium
/// (`HtFrameExchangeManager`) from a 500-frame queue (`WifiMacQueue`).
pub const NS3_STATION: &str = "driver_queue_limit = 500\naggregation = \"at-access\"\n";
/// ns-3 3.44's channel access in airsched's `[cell]` keys: EDCA's slot-boundary countdown, AIFS
/// after a collision (no preamble detected under two equal PPDUs), and CW reset when the
/// station retry counter reaches the limit (`MissedBlockAck`; `FrameRetryLimit` 7 counts
/// retries, so the 8th failure).
pub const NS3_CELL: &str =
    "backoff_countdown = \"slot-boundary\"\ncollision_ifs = \"aifs\"\ncw_at_retry_limit = \"reset\"\nretry_limit = 8\n";
/// ns-3 3.44's AP with uplink OFDMA in airsched's `[ap]` keys: the stations' NAV from the
/// Basic Trigger and the scheduler's request without a backoff, `BsrLifetime` (20 ms), the
/// stations' TB PPDUs filled SIFS after the Trigger (`ReceiveBasicTrigger`), and the
/// `AccessReqInterval` timer that expires as the AP's exchange ends asking nothing
/// (`AccessReqTimeout` before `TransmissionSucceeded`).
pub const NS3_UL_AP: &str =
    "ul_trigger_nav = true\nul_bsr_lifetime = \"20ms\"\nul_tb_fill = \"tb-start\"\nul_timer_tie = \"timer-first\"\n";
/// ns-3's anchor geometry (stations on a 1-m circle round the AP): a station far enough from the
/// one whose PPDU overlaps a Basic Trigger still decodes the Trigger.
pub const NS3_RING: &str = "ul_trigger_capture = \"ring\"\n";

/// The anchor programs' cell (bench/ns3/ofdma_cell.h) in airsched's keys: an 802.11ax AP,
/// 80 MHz, one stream, guard interval `gi`, every station HE MCS 7 with one stream, A-MPDUs up
/// to 256 MPDUs and aPPDUMaxTime, beacons on, a perfect channel, FQ-MAC, a server behind a
/// 10 Gbit/s link without delay; `n` 1472-byte UDP flows of `rate_mbps` starting 0.1 ms apart as
/// the ns-3 clients do, from each station to the server (`up`, flows `u{i}`) or back (`d{i}`).
/// `ap` and `station` are extra lines of `[ap]` and of every station.
pub fn cell(n: u32, rate_mbps: f64, gi: &str, ap: &str, station: &str, up: bool) -> String {
    let mut s = format!(
        "[run]\nduration = \"3s\"\nwarmup = \"1s\"\nseed = 1\n\
         [cell]\nstandard = \"802.11ax\"\nwidth = 80\nnss = 1\nguard_interval = \"{gi}\"\n\
         max_aggregate_mpdus = 256\nmax_aggregate_time = \"5484us\"\n\
         [wired]\nrate = \"10Gbit\"\ndelay = \"0ms\"\n[ap]\nmac_queue = \"fq-mac\"\n{ap}"
    );
    for i in 0..n {
        s += &format!("[[station]]\nname = \"s{i}\"\nmcs = 7\nnss = 1\n{station}");
    }
    for i in 0..n {
        let (name, src, dst) = if up {
            ("u", format!("s{i}"), "server".to_string())
        } else {
            ("d", "server".to_string(), format!("s{i}"))
        };
        s += &format!(
            "[[flow]]\nname = \"{name}{i}\"\nsrc = \"{src}\"\ndst = \"{dst}\"\nrate = \"{rate_mbps:.4}Mbit\"\nsize = 1472\n\
             start = \"{:.4}s\"\n",
            0.1 + i as f64 * 1e-4
        );
    }
    s
}

/// A link of the single-user saturation anchor (bench/ns3/su_saturation.cc): the first six
/// columns of `su_saturation.csv` and `amsdu.csv`, `standard,mcs,nss,width,gi_ns,window`.
pub struct Link {
    pub standard: String,
    pub mcs: u32,
    pub nss: u32,
    pub width: u32,
    pub gi_ns: u32,
    pub window: u32,
}

impl Link {
    /// The link of a CSV row's fields.
    pub fn parse(f: &[&str]) -> Link {
        Link {
            standard: f[0].to_string(),
            mcs: f[1].parse().unwrap(),
            nss: f[2].parse().unwrap(),
            width: f[3].parse().unwrap(),
            gi_ns: f[4].parse().unwrap(),
            window: f[5].parse().unwrap(),
        }
    }

    /// The ns-3 program's cell in airsched's keys: one AP and one station, beacons on (ns-3's AP
    /// sends them every 102.4 ms too), 1472-byte UDP payloads offered at 1.25 times the PHY rate
    /// `phy_mbps` (the AP's queue never empties; ns-3 offers twice the rate, which changes
    /// nothing but the number of drops), FQ-MAC so that no driver FIFO limits the aggregates,
    /// and A-MPDUs up to aPPDUMaxTime (5.484 ms) rather than Linux's 4 ms, as ns-3 has no such
    /// cap. `ap` and `station` are extra lines of `[ap]` and of the station.
    pub fn scenario(&self, phy_mbps: f64, ap: &str, station: &str) -> String {
        let (standard, gi, ltf) = match (self.standard.as_str(), self.gi_ns) {
            ("ac", 400) => ("802.11ac", "short", ""),
            ("ac", _) => ("802.11ac", "long", ""),
            ("ax", 800) => ("802.11ax", "0.8us", ""),
            ("ax", 1600) => ("802.11ax", "1.6us", ""),
            _ => ("802.11ax", "3.2us", "ltf = \"4x\"\n"),
        };
        format!(
            "[run]\nduration = \"3s\"\nwarmup = \"1s\"\nseed = 3\n\
             [cell]\nstandard = \"{standard}\"\nwidth = {w}\nnss = {n}\nguard_interval = \"{gi}\"\n{ltf}\
             max_aggregate_mpdus = {win}\nmax_aggregate_time = \"5484us\"\n\
             [wired]\nrate = \"10Gbit\"\n[ap]\nmac_queue = \"fq-mac\"\n{ap}\
             [[station]]\nname = \"a\"\nmcs = {m}\nnss = {n}\n{station}\
             [[flow]]\nname = \"down\"\nsrc = \"server\"\ndst = \"a\"\nrate = \"{r:.0}Mbit\"\nsize = 1472\n",
            w = self.width,
            n = self.nss,
            win = self.window,
            m = self.mcs,
            r = 1.25 * phy_mbps,
        )
    }
}

/// bench/ns3/ul_half_seeds.csv (`bench/ns3/run_ofdma.sh seeds`): the half-load uplinks of
/// `mode` ("su" or "ofdma") with `n` stations, one entry per ns-3 run number: every station's
/// mean delay to the end of the PPDU that carried the packet.
pub fn seed_delays(csv: &str, mode: &str, n: u32) -> Vec<Vec<f64>> {
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("mode,n,seed,sta,goodput_mbps,mean_delay_ms,ppdu_end_delay_ms"));
    let mut out: Vec<(u32, Vec<f64>)> = Vec::new();
    for l in lines {
        let f: Vec<&str> = l.split(',').collect();
        if f[0] != mode || f[1].parse::<u32>().unwrap() != n {
            continue;
        }
        let seed: u32 = f[2].parse().unwrap();
        if out.last().is_none_or(|s| s.0 != seed) {
            out.push((seed, Vec::new()));
        }
        out.last_mut().unwrap().1.push(f[6].parse().unwrap());
    }
    out.into_iter().map(|(_, d)| d).collect()
}

/// The mean of `v` and the standard error of that mean.
pub fn mean_se(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0).max(1.0);
    (m, (var / n).sqrt())
}

/// Each run's mean over its stations (one value per run, the runs of [`seed_delays`]).
pub fn run_means(runs: &[Vec<f64>]) -> Vec<f64> {
    runs.iter().map(|d| d.iter().sum::<f64>() / d.len() as f64).collect()
}

/// The bound airsched's mean over runs is held to against ns-3's, from each side's (mean,
/// standard error) over its runs: max(5 %, twice the standard error of the difference of the
/// means), relative to ns-3's mean.
pub fn bound(ours: (f64, f64), ns3: (f64, f64)) -> f64 {
    0.05f64.max(2.0 * (ours.1 * ours.1 + ns3.1 * ns3.1).sqrt() / ns3.0)
}

/// As `seed_delays`, with each run's number and its stations' goodputs: (run number,
/// goodputs, delays to PPDU end) per run of `mode` with `n` stations.
pub fn seed_runs(csv: &str, mode: &str, n: u32) -> Vec<(u32, Vec<f64>, Vec<f64>)> {
    let mut out: Vec<(u32, Vec<f64>, Vec<f64>)> = Vec::new();
    for l in csv.lines().skip(1) {
        let f: Vec<&str> = l.split(',').collect();
        if f[0] != mode || f[1].parse::<u32>().unwrap() != n {
            continue;
        }
        let seed: u32 = f[2].parse().unwrap();
        if out.last().is_none_or(|s| s.0 != seed) {
            out.push((seed, Vec::new(), Vec::new()));
        }
        let run = out.last_mut().unwrap();
        run.1.push(f[4].parse().unwrap());
        run.2.push(f[6].parse().unwrap());
    }
    out
}
