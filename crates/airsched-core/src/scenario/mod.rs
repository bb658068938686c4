//! The typed, validated description of one run.
//!
//! `parse/` turns a TOML scenario file, and any `KEY=VALUE` overrides of it, into a [`Scenario`];
//! every value here has already been checked (units, ranges, names), so the simulator never
//! re-validates.

mod parse;
pub mod tc_trees;

pub use parse::{parse_scenario, parse_scenario_with, toml_string, ScenarioError, ScenarioErrors, OVERRIDES_FILE};

pub use crate::monitor::CalibrationTable;
use crate::phy::dsss::{DsssRate, Preamble};
pub use crate::radio::{ChannelSpec, Fading, Interpolation, Position};
use crate::time::Nanos;

#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    pub run: RunConfig,
    pub cell: CellConfig,
    pub wired: WiredConfig,
    pub ap: NodeConfig,
    pub server: NodeConfig,
    pub stations: Vec<StationConfig>,
    pub flows: Vec<FlowConfig>,
    /// The AP's MAC queueing (802.11n cells; the 802.11b model has one frame in the MAC).
    pub ap_mac: ApMacConfig,
    /// The AP's channel monitor (WChMon) settings.
    pub monitor: MonitorSpec,
    /// Things accepted but not modelled (tc options), to report with the results.
    pub warnings: Vec<String>,
    /// Bluetooth slaves (`[[bluetooth]]`) of the AP's piconet; empty: no piconet.
    pub bluetooth: Vec<BluetoothConfig>,
    /// The piconet's host and controller settings (`[piconet]`).
    pub piconet: PiconetConfig,
}

/// A Bluetooth client (`[[bluetooth]]`): a slave of the AP's piconet with its `bnep0`.
#[derive(Clone, Debug, PartialEq)]
pub struct BluetoothConfig {
    pub name: String,
    /// Packet types the link may use (both directions), sorted, never empty.
    pub packet_types: Vec<crate::bluetooth::PacketType>,
    /// Fixed probability that a baseband packet of the link is lost (both directions), on top
    /// of the WLAN's interference.
    pub packet_error_rate: f64,
    /// `position = [x, y]`: where the slave is (metres; the AP and the piconet's master at the
    /// origin), for the SIR refinement (`[piconet] sir`, which requires it).
    pub position: Option<(f64, f64)>,
    pub node: NodeConfig,
}

/// `[piconet]`: the host stack and controller under each `bnep` device, and the coexistence
/// options.
#[derive(Clone, Debug, PartialEq)]
pub struct PiconetConfig {
    pub host: crate::bluetooth::HostParams,
    /// Adaptive frequency hopping: hop over the channels outside the WLAN's band only.
    pub afh: bool,
    /// SIR refinement of the coexistence (needs every slave's `position` and every station's
    /// `location`); false: any overlap in time and frequency is a loss.
    pub sir: bool,
    /// Transmit powers (dBm) of the Bluetooth radios (master and slaves) and of the WLAN
    /// radios (AP and stations) for `sir`.
    pub bt_power_dbm: f64,
    pub wlan_power_dbm: f64,
}

