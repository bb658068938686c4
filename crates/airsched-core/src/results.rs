//! What a run reports: plain rows that cross into Python as columns.
//!
//! Each table's columns are declared once, here: `result_table!` writes the row struct (the
//! fields the simulator fills in) and, from the same lines, the table's schema (column name,
//! type, unit, one-line description) and a by-index accessor. The binding converts every table
//! by walking its schema, and the Python package and `docs/results.md` take their column lists
//! from it, so a new column is one field here (plus the line that computes it).

use crate::metrics::{Sample, SampleKind};
use crate::time::Nanos;

#[macro_use]
mod schema;
pub use schema::{Cell, CellType, Column, ColumnType, Table};

result_table! {
    /// Whole-run packet accounting (warm-up included): offered = delivered + dropped + in flight.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct Conservation as "conservation" {
        /// Packets the flows' sources created, over the whole run.
        pub offered: u64,
        /// Packets their destinations received.
        pub delivered: u64,
        /// Packets a queueing discipline dropped.
        pub dropped_queue: u64,
        /// Frames dropped at the MAC's retry limit.
        pub dropped_retry: u64,
        /// Packets still in queues, MACs or on the wire at the end.
        pub in_flight: u64,
    } and {
        pub per_flow_in_flight: Vec<u64>,
    }
}

result_table! {
    #[derive(Clone, Debug, PartialEq)]
    pub struct Summary as "summary" {
        /// Simulated time, warm-up included.
        #[unit = "s"]
        pub sim_seconds: f64,
        /// Simulated time after the warm-up, over which the rates are measured.
        #[unit = "s"]
        pub measured_seconds: f64,
        /// Wall time spent processing events (set-up and result gathering excluded).
        #[unit = "s"]
        pub wall_seconds: f64,
        /// Events processed.
        pub events: u64,
        /// The seed of the run's random streams.
        pub seed: u64,
        /// Payload received by all flows per measured second.
        #[unit = "Mb/s"]
        pub total_goodput_mbps: f64,
        /// MAC transmission attempts (data and beacons) in the measured window.
        pub frames: u64,
        /// Share of the measured time the medium was busy (channel utilisation).
        pub medium_busy_share: f64,
    } and {
        pub conservation: Conservation,
    }
}

/// The summary entry that is not a field of `Summary`: it comes from `RunResults`.
pub const SAMPLE_INTERVAL_COLUMN: Column = Column {
    name: "sample_interval_s",
    ty: ColumnType::Float,
    unit: "s",
    doc: "Length of the intervals the samples table covers.",
};

