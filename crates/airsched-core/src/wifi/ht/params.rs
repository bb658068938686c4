//! An 802.11n cell's options: the cell's HT settings, each station's, and the AP's MAC
//! queueing between its qdisc and the air (the driver's FIFOs or mac80211's FQ-MAC, the airtime
//! scheduler, AQL), with the words a scenario spells them in.

use crate::mac::edca::TxopTable;
use crate::mac80211::policy::PolicyParams;
use crate::phy::error_rate::OfdmRate;
use crate::phy::he::{HeGi, HeLtf, PacketPadding};
use crate::phy::ht::{ChannelWidth, GuardInterval, HtMcs};
use crate::phy::ofdm::OfdmBand;
use crate::phy::vht::Width;
use crate::phy::{Standard, TxVector};
use crate::time::Nanos;
use crate::words::words;

/// 802.11n cell settings (`[cell]` with `standard = "802.11n"`).
#[derive(Clone, Debug, PartialEq)]
pub struct HtCellConfig {
    /// `band = "5GHz"` (default) or `"2.4GHz"` (short slot, 6 us signal extension).
    pub band: OfdmBand,
    /// `width = 20` (default) or `40` (MHz).
    pub width: ChannelWidth,
    /// `guard_interval = "long"` (800 ns, default) or `"short"` (400 ns).
    pub gi: GuardInterval,
    /// `basic_rates` in an 802.11n cell: OFDM rates (default 6, 12, 24 Mb/s), sorted.
    pub basic_rates: Vec<OfdmRate>,
    /// `max_aggregate_time` (default 4 ms, as Linux drivers use), capped by the 5.484 ms HT-MF
    /// PPDU limit.
    pub max_aggregate_time: Nanos,
    /// `max_aggregate_mpdus` (default and at most 64).
    pub max_aggregate_mpdus: u32,
    /// `mpdu_retry_limit`: attempts of one MPDU inside aggregates before it is dropped
    /// (default 30 software retries + 1, ath9k's ATH_MAX_SW_RETRIES).
    pub mpdu_retry_limit: u32,
    /// `txop_limits`: the edition whose default TXOP limits the access categories use (default
    /// 802.11-2016's, which Linux mac80211 and hostapd set).
    pub txop_limits: TxopTable,
    /// `backoff_countdown = "slot-end" | "slot-boundary"`: how the contenders that do not
    /// transmit count the slot where another starts (default "slot-end", DCF's; EDCA's and
    /// ns-3's is "slot-boundary").
    pub backoff_countdown: crate::mac::dcf::BackoffCountdown,
    /// `collision_ifs = "eifs" | "aifs"`: what the others defer after a collision (default
    /// "eifs"; ns-3's usual case is "aifs").
    pub collision_ifs: crate::wifi::ifs::CollisionIfs,
    /// `cw_at_retry_limit = "double" | "reset"`: what `retry_limit` failed aggregates in a row
    /// do to CW (default "double", airsched's model so far; the standard's and ns-3's is
    /// "reset").
    pub cw_at_retry_limit: crate::mac::dcf::CwAtRetryLimit,
    /// The VHT/HE settings of an 802.11ac or 802.11ax cell; None in an 802.11n cell. `width`
    /// and `gi` above are then what the cell's 802.11n stations use (at most 40 MHz).
    pub wide: Option<WideCellConfig>,
}

/// The settings of an 802.11ac (VHT) or 802.11ax (HE) cell (`[cell]`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WideCellConfig {
    /// `Dot11ac` or `Dot11ax`.
    pub standard: Standard,
    /// `width = 20 | 40 | 80 | 160` (default 80 MHz).
    pub width: Width,
    /// `nss`: the AP's spatial streams, 1-4 (default 2); a station's default.
    pub nss: u8,
    /// 802.11ac: `guard_interval = "long" | "short"` (default long).
    pub vht_gi: GuardInterval,
    /// 802.11ax: `guard_interval = "0.8us" | "1.6us" | "3.2us"` (default 0.8 us).
    pub he_gi: HeGi,
    /// 802.11ax: `ltf = "1x" | "2x" | "4x"` (default 2x).
    pub ltf: HeLtf,
    /// 802.11ax: `packet_padding = "0us" | "8us" | "16us"`, the stations' nominal packet
    /// padding (default 0 us).
    pub padding: PacketPadding,
    /// 802.11ax: `band = "6GHz"` (timing as at 5 GHz; recorded for the docs and captures).
    pub six_ghz: bool,
}