impl Default for PiconetConfig {
    fn default() -> Self {
        PiconetConfig {
            host: crate::bluetooth::HostParams {
                bnep_header: 3,
                bnep_txq_len: 20,
                l2cap_sndbuf: 212_992,
                acl_mtu: 310,
                acl_pkts: 10,
                t_poll: 40,
            },
            afh: false,
            sir: false,
            bt_power_dbm: 0.0,
            wlan_power_dbm: 15.0,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct RunConfig {
    /// Simulated time, warm-up included.
    pub duration: Nanos,
    /// Left out of every statistic (counted from t = 0).
    pub warmup: Nanos,
    pub seed: u64,
    pub sample_interval: Nanos,
}

/// How long bystanders defer after a frame they could not decode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EifsRule {
    /// 802.11-2016 / ns-3: SIFS + EstimatedAckTxTime(PPDU that caused the EIFS) + DIFS.
    Estimated,
    /// 802.11-1999/2007: SIFS + ACK at 1 Mb/s long preamble + DIFS = 364 us.
    Legacy,
}

#[derive(Clone, Debug, PartialEq)]
pub struct CellConfig {
    /// `standard = "802.11b"` (default) or `"802.11n"`.
    pub standard: Standard,
    pub preamble: Preamble,
    /// BSSBasicRateSet, sorted ascending, never empty.
    pub basic_rates: Vec<DsssRate>,
    pub beacons: bool,
    pub beacon_interval: Nanos,
    /// Beacon PSDU length in bytes (MAC header, body and FCS).
    pub beacon_bytes: u32,
    /// Transmission attempts of one frame before it is dropped (dot11ShortRetryLimit).
    pub retry_limit: u32,
    pub cw_min: u32,
    pub cw_max: u32,
    /// Rate control of stations that do not choose one.
    pub rate_control: RateControl,
    /// Frames below this SNR (centi-dB) are not even detected (ns-3's preamble detection
    /// threshold); None: no threshold, the error model alone decides.
    pub preamble_detection_cdb: Option<i32>,
    pub eifs: EifsRule,
    pub collision_defer: CollisionDefer,
    /// 802.11n settings (Some exactly when `standard` is `Dot11n`).
    pub ht: Option<HtCellConfig>,
    /// The WLAN's channel (`channel`, 1-14; 2.4 GHz), for the coexistence with Bluetooth.
    pub channel: u32,
    /// `pcf = true`: the AP is a point coordinator (802.11b only; docs/model-pcf.md).
    pub pcf: Option<PcfConfig>,
}

/// The contention-free periods of a point-coordinated cell (`[cell] pcf = true`): the CF
/// Parameter Set its beacons carry (IEEE 802.11-1999 7.3.2.5, 9.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PcfConfig {
    /// `dtim_period`: beacons per DTIM (1-255, default 1).
    pub dtim_period: u32,
    /// `cfp_period`: DTIMs per CFP (1-255, default 1).
    pub cfp_period: u32,
    /// `cfp_max_duration`: the longest CFP, a whole number of TU.
    pub cfp_max_duration: Nanos,
}

/// How the stations whose frames collided defer once the medium is idle again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CollisionDefer {
    /// Everyone who heard the collision, the colliders included, treats it as a corrupted frame
    /// and defers EIFS from its end; a collider also never resumes before its ACKTimeout + DIFS.
    /// This is the convention of the analytical models and the Monte Carlo of reference 9.
    Eifs,
    /// Each collider waits ACKTimeout after its own frame, then DIFS once the medium is idle
    /// (ns-3's timing): with frames of unequal length, the shorter collider resumes first.
    AckTimeout,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standard {
    Dot11b,
    /// 802.11n (HT): OFDM PHY with HT MCS, EDCA, A-MPDU with BlockAck; `CellConfig::ht` holds
    /// its settings.
    Dot11n,
}

/// 802.11n cell settings (`[cell]` with `standard = "802.11n"`).
#[derive(Clone, Debug, PartialEq)]
pub struct HtCellConfig {
    /// `band = "5GHz"` (default) or `"2.4GHz"` (short slot, 6 us signal extension).
    pub band: crate::phy::ofdm::OfdmBand,
    /// `width = 20` (default) or `40` (MHz).
    pub width: crate::phy::ht::ChannelWidth,
    /// `guard_interval = "long"` (800 ns, default) or `"short"` (400 ns).
    pub gi: crate::phy::ht::GuardInterval,
    /// `basic_rates` in an 802.11n cell: OFDM rates (default 6, 12, 24 Mb/s), sorted.
    pub basic_rates: Vec<crate::phy::error_rate::OfdmRate>,
    /// `max_aggregate_time` (default 4 ms, as Linux drivers use), capped by the 5.484 ms HT-MF
    /// PPDU limit.
    pub max_aggregate_time: Nanos,
    /// `max_aggregate_mpdus` (default and at most 64).
    pub max_aggregate_mpdus: u32,
    /// `mpdu_retry_limit`: attempts of one MPDU inside aggregates before it is dropped
    /// (default 30 software retries + 1, ath9k's ATH_MAX_SW_RETRIES).
    pub mpdu_retry_limit: u32,
}

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
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FqKernel {
    Linux4_11,
    Linux6_18,
}

impl Default for ApMacConfig {
    fn default() -> Self {
        ApMacConfig {
            queue: MacQueue::DriverFifo { limit: ATH_MAX_QDEPTH },
            airtime: AirtimeSched::Off,
            airtime_rx: true,
            aql: false,
            fq_kernel: FqKernel::Linux4_11,
        }
    }
}

/// ath9k's per-hardware-queue frame limit before the netdev queue is stopped
/// (ATH_TXBUF / 4 - ATH_TXBUF_RESERVE = 512 / 4 - 5).
pub const ATH_MAX_QDEPTH: u32 = 123;

/// A station's 802.11n settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HtStationConfig {
    /// `mcs`: the MCS both ends of the link use (0-15).
    pub mcs: crate::phy::ht::HtMcs,
    /// `airtime_weight` (mac80211 scheduler; default 256).
    pub airtime_weight: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub struct WiredConfig {
    pub rate_bps: u64,
    pub delay: Nanos,
}

/// Settings shared by every node with an egress interface.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeConfig {
    /// The device's txqueuelen: the default pfifo's limit, and the default of every qdisc and
    /// class limit derived from it (Linux DEFAULT_TX_QUEUE_LEN = 1000).
    pub txqueuelen: u32,
    /// IPv4 address (None: the default of the node's role, see `Scenario::ip_of`).
    pub ip: Option<u32>,
    /// The node's tc script, if any.
    pub tc: Option<TcSource>,
    /// `kernel`: the Linux generation whose TCP defaults the node's sockets use (None: the
    /// scenario default, see [`crate::tcp::KernelEra`]).
    pub kernel: Option<crate::tcp::KernelEra>,
}

