//! MAC layer. `dcf` is the 802.11 Distributed Coordination Function channel access; `edca` holds
//! the QoS access categories, their parameters and the TID mapping. EDCA access, aggregation and
//! rate control will sit beside it: the access state machine is per node and knows nothing of
//! frame contents, so a per-AC instance or an aggregate fits the same slots.

pub mod dcf;
pub mod edca;
pub mod minstrel_ht;
pub mod rate;