/// A station's 802.11n settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HtStationConfig {
    /// `mcs`: the MCS both ends of the link use (0-15).
    pub mcs: HtMcs,
    /// `airtime_weight` (mac80211 scheduler; default 256).
    pub airtime_weight: u32,
    /// `min_rate`: the downlink rate, bit/s, the mac80211 scheduler lets the station exceed its
    /// fair share of the air to reach (0: none; `mac80211/policy.rs`).
    pub min_rate_bps: u64,
    /// The link's transmit vector when the cell's defaults do not give it: a VHT or HE
    /// station's (its `standard`, `mcs`, `nss`, `width` with the cell's GI/LTF), or an 802.11n
    /// station's with its own `width`; None: `mcs` at the cell's HT width and GI.
    pub link: Option<TxVector>,
    /// `driver_queue_limit`: the frames the station's driver holds per access category, its
    /// hardware queue's aggregates included, before its qdisc waits (default
    /// [`ATH_MAX_QDEPTH`], ath9k before Linux 4.10). It bounds the station's A-MPDUs: two
    /// aggregates share it.
    pub driver_queue_limit: u32,
    /// `aggregation`: when the station forms its uplink A-MPDUs.
    pub aggregation: StationAggregation,
}

/// When a station forms its uplink A-MPDUs (`[[station]] aggregation`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StationAggregation {
    /// As the AP's driver (ath9k): aggregates are built while its hardware queue has room
    /// (two aggregates), from the frames queued at that moment.
    #[default]
    Driver,
    /// When the station wins the medium: the aggregate about to go on the air is formed again
    /// from every frame the station then holds (ns-3 3.44's `HtFrameExchangeManager`, and the
    /// firmware of HE stations, which aggregate at transmit time).
    AtAccess,
}

words!(StationAggregation: "driver" => StationAggregation::Driver, "at-access" => StationAggregation::AtAccess);

/// What sits between a WiFi interface's qdisc and the air (`[ap] mac_queue`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MacQueue {
    /// The qdisc feeds the driver's per-TID FIFOs, which share a per-AC frame limit (ath9k
    /// before Linux 4.10: ATH_MAX_QDEPTH = 123 frames pending per hardware queue; above it
    /// the driver stops the netdev queue and packets wait in the qdisc). `mac_queue = "fifo"`.
    DriverFifo { limit: u32 },
    /// mac80211's intermediate queues (FQ-MAC: per-station per-TID tins over one pool of
    /// FQ-CoDel flows), Linux 4.10+. The qdisc is `noqueue` unless a tc script installs one.
    /// `mac_queue = "fq-mac"`.
    FqMac,
}

impl MacQueue {
    /// The value's name, as `[ap] mac_queue` spells it (the driver FIFO's limit is its own key,
    /// `driver_queue_limit`).
    pub fn name(self) -> &'static str {
        match self {
            MacQueue::DriverFifo { .. } => "fifo",
            MacQueue::FqMac => "fq-mac",
        }
    }
}

/// Which airtime fairness scheduler picks the station to build the next aggregate for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AirtimeSched {
    /// Round robin over the TIDs with frames, one aggregate per turn (ath9k before 4.11).
    Off,
    /// ath9k's deficit scheduler, Linux 4.11 to 5.0 (`airtime = "ath9k"`).
    Ath9k,
    /// mac80211's airtime scheduler with AQL, Linux 6.x (`airtime = "mac80211"`).
    Mac80211,
}

words!(AirtimeSched: "off" => AirtimeSched::Off, "ath9k" => AirtimeSched::Ath9k, "mac80211" => AirtimeSched::Mac80211);

/// Which kernel's FQ-MAC policy (overflow drop, CoDel parameters) the AP's intermediate queues
/// follow (`[ap] fq_kernel`, mac80211/fq.rs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FqKernel {
    Linux4_11,
    Linux6_18,
}

words!(FqKernel: "4.11" => FqKernel::Linux4_11, "6.18" => FqKernel::Linux6_18);

/// The AP's MAC queueing (`[ap]` keys of an 802.11n cell).
#[derive(Clone, Debug, PartialEq)]
pub struct ApMacConfig {
    pub queue: MacQueue,
    pub airtime: AirtimeSched,
    /// `airtime_rx` (default true): airtime received from a station is charged to it too.
    pub airtime_rx: bool,
    /// `aql` (default: on with the mac80211 scheduler, where it exists; off otherwise).
    pub aql: bool,
    /// `fq_kernel = "4.11"` or `"6.18"`: FQ-MAC overflow and CoDel parameter policy (default:
    /// 6.18 with the mac80211 scheduler, else 4.11).
    pub fq_kernel: FqKernel,
    /// `dynamic_aggregate_time`: cap the AP's aggregates at this duration while more than
    /// `dynamic_aggregate_stations` stations have frames queued (next-steps §4.1, "Dynamic
    /// aggregate sizing"); None: off.
    pub dynamic_aggregate: Option<DynamicAggregate>,
    /// `[[airtime_group]]`: groups, weights and caps for the mac80211 scheduler (the stations'
    /// minimum rates are in [`HtStationConfig::min_rate_bps`]); empty by default.
    pub policy: PolicyParams,
    /// The next-steps paper's other AP mechanisms (§4.1 retry budget, §4.1 hardware queue,
    /// §4.3 QoS), each off by default.
    pub next: NextSteps,
    /// `ofdma`, `mu_scheduler`, `mu_stations`: downlink OFDMA in an 802.11ax cell (off by
    /// default; `wifi/ht/ofdma.rs`).
    pub ofdma: super::ofdma::OfdmaConfig,
    /// `amsdu`, `max_tx_fragments` and the stations' `max_amsdu_len`: A-MSDU inside A-MPDU at
    /// the AP (off by default; `wifi/ht/amsdu.rs`).
    pub amsdu: super::amsdu::AmsduConfig,
}