/// A tc script and where it came from, so that its errors can name the file, line and column.
#[derive(Clone, Debug, PartialEq)]
pub struct TcSource {
    pub text: String,
    /// The file the script's lines are in (the scenario for an inline `tc`, else `tc_file`).
    pub file: String,
    /// Scenario key it was given under (`ap.tc`, `station[1].tc_file`).
    pub key: String,
    /// Line of the file that holds the script's first line, minus one.
    pub line_offset: u32,
    /// Columns before the script's first character on its first line (inline one-line strings).
    pub first_line_col_offset: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub struct StationConfig {
    pub name: String,
    /// Fixed data rate, used in both directions (frames to and from the station); with an
    /// adaptive rate control, the highest rate the station supports.
    pub rate: DsssRate,
    /// Rate control of both ends of the link (the AP's towards the station, the station's own).
    pub rate_control: RateControl,
    /// Radio conditions; None: a perfect channel (no frame errors).
    pub channel: Option<ChannelSpec>,
    pub node: NodeConfig,
    /// 802.11n settings (Some exactly in an 802.11n cell).
    pub ht: Option<HtStationConfig>,
    /// `mac = "02:00:00:00:00:01"`: the station's MAC address, which only `airsched export`
    /// uses (an airtime weight is set per MAC address); the simulation does not.
    pub mac: Option<[u8; 6]>,
    /// `cf_pollable` (PCF cells; default true): the station is on the point coordinator's
    /// polling list.
    pub cf_pollable: bool,
    /// `location = [x, y]`: where the station is (metres, the AP at the origin), for the SIR
    /// refinement of the coexistence with Bluetooth (`[piconet] sir`). Not its radio
    /// conditions: those are `snr`/`position`/`schedule` (`channel`).
    pub location: Option<(f64, f64)>,
}

/// Which rate control a link runs (crates/airsched-core/src/mac/rate.rs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RateControl {
    /// Always the station's `rate`.
    Fixed,
    Arf,
    Aarf,
    Minstrel,
    /// 802.11n only: Minstrel-HT of Linux 4.11 (mac/minstrel_ht.rs) with ath9k's hardware
    /// retries of an A-MPDU through its multi-rate retry chain.
    MinstrelHt,
}

impl RateControl {
    pub const ALL: [(&'static str, RateControl); 5] = [
        ("fixed", RateControl::Fixed),
        ("arf", RateControl::Arf),
        ("aarf", RateControl::Aarf),
        ("minstrel", RateControl::Minstrel),
        ("minstrel_ht", RateControl::MinstrelHt),
    ];
    pub fn name(self) -> &'static str {
        RateControl::ALL.iter().find(|(_, r)| *r == self).map(|(n, _)| *n).unwrap_or("fixed")
    }
}

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

