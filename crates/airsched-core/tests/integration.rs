//! Every integration test of the core, as one test binary (one link instead of one per file).

mod common;

mod amsdu_ns3;
mod amsdu_sim;
mod architecture_doc;
mod behaviour;
mod bluetooth;
mod coex_sir;
mod golden;
mod ht_sim;
mod ifb_sim;
mod ingress_police;
mod invariants;
mod layers;
mod nested_wakeups;
mod next_steps;
mod ofdma_mixed_ns3;
mod ofdma_ns3;
mod ofdma_sim;
mod ofdma_ul18_ns3;
mod ofdma_ul_colocated_ns3;
mod ofdma_ul_ns3;
mod overrides;
mod pcf_sim;
mod ping;
mod radio;
mod scenario_errors;
mod su_ul_ns3;
mod tc_parse;
mod tc_sim;
mod tcp_eras;
mod tcp_sim;
mod validation;
mod vht_he_ns3;
mod vht_he_sim;
