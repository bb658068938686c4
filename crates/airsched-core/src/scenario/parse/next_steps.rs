//! The `[ap]` keys of the next-steps paper's driver mechanisms in an 802.11n cell
//! (`wifi::ht::params::NextSteps`, docs/next-steps-latency.md): the time-based retry limit,
//! the minimal hardware queue (software and firmware aggregation), the soft admission control
//! of VO and VI, VO at the head of lower-priority aggregates and the station-first order.

use super::*;
use crate::wifi::ht::params::{
    Aggregation, FirmwareLimit, FirmwareQueue, NextSteps, RetryBudget, ScheduleOrder, FIRMWARE_FRAMES,
};

/// The `[ap]` keys this file reads (listed in `AP_KEYS`).
#[cfg(test)]
const NEXT_STEPS_AP_KEYS: &[&str] = &[
    "retry_budget",
    "retry_budget_sojourn",
    "hw_queue_lead",
    "admission_sojourn",
    "aggregation",
    "firmware_limit",
    "firmware_frames",
    "vo_piggyback",
    "schedule_order",
];

/// The most frames `firmware_frames` accepts.
const MAX_FIRMWARE_FRAMES: u64 = 65_536;

/// The longest lead time of the minimal hardware queue: 10 ms (two 5.484 ms PPDUs).
const MAX_HW_QUEUE_LEAD: Nanos = Nanos::from_ms(10);

/// The longest retry budget: 1 s (a frame retried for longer has long been given up on by TCP).
const MAX_RETRY_BUDGET: Nanos = Nanos::from_secs(1);

