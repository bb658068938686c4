//! Analytical models the simulator is validated against: G. Bianchi, "Performance analysis of the
//! IEEE 802.11 DCF", IEEE JSAC 18(3), 2000, and M. Heusse et al., "Performance anomaly of
//! 802.11b", INFOCOM 2003.
//! Written here from the equations, independently of the simulator code.

#![allow(dead_code)]

pub mod drawing;
pub mod ns3;
pub mod saturation;

use airsched_core::{parse_scenario, run_scenario, RunResults};

/// Parse a scenario text (errors are a test failure) and run it; the run checks conservation.
pub fn run(text: &str) -> RunResults {
    let scn = parse_scenario(text, "test.toml").unwrap_or_else(|e| panic!("{e}"));
    run_scenario(&scn).expect("conservation holds")
}

/// 802.11b airtime in microseconds (long preamble): 192 + ceil(8 * PSDU / R), R in Mb/s.
pub fn txtime_us(rate_mbps: f64, psdu: u32) -> f64 {
    192.0 + (8.0 * psdu as f64 / rate_mbps).ceil()
}

/// ACK duration after data at `rate` with basic rates {1, 2}.
pub fn ack_us(rate_mbps: f64) -> f64 {
    if rate_mbps == 1.0 {
        304.0
    } else {
        248.0
    }
}

/// Bianchi saturation throughput (aggregate, Mb/s of IP datagrams), the "ns-3 variant" of
/// reference 9.1: Bianchi-Tinnirello correction with B = 1/W and T_c = T_s (EIFS after a
/// collision), W = 32, m = 5, and `attempts` transmission attempts per frame (None: unlimited).
pub fn bianchi_ns3(n: u32, rate_mbps: f64, l_ip: u32, attempts: Option<u32>) -> f64 {
    let (w, m, sigma) = (32.0f64, 5u32, 20.0f64);
    let stages = attempts.unwrap_or(400) as usize;
    let wi: Vec<f64> = (0..stages).map(|i| w * 2f64.powi(i.min(m as usize) as i32)).collect();
    let tau_of = |p: f64| {
        let (mut num, mut den, mut pi) = (0.0, 0.0, 1.0);
        for &wv in &wi {
            num += pi;
            den += pi * (wv + 1.0) / 2.0;
            pi *= p;
        }
        num / den
    };
    // Solve p = 1 - (1 - tau(p))^(n-1) by bisection.
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    for _ in 0..200 {
        let p = 0.5 * (lo + hi);
        let p2 = 1.0 - (1.0 - tau_of(p)).powi(n as i32 - 1);
        if p2 > p {
            lo = p
        } else {
            hi = p
        }
    }
    let tau = tau_of(0.5 * (lo + hi));
    let ptr = 1.0 - (1.0 - tau).powi(n as i32);
    let ps = n as f64 * tau * (1.0 - tau).powi(n as i32 - 1) / ptr;
    let ts = txtime_us(rate_mbps, l_ip + 36) + 10.0 + ack_us(rate_mbps) + 50.0;
    let tc = ts;
    let b = 1.0 / w;
    let payload_bits = 8.0 * l_ip as f64;
    ps * ptr * payload_bits
        / (1.0 - b)
        / ((1.0 - ptr) * sigma + ptr * ps * (ts / (1.0 - b) + sigma) + ptr * (1.0 - ps) * tc)
}

/// Heusse et al. closed form for N saturated stations at the given rates (per-host Mb/s of IP
/// datagrams), reference 9.2.
pub fn heusse_per_host(rates_mbps: &[f64], l_ip: u32) -> f64 {
    let n = rates_mbps.len() as f64;
    let (cw, sigma, difs, sifs) = (32.0f64, 20.0, 50.0, 10.0);
    let pc = 1.0 - (1.0 - 1.0 / cw).powf(n - 1.0);
    let t_cont = sigma * (cw / 2.0) * (1.0 + pc) / n;
    let times: Vec<f64> = rates_mbps.iter().map(|&r| txtime_us(r, l_ip + 36)).collect();
    let sum_t: f64 = rates_mbps.iter().zip(&times).map(|(&r, &td)| difs + t_cont + td + sifs + ack_us(r)).sum();
    // Mean airtime of the longer of two colliding frames, over pairs of distinct stations.
    let (mut longer, mut pairs) = (0.0, 0.0);
    for (i, a) in times.iter().enumerate() {
        for b in &times[i + 1..] {
            longer += a.max(*b);
            pairs += 1.0;
        }
    }
    let longer = if pairs > 0.0 { longer / pairs } else { times[0] };
    let t_jam = longer + 364.0;
    8.0 * l_ip as f64 / (sum_t + n * pc * t_jam)
}

/// A single saturated transmitter (the AP) serving stations packet by packet: per-station
/// Mb/s of IP datagrams, reference 9.3 "RR".
pub fn round_robin_per_station(rates_mbps: &[f64], l_ip: u32) -> f64 {
    let sum: f64 = rates_mbps.iter().map(|&r| 50.0 + 15.5 * 20.0 + txtime_us(r, l_ip + 36) + 10.0 + ack_us(r)).sum();
    8.0 * l_ip as f64 / sum
}
