//! netem's delay distribution tables, generated as iproute2 generates the files it installs in
//! its `tc` library directory (`normal.dist`, `pareto.dist`, `paretonormal.dist`; iproute2
//! `netem/normal.c`, `pareto.c`, `paretonormal.c`, public-domain NISTnet code): 4096 signed
//! 16-bit samples of the inverse CDF of a zero-mean distribution, scaled by
//! `NETEM_DIST_SCALE` = 8192 per unit of jitter. The same floating-point steps are taken (the
//! normal CDF sampled at x = -10, -10 + 0.00005, ... and inverted by rounding to the table
//! index), so the tables equal the installed files entry for entry (tested against
//! `/usr/lib/x86_64-linux-gnu/tc/*.dist` when it is present).

/// `NETEM_DIST_SCALE`: a table entry of 8192 is one jitter.
pub const DIST_SCALE: i64 = 8192;
/// Entries of the inverse CDF the generators sample (every fourth is kept).
const TABLESIZE: usize = 16384;
/// Pareto shape of `pareto.c` and `paretonormal.c`.
const PARETO_A: f64 = 3.0;

/// The distributions airsched generates (`tc ... netem distribution NAME`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DistKind {
    Normal,
    Pareto,
    ParetoNormal,
}

impl DistKind {
    pub const WORDS: &'static [&'static str] = &["normal", "pareto", "paretonormal"];

    pub fn from_word(w: &str) -> Option<DistKind> {
        match w {
            "normal" => Some(DistKind::Normal),
            "pareto" => Some(DistKind::Pareto),
            "paretonormal" => Some(DistKind::ParetoNormal),
            _ => None,
        }
    }

    /// The table, 4096 entries.
    pub fn table(self) -> Vec<i16> {
        match self {
            DistKind::Normal => {
                let inv = normal_inverse();
                (0..TABLESIZE).step_by(4).map(|i| clamp16(rint(inv[i] * DIST_SCALE as f64) as i64)).collect()
            }
            DistKind::Pareto => (1..=TABLESIZE / 4).map(|k| pareto_value(65536 - 16 * (k as i64 - 1))).collect(),
            DistKind::ParetoNormal => {
                let inv = normal_inverse();
                (0..TABLESIZE)
                    .step_by(4)
                    .map(|i| {
                        let norm = rint(inv[i] * DIST_SCALE as f64) as i64;
                        let par = pareto_value(65536 - 4 * i as i64) as i64;
                        // C integer division truncates toward zero, as Rust's does.
                        clamp16((norm + 3 * par) / 4)
                    })
                    .collect()
            }
        }
    }
}

/// C's `rint` in the default rounding mode: half to even.
fn rint(x: f64) -> f64 {
    x.round_ties_even()
}

fn clamp16(v: i64) -> i16 {
    v.clamp(i16::MIN as i64, i16::MAX as i64) as i16
}

/// `table[i] = x` for x from -10 in steps of 0.00005, i = rint(16384 * Phi(x)): the last x
/// that rounds to each index (every index is reached; the step is finer than the table's).
fn normal_inverse() -> Vec<f64> {
    let mut table = vec![0.0f64; TABLESIZE + 1];
    let mut x = -10.0f64;
    while x < 10.05 {
        let phi = 0.5 + 0.5 * libm::erf(x / std::f64::consts::SQRT_2);
        let i = rint(TABLESIZE as f64 * phi) as usize;
        table[i.min(TABLESIZE)] = x;
        x += 0.00005;
    }
    table
}

/// `pareto.c`'s value at `i` (65536 down to 16): (1 / (i/65536)^(1/a) - 1.5) * 4/3 * 8192,
/// capped at 32767 and rounded.
fn pareto_value(i: i64) -> i16 {
    let mut d = i as f64 / 65536.0;
    d = 1.0 / d.powf(1.0 / PARETO_A);
    d -= 1.5;
    d *= (4.0 / 3.0) * DIST_SCALE as f64;
    if d > 32767.0 {
        d = 32767.0;
    }
    rint(d) as i16
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The installed iproute2 tables, when this machine has them (Debian's iproute2 package).
    fn installed(name: &str) -> Option<Vec<i16>> {
        for dir in ["/usr/lib/x86_64-linux-gnu/tc", "/usr/lib/tc", "/usr/lib64/tc"] {
            if let Ok(text) = std::fs::read_to_string(format!("{dir}/{name}.dist")) {
                return Some(
                    text.lines()
                        .filter(|l| !l.starts_with('#'))
                        .flat_map(|l| l.split_whitespace().map(|w| w.parse::<i16>().unwrap()))
                        .collect(),
                );
            }
        }
        None
    }

    #[test]
    fn tables_equal_iproute2s_files() {
        for (kind, name) in
            [(DistKind::Normal, "normal"), (DistKind::Pareto, "pareto"), (DistKind::ParetoNormal, "paretonormal")]
        {
            let t = kind.table();
            assert_eq!(t.len(), 4096, "{name}");
            let Some(file) = installed(name) else { continue };
            let diff: Vec<_> = t.iter().zip(&file).enumerate().filter(|(_, (a, b))| a != b).take(5).collect();
            assert!(diff.is_empty() && file.len() == 4096, "{name}: first differences (index, (ours, file)) {diff:?}");
        }
    }

    #[test]
    fn tables_have_the_moments_of_their_distributions() {
        let moments = |t: &[i16]| {
            let xs: Vec<f64> = t.iter().map(|&v| v as f64 / DIST_SCALE as f64).collect();
            let m = xs.iter().sum::<f64>() / xs.len() as f64;
            let sd = (xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / xs.len() as f64).sqrt();
            (m, sd)
        };
        // Normal: mean 0, standard deviation 1 (the table's tails are cut at +-4).
        let (m, sd) = moments(&DistKind::Normal.table());
        assert!(m.abs() < 0.01 && (sd - 1.0).abs() < 0.01, "normal {m} {sd}");
        // Pareto a = 3, x_m = 1, shifted by its mean 1.5 and scaled by 4/3: mean 0; the
        // variance a / ((a-1)^2 (a-2)) = 3/4 times 16/9 is 4/3, less the tail cut at 4
        // (the largest entry, 32767 / 8192) and the 1/4096 steps.
        let (m, sd) = moments(&DistKind::Pareto.table());
        assert!(m.abs() < 0.05, "pareto mean {m}");
        assert!(sd > 0.75 && sd < (4.0f64 / 3.0).sqrt(), "pareto sd {sd}");
        // The median of the Pareto is 2^(1/3): (2^(1/3) - 1.5) * 4/3.
        let t = DistKind::Pareto.table();
        let mut s = t.clone();
        s.sort();
        let median = s[2048] as f64 / DIST_SCALE as f64;
        assert!((median - (2f64.powf(1.0 / 3.0) - 1.5) * 4.0 / 3.0).abs() < 0.002, "pareto median {median}");
    }
}