result_table! {
    /// Per station, over the measured window (after warm-up).
    #[derive(Clone, Debug, PartialEq)]
    pub struct StationResult as "stations" {
        /// The station's name.
        pub name: String,
        /// Configured PHY rate of its link (802.11n: of its MCS).
        #[unit = "Mb/s"]
        pub rate_mbps: f64,
        /// Payload of the flows from and to the station received, per measured second.
        #[unit = "Mb/s"]
        pub goodput_mbps: f64,
        /// Sample standard deviation of the per-interval goodput samples.
        #[unit = "Mb/s"]
        pub goodput_std_mbps: f64,
        /// Payload of the flows from the station received, per measured second.
        #[unit = "Mb/s"]
        pub goodput_up_mbps: f64,
        /// Payload of the flows to the station received, per measured second.
        #[unit = "Mb/s"]
        pub goodput_down_mbps: f64,
        /// Air time of every attempt of data frames to or from the station, and of their ACKs.
        #[unit = "s"]
        pub airtime_s: f64,
        /// That air time over the measured time.
        pub airtime_share: f64,
        /// Data frames delivered (acknowledged), both directions.
        pub tx_frames: u64,
        /// Transmission attempts of data frames, both directions.
        pub tx_attempts: u64,
        /// Attempts after the first of a frame.
        pub retries: u64,
        /// Attempts that collided with another node's frame.
        pub collisions: u64,
        /// Packets dropped, queue and retry limit.
        pub drops: u64,
        /// Packets a queueing discipline dropped.
        pub drops_queue: u64,
        /// Frames dropped at the retry limit.
        pub drops_retry: u64,
        /// Mean time the received packets of its flows spent in queueing disciplines; NaN without any.
        #[unit = "ms"]
        pub queue_delay_mean_ms: f64,
        /// "fixed", "arf", "aarf", "minstrel" or "minstrel_ht".
        pub rate_control: String,
        /// Attempt-weighted mean PHY rate of the frames to the station; NaN when there were none.
        #[unit = "Mb/s"]
        pub mean_rate_down_mbps: f64,
        /// Attempt-weighted mean PHY rate of the frames from the station; NaN when there were none.
        #[unit = "Mb/s"]
        pub mean_rate_up_mbps: f64,
        /// Lone data frames not decoded by their receiver (channel errors, not collisions).
        pub data_errors: u64,
        /// Decoded data frames whose ACK was lost.
        pub ack_errors: u64,
        /// Radio resource occupancy (Garroppo et al., Figs. 6 and 7): this station's share of the
        /// airtime spent on all stations' frames, retries and ACKs included; sums to 1 over the
        /// stations that used the air.
        pub occupancy: f64,
        /// Mean downlink SNR over the sample instants; NaN without radio conditions.
        #[unit = "dB"]
        pub snr_mean_db: f64,
        /// The AP's channel monitor: mean goodput estimate over the sample instants; NaN when no
        /// monitor runs.
        #[unit = "Mb/s"]
        pub estimate_mean_mbps: f64,
        /// The AP's channel monitor: relative goodput at the end; NaN when no monitor runs.
        pub rel_goodput_end: f64,
        /// Air time of the frames to the station: the AP's PPDUs, every attempt, and the
        /// station's ACKs/BlockAcks.
        #[unit = "s"]
        pub airtime_down_s: f64,
        /// Air time of the frames from the station: its PPDUs and the AP's responses.
        #[unit = "s"]
        pub airtime_up_s: f64,
        /// The station's share of the AP's transmit airtime to all stations (Høiland-Jørgensen et
        /// al., Fig. 1/3): its down airtime over the sum of all stations' down airtime.
        pub airtime_down_share: f64,
        /// 802.11n: mean MPDUs per PPDU attempt to the station (NaN: none, or 802.11b).
        pub ampdu_mean_down: f64,
        /// 802.11n: mean MPDUs per PPDU attempt from the station (NaN: none, or 802.11b).
        pub ampdu_mean_up: f64,
    }
}

result_table! {
    /// How many PPDU attempts to or from a station carried a given number of MPDUs (802.11n).
    #[derive(Clone, Debug, PartialEq)]
    pub struct AggregateRow as "aggregates" {
        /// The station's name.
        pub station: String,
        /// "down" (AP to station) or "up".
        pub direction: &'static str,
        /// MPDUs in the A-MPDU.
        pub mpdus: u32,
        /// PPDU attempts that carried that many.
        pub count: u64,
        /// Share of the direction's PPDU attempts.
        pub share: f64,
    }
}

result_table! {
    /// Attempts at one PHY rate on one direction of one station's link.
    #[derive(Clone, Debug, PartialEq)]
    pub struct RateRow as "rates" {
        /// The station's name.
        pub station: String,
        /// "down" (AP to station) or "up".
        pub direction: &'static str,
        /// The PHY rate.
        #[unit = "Mb/s"]
        pub rate_mbps: f64,
        /// 802.11n: the HT MCS (MCS 1 and MCS 8 share a rate); -1 for an 802.11b rate.
        pub mcs: i32,
        /// Transmission attempts at this rate.
        pub attempts: u64,
        /// Attempts acknowledged.
        pub acked: u64,
        /// Share of the direction's attempts at this rate.
        pub share: f64,
    }
}