impl ApMacConfig {
    /// The keys this configuration turns on that no Linux kernel has a setting for (the
    /// next-steps paper's proposals, the driver's or the firmware's own design), with what a real
    /// AP does instead: `airsched export` writes them as notes, since its script cannot
    /// reproduce them.
    pub fn simulator_only(&self) -> Vec<(&'static str, &'static str)> {
        let mut out = Vec::new();
        let mut say = |on: bool, key, why| {
            if on {
                out.push((key, why));
            }
        };
        let n = &self.next;
        say(
            self.dynamic_aggregate.is_some(),
            "ap.dynamic_aggregate_time",
            "mac80211 and ath9k size aggregates by the 4 ms / 64-frame limits only; no kernel caps them by load",
        );
        say(
            !self.policy.groups.is_empty(),
            "airtime_group",
            "mac80211's scheduler has per-station weights (set here) but no groups or caps",
        );
        say(
            self.policy.min_rate_bps.iter().any(|&r| r > 0),
            "station.min_rate",
            "no kernel reserves a minimum rate per station",
        );
        say(
            n.retry_budget.is_some(),
            "ap.retry_budget",
            "drivers limit retries by count (ath9k: 10 software retries), not by time",
        );
        say(
            n.hw_queue_lead.is_some(),
            "ap.hw_queue_lead",
            "ath9k keeps two aggregates in its hardware queue (ATH_AGGR_MIN_QDEPTH); no setting shortens it",
        );
        say(
            n.admission_sojourn.is_some(),
            "ap.admission_sojourn",
            "mac80211 has no soft admission control: VO and VI keep their access categories",
        );
        say(
            n.firmware.is_some(),
            "ap.aggregation",
            "whether aggregates are built in firmware is the driver's (mt76, ath10k) or not (ath9k); a script cannot choose it",
        );
        say(
            n.vo_piggyback.is_some(),
            "ap.vo_piggyback",
            "no driver puts VO frames at the head of lower-priority aggregates",
        );
        say(
            self.ofdma.mode != super::ofdma::Ofdma::Off,
            "ap.ofdma",
            "which HE stations share a multi-user PPDU, and on which RUs, is the firmware's choice (mt76, ath11k, \
             iwlwifi) with no kernel setting; ns-3's round-robin scheduler modelled here is one such choice",
        );
        say(
            n.order == ScheduleOrder::StationFirst,
            "ap.schedule_order",
            "mac80211 schedules by access category first (strict priority), then station",
        );
        out
    }
}

/// The AP driver's next-steps mechanisms (Høiland-Jørgensen, "Bufferbloat mitigation in the
/// WiFi stack - status and next steps", §4.1 and §4.3); docs/next-steps-latency.md.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NextSteps {
    /// `retry_budget`, `retry_budget_sojourn`: the time-based retry limit; None: off (the
    /// count `mpdu_retry_limit` alone).
    pub retry_budget: Option<RetryBudget>,
    /// `hw_queue_lead`: the minimal hardware queue of a driver that builds aggregates in
    /// software (ath9k): the next aggregate of an AC is built only this long before the one on
    /// the air is expected to complete, instead of keeping two queued; None: off.
    pub hw_queue_lead: Option<Nanos>,
    /// `admission_sojourn`: soft admission control of the VO and VI access categories: a flow
    /// whose frame waited longer than this in a VO or VI TXQ is demoted to best effort (TID 0)
    /// for [`ADMISSION_HOLD`]; None: off.
    pub admission_sojourn: Option<Nanos>,
    /// `aggregation = "firmware"` (with `firmware_limit`, `firmware_frames`): the AP's driver
    /// hands frames to firmware that builds the aggregates (mt76/ath10k style) instead of
    /// building them itself (ath9k); None: software aggregation (every other number).
    pub firmware: Option<FirmwareQueue>,
    /// `vo_piggyback = N`: a station's VO frames waiting in its VO TXQ (at least N of them) go
    /// at the head of the next lower-priority aggregate built for it; None: off.
    pub vo_piggyback: Option<u32>,
    /// `schedule_order`: which the AP's scheduler picks first, the access category (strict
    /// priority, every kernel) or the station (fairness first).
    pub order: ScheduleOrder,
}