/// `[ap]`'s next-steps keys; `get` reads a key of `tbl` (refusing it outside an 802.11n cell),
/// `fq` says whether the AP queues in FQ-MAC (None: unknown, an invalid value already reported),
/// `mac80211` whether it schedules with mac80211's airtime scheduler.
pub(super) fn parse_next_steps<'t, 'i: 't>(
    rd: &mut Reader<'_>,
    tbl: &'t DeTable<'i>,
    get: impl Fn(&mut Reader<'_>, &str) -> Option<&'t Value<'i>>,
    fq: Option<bool>,
    mac80211: bool,
) -> NextSteps {
    let budget = get(rd, "retry_budget").and_then(|v| {
        let key = "ap.retry_budget";
        let t = time_value(rd, v, key, "4ms")?;
        if t < Nanos::from_us(1) || t > MAX_RETRY_BUDGET {
            rd.error(&v.span(), key, format!("must be at least 1us and at most {MAX_RETRY_BUDGET}, got {t}"));
            return None;
        }
        Some((t.0 / 1000) as u32)
    });
    let sojourn = get(rd, "retry_budget_sojourn").and_then(|v| {
        let key = "ap.retry_budget_sojourn";
        let b = boolean(rd, v, key)?;
        if !tbl.contains_key("retry_budget") {
            rd.error(&v.span(), key, "applies only with retry_budget (the time budget, e.g. \"4ms\"); give both");
            return None;
        }
        if b && fq == Some(false) {
            rd.error(
                &v.span(),
                key,
                "counts the sojourn time CoDel records in FQ-MAC, which mac_queue = \"fifo\" does not have; set \
                 mac_queue = \"fq-mac\" or leave the key out",
            );
            return None;
        }
        Some(b)
    });
    let hw_queue_lead = get(rd, "hw_queue_lead").and_then(|v| {
        let key = "ap.hw_queue_lead";
        let t = time_value(rd, v, key, "250us")?;
        if t > MAX_HW_QUEUE_LEAD {
            rd.error(
                &v.span(),
                key,
                format!("must be at most {MAX_HW_QUEUE_LEAD}, got {t} (0 builds the next aggregate when the last completes)"),
            );
            return None;
        }
        Some(t)
    });
    let admission_sojourn = get(rd, "admission_sojourn").and_then(|v| {
        let key = "ap.admission_sojourn";
        let t = time_value(rd, v, key, "5ms")?;
        if t == Nanos::ZERO || t > MAX_RETRY_BUDGET {
            rd.error(&v.span(), key, format!("must be greater than zero and at most {MAX_RETRY_BUDGET}, got {t}"));
            return None;
        }
        if fq == Some(false) {
            rd.error(
                &v.span(),
                key,
                "measures the sojourn of frames in mac80211's VO and VI TXQs, which mac_queue = \"fifo\" does not \
                 have; set mac_queue = \"fq-mac\" or leave the key out",
            );
            return None;
        }
        Some(t)
    });
    let aggregation = get(rd, "aggregation").and_then(|v| {
        let key = "ap.aggregation";
        let a = word::<Aggregation>(rd, v, key)?;
        if a == Aggregation::Firmware && fq == Some(false) {
            rd.error(
                &v.span(),
                key,
                "a firmware-aggregating driver is fed from mac80211's TXQs, which mac_queue = \"fifo\" does not have; \
                 set mac_queue = \"fq-mac\" or leave the key out",
            );
            return None;
        }
        Some(a)
    });
    let firmware = aggregation == Some(Aggregation::Firmware);
    // Reported once: an invalid `aggregation` value was already an error.
    let bad_aggregation = tbl.contains_key("aggregation") && aggregation.is_none();
    let only_firmware = |rd: &mut Reader<'_>, v: &Value<'_>, key: &str| {
        if !firmware && !bad_aggregation {
            rd.error(
                &v.span(),
                key,
                format!(
                    "applies only with aggregation = {:?} (the firmware-aggregating driver); add it or leave the key out",
                    Aggregation::Firmware.name()
                ),
            );
            return false;
        }
        true
    };
    let firmware_limit = get(rd, "firmware_limit").and_then(|v| {
        let key = "ap.firmware_limit";
        let l = word::<FirmwareLimit>(rd, v, key)?;
        only_firmware(rd, v, key).then_some(l)
    });
    let firmware_frames = get(rd, "firmware_frames").and_then(|v| {
        let key = "ap.firmware_frames";
        let n = integer(rd, v, key, 1, MAX_FIRMWARE_FRAMES)? as u32;
        only_firmware(rd, v, key).then_some(n)
    });
    if firmware {
        if let Some(v) = get(rd, "hw_queue_lead") {
            rd.error(
                &v.span(),
                "ap.hw_queue_lead",
                format!(
                    "defers a driver's own aggregate building, which a firmware that aggregates does not let it do \
                     (firmware_limit = {:?} bounds a firmware's queue); leave it out or set aggregation = {:?}",
                    FirmwareLimit::Dql.name(),
                    Aggregation::Software.name()
                ),
            );
        }
    }
    let vo_piggyback = get(rd, "vo_piggyback").and_then(|v| {
        let key = "ap.vo_piggyback";
        let n = integer(rd, v, key, 1, 64)? as u32;
        if firmware {
            rd.error(
                &v.span(),
                key,
                "is a software-aggregating driver's choice in this model; leave it out with aggregation = \"firmware\"",
            );
            return None;
        }
        Some(n)
    });
    let order = get(rd, "schedule_order").and_then(|v| {
        let key = "ap.schedule_order";
        let o = word::<ScheduleOrder>(rd, v, key)?;
        if o == ScheduleOrder::StationFirst && !mac80211 {
            rd.error(
                &v.span(),
                key,
                "\"station-first\" picks stations by mac80211's airtime deficits; set airtime = \"mac80211\" (with \
                 mac_queue = \"fq-mac\") or leave the key out",
            );
            return None;
        }
        if o == ScheduleOrder::StationFirst && firmware {
            rd.error(
                &v.span(),
                key,
                format!(
                    "{:?} is modelled for software aggregation only; leave it out with aggregation = \"firmware\"",
                    o.name()
                ),
            );
            return None;
        }
        Some(o)
    });
    NextSteps {
        firmware: firmware.then(|| FirmwareQueue {
            limit: firmware_limit.unwrap_or(FirmwareLimit::Fixed),
            frames: firmware_frames.unwrap_or(FIRMWARE_FRAMES),
        }),
        vo_piggyback,
        order: order.unwrap_or_default(),
        admission_sojourn,
        hw_queue_lead,
        retry_budget: budget.map(|budget_us| RetryBudget { budget_us, sojourn: sojourn.unwrap_or(false) }),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_key_read_here_is_an_ap_key() {
        for k in super::NEXT_STEPS_AP_KEYS {
            assert!(super::AP_KEYS.contains(k), "{k} is missing from AP_KEYS");
        }
    }
}
