//! Radio conditions: the SNR of each station's link, per direction and over time.
//!
//! A station's channel is described once in the scenario ([`ChannelSpec`]) and evaluated by the
//! simulator when a frame is sent ([`Channel::snr_cdb`]). Three shapes, combinable:
//!
//! * a constant SNR, given directly or as one of the named [`Position`]s of Garroppo et al.;
//! * a schedule of SNRs or positions over time, held (`step`) or interpolated in dB (`linear`)
//!   between the listed instants, for a station that walks;
//! * slow (shadow) fading around that mean: a Gauss-Markov process in dB with standard deviation
//!   `sigma` and correlation time `coherence`, advanced in steps of `coherence / 4` with
//!   correlation exp(-1/4) per step.
//!
//! SNR is an integer in centi-dB (hundredths of a dB), the key of the error model's tables. The
//! fading process consumes exactly one normal draw per step whatever the query pattern, so its
//! value at a time depends only on the seed (determinism). The channel is reciprocal: one fading
//! process per station serves both directions; `snr_up` only shifts the uplink's mean.
//!
//! Positions (SNR at the receiver, 22 MHz channel; justified in docs/model-radio.md from the
//! DSSS/CCK error model for the paper's 1024-byte UDP payload, a 1088-byte PSDU, whose PER at
//! 10 % is reached at 7.0 / 4.0 / 1.5 / -3.2 dB for 11 / 5.5 / 2 / 1 Mb/s):
//!   good          14.0 dB  every rate clean (11 Mb/s PER < 1e-9): "no retransmissions"
//!   medium         6.5 dB  11 Mb/s loses about a third of its frames, 5.5 Mb/s is clean
//!   bad            3.5 dB  11 Mb/s dead, 5.5 Mb/s loses about a third, 2 Mb/s clean
//!   very-bad       0.5 dB  5.5 dead, 2 Mb/s loses about half, 1 Mb/s clean
//!   out-of-range  -8.0 dB  every rate, 1 Mb/s included, loses every data frame (also 2 dB up)

use rand::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::time::Nanos;

/// The five positions of Garroppo et al., section 6.1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Position {
    Good,
    Medium,
    Bad,
    VeryBad,
    OutOfRange,
}

impl Position {
    pub const ALL: [Position; 5] =
        [Position::Good, Position::Medium, Position::Bad, Position::VeryBad, Position::OutOfRange];

    /// Mean SNR of the position in centi-dB.
    pub const fn snr_cdb(self) -> i32 {
        match self {
            Position::Good => 1400,
            Position::Medium => 650,
            Position::Bad => 350,
            Position::VeryBad => 50,
            Position::OutOfRange => -800,
        }
    }

    /// The scenario spelling.
    pub const fn name(self) -> &'static str {
        match self {
            Position::Good => "good",
            Position::Medium => "medium",
            Position::Bad => "bad",
            Position::VeryBad => "very-bad",
            Position::OutOfRange => "out-of-range",
        }
    }

    pub fn from_name(s: &str) -> Option<Position> {
        let s = s.trim().to_ascii_lowercase().replace('_', "-");
        Position::ALL.into_iter().find(|p| p.name() == s || p.name().replace('-', "") == s)
    }
}

/// How a schedule moves between its points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interpolation {
    /// Hold each point's SNR until the next point.
    Step,
    /// Interpolate linearly in dB between points (a walk).
    Linear,
}

crate::words::words!(Interpolation: "step" => Interpolation::Step, "linear" => Interpolation::Linear);

/// Slow fading around the mean.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fading {
    /// Standard deviation in centi-dB.
    pub sigma_cdb: u32,
    /// Correlation time (e-folding) of the process.
    pub coherence: Nanos,
}

/// One station's radio conditions, as the scenario gives them.
#[derive(Clone, Debug, PartialEq)]
pub struct ChannelSpec {
    /// Mean downlink SNR over time (at the station): `(time, snr_cdb)`, sorted, first at t = 0.
    /// One point: constant.
    pub points: Vec<(Nanos, i32)>,
    pub interpolation: Interpolation,
    /// Uplink mean minus downlink mean (SNR at the AP); 0 for a symmetric link.
    pub up_offset_cdb: i32,
    pub fading: Option<Fading>,
}

impl ChannelSpec {
    #[cfg(test)]
    pub fn constant(snr_cdb: i32) -> ChannelSpec {
        ChannelSpec {
            points: vec![(Nanos::ZERO, snr_cdb)],
            interpolation: Interpolation::Step,
            up_offset_cdb: 0,
            fading: None,
        }
    }

    /// Mean downlink SNR at `t`, before fading.
    pub fn mean_cdb(&self, t: Nanos) -> i32 {
        let i = self.points.partition_point(|&(at, _)| at <= t);
        if i == 0 {
            return self.points[0].1;
        }
        let (t0, s0) = self.points[i - 1];
        match (self.interpolation, self.points.get(i)) {
            (Interpolation::Linear, Some(&(t1, s1))) => {
                let frac = (t.0 - t0.0) as f64 / (t1.0 - t0.0) as f64;
                s0 + ((s1 - s0) as f64 * frac).round() as i32
            }
            _ => s0,
        }
    }
}

/// Link direction seen from the AP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    /// AP to station: the SNR at the station.
    Down,
    /// Station to AP: the SNR at the AP.
    Up,
}

/// Steps per coherence time of the fading process.
const FADING_STEPS_PER_COHERENCE: u64 = 4;

