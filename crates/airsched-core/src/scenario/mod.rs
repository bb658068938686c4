//! The typed, validated description of one run.
//!
//! `parse/` turns a TOML scenario file, and any `KEY=VALUE` overrides of it, into a [`Scenario`];
//! every value here has already been checked (units, ranges, names), so the simulator never
//! re-validates.

mod error;
mod parse;
pub mod tc_trees;

pub use error::{ScenarioError, ScenarioErrors};
pub use parse::{parse_scenario, parse_scenario_with, toml_string, OVERRIDES_FILE};

use crate::mac::rate::RateControl;
use crate::monitor::MonitorSpec;
use crate::phy::dsss::{DsssRate, Preamble};
use crate::phy::Standard;
use crate::radio::ChannelSpec;
use crate::time::Nanos;
use crate::traffic::flow::{Endpoint, FlowConfig, FlowRate, Protocol};
use crate::wifi::ht::params::{ApMacConfig, HtCellConfig, HtStationConfig};
use crate::wifi::ifs::{CollisionDefer, EifsRule};
use crate::wifi::pcf::CfParams;

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
    /// `[ap] tx_buffers` and `rate_control` (802.11b cells): the frames the AP's driver and
    /// card hold below the qdisc (default one, the MAC's) and who picks the AP's rates.
    pub legacy_ap: crate::wifi::legacy::LegacyAp,
    /// The AP's channel monitor (WChMon) settings.
    pub monitor: MonitorSpec,
    /// Things accepted but not modelled (tc options), to report with the results.
    pub warnings: Vec<String>,
    /// Bluetooth slaves (`[[bluetooth]]`) of the AP's piconet; empty: no piconet.
    pub bluetooth: Vec<BluetoothConfig>,
    /// The piconet's host and controller settings (`[piconet]`).
    pub piconet: PiconetConfig,
    /// The qdisc trees the check of the tc scripts built, which the run takes (built once).
    pub tc_built: tc_trees::Built,
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
    pub pcf: Option<CfParams>,
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

    /// The network's nodes and their named devices, as the run builds them.
    pub fn topology(&self) -> crate::net::Topology {
        let stations: Vec<String> = self.stations.iter().map(|s| s.name.clone()).collect();
        let slaves: Vec<String> = self.bluetooth.iter().map(|b| b.name.clone()).collect();
        crate::net::Topology::with_bluetooth(&stations, &slaves)
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
                // Replaced by the real packets' own 5-tuple when the emulation binds the flow.
                Protocol::External => 0,
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