/// Where a flow starts or ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Endpoint {
    Server,
    Ap,
    /// Index into `Scenario::stations`.
    Station(usize),
    /// Index into `Scenario::bluetooth`.
    Bt(usize),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    Udp,
    /// ICMP echo requests at a fixed interval; the destination answers each.
    Ping,
    /// The echo replies of a ping flow (added by the simulator, one per ping flow).
    PingReply,
    /// A TCP bulk transfer (data segments from src to dst).
    Tcp,
    /// The ACKs of a TCP flow (added by the simulator, one per TCP flow).
    TcpAck,
}

impl Protocol {
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Udp => "udp",
            Protocol::Ping => "ping",
            Protocol::PingReply => "ping-reply",
            Protocol::Tcp => "tcp",
            Protocol::TcpAck => "tcp-ack",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowRate {
    /// Constant bit rate counted in UDP payload bits per second, as `iperf -u -b` counts it.
    Cbr { bits_per_second: u64 },
    /// Always backlogged: the source keeps its first-hop queue non-empty.
    Saturate,
    /// One packet every `interval` (ping).
    Periodic { interval: Nanos },
    /// Packets only in answer to another flow's (ping replies, TCP ACKs).
    Reactive,
    /// As fast as a TCP sender's congestion and receive windows allow.
    Window,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FlowConfig {
    pub name: String,
    pub protocol: Protocol,
    pub src: Endpoint,
    pub dst: Endpoint,
    pub rate: FlowRate,
    /// UDP payload bytes per packet (ping: ICMP payload bytes, 28 bytes of IP and ICMP header
    /// on top as for UDP).
    pub size: u32,
    pub start: Nanos,
    /// `None`: runs to the end.
    pub stop: Option<Nanos>,
    /// UDP source port (None: 40000 + the flow's index).
    pub sport: Option<u16>,
    /// UDP destination port (iperf 2's 5001 by default).
    pub dport: u16,
    /// IPv4 TOS byte (`tos`, or `dscp << 2`).
    pub tos: u8,
    /// Netfilter mark (`skb->mark`), matched by the fw classifier.
    pub mark: u32,
    /// Socket priority (`skb->priority`); None: derived from the TOS as the IP stack does.
    pub priority: Option<u32>,
    /// CBR only: each packet leaves up to this much after its nominal time (uniform), as an
    /// application's timer jitter does; zero by default (exact CBR).
    pub jitter: Nanos,
    /// TCP: the congestion control and the transfer size (None: until `stop` or the end).
    pub cc: crate::tcp::CcKind,
    pub bytes: Option<u64>,
    /// TCP: selective acknowledgements (RFC 2018, on by default as in Linux).
    pub sack: bool,
    /// TCP: per-flow settings over the kernel era's (docs/model-tcp.md).
    pub tcp: TcpFlowOptions,
}

/// A TCP flow's settings that override its hosts' kernel era, and the file options.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TcpFlowOptions {
    /// `kernel`: both ends' era (None: each end's node's).
    pub kernel: Option<crate::tcp::KernelEra>,
    /// `cc` was given (otherwise the era's default congestion control).
    pub cc_given: bool,
    /// `initial_cwnd`, segments.
    pub initial_cwnd: Option<u32>,
    /// `rmem`, `wmem`: `tcp_rmem` / `tcp_wmem` (min, default, max), bytes.
    pub rmem: Option<[u64; 3]>,
    pub wmem: Option<[u64; 3]>,
    /// `adv_win_scale`.
    pub adv_win_scale: Option<u8>,
    /// `autotune`: `tcp_moderate_rcvbuf`.
    pub autotune: Option<bool>,
    /// `tsq`: `tcp_limit_output_bytes` (Some(0): TCP Small Queues off).
    pub tsq: Option<u64>,
    /// `repeat`: once the file (`bytes`) is acknowledged, the application writes it again.
    pub repeat: bool,
    /// `rack`, `tlp`, `frto`: each on (the era's version, 6.1's if the era has none) or off.
    pub rack: Option<bool>,
    pub tlp: Option<bool>,
    pub frto: Option<bool>,
}

/// Bytes a UDP packet of `payload` bytes occupies as an IP datagram (IPv4 20 + UDP 8).
pub const UDP_IP_OVERHEAD: u32 = 28;
/// Largest UDP payload that fits a 2304-byte MSDU (802.11 max MSDU) with IPv4 and UDP headers.
pub const MAX_UDP_PAYLOAD: u32 = 2304 - UDP_IP_OVERHEAD;

impl Scenario {
    /// The flows the simulator runs: the scenario's, then one reply flow per ping flow (named
    /// `<ping>.reply`) and one ACK flow per TCP flow (`<tcp>.ack`), from the destination back to
    /// the source, with the ports swapped. Returns the expanded scenario
    /// and, per flow, the index of its reply flow.
    pub fn with_reply_flows(&self) -> (Scenario, Vec<Option<u32>>) {
        let mut scn = self.clone();
        let mut reply_of = vec![None; self.flows.len()];
        for (i, f) in self.flows.iter().enumerate() {
            let (suffix, protocol) = match f.protocol {
                Protocol::Ping => (".reply", Protocol::PingReply),
                Protocol::Tcp => (".ack", Protocol::TcpAck),
                _ => continue,
            };
            {
                reply_of[i] = Some(scn.flows.len() as u32);
                scn.flows.push(FlowConfig {
                    name: format!("{}{suffix}", f.name),
                    protocol,
                    sport: Some(f.dport),
                    dport: f.sport.unwrap_or(40000u16.wrapping_add(i as u16)),
                    src: f.dst,
                    dst: f.src,
                    rate: FlowRate::Reactive,
                    stop: None,
                    jitter: Nanos::ZERO,
                    ..f.clone()
                });
                reply_of.push(None);
            }
        }
        (scn, reply_of)
    }

