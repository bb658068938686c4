//! The Wireless Channel Monitor (WChMon) of Garroppo et al. (section 4), after Wischhof and
//! Lockwood: the AP estimates the goodput it can reach towards each station from the SNR of the
//! frames it receives from that station.
//!
//! * Each frame the AP decodes from a station (uplink data, and the ACKs of its downlink frames)
//!   yields an SNR report: the frame's SNR at the AP plus the card's measurement noise (a normal
//!   draw of `noise` dB; the paper: the per-frame value "manifests a high degree of
//!   variability"). The monitor assumes a symmetric channel, as the paper's does.
//! * The report is mapped to a goodput through the calibration table (the row nearest the SNR,
//!   as the paper reads "the line corresponding to SNR(t)"), then smoothed:
//!   R(t) = (1 - alpha) R(t-1) + alpha R[SNR(t)], alpha = 1/4 in the paper.
//! * The scheduler reads the relative goodput R / R_MAX, R_MAX the table's largest goodput.
//! * Before any report, the estimate is the table's value at the station's uplink SNR at
//!   association (t = 0), as one report without noise. Frames that are never decoded produce no
//!   report: a station out of range keeps its last estimate (the paper's "WChMon is not designed
//!   to handle this case", section 6.3).
//!
//! The calibration table is produced by [`calibrate`] with the paper's procedure (section 4.2):
//! a saturated UDP flow over a link at each SNR, goodput n L / tau over blocks of n packets,
//! averaged over the blocks of a run.

use std::fmt::Write as _;

use rand_xoshiro::Xoshiro256PlusPlus;

#[cfg(test)]
use crate::engine::{stream, StreamKind};
use crate::qdisc::REL_ONE;
use crate::radio::normal;

/// The AP's Wireless Channel Monitor settings (`[monitor]`).
#[derive(Clone, Debug, PartialEq)]
pub struct MonitorSpec {
    /// The calibration table and the file it came from; None: the built-in table.
    pub calibration: Option<(String, CalibrationTable)>,
    /// Weight of a new sample in the estimate filter (Garroppo et al.: 1/4).
    pub alpha: f64,
    /// Standard deviation of the per-frame SNR report, centi-dB.
    pub noise_cdb: u32,
}

impl Default for MonitorSpec {
    fn default() -> Self {
        MonitorSpec { calibration: None, alpha: 0.25, noise_cdb: 200 }
    }
}

/// SNR to goodput, as measured by [`calibrate`] and stored by `airsched calibrate`.
#[derive(Clone, Debug, PartialEq)]
pub struct CalibrationTable {
    /// `(snr_cdb, goodput_bps)`, SNR strictly increasing.
    pub points: Vec<(i32, f64)>,
    /// How the table was made (written as comments and keys of the file).
    pub meta: CalibrationMeta,
}

#[derive(Clone, Debug, PartialEq, Default)]
pub struct CalibrationMeta {
    pub payload: u32,
    pub block: u32,
    pub rate_control: String,
    pub duration_s: f64,
    pub seed: u64,
}

impl CalibrationTable {
    /// R_MAX: the goodput at the best channel.
    pub fn rmax(&self) -> f64 {
        self.points.iter().map(|p| p.1).fold(0.0, f64::max)
    }

    /// Goodput of the row nearest `snr_cdb` (ties: the lower SNR); clamped to the table's ends.
    pub fn lookup(&self, snr_cdb: i32) -> f64 {
        let i = self.points.partition_point(|p| p.0 <= snr_cdb);
        if i == 0 {
            return self.points[0].1;
        }
        let lo = self.points[i - 1];
        match self.points.get(i) {
            Some(&hi) if (hi.0 - snr_cdb) < (snr_cdb - lo.0) => hi.1,
            _ => lo.1,
        }
    }

    /// The file `airsched calibrate` writes.
    pub fn to_toml(&self) -> String {
        let m = &self.meta;
        let mut s = String::new();
        let _ = writeln!(s, "# WChMon calibration table written by airsched calibrate (Garroppo et al. 4.2):");
        let _ = writeln!(
            s,
            "# a saturated UDP flow AP -> station at each SNR, goodput = n L / tau over blocks of n packets."
        );
        let _ = writeln!(s, "[calibration]");
        let _ = writeln!(s, "payload = {}", m.payload);
        let _ = writeln!(s, "block = {}", m.block);
        let _ = writeln!(s, "rate_control = {:?}", m.rate_control);
        let _ = writeln!(s, "duration_s = {:?}", m.duration_s);
        let _ = writeln!(s, "seed = {}", m.seed);
        let _ = writeln!(s, "rmax_bps = {:.1}", self.rmax());
        for &(snr, g) in &self.points {
            let _ = writeln!(s, "\n[[point]]\nsnr_db = {:.2}\ngoodput_bps = {:.1}", snr as f64 / 100.0, g);
        }
        s
    }