result_table! {
    /// Per flow, over the measured window; `in_flight` is at the end of the run.
    #[derive(Clone, Debug, PartialEq)]
    pub struct FlowResult as "flows" {
        /// The flow's name.
        pub name: String,
        /// Sending node: "server", "ap" or a station name.
        pub src: String,
        /// Receiving node: "server", "ap" or a station name.
        pub dst: String,
        /// The flow's protocol ("udp", "tcp", "ping", ...).
        pub protocol: String,
        /// Payload received per measured second.
        #[unit = "Mb/s"]
        pub goodput_mbps: f64,
        /// Sample standard deviation of the per-interval goodput samples.
        #[unit = "Mb/s"]
        pub goodput_std_mbps: f64,
        /// Packets the source sent in the measured window.
        pub sent_packets: u64,
        /// Packets the destination received in the measured window (a packet sent just before
        /// the window and received in it counts here but not in `sent_packets`, so a short
        /// window can show more received than sent; the whole run conserves packets).
        pub received_packets: u64,
        /// Packets dropped, queue and retry limit.
        pub lost_packets: u64,
        /// Packets a queueing discipline dropped.
        pub drops_queue: u64,
        /// Packets dropped at the MAC's retry limit.
        pub drops_retry: u64,
        /// Sends of a saturating source that its own host's qdisc refused (Linux: ENOBUFS from
        /// sendmsg): the datagram never left the application, so it is in neither
        /// `sent_packets` nor `drops_queue`; the qdisc's own statistics count it as a drop.
        pub refused_sends: u64,
        /// Packets in queues, MACs or on the wire at the end of the run.
        pub in_flight: u64,
        /// Mean one-way delay, application send to application receive; NaN without packets.
        #[unit = "ms"]
        pub delay_mean_ms: f64,
        /// Largest one-way delay; NaN without packets.
        #[unit = "ms"]
        pub delay_max_ms: f64,
        /// Mean time received packets spent in queueing disciplines; NaN without packets.
        #[unit = "ms"]
        pub queue_delay_mean_ms: f64,
        /// Ping flows: mean round-trip time of the replies received in the measured window; NaN
        /// for other flows.
        #[unit = "ms"]
        pub rtt_mean_ms: f64,
        /// Ping flows: median round-trip time (nearest rank); NaN for other flows.
        #[unit = "ms"]
        pub rtt_p50_ms: f64,
        /// Ping flows: 90th percentile of the round-trip time (nearest rank); NaN for other flows.
        #[unit = "ms"]
        pub rtt_p90_ms: f64,
        /// Ping flows: 99th percentile of the round-trip time (nearest rank); NaN for other flows.
        #[unit = "ms"]
        pub rtt_p99_ms: f64,
        /// Ping flows: largest round-trip time; NaN for other flows.
        #[unit = "ms"]
        pub rtt_max_ms: f64,
        /// Ping flows: replies received in the measured window; 0 for other flows.
        pub rtt_samples: u64,
        /// TCP flows: segments retransmitted in the measured window (fast retransmit, recovery
        /// and after timeouts); 0 for other flows.
        pub tcp_retransmits: u64,
        /// TCP flows: fast-recovery episodes in the measured window; 0 for other flows.
        pub tcp_fast_recoveries: u64,
        /// TCP flows: retransmission timeouts in the measured window; 0 for other flows.
        pub tcp_rtos: u64,
        /// TCP flows: the congestion window at the end; 0 for other flows.
        #[unit = "B"]
        pub tcp_cwnd_end: u64,
        /// TCP flows: the sender's smoothed RTT at the end; NaN for other flows.
        #[unit = "ms"]
        pub tcp_srtt_ms: f64,
        /// TCP file transfers (`bytes`): copies of the file whose last byte was acknowledged during the whole run (warm-up included); 0 for other flows.
        pub tcp_files_done: u64,
        /// TCP file transfers: mean time from the start of a copy to the acknowledgement of its last byte; NaN when none completed.
        #[unit = "s"]
        pub tcp_file_time_s: f64,
    }
}