    /// The IPv4 address of an endpoint: as configured, or the default of its role — server
    /// 10.0.0.1, AP 192.168.1.1, station i 192.168.1.(i + 2) (continuing into 192.168.2.x).
    pub fn ip_of(&self, e: Endpoint) -> u32 {
        match e {
            Endpoint::Server => self.server.ip.unwrap_or(DEFAULT_SERVER_IP),
            Endpoint::Ap => self.ap.ip.unwrap_or(DEFAULT_AP_IP),
            Endpoint::Station(i) => self.stations[i].node.ip.unwrap_or(DEFAULT_AP_IP + 1 + i as u32),
            Endpoint::Bt(i) => self.bluetooth[i].node.ip.unwrap_or(DEFAULT_BT_IP + i as u32),
        }
    }

    /// The header fields every packet of flow `index` carries.
    pub fn flow_key(&self, index: usize) -> crate::packet::FlowKey {
        let f = &self.flows[index];
        // Pings are ICMP (protocol 1, no ports), so that `match ip protocol 1 0xff` finds them.
        let is_icmp = matches!(f.protocol, Protocol::Ping | Protocol::PingReply);
        crate::packet::FlowKey {
            src_ip: self.ip_of(f.src),
            dst_ip: self.ip_of(f.dst),
            sport: if is_icmp { 0 } else { f.sport.unwrap_or(40000u16.wrapping_add(index as u16)) },
            dport: if is_icmp { 0 } else { f.dport },
            proto: match f.protocol {
                Protocol::Ping | Protocol::PingReply => 1,
                Protocol::Tcp | Protocol::TcpAck => 6,
                Protocol::Udp => 17,
            },
            tos: f.tos,
            mark: f.mark,
            priority: f.priority.unwrap_or_else(|| crate::packet::tos_to_priority(f.tos)),
        }
    }
}

pub const DEFAULT_SERVER_IP: u32 = 0x0a00_0001;
pub const DEFAULT_AP_IP: u32 = 0xc0a8_0101;
/// Bluetooth slave i: 192.168.100.(i + 2) by default.
pub const DEFAULT_BT_IP: u32 = 0xc0a8_6402;

/// "a.b.c.d" as a u32 (surrounding blanks allowed), or None: the tc lexer's parser.
pub fn parse_ipv4(s: &str) -> Option<u32> {
    crate::tc::lex::parse_ipv4(s.trim())
}

/// An address as dotted quad.
pub fn format_ipv4(ip: u32) -> String {
    format!("{}.{}.{}.{}", ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255)
}
