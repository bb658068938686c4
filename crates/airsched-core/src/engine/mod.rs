//! The engine: the event queue and its total order ([`queue`]), the seeded random streams
//! ([`rng`]), the outbox through which components ask the joining layer for what lies
//! outside them ([`outbox`]), and a cheap FIFO of small items ([`ring`]).

pub mod outbox;
pub mod queue;
pub mod ring;
pub mod rng;

pub use outbox::Outbox;
pub use queue::{Event, EventQueue};
pub use ring::Ring;
pub use rng::{named, stream, StreamKind};
