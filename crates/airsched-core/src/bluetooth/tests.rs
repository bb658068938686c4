//! Slot timing and polling order of the baseband, read from the piconet's air log (the
//! scenario-level tests are in `tests/bluetooth.rs`).

use crate::scenario::parse_scenario;
use crate::sim::Simulation;
use crate::time::Nanos;

use super::packet::{PacketType, POLL_NULL, SLOT};

fn sim(slaves: usize, flows: &str) -> Simulation {
    sim_with(slaves, flows, "")
}

fn sim_with(slaves: usize, flows: &str, piconet: &str) -> Simulation {
    let mut text = String::from(
        "[run]\nduration = \"1s\"\n[cell]\nbeacons = false\n[[station]]\nname = \"w\"\nrate = \"11Mbps\"\n",
    );
    text.push_str(piconet);
    for i in 0..slaves {
        text.push_str(&format!("[[bluetooth]]\nname = \"b{i}\"\npacket_types = [\"DH1\", \"DH3\", \"DH5\"]\n"));
    }
    text.push_str(flows);
    Simulation::new(&parse_scenario(&text, "t.toml").unwrap()).unwrap()
}

/// (start, end, sender) of every packet on the air in [0, until).
fn air(sim: &mut Simulation, until: Nanos) -> Vec<(u64, u64, u32)> {
    sim.advance(until);
    let mut v: Vec<_> =
        sim.coex().unwrap().bt.overlapping(Nanos::ZERO, until, false).map(|a| (a.start.0, a.end.0, a.from)).collect();
    v.reverse();
    v
}

#[test]
fn an_idle_piconet_polls_each_slave_once_per_t_poll() {
    // The default T_poll, 40 slots: slaves 1, 2, 3 polled in slots 0, 2, 4 (each answering a
    // NULL in the slot after), nothing on the air until slot 40, then 1, 2, 3 again in slots 40,
    // 42, 44.
    let mut s = sim(3, "");
    let log = air(&mut s, Nanos(48 * SLOT.0));
    let mut want = Vec::new();
    for base in [0u64, 40] {
        for k in 0..3u64 {
            let m = base + 2 * k;
            want.push((m * SLOT.0, m * SLOT.0 + POLL_NULL.0, 0));
            want.push(((m + 1) * SLOT.0, (m + 1) * SLOT.0 + POLL_NULL.0, k as u32 + 1));
        }
    }
    assert_eq!(log, want);
}

#[test]
fn with_t_poll_zero_an_idle_piconet_polls_its_slaves_in_turn_on_the_slot_grid() {
    let mut s = sim_with(3, "", "[piconet]\nt_poll = 0\n");
    let log = air(&mut s, Nanos(12 * SLOT.0));
    // POLL in even slots to slaves 1, 2, 3 in turn, each answered by a NULL in the next slot.
    let want: Vec<(u64, u64, u32)> = (0..12u64)
        .map(|k| {
            let from = if k % 2 == 0 { 0 } else { (k / 2 % 3) as u32 + 1 };
            (k * SLOT.0, k * SLOT.0 + POLL_NULL.0, from)
        })
        .collect();
    assert_eq!(log, want);
}

#[test]
fn a_multi_slot_packet_is_answered_in_the_slot_after_it_and_the_master_resumes_on_an_even_slot() {
    // A saturating download to b0: DH5 (5 slots) then b0's NULL in slot 5, the master again in
    // slot 6 (to b1: POLL, NULL in slot 7), then slot 8 to b0.
    let flow = "[[flow]]\nname = \"d\"\nsrc = \"server\"\ndst = \"b0\"\nrate = \"saturate\"\nsize = 1321\n";
    let mut s = sim_with(2, flow, "[piconet]\nt_poll = 0\n");
    let log = air(&mut s, Nanos::from_ms(100));
    let dh5 = PacketType::Dh5.airtime(339).0;
    // Find a full DH5 from the master and check what follows it.
    let k = log.iter().position(|&(st, e, from)| from == 0 && e - st == dh5).expect("a DH5 was sent");
    let t = log[k].0;
    assert_eq!(t % (2 * SLOT.0), 0, "master packets start in even slots");
    assert_eq!(log[k + 1], (t + 5 * SLOT.0, t + 5 * SLOT.0 + POLL_NULL.0, 1), "b0's NULL in the slot after the DH5");
    assert_eq!(log[k + 2], (t + 6 * SLOT.0, t + 6 * SLOT.0 + POLL_NULL.0, 0), "POLL to b1 in the next even slot");
    assert_eq!(log[k + 3].2, 2);
    assert_eq!(log[k + 4].0, t + 8 * SLOT.0);
}
