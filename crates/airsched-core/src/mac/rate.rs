//! Rate control: PLACEHOLDER with the agreed API (replaced by the real module on merge).

use rand_xoshiro::Xoshiro256PlusPlus;

use crate::time::Nanos;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RateAlgo {
    Fixed(u8),
    Arf,
    Aarf,
    Minstrel,
}

pub struct RateCtl {
    cur: u8,
}

impl RateCtl {
    pub fn new(algo: RateAlgo, ref_airtime: &[Nanos], _retry_limit: u32, _rng: Xoshiro256PlusPlus) -> RateCtl {
        let cur = match algo {
            RateAlgo::Fixed(i) => i,
            _ => ref_airtime.len() as u8 - 1,
        };
        RateCtl { cur }
    }
    pub fn rate_for_attempt(&mut self, _now: Nanos, _attempt: u32) -> u8 {
        self.cur
    }
    pub fn on_attempt(&mut self, _now: Nanos, _rate: u8, _acked: bool) {}
    pub fn on_frame_end(&mut self, _now: Nanos, _delivered: bool) {}
    pub fn current(&self) -> u8 {
        self.cur
    }
}