    /// Read a calibration file. Errors name the line and key.
    pub fn from_toml(text: &str) -> Result<CalibrationTable, String> {
        let doc: toml::Table = toml::from_str(text).map_err(|e| e.to_string())?;
        let mut meta = CalibrationMeta::default();
        if let Some(c) = doc.get("calibration").and_then(|v| v.as_table()) {
            meta.payload = c.get("payload").and_then(|v| v.as_integer()).unwrap_or(0) as u32;
            meta.block = c.get("block").and_then(|v| v.as_integer()).unwrap_or(0) as u32;
            meta.rate_control = c.get("rate_control").and_then(|v| v.as_str()).unwrap_or("").to_string();
            meta.duration_s =
                c.get("duration_s").and_then(|v| v.as_float().or(v.as_integer().map(|i| i as f64))).unwrap_or(0.0);
            meta.seed = c.get("seed").and_then(|v| v.as_integer()).unwrap_or(0) as u64;
        }
        let pts = doc
            .get("point")
            .and_then(|v| v.as_array())
            .ok_or("no [[point]] entries: expected [[point]] tables with snr_db and goodput_bps")?;
        let mut points = Vec::with_capacity(pts.len());
        for (i, p) in pts.iter().enumerate() {
            let num = |k: &str| -> Result<f64, String> {
                match p.get(k) {
                    Some(toml::Value::Float(f)) => Ok(*f),
                    Some(toml::Value::Integer(n)) => Ok(*n as f64),
                    Some(v) => Err(format!("point[{i}].{k}: expected a number, found {}", v.type_str())),
                    None => Err(format!("point[{i}]: missing key `{k}`")),
                }
            };
            let snr = num("snr_db")?;
            let g = num("goodput_bps")?;
            if !snr.is_finite() || snr.abs() > 200.0 {
                return Err(format!("point[{i}].snr_db: {snr} is not an SNR in dB (expected -200..200)"));
            }
            if !g.is_finite() || g < 0.0 {
                return Err(format!("point[{i}].goodput_bps: {g} must be a goodput >= 0"));
            }
            let cdb = (snr * 100.0).round() as i32;
            if let Some(&(prev, _)) = points.last() {
                if cdb <= prev {
                    return Err(format!(
                        "point[{i}].snr_db: {snr} is not above the previous point's; list points by increasing SNR"
                    ));
                }
            }
            points.push((cdb, g));
        }
        if points.is_empty() {
            return Err("no [[point]] entries".into());
        }
        if !points.iter().any(|p| p.1 > 0.0) {
            return Err("every point has goodput_bps = 0; the table cannot give a relative goodput".into());
        }
        Ok(CalibrationTable { points, meta })
    }
}

/// The table the monitor uses when the scenario names none: `calibration/dsss-arf.toml`, made by
/// `airsched calibrate` with its defaults (ARF, 1024-byte payload, n = 100, -8..20 dB every
/// 0.5 dB). A test checks that the procedure still reproduces sampled rows of it.
pub fn builtin_calibration() -> CalibrationTable {
    CalibrationTable::from_toml(BUILTIN_CALIBRATION).expect("the built-in calibration table parses")
}

pub const BUILTIN_CALIBRATION: &str = include_str!("../calibration/dsss-arf.toml");

/// Monitor settings from the scenario's `[monitor]`.
#[derive(Clone, Debug, PartialEq)]
pub struct MonitorConfig {
    pub table: CalibrationTable,
    /// Weight of the new sample in the filter (the paper: 1/4).
    pub alpha: f64,
    /// Standard deviation of the per-frame SNR report, centi-dB.
    pub noise_cdb: u32,
}

/// The running monitor: one estimate per station.
pub struct Monitor {
    cfg: MonitorConfig,
    rmax: f64,
    est: Vec<f64>,
    rngs: Vec<Xoshiro256PlusPlus>,
    /// SNR reports taken (per station), for the results.
    pub reports: Vec<u64>,
}

impl Monitor {
    /// `initial_up_cdb[s]`: station s's uplink SNR at association. Streams keyed by the
    /// station's index (tests and tools; the simulator keys them by name, [`Monitor::with_streams`]).
    #[cfg(test)]
    pub fn new(cfg: MonitorConfig, initial_up_cdb: &[i32], seed: u64) -> Monitor {
        let rngs = (0..initial_up_cdb.len()).map(|s| stream(seed, StreamKind::Monitor, s as u64)).collect();
        Self::with_streams(cfg, initial_up_cdb, rngs)
    }

    /// As [`Monitor::new`], with `rngs[s]` the measurement-noise stream of station s.
    pub fn with_streams(cfg: MonitorConfig, initial_up_cdb: &[i32], rngs: Vec<Xoshiro256PlusPlus>) -> Monitor {
        let rmax = cfg.table.rmax();
        let est = initial_up_cdb.iter().map(|&s| cfg.table.lookup(s)).collect();
        Monitor { cfg, rmax, est, rngs, reports: vec![0; initial_up_cdb.len()] }
    }