result_table! {
    /// One answered ping, for latency CDFs.
    #[derive(Clone, Debug, PartialEq)]
    pub struct PingRow as "pings" {
        /// The ping flow's name.
        pub flow: String,
        /// Sequence number of the echo request.
        pub seq: u64,
        /// When the reply arrived, from the start of the run.
        #[unit = "s"]
        pub time_s: f64,
        /// Round-trip time.
        #[unit = "ms"]
        pub rtt_ms: f64,
    }
}

result_table! {
    /// Per transmitter (AP first, then stations), over the measured window.
    #[derive(Clone, Debug, PartialEq)]
    pub struct NodeResult as "nodes" {
        /// "ap" or a station name.
        pub name: String,
        /// Air time of the node's transmissions (every attempt, beacons included).
        #[unit = "s"]
        pub airtime_s: f64,
        /// That air time over the measured time.
        pub airtime_share: f64,
        /// Transmission attempts, data and beacons.
        pub tx_attempts: u64,
        /// Beacons sent.
        pub beacons: u64,
    }
}

result_table! {
    /// Per Bluetooth slave and direction (down: the AP's `bnepN` to the slave), over the
    /// measured window (empty without `[[bluetooth]]`).
    #[derive(Clone, Debug, PartialEq)]
    pub struct BtLinkRow as "bluetooth" {
        /// The slave's name.
        pub name: String,
        /// "down" (master to slave) or "up".
        pub direction: String,
        /// The packet types the link may use, space-separated.
        pub packet_types: String,
        /// L2CAP bytes acknowledged over the air per measured second (BNEP and IP included).
        #[unit = "Mb/s"]
        pub l2cap_mbps: f64,
        /// Data packets sent for the first time.
        pub data_packets: u64,
        /// Data packets sent again (ARQ: NAK or no answer).
        pub retransmissions: u64,
        /// POLL (down) or NULL (up) packets.
        pub empty_packets: u64,
        /// Slots the direction's packets occupied over the measured slots.
        pub slot_share: f64,
        /// On-air time of the direction's packets.
        #[unit = "s"]
        pub airtime_s: f64,
        /// Packets lost to an overlapping WLAN frame in their hop's band.
        pub hit_by_wlan: u64,
        /// Packets lost to the link's packet_error_rate.
        pub lost_errors: u64,
        /// Duplicates the receiver discarded by SEQN.
        pub duplicates: u64,
        /// IP packets the receiver reassembled and passed up.
        pub delivered: u64,
    }
}

result_table! {
    /// WLAN frames next to the piconet, per station and direction (empty without
    /// `[[bluetooth]]`): lone frames the receiver would have decoded, and those a Bluetooth
    /// packet corrupted.
    #[derive(Clone, Debug, PartialEq)]
    pub struct CoexRow as "coexistence" {
        /// The WLAN station.
        pub station: String,
        /// "down" (AP to station) or "up".
        pub direction: String,
        /// Data frames checked against the piconet's air log.
        pub data_frames: u64,
        /// Of those, lost to a Bluetooth packet.
        pub data_hit_by_bt: u64,
        /// ACKs checked (their data frame survived).
        pub acks: u64,
        /// Of those, lost to a Bluetooth packet.
        pub acks_hit_by_bt: u64,
    }
}

