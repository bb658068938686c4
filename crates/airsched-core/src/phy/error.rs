//! Error model: PLACEHOLDER with the agreed API (replaced by the real model on merge).

use crate::phy::dsss::{DsssRate, Preamble};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrMode {
    Dsss(DsssRate),
}

pub struct ErrorModel {
    detect: Option<i32>,
}

impl ErrorModel {
    pub fn new(detect_threshold_cdb: Option<i32>) -> Self {
        ErrorModel { detect: detect_threshold_cdb }
    }
    pub fn success(&mut self, mode: ErrMode, _preamble: Preamble, snr_cdb: i32, psdu_bytes: u32) -> f64 {
        if self.detect.is_some_and(|d| snr_cdb < d) {
            return 0.0;
        }
        let ErrMode::Dsss(r) = mode;
        let snr = 10f64.powf(snr_cdb as f64 / 1000.0) * 22.0 / r.mbps();
        let ber = 0.5 * (-snr).exp();
        (1.0 - ber).powf(8.0 * psdu_bytes as f64)
    }
}
