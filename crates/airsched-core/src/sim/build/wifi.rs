//! Building the cell of a scenario: the medium (channel access, radio conditions, the IFS
//! rules) and the one MAC every node runs, each from its own parameters.

use crate::engine::{named, StreamKind};
use crate::mac::dcf::{Dcf, DcfParams};
use crate::monitor::{Monitor, MonitorConfig};
use crate::net::{Acct, DevId, Node, Topology};
use crate::packet::FlowKey;
use crate::phy::error_rate::ErrorModel;
use crate::radio::Channel;
use crate::scenario::Scenario;
use crate::time::Nanos;
use crate::wifi::ht::{Ht, HtStation};
use crate::wifi::legacy::{Legacy, LegacyStation};
use crate::wifi::{IfsRules, Mac, Medium, Radio, Wifi};

/// The cell of a scenario whose devices `topo` names; `flow_dst[f]` is the node flow `f` goes to
/// (the channel monitor's estimates follow the destination station), `flow_keys[f]` its header
/// fields (802.11n: its TID). Every random stream is keyed by the name of what owns it
/// (`engine::rng`).
pub(crate) fn wifi(scn: &Scenario, topo: &Topology, flow_dst: &[Node], flow_keys: &[FlowKey]) -> Wifi {
    let devs: Vec<(DevId, Acct)> = (0..=scn.stations.len() as u32)
        .map(|node| topo.wifi_dev(node))
        .map(|d| (d, topo.devs[d as usize].acct))
        .collect();
    let dev_names: Vec<String> = devs.iter().map(|&(d, _)| topo.dev_name(d)).collect();
    let is_ht = scn.cell.standard.is_ht_mac();
    let n = scn.stations.len();
    let cell = &scn.cell;
    let seed = scn.run.seed;
    let params = if is_ht {
        Ht::dcf_params(scn.cell.ht.as_ref().expect("802.11n"), cell.retry_limit)
    } else {
        DcfParams::dsss(cell.cw_min, cell.cw_max, cell.retry_limit)
    };
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
        let ht = scn.cell.ht.as_ref().expect("802.11n");
        IfsRules::Ht { sifs: ht.band.sifs(), collision: ht.collision_ifs }
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
        let stations: Vec<HtStation<'_>> = scn
            .stations
            .iter()
            .map(|st| HtStation {
                name: &st.name,
                ht: st.ht.expect("802.11n stations have HT settings"),
                rate_control: st.rate_control,
            })
            .collect();
        let ht = Ht::new(cell.ht.as_ref().expect("802.11n"), &scn.ap_mac, &stations, flow_keys, seed, &dev_names[0]);
        ht.init_edca(medium.dcf_mut());
        Mac::Ht(Box::new(ht))
    } else {
        let stations: Vec<LegacyStation<'_>> = scn
            .stations
            .iter()
            .map(|st| LegacyStation { name: &st.name, rate: st.rate, rate_control: st.rate_control })
            .collect();
        let pcf = cell.pcf.map(|p| (p, scn.stations.iter().map(|s| s.cf_pollable).collect()));
        let (preamble, retry) = (cell.preamble, cell.retry_limit);
        let legacy = Legacy::new(preamble, &cell.basic_rates, retry, &stations, seed, pcf, scn.legacy_ap);
        Mac::Legacy(Box::new(legacy))
    };
    Wifi { medium, mac }
}