/// How the AP's driver builds aggregates (`[ap] aggregation`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Aggregation {
    /// The driver builds each A-MPDU from mac80211's TXQs when its hardware queue has room
    /// (ath9k; `[ap] hw_queue_lead` shortens that queue).
    Software,
    /// The driver hands frames to firmware (up to a limit per access category) and the
    /// firmware builds the A-MPDUs from what it holds (mt76, ath10k style).
    Firmware,
}

words!(Aggregation: "software" => Aggregation::Software, "firmware" => Aggregation::Firmware);

/// What bounds the frames a firmware-aggregating driver has handed to its firmware, per access
/// category (`[ap] firmware_limit`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FirmwareLimit {
    /// A fixed count of frames (`firmware_frames`), as the drivers do today.
    Fixed,
    /// A byte limit that adapts to what the firmware completes: Byte Queue Limits' algorithm
    /// (Linux 6.6 `lib/dynamic_queue_limits.c`, `wifi/ht/firmware.rs`), with the count as a bound.
    Dql,
}

words!(FirmwareLimit: "fixed" => FirmwareLimit::Fixed, "dql" => FirmwareLimit::Dql);

/// The firmware-aggregating driver's queue (`[ap] aggregation = "firmware"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FirmwareQueue {
    pub limit: FirmwareLimit,
    /// `firmware_frames`: frames handed to the firmware per access category at most.
    pub frames: u32,
}

/// Default `firmware_frames`: a stand-in for the tens to thousands of frames real firmware
/// queues take (docs/next-steps-firmware.md).
pub const FIRMWARE_FRAMES: u32 = 256;

/// The order the AP's scheduler picks in (`[ap] schedule_order`, next-steps §4.3 "Interaction
/// with airtime fairness").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ScheduleOrder {
    /// Each access category has its own scheduler list and hardware queue, served VO first;
    /// the airtime deficits are per station and AC (mac80211, every kernel).
    #[default]
    Priority,
    /// The station first, by one airtime deficit over all its access categories, then its
    /// highest-priority TID with frames (whose AC's hardware queue has room).
    StationFirst,
}

words!(ScheduleOrder: "priority" => ScheduleOrder::Priority, "station-first" => ScheduleOrder::StationFirst);

/// How long a flow demoted by the soft admission control stays in best effort before its
/// frames are classified by their DSCP again.
pub const ADMISSION_HOLD: Nanos = Nanos::from_secs(1);

/// Time-based retry limit (`[ap] retry_budget = "4ms"`, next-steps §4.1 "Reducing the number of
/// retransmissions"): an MPDU is sent again only if the air its attempts have taken (the PPDU
/// durations of every try that carried it), plus its FQ-MAC sojourn time when `sojourn`, plus
/// the retry's own PPDU stays within `budget`. The first attempt is always made. At a low rate
/// fewer retries fit (Nomoto et al., ICN 2017, the paper's reference [4]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryBudget {
    /// The budget, µs.
    pub budget_us: u32,
    /// `retry_budget_sojourn = true`: the time the frame waited in FQ-MAC (CoDel's sojourn,
    /// enqueue to dequeue) counts against the budget too.
    pub sojourn: bool,
}

impl Default for ApMacConfig {
    fn default() -> Self {
        ApMacConfig {
            queue: MacQueue::DriverFifo { limit: ATH_MAX_QDEPTH },
            airtime: AirtimeSched::Off,
            airtime_rx: true,
            aql: false,
            fq_kernel: FqKernel::Linux4_11,
            policy: PolicyParams::default(),
            dynamic_aggregate: None,
            next: NextSteps::default(),
            ofdma: Default::default(),
            amsdu: Default::default(),
        }
    }
}

/// Dynamic aggregate sizing (`[ap] dynamic_aggregate_time`, `dynamic_aggregate_stations`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DynamicAggregate {
    /// The aggregate duration cap while the cell is busy.
    pub time: Nanos,
    /// The cap applies while more than this many stations have frames at the AP.
    pub stations: u32,
}

/// Default `dynamic_aggregate_stations`: the cap applies from three backlogged stations.
pub const DYNAMIC_AGGREGATE_STATIONS: u32 = 2;

/// ath9k's per-hardware-queue frame limit before the netdev queue is stopped
/// (ATH_TXBUF / 4 - ATH_TXBUF_RESERVE = 512 / 4 - 5).
pub const ATH_MAX_QDEPTH: u32 = 123;