result_table! {
    /// Every contention-free period of a point-coordinated cell (`[cell] pcf = true`) that
    /// began in the measured window, one row each (empty without PCF).
    #[derive(Clone, Debug, PartialEq)]
    pub struct CfpRow as "cfp" {
        /// Its TBTT (the nominal start), from the start of the run.
        #[unit = "s"]
        pub tbtt_s: f64,
        /// Its beacon's start: after the TBTT when the medium was busy then (foreshortened).
        #[unit = "s"]
        pub start_s: f64,
        /// From its beacon's start to the end of its CF-End.
        #[unit = "ms"]
        pub duration_ms: f64,
        /// Polls sent (CF-Poll, Data+CF-Poll).
        pub polls: u64,
        /// Data frames the point coordinator sent.
        pub data_down: u64,
        /// Data frames stations sent when polled.
        pub data_up: u64,
        /// Beacons sent inside it (TBTTs falling in it), besides its own.
        pub beacons: u64,
        /// Why it ended: "idle" (a whole round of polls carried nothing), "full" (the next
        /// exchange would not have fitted before TBTT + CFPMaxDuration) or "run" (the run ended
        /// first).
        pub ended: String,
    }
}

result_table! {
    /// Each station's part of the contention-free periods, over the measured window (empty
    /// without PCF).
    #[derive(Clone, Debug, PartialEq)]
    pub struct PollRow as "polls" {
        /// The station.
        pub station: String,
        /// 1 when it is on the polling list (`cf_pollable`), else 0.
        pub cf_pollable: u64,
        /// CF-Polls and Data+CF-Polls the point coordinator sent it.
        pub polls: u64,
        /// Data frames the point coordinator sent it in CFPs.
        pub data_down: u64,
        /// Data frames it sent when polled.
        pub data_up: u64,
        /// Null answers: polled with nothing to send.
        pub nulls: u64,
        /// Frames of the point coordinator it did not decode (no answer; the PC went on after
        /// PIFS).
        pub unanswered: u64,
    }
}

result_table! {
    /// Each station's part of the multi-user exchanges of an 802.11ax cell with `[ap] ofdma`,
    /// over the measured window (empty without OFDMA): the DL MU PPDUs it was a user of and
    /// the Basic Triggers that solicited it, with the RUs it got.
    #[derive(Clone, Debug, PartialEq)]
    pub struct OfdmaRow as "ofdma" {
        /// The station.
        pub station: String,
        /// DL MU PPDUs it was a user of.
        pub dl_mu_ppdus: u64,
        /// MPDUs they carried for it (transmission attempts).
        pub dl_mpdus: u64,
        /// Its mean RU size in them, tones (NaN when it was in none).
        pub dl_ru_tones_mean: f64,
        /// Basic Triggers that solicited it (one that collided included).
        pub ul_triggers: u64,
        /// HE TB PPDUs it sent in answer.
        pub ul_tb_ppdus: u64,
        /// Those of its TB PPDUs that carried QoS Null frames only (nothing of the triggered
        /// access category queued).
        pub ul_qos_null: u64,
        /// Those of its TB PPDUs the AP did not decode.
        pub ul_lost: u64,
        /// Data MPDUs its TB PPDUs carried (transmission attempts).
        pub ul_mpdus: u64,
        /// Its mean RU size in its TB PPDUs, tones (NaN when it sent none).
        pub ul_ru_tones_mean: f64,
    }
}

result_table! {
    /// What each interface sent out in each sample interval of the measured window (the
    /// paper's xnetload): its root qdisc's "Sent" counters as `tc -s` has them (what the qdisc
    /// handed to the driver, the IP packet + 14 bytes of Ethernet header), per second.
    #[derive(Clone, Debug, PartialEq)]
    pub struct InterfaceRow as "interfaces" {
        /// End of the interval, from the start of the run.
        #[unit = "s"]
        pub time_s: f64,
        /// "ap", "server" or a station's name.
        pub node: String,
        /// The device: "wlan0", "eth0", or a virtual one ("ifb0", "imq0").
        pub dev: String,
        /// Bytes out in the interval, per second.
        #[unit = "B/s"]
        pub bytes_per_second: f64,
        /// Packets out in the interval, per second.
        #[unit = "1/s"]
        pub packets_per_second: f64,
        /// Packets the device's qdisc dropped in the interval.
        pub drops: u64,
    }
}

