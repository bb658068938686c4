//! PCF in the simulation (docs/model-pcf.md): contention-free periods against the frame-timing
//! arithmetic of reference next-capabilities.md section 4.3 and `wifi::pcf`.

use airsched_core::scenario::parse_scenario_with;
use airsched_core::run_scenario;

fn scenario(text: &str, sets: &[&str]) -> airsched_core::Scenario {
    parse_scenario_with(text, "test.toml", sets).unwrap_or_else(|e| panic!("{e}"))
}

const UPLINK: &str = r#"
[run]
duration = "6s"
warmup = "1s"
seed = 5

[cell]
pcf = true
cfp_max_duration = 50

[[station]]
name = "sta1"
rate = "11Mbps"

[[flow]]
name = "up"
src = "sta1"
dst = "server"
rate = "saturate"
size = 1472
"#;

#[test]
fn explore() {
    let r = run_scenario(&scenario(UPLINK, &[])).unwrap();
    eprintln!("{:?}", r.flows[0].goodput_mbps);
    eprintln!("{:?}", &r.cfp[..5]);
    eprintln!("{:?}", r.polls);
    eprintln!("{:?}", r.summary);
}
