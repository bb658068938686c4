//! The engine: the event queue and its total order ([`queue`]), the seeded random streams
//! ([`rng`]), and the outbox through which components ask the joining layer for what lies
//! outside them ([`outbox`]).

pub mod outbox;
pub mod queue;
pub mod rng;

pub use outbox::Outbox;
pub use queue::{Event, EventQueue};
pub use rng::{named, stream, StreamKind};