/// Runtime state of one station's channel.
pub struct Channel {
    spec: ChannelSpec,
    rng: Xoshiro256PlusPlus,
    step: Nanos,
    /// Correlation per step, exp(-1/steps), and the innovation's scale sqrt(1 - rho^2).
    rho: f64,
    innov: f64,
    /// Fading offset (dB, unit variance before scaling by sigma) valid for step `k`.
    k: u64,
    x: f64,
}

impl Channel {
    /// A station's channel; `rng` is its fading stream.
    pub fn new(spec: ChannelSpec, mut rng: Xoshiro256PlusPlus) -> Channel {
        let (step, rho) = match spec.fading {
            Some(f) => {
                let step = Nanos((f.coherence.0 / FADING_STEPS_PER_COHERENCE).max(1));
                (step, (-1.0 / FADING_STEPS_PER_COHERENCE as f64).exp())
            }
            None => (Nanos(u64::MAX), 0.0),
        };
        // Start in the stationary distribution.
        let x = if spec.fading.is_some() { normal(&mut rng) } else { 0.0 };
        Channel { spec, rng, step, rho, innov: (1.0 - rho * rho).sqrt(), k: 0, x }
    }

    /// SNR in centi-dB for a frame sent at `now` in direction `dir`.
    pub fn snr_cdb(&mut self, now: Nanos, dir: Dir) -> i32 {
        let mut snr = self.spec.mean_cdb(now);
        if dir == Dir::Up {
            snr += self.spec.up_offset_cdb;
        }
        if let Some(f) = self.spec.fading {
            let k = now.0 / self.step.0;
            while self.k < k {
                self.x = self.rho * self.x + self.innov * normal(&mut self.rng);
                self.k += 1;
            }
            snr += (self.x * f.sigma_cdb as f64).round() as i32;
        }
        snr
    }
}

/// A standard normal draw (Box-Muller, one value per call; the second is discarded so that the
/// number of draws per call is fixed).
pub fn normal(rng: &mut Xoshiro256PlusPlus) -> f64 {
    let u1: f64 = 1.0 - rng.random::<f64>(); // (0, 1]
    let u2: f64 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{stream, StreamKind};

    #[test]
    fn schedule_steps_and_interpolates() {
        let mut s = ChannelSpec::constant(1400);
        s.points.push((Nanos::from_secs(10), 0));
        assert_eq!(s.mean_cdb(Nanos::from_secs(5)), 1400);
        assert_eq!(s.mean_cdb(Nanos::from_secs(10)), 0);
        s.interpolation = Interpolation::Linear;
        assert_eq!(s.mean_cdb(Nanos::from_secs(5)), 700);
        assert_eq!(s.mean_cdb(Nanos::from_ms(2500)), 1050);
        assert_eq!(s.mean_cdb(Nanos::from_secs(20)), 0, "held after the last point");
    }

    #[test]
    fn uplink_offset_shifts_the_mean() {
        let mut s = ChannelSpec::constant(500);
        s.up_offset_cdb = -300;
        let mut c = Channel::new(s, stream(1, StreamKind::Fading, 0));
        assert_eq!(c.snr_cdb(Nanos::ZERO, Dir::Down), 500);
        assert_eq!(c.snr_cdb(Nanos::ZERO, Dir::Up), 200);
    }

    #[test]
    fn fading_has_the_configured_spread_and_correlation() {
        let mut s = ChannelSpec::constant(1000);
        s.fading = Some(Fading { sigma_cdb: 300, coherence: Nanos::from_ms(100) });
        let mut c = Channel::new(s, stream(7, StreamKind::Fading, 3));
        let step = Nanos::from_ms(25);
        let xs: Vec<f64> = (0..40_000).map(|i| c.snr_cdb(Nanos(step.0 * i), Dir::Down) as f64 - 1000.0).collect();
        let n = xs.len() as f64;
        let mean = xs.iter().sum::<f64>() / n;
        let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
        assert!(mean.abs() < 20.0, "mean offset {mean} cdB");
        assert!((var.sqrt() - 300.0).abs() < 15.0, "std {} cdB", var.sqrt());
        // Lag of one coherence time (4 steps): correlation exp(-1).
        let lag = 4;
        let cov = (0..xs.len() - lag).map(|i| (xs[i] - mean) * (xs[i + lag] - mean)).sum::<f64>() / (n - lag as f64);
        let r = cov / var;
        assert!((r - (-1.0f64).exp()).abs() < 0.03, "lag-1-coherence correlation {r}");
    }

    #[test]
    fn fading_value_does_not_depend_on_how_often_it_is_read() {
        let mut s = ChannelSpec::constant(0);
        s.fading = Some(Fading { sigma_cdb: 200, coherence: Nanos::from_ms(40) });
        let mut dense = Channel::new(s.clone(), stream(3, StreamKind::Fading, 1));
        let mut sparse = Channel::new(s, stream(3, StreamKind::Fading, 1));
        for i in 0..1000u64 {
            dense.snr_cdb(Nanos::from_ms(i), Dir::Down);
        }
        assert_eq!(dense.snr_cdb(Nanos::from_secs(1), Dir::Down), sparse.snr_cdb(Nanos::from_secs(1), Dir::Down));
    }

    #[test]
    fn positions_are_ordered_and_named() {
        for w in Position::ALL.windows(2) {
            assert!(w[0].snr_cdb() > w[1].snr_cdb());
        }
        assert_eq!(Position::from_name("Very_Bad"), Some(Position::VeryBad));
        assert_eq!(Position::from_name("outofrange"), Some(Position::OutOfRange));
        assert_eq!(Position::from_name("far"), None);
    }
}
