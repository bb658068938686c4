//! End-to-end tests over a bottleneck link (filled in below).