result_table! {
    /// Per station, at the end of the run, what mac80211 keeps of its airtime (802.11n, an AP
    /// with mac80211's queues, `fq-mac`; only when asked: `airsched run --mac-stats`): the
    /// `tx duration`, `rx duration` and `airtime weight` lines of `iw dev wlan0 station dump`
    /// and debugfs `stations/<mac>/airtime` (Linux 6.x). Whole run: the kernel's counters are
    /// not reset at the warm-up.
    #[derive(Clone, Debug, PartialEq)]
    pub struct MacStationRow as "mac80211_stations" {
        /// The station's name.
        pub station: String,
        /// Its MAC address (the scenario's `mac`, else the one the captures use).
        pub mac: String,
        /// Airtime of the AP's PPDUs to it, every try (iw `tx duration`).
        #[unit = "us"]
        pub tx_airtime_us: u64,
        /// Airtime of the PPDUs the AP received from it (iw `rx duration`).
        #[unit = "us"]
        pub rx_airtime_us: u64,
        /// `airtime weight` (mac80211's default 256).
        pub airtime_weight: u32,
        /// The scheduler's deficit in AC_VO at the end (debugfs `Deficit:`).
        #[unit = "us"]
        pub deficit_vo_us: i32,
        /// Its deficit in AC_VI.
        #[unit = "us"]
        pub deficit_vi_us: i32,
        /// Its deficit in AC_BE.
        #[unit = "us"]
        pub deficit_be_us: i32,
        /// Its deficit in AC_BK.
        #[unit = "us"]
        pub deficit_bk_us: i32,
        /// AQL: airtime queued to the hardware and not completed, all ACs (debugfs `aql`).
        #[unit = "us"]
        pub aql_pending_us: u32,
    }
}

result_table! {
    /// Per station and TID (0-7), at the end of the run: FQ-MAC's counters as
    /// debugfs `stations/<mac>/aqm` lays them out (and nl80211's per-TID TXQ statistics), with
    /// the same condition as `mac80211_stations`. Whole run.
    #[derive(Clone, Debug, PartialEq)]
    pub struct MacTxqRow as "mac80211_txqs" {
        /// The station's name.
        pub station: String,
        /// The TID (0-7).
        pub tid: u32,
        /// mac80211's AC index: 0 VO, 1 VI, 2 BE, 3 BK.
        pub ac: u32,
        /// Bytes queued at the end.
        #[unit = "B"]
        pub backlog_bytes: u64,
        /// Packets queued at the end.
        pub backlog_packets: u32,
        /// Flows the tin took ownership of (`new-flows`).
        pub flows: u32,
        /// Packets CoDel dropped.
        pub drops: u32,
        /// Packets CoDel marked (ECN CE) instead.
        pub marks: u32,
        /// Overflow rounds that took packets from the tin's flows.
        pub overlimit: u32,
        /// Packets that hashed to another tin's flow (and went to the tin's default flow).
        pub collisions: u32,
        /// Bytes that left the tin to the driver.
        #[unit = "B"]
        pub tx_bytes: u64,
        /// Packets that left the tin to the driver.
        pub tx_packets: u32,
    }
}

result_table! {
    /// Per flow through the AP, the soft admission control of VO and VI (`[ap]
    /// admission_sojourn`; empty when it is off): whole run.
    #[derive(Clone, Debug, PartialEq)]
    pub struct DemotionRow as "demotions" {
        /// The flow's name.
        pub flow: String,
        /// Its DSCP's TID (`cfg80211_classify8021d`).
        pub tid: u32,
        /// Times it was demoted to best effort (a frame of it waited too long in VO or VI).
        pub demotions: u32,
        /// Its packets the AP queued in best effort while it was demoted.
        pub demoted_packets: u64,
    }
}

