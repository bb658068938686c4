//! Baseband and host tests of the piconet, driven through whole runs (`tests/bluetooth.rs`
//! holds the scenario-level ones).
