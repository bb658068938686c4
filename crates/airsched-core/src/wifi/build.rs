//! Building the cell of a scenario: the medium (channel access, radio conditions, the IFS
//! rules) and the one MAC every node runs.

use super::ht::Ht;
use super::legacy::{reference_airtime, Legacy};
use super::medium::link_name;
use super::{IfsRules, Mac, Medium, Radio, Wifi};
use crate::engine::{named, StreamKind};
use crate::mac::dcf::{Dcf, DcfParams};
use crate::mac::rate::RateControl;
use crate::mac::rate::{RateAlgo, RateCtl};
use crate::monitor::{Monitor, MonitorConfig};
use crate::net::{Acct, DevId, Node, Topology};
use crate::phy::dsss::{self, DsssRate};
use crate::phy::error_rate::ErrorModel;
use crate::phy::Standard;
use crate::radio::Channel;
use crate::scenario::Scenario;
use crate::time::Nanos;

/// The medium (channel access, radio, IFS rules) and the cell's MAC.
impl Wifi {
    /// The cell of a scenario whose devices `topo` names; `flow_dst[f]` is the node flow `f`
    /// goes to (the channel monitor's estimates follow the destination station). Every random
    /// stream is keyed by the name of what owns it (`engine::rng`).
    pub fn from_scenario(scn: &Scenario, topo: &Topology, flow_dst: &[Node]) -> Wifi {
        let devs: Vec<(DevId, Acct)> = (0..=scn.stations.len() as u32)
            .map(|node| topo.wifi_dev(node))
            .map(|d| (d, topo.devs[d as usize].acct))
            .collect();
        let dev_names: Vec<String> = devs.iter().map(|&(d, _)| topo.dev_name(d)).collect();
        let is_ht = scn.cell.standard == Standard::Dot11n;
        let n = scn.stations.len();
        let cell = &scn.cell;
        let seed = scn.run.seed;
        let params =
            if is_ht { Ht::dcf_params(scn) } else { DcfParams::dsss(cell.cw_min, cell.cw_max, cell.retry_limit) };
        let channels: Vec<Option<Channel>> = scn
            .stations
            .iter()
            .enumerate()
            .map(|(i, st)| {
                st.channel.clone().map(|c| Channel::new(c, named(seed, StreamKind::Fading, &scn.stations[i].name, 0)))
            })
            .collect();
        let monitor = channels.iter().any(Option::is_some).then(|| {
            let table = match &scn.monitor.calibration {
                Some((_, t)) => t.clone(),
                None => crate::monitor::builtin_calibration(),
            };
            let initial: Vec<i32> = scn
                .stations
                .iter()
                .map(|st| match &st.channel {
                    Some(c) => c.mean_cdb(Nanos::ZERO) + c.up_offset_cdb,
                    None => i32::MAX / 2,
                })
                .collect();
            let cfg = MonitorConfig { table, alpha: scn.monitor.alpha, noise_cdb: scn.monitor.noise_cdb };
            let rngs = scn.stations.iter().map(|st| named(seed, StreamKind::Monitor, &st.name, 0)).collect();
            Monitor::with_streams(cfg, &initial, rngs)
        });
        let mut flows_to = vec![Vec::new(); n];
        for (fi, dst) in flow_dst.iter().enumerate() {
            if let Node::Station(s) = *dst {
                flows_to[s as usize].push(fi as u32);
            }
        }
        let radio = Radio::new(
            channels,
            ErrorModel::new(cell.preamble_detection_cdb),
            dev_names.iter().map(|d| named(seed, StreamKind::FrameError, d, 0)).collect(),
            monitor,
            flows_to,
        );
        // 802.11n: one EDCA function per node and access category (`ht::contender`).
        let contenders = if is_ht { (n + 1) * crate::mac80211::NUM_ACS } else { n + 1 };
        let ifs = if is_ht {
            IfsRules::Ht { sifs: scn.cell.ht.as_ref().expect("802.11n").band.sifs() }
        } else {
            IfsRules::Dsss { preamble: cell.preamble, eifs: cell.eifs, defer: cell.collision_defer }
        };
        let mut medium = Medium::new(
            // Each contender's backoff stream: its device, and under EDCA its access category.
            Dcf::with_streams(
                params,
                (0..contenders)
                    .map(|c| {
                        let per_node = contenders / (n + 1);
                        named(seed, StreamKind::Backoff, &dev_names[c / per_node], (c % per_node) as u64)
                    })
                    .collect(),
            ),
            radio,
            ifs,
            // A point coordinator's beacons carry the CF Parameter Set.
            cell.beacon_bytes + if cell.pcf.is_some() { crate::wifi::pcf::CF_PARAMETER_SET_BYTES } else { 0 },
            devs,
        );
        let mac = if is_ht {
            let ht = Ht::new(scn, seed, &dev_names[0]);
            ht.init_edca(medium.dcf_mut());
            Mac::Ht(Box::new(ht))
        } else {
            Mac::Legacy(Box::new(build_legacy(scn)))
        };
        Wifi { medium, mac }
    }
}

/// The 802.11b MAC: preamble, ACK rates, and one rate controller per link and direction.
fn build_legacy(scn: &Scenario) -> Legacy {
    let cell = &scn.cell;
    let preamble = cell.preamble;
    let ack_rate = DsssRate::ALL.map(|r| dsss::control_response_rate(&cell.basic_rates, r));
    let ack_by_rate = DsssRate::ALL.map(|r| dsss::ack_time(preamble, &cell.basic_rates, r));
    let n = scn.stations.len();
    let mut rate_ctl = Vec::with_capacity(2 * n);
    for dir in 0..2u64 {
        for (i, st) in scn.stations.iter().enumerate() {
            let top = st.rate as usize;
            let algo = match st.rate_control {
                RateControl::Fixed => RateAlgo::Fixed(top as u8),
                RateControl::Arf => RateAlgo::Arf,
                RateControl::Aarf => RateAlgo::Aarf,
                RateControl::Minstrel => RateAlgo::Minstrel,
                // The parser refuses it outside an 802.11n cell.
                RateControl::MinstrelHt => RateAlgo::Fixed(top as u8),
            };
            let ref_air: Vec<Nanos> = DsssRate::ALL[..=top]
                .iter()
                .map(|&r| reference_airtime(preamble, r, ack_by_rate[r as usize]))
                .collect();
            let rng = named(scn.run.seed, StreamKind::RateControl, &link_name(&scn.stations[i].name, dir == 0), 0);
            let ctl = RateCtl::new(algo, &ref_air, cell.retry_limit, rng)
                .expect("1 to 4 rates and a fixed index among them are always valid");
            rate_ctl.push(ctl);
        }
    }
    let cfp = cell.pcf.map(|p| {
        let params = p;
        // CF-Poll, Null and CF-End at the highest basic rate (reference section 4.3: 2 Mb/s
        // with the default basic rates 1 and 2 Mb/s).
        let timing = crate::wifi::pcf::PcfTiming { preamble, ctl_rate: *cell.basic_rates.last().expect("never empty") };
        Box::new(crate::wifi::cfp::Cfp::new(params, timing, scn.stations.iter().map(|s| s.cf_pollable).collect()))
    });
    Legacy { preamble, lowest_basic: cell.basic_rates[0], ack_by_rate, ack_rate, rate_ctl, n_stations: n, cfp }
}