/// A goodput sample as a row of the samples table: the sample and the name of its station or
/// flow.
pub struct SampleRow<'a> {
    pub sample: &'a Sample,
    pub name: &'a str,
}

impl<'a> SampleRow<'a> {
    /// `stations` and `flows` are the names of the run's stations and flows, the flows the
    /// simulation adds (TCP ACKs, ping replies) included, which sample indices may refer to.
    pub fn new<S: AsRef<str>>(sample: &'a Sample, stations: &'a [S], flows: &'a [S]) -> SampleRow<'a> {
        let name = match sample.kind {
            SampleKind::Station => stations[sample.index as usize].as_ref(),
            SampleKind::Flow => flows[sample.index as usize].as_ref(),
        };
        SampleRow { sample, name }
    }
}

impl_table! {
    impl Table for SampleRow<'_> as "samples", |row| {
        /// End of the interval, from the start of the run.
        #[unit = "s"]
        time_s: f64 = row.sample.time.as_secs_f64(),
        /// "station" or "flow".
        kind: &str = match row.sample.kind {
            SampleKind::Station => "station",
            SampleKind::Flow => "flow",
        },
        /// The station's or flow's name.
        name: &str = row.name,
        /// Payload received in the interval, per second (a station: of the flows through it).
        #[unit = "Mb/s"]
        goodput_mbps: f64 = row.sample.goodput_bps / 1e6,
        /// Stations with radio conditions: the downlink SNR at the sample instant, fading
        /// included; NaN otherwise.
        #[unit = "dB"]
        snr_db: f64 = row.sample.snr_db,
        /// Stations, when the AP's channel monitor runs: its goodput estimate towards the station
        /// at the sample instant; NaN otherwise.
        #[unit = "Mb/s"]
        estimate_mbps: f64 = row.sample.estimate_bps / 1e6,
        /// TCP flows: the sender's congestion window at the sample instant; NaN otherwise.
        #[unit = "B"]
        cwnd_bytes: f64 = row.sample.cwnd_bytes,
    }
}

/// The queueing tree of one interface at the end of the run, as `tc -s qdisc show` and
/// `tc -s class show` would report it.
#[derive(Clone, PartialEq)]
pub struct InterfaceTc {
    /// "ap", "server" or a station name.
    pub node: String,
    /// "wlan0" or "eth0".
    pub dev: String,
    pub qdiscs: Vec<crate::qdisc::QdiscReport>,
    /// The policers of its filters with their counters (`tc -s filter show`); empty without.
    pub policers: Vec<crate::qdisc::police::PolicerReport>,
}

/// As derived, but `policers` only when there are some: the golden snapshots of runs without
/// a policer stay as they were.
impl std::fmt::Debug for InterfaceTc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("InterfaceTc");
        d.field("node", &self.node).field("dev", &self.dev).field("qdiscs", &self.qdiscs);
        if !self.policers.is_empty() {
            d.field("policers", &self.policers);
        }
        d.finish()
    }
}

