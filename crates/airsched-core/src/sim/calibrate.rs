//! The WChMon calibration procedure of Garroppo et al. (section 4.2), run on the simulator: for
//! each SNR, a saturated UDP flow from the AP to one station over a link at that SNR (both
//! directions, so the ACKs see it too), with the chosen rate control; the station measures the
//! time tau to receive each block of n packets and the goodput n L / tau; the blocks' goodputs
//! are averaged into one (SNR, goodput) row. A point where fewer than one block arrives reports
//! the received payload over the measured time (zero if nothing arrived).

use super::Simulation;
use crate::mac::rate::RateControl;
use crate::monitor::{CalibrationMeta, CalibrationTable};
use crate::phy::dsss::Preamble;
use crate::scenario::{parse_scenario_with, Scenario};
use crate::time::Nanos;

#[derive(Clone, Debug, PartialEq)]
pub struct CalibrationSpec {
    pub snr_from_cdb: i32,
    pub snr_to_cdb: i32,
    pub step_cdb: i32,
    /// UDP payload bytes per packet (the paper: 1024).
    pub payload: u32,
    /// Packets per block, n (the paper: "e.g. 100").
    pub block: u32,
    pub rate_control: RateControl,
    /// Simulated time per SNR point, warm-up of 1 s included.
    pub duration: Nanos,
    pub seed: u64,
    pub preamble: Preamble,
}

impl Default for CalibrationSpec {
    fn default() -> Self {
        CalibrationSpec {
            snr_from_cdb: -800,
            snr_to_cdb: 2000,
            step_cdb: 50,
            payload: 1024,
            block: 100,
            rate_control: RateControl::Arf,
            duration: Nanos::from_secs(11),
            seed: 1,
            preamble: Preamble::Long,
        }
    }
}

/// The calibration cell: the AP saturating one station. Each point sets the duration, seed,
/// preamble, the link's SNR and rate control and the payload by override.
const CALIBRATION_CELL: &str = r#"[run]
warmup = "1s"
[cell]
beacons = false
[[station]]
name = "b"
rate = "11Mbps"
snr = 0
[[flow]]
name = "calibration"
src = "ap"
dst = "b"
rate = "saturate"
"#;

/// The scenario of one SNR point: [`CALIBRATION_CELL`] with the spec's settings.
pub fn point_scenario(spec: &CalibrationSpec, snr_cdb: i32) -> Result<Scenario, String> {
    let preamble = match spec.preamble {
        Preamble::Long => "long",
        Preamble::Short => "short",
    };
    let overrides = [
        format!("run.duration=\"{}ns\"", spec.duration.0),
        format!("run.seed={}", spec.seed),
        format!("cell.preamble={preamble}"),
        format!("station[b].rate_control={}", spec.rate_control.name()),
        format!("station[b].snr={}", snr_cdb as f64 / 100.0),
        format!("flow[calibration].size={}", spec.payload),
    ];
    parse_scenario_with(CALIBRATION_CELL, "<calibration>", &overrides).map_err(|e| e.to_string())
}

/// Measure one SNR point: the mean block goodput in bit/s of UDP payload.
pub fn measure_point(spec: &CalibrationSpec, snr_cdb: i32) -> Result<f64, String> {
    let scn = point_scenario(spec, snr_cdb)?;
    let mut sim = Simulation::new(&scn).map_err(|e| e.to_string())?;
    sim.meter_blocks(0, spec.block);
    let res = sim.finish().map_err(|e| e.to_string())?;
    let blocks = sim.block_goodputs();
    Ok(if blocks.is_empty() {
        res.flows[0].goodput_mbps * 1e6
    } else {
        blocks.iter().sum::<f64>() / blocks.len() as f64
    })
}

/// Run the whole procedure: one point per SNR from `snr_from` to `snr_to` every `step`.
pub fn calibrate(spec: &CalibrationSpec, mut progress: impl FnMut(usize, usize)) -> Result<CalibrationTable, String> {
    if spec.step_cdb <= 0 || spec.snr_to_cdb < spec.snr_from_cdb {
        return Err(format!(
            "the SNR range must run upwards with a positive step (got {} to {} dB every {} dB)",
            spec.snr_from_cdb as f64 / 100.0,
            spec.snr_to_cdb as f64 / 100.0,
            spec.step_cdb as f64 / 100.0
        ));
    }
    let snrs: Vec<i32> = (spec.snr_from_cdb..=spec.snr_to_cdb).step_by(spec.step_cdb as usize).collect();
    let mut points = Vec::with_capacity(snrs.len());
    for (i, &snr) in snrs.iter().enumerate() {
        points.push((snr, measure_point(spec, snr)?));
        progress(i + 1, snrs.len());
    }
    Ok(CalibrationTable {
        points,
        meta: CalibrationMeta {
            payload: spec.payload,
            block: spec.block,
            rate_control: spec.rate_control.name().to_string(),
            duration_s: spec.duration.as_secs_f64(),
            seed: spec.seed,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::parse_scenario;

    /// The scenario the procedure built as text, one per point, before it used overrides.
    fn as_text_before(spec: &CalibrationSpec, snr_cdb: i32, preamble: &str) -> Scenario {
        let text = format!(
            "[run]\nduration = \"{dur}ns\"\nwarmup = \"1s\"\nseed = {seed}\n\
             [cell]\nbeacons = false\npreamble = \"{preamble}\"\n\
             [[station]]\nname = \"b\"\nrate = \"11Mbps\"\nrate_control = \"{rc}\"\nsnr = {snr}\n\
             [[flow]]\nname = \"calibration\"\nsrc = \"ap\"\ndst = \"b\"\nrate = \"saturate\"\nsize = {size}\n",
            dur = spec.duration.0,
            seed = spec.seed,
            rc = spec.rate_control.name(),
            snr = snr_cdb as f64 / 100.0,
            size = spec.payload,
        );
        parse_scenario(&text, "<calibration>").unwrap()
    }

    #[test]
    fn each_point_is_the_scenario_it_always_was() {
        let short = CalibrationSpec {
            preamble: Preamble::Short,
            rate_control: RateControl::Minstrel,
            payload: 1470,
            seed: 9,
            duration: Nanos::from_ms(2500),
            ..CalibrationSpec::default()
        };
        for (spec, preamble) in [(CalibrationSpec::default(), "long"), (short, "short")] {
            for snr in [-800, -50, 0, 1, 650, 2000] {
                assert_eq!(point_scenario(&spec, snr).unwrap(), as_text_before(&spec, snr, preamble), "{snr}");
            }
        }
    }
}