    /// A frame from station `s` was decoded at SNR `snr_cdb`; returns the new relative goodput
    /// in 1/`REL_ONE`.
    pub fn report(&mut self, s: usize, snr_cdb: i32) -> u32 {
        let noise = if self.cfg.noise_cdb > 0 {
            (normal(&mut self.rngs[s]) * self.cfg.noise_cdb as f64).round() as i32
        } else {
            0
        };
        let r = self.cfg.table.lookup(snr_cdb + noise);
        let a = self.cfg.alpha;
        self.est[s] = (1.0 - a) * self.est[s] + a * r;
        self.reports[s] += 1;
        self.rel(s)
    }

    pub fn estimate_bps(&self, s: usize) -> f64 {
        self.est[s]
    }

    /// R / R_MAX in 1/`REL_ONE`, at least 1.
    pub fn rel(&self, s: usize) -> u32 {
        let r = (self.est[s] / self.rmax * REL_ONE as f64).round();
        r.clamp(1.0, REL_ONE as f64) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> CalibrationTable {
        CalibrationTable {
            points: vec![(0, 0.0), (500, 1e6), (1000, 4e6), (1500, 5e6)],
            meta: CalibrationMeta { payload: 1024, block: 100, rate_control: "arf".into(), duration_s: 10.0, seed: 1 },
        }
    }

    #[test]
    fn lookup_takes_the_nearest_row_and_clamps() {
        let t = table();
        assert_eq!(t.lookup(-500), 0.0);
        assert_eq!(t.lookup(240), 0.0);
        assert_eq!(t.lookup(260), 1e6);
        assert_eq!(t.lookup(250), 0.0, "ties go to the lower row");
        assert_eq!(t.lookup(1499), 5e6);
        assert_eq!(t.lookup(9000), 5e6);
        assert_eq!(t.rmax(), 5e6);
    }

    #[test]
    fn the_file_round_trips() {
        let t = table();
        let back = CalibrationTable::from_toml(&t.to_toml()).unwrap();
        assert_eq!(back, t);
    }

    #[test]
    fn bad_files_say_what_is_wrong() {
        let e = CalibrationTable::from_toml("[[point]]\nsnr_db = 1\n").unwrap_err();
        assert!(e.contains("point[0]: missing key `goodput_bps`"), "{e}");
        let e = CalibrationTable::from_toml(
            "[[point]]\nsnr_db = 5\ngoodput_bps = 1\n[[point]]\nsnr_db = 4\ngoodput_bps = 2\n",
        )
        .unwrap_err();
        assert!(e.contains("point[1].snr_db") && e.contains("increasing"), "{e}");
        let e = CalibrationTable::from_toml("x = 1").unwrap_err();
        assert!(e.contains("[[point]]"), "{e}");
        let e = CalibrationTable::from_toml("[[point]]\nsnr_db = 5\ngoodput_bps = \"fast\"\n").unwrap_err();
        assert!(e.contains("expected a number, found string"), "{e}");
    }

    #[test]
    fn filter_follows_three_quarters_old_one_quarter_new() {
        let cfg = MonitorConfig { table: table(), alpha: 0.25, noise_cdb: 0 };
        let mut m = Monitor::new(cfg, &[1500], 1);
        assert_eq!(m.estimate_bps(0), 5e6);
        assert_eq!(m.rel(0), REL_ONE);
        m.report(0, 500);
        assert_eq!(m.estimate_bps(0), 0.75 * 5e6 + 0.25 * 1e6);
        m.report(0, 500);
        assert_eq!(m.estimate_bps(0), 0.75 * 4e6 + 0.25 * 1e6);
        // Converges geometrically to the new value.
        for _ in 0..60 {
            m.report(0, 500);
        }
        assert!((m.estimate_bps(0) - 1e6).abs() < 1.0);
        assert_eq!(m.rel(0), (REL_ONE as f64 / 5.0).round() as u32);
    }

    #[test]
    fn relative_goodput_never_reaches_zero() {
        let cfg = MonitorConfig { table: table(), alpha: 0.25, noise_cdb: 0 };
        let m = Monitor::new(cfg, &[-1000], 1);
        assert_eq!(m.estimate_bps(0), 0.0);
        assert_eq!(m.rel(0), 1);
    }

    #[test]
    fn measurement_noise_is_seeded_and_unbiased_on_a_flat_table() {
        let flat = CalibrationTable {
            points: (-10..=30).map(|d| (d * 100, d as f64 * 1e5 + 2e6)).collect(),
            meta: CalibrationMeta::default(),
        };
        let cfg = MonitorConfig { table: flat, alpha: 0.25, noise_cdb: 200 };
        let run = || {
            let mut m = Monitor::new(cfg.clone(), &[1000], 9);
            let mut sum = 0.0;
            for _ in 0..20_000 {
                m.report(0, 1000);
                sum += m.estimate_bps(0);
            }
            sum / 20_000.0
        };
        let a = run();
        assert_eq!(a, run(), "same seed, same estimates");
        // A linear table keeps the mean: 10 dB -> 3 Mb/s.
        assert!((a - 3e6).abs() < 2e4, "{a}");
    }
}