#[derive(Clone, PartialEq)]
pub struct RunResults {
    pub summary: Summary,
    pub stations: Vec<StationResult>,
    pub flows: Vec<FlowResult>,
    pub nodes: Vec<NodeResult>,
    /// Per station, direction and rate with at least one attempt.
    pub rates: Vec<RateRow>,
    /// Every answered ping in the measured window.
    pub pings: Vec<PingRow>,
    /// 802.11n aggregate size distribution (empty in 802.11b cells).
    pub aggregates: Vec<AggregateRow>,
    pub samples: Vec<Sample>,
    pub sample_interval: Nanos,
    /// Every interface's bytes, packets and drops out per sample interval.
    pub interfaces: Vec<InterfaceRow>,
    /// Every interface's qdisc tree with its statistics.
    pub tc: Vec<InterfaceTc>,
    /// tc options accepted but not modelled, and other things to check before trusting the
    /// numbers.
    pub warnings: Vec<String>,
    /// Per Bluetooth slave and direction; empty without `[[bluetooth]]`.
    pub bluetooth: Vec<BtLinkRow>,
    /// WLAN frames next to the piconet; empty without `[[bluetooth]]`.
    pub coexistence: Vec<CoexRow>,
    /// PCF: the contention-free periods (one row) and each station's polls; empty without
    /// `pcf`.
    pub cfp: Vec<CfpRow>,
    pub polls: Vec<PollRow>,
    /// OFDMA: each station's part of the multi-user exchanges; empty without `ofdma`.
    pub ofdma: Vec<OfdmaRow>,
    /// mac80211's per-station airtime and per-TID FQ statistics; empty unless asked for
    /// (`Simulation::enable_mac_stats`) in an 802.11n cell with FQ-MAC.
    pub mac_stations: Vec<MacStationRow>,
    pub mac_txqs: Vec<MacTxqRow>,
    /// Soft admission control per flow; empty when off.
    pub demotions: Vec<DemotionRow>,
}

/// As derived, except that the Bluetooth tables appear only when the cell has a piconet, and
/// the PCF tables only in a PCF cell, the OFDMA table only with OFDMA (the golden snapshots of other cells stay as they were).
impl std::fmt::Debug for RunResults {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("RunResults");
        d.field("summary", &self.summary)
            .field("stations", &self.stations)
            .field("flows", &self.flows)
            .field("nodes", &self.nodes)
            .field("rates", &self.rates)
            .field("pings", &self.pings)
            .field("aggregates", &self.aggregates)
            .field("samples", &self.samples)
            .field("sample_interval", &self.sample_interval)
            .field("interfaces", &self.interfaces)
            .field("tc", &self.tc)
            .field("warnings", &self.warnings);
        if !self.bluetooth.is_empty() || !self.coexistence.is_empty() {
            d.field("bluetooth", &self.bluetooth).field("coexistence", &self.coexistence);
        }
        if !self.cfp.is_empty() || !self.polls.is_empty() {
            d.field("cfp", &self.cfp).field("polls", &self.polls);
        }
        if !self.ofdma.is_empty() {
            d.field("ofdma", &self.ofdma);
        }
        if !self.mac_stations.is_empty() || !self.mac_txqs.is_empty() {
            d.field("mac_stations", &self.mac_stations).field("mac_txqs", &self.mac_txqs);
        }
        if !self.demotions.is_empty() {
            d.field("demotions", &self.demotions);
        }
        d.finish()
    }
}

impl RunResults {
    /// Everything but wall time, for determinism checks.
    pub fn without_wall_time(&self) -> RunResults {
        let mut r = self.clone();
        r.summary.wall_seconds = 0.0;
        r
    }
}

/// Every table and record of the results with its columns, in the order the binding hands
/// them to Python: the row tables, then `summary` (with `sample_interval_s`) and its nested
/// `conservation`.
pub fn schema() -> Vec<(&'static str, Vec<Column>)> {
    fn of<T: Table>() -> (&'static str, Vec<Column>) {
        (T::NAME, T::COLUMNS.to_vec())
    }
    let mut summary = of::<Summary>();
    summary.1.push(SAMPLE_INTERVAL_COLUMN);
    vec![
        of::<StationResult>(),
        of::<FlowResult>(),
        of::<SampleRow<'_>>(),
        of::<InterfaceRow>(),
        of::<NodeResult>(),
        of::<RateRow>(),
        of::<PingRow>(),
        of::<AggregateRow>(),
        of::<BtLinkRow>(),
        of::<CoexRow>(),
        of::<CfpRow>(),
        of::<PollRow>(),
        of::<OfdmaRow>(),
        of::<MacStationRow>(),
        of::<MacTxqRow>(),
        of::<DemotionRow>(),
        summary,
        of::<Conservation>(),
    ]
}

#[cfg(test)]
mod tests;
