//! htb: not implemented yet (being written). The build function reports that.

use super::{diag_error, Handle, QCtx, Qdisc, QdiscDecl, QdiscImpl, QdiscReport, QdiscStats, Enq, BuildCx};
use crate::packet::PacketId;
use crate::tc::TcDiag;
use crate::time::Nanos;

/// Uninhabited until implemented: no value of it can exist.
pub enum Htb {}

pub(super) fn build(d: QdiscDecl<'_>, _cx: &BuildCx, diags: &mut Vec<TcDiag>) -> Option<QdiscImpl> {
    diags.push(diag_error(d.kind, "htb is not implemented yet"));
    None
}

impl Qdisc for Htb {
    fn enqueue(&mut self, _pkt: PacketId, _cx: &mut QCtx<'_>, _now: Nanos) -> Enq { match *self {} }
    fn dequeue(&mut self, _cx: &mut QCtx<'_>, _now: Nanos) -> Option<PacketId> { match *self {} }
    fn peek(&mut self, _cx: &mut QCtx<'_>, _now: Nanos) -> Option<PacketId> { match *self {} }
    fn next_wakeup(&self, _now: Nanos) -> Option<Nanos> { match *self {} }
    fn stats(&self) -> QdiscStats { match *self {} }
    fn for_each_queued(&self, _f: &mut dyn FnMut(PacketId)) { match *self {} }
    fn report(&self, _parent: Handle, _out: &mut Vec<QdiscReport>) { match *self {} }
}
