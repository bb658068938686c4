//! TCP senders and receivers as sans-I/O state machines (the ping source is in `traffic/ping.rs`): every
//! call takes `now`, nothing reads a clock, and the simulator moves segments and ACKs between
//! them (see docs/model-tcp.md for the model, its constants and the integration contract).
//!
//! Models Linux 6.x behaviour (net/ipv4/tcp_input.c, tcp_output.c, tcp_cong.c, tcp_cubic.c)
//! where the RFCs leave a choice, and RFC 5681/6582/6298/7323/9438/2018/6675/6937 elsewhere.
//! Deviations: no handshake (a connection starts established), SACK without D-SACK, losses of
//! first transmissions found by RFC 6675's DupThresh rule rather than Linux's default RACK-TLP
//! unless a kernel era (4.9, 6.1) turns on RACK, TLP and F-RTO (`TcpConfig::rack`, `tlp`, `frto`)
//! (RACK's rule is used for retransmissions in recovery only), PRR only with SACK, no
//! HyStart, no receive-buffer autotuning.
//!
//! Sequence numbers are byte offsets in a `u64` starting at 0 and never wrap.

pub mod cc;
pub mod receiver;
pub mod rtt;
pub mod sender;

#[cfg(test)]
mod tests;

pub use cc::CcKind;
pub use receiver::TcpReceiver;
#[cfg(test)]
pub use sender::{AppLimit, TcpSender};

use crate::time::Nanos;

/// IPv4 (20) + TCP (20) + timestamps option (12) bytes: what Linux puts in front of every
/// segment by default, hence the 1448-byte MSS over a 1500-byte MTU.
pub const TCP_IP_HEADER: u32 = 52;

/// MSS over a 1500-byte MTU with the timestamps option (1500 − 52).
pub const DEFAULT_MSS: u32 = 1448;

/// Initial window, segments: RFC 6928, Linux `TCP_INIT_CWND`.
pub const INITIAL_CWND_SEGMENTS: u32 = 10;

/// Linux `TCP_RTO_MIN` (HZ / 5).
pub const RTO_MIN: Nanos = Nanos::from_ms(200);
/// Linux `TCP_RTO_MAX` (120 × HZ).
pub const RTO_MAX: Nanos = Nanos::from_secs(120);
/// RFC 6298 (2.1) and Linux `TCP_TIMEOUT_INIT`: the RTO before the first RTT sample.
pub const RTO_INITIAL: Nanos = Nanos::from_secs(1);

/// Linux `TCP_DELACK_MIN` (HZ / 25) = `TCP_ATO_MIN`: the delayed-ACK timeout. Linux adapts
/// `ato` between this and `TCP_DELACK_MAX` (200 ms) from the inter-arrival times; the model
/// keeps it at the minimum, where a bulk receiver's `ato` stays.
pub const DELACK_TIMEOUT: Nanos = Nanos::from_ms(40);

/// Default receive window: Linux `tcp_rmem[2]` (6 MiB), i.e. a receiver whose buffer
/// autotuning has grown it to the maximum. Autotuning itself is not modelled.
pub const DEFAULT_RCV_WND: u64 = 6 * 1024 * 1024;

/// A data segment: `len` bytes from byte `seq`. SYN and FIN are not modelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub seq: u64,
    pub len: u32,
    /// RFC 7323 TSval: the sender's clock when it sent the segment (full resolution).
    pub tsval: Nanos,
    /// Sent before (fast retransmit, or go-back-N after an RTO); for statistics only, the
    /// receiver does not look at it.
    pub retransmission: bool,
}

impl Segment {
    /// First byte after the segment.
    #[inline]
    pub fn end(&self) -> u64 {
        self.seq + self.len as u64
    }
    /// IP datagram length on the wire.
    #[inline]
    pub fn ip_len(&self) -> u32 {
        self.len + TCP_IP_HEADER
    }
}

/// SACK blocks an ACK carries at most: 40 bytes of TCP options minus the 12 of the timestamps
/// option leave 28, and the SACK option takes 4 + 8 per block (Linux `tcp_established_options`).
pub const MAX_SACK_BLOCKS: usize = 3;

/// Bytes of the SACK option with its padding: two NOPs, kind and length (Linux
/// `TCPOLEN_SACK_BASE_ALIGNED` = 4) and 8 per block (`TCPOLEN_SACK_PERBLOCK`).
pub const fn sack_option_bytes(blocks: usize) -> u32 {
    if blocks == 0 {
        0
    } else {
        4 + 8 * blocks as u32
    }
}

/// The SACK blocks of one ACK (RFC 2018), `[start, end)` byte ranges above the cumulative ACK,
/// in the order the receiver chose (most recent first). Fixed size: no allocation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackBlocks {
    n: u8,
    blocks: [(u64, u64); MAX_SACK_BLOCKS],
}

impl SackBlocks {
    pub const NONE: SackBlocks = SackBlocks { n: 0, blocks: [(0, 0); MAX_SACK_BLOCKS] };

    /// Blocks from a list (at most [`MAX_SACK_BLOCKS`]; more is a bug).
    #[cfg(test)]
    pub fn from_slice(b: &[(u64, u64)]) -> SackBlocks {
        let mut s = SackBlocks::NONE;
        for &(a, e) in b {
            assert!(s.push(a, e), "at most {MAX_SACK_BLOCKS} SACK blocks");
        }
        s
    }

    /// Append a block; false (and nothing changes) when the option is full.
    pub fn push(&mut self, start: u64, end: u64) -> bool {
        debug_assert!(start < end, "empty SACK block");
        if self.n as usize == MAX_SACK_BLOCKS {
            return false;
        }
        self.blocks[self.n as usize] = (start, end);
        self.n += 1;
        true
    }

    pub fn len(&self) -> usize {
        self.n as usize
    }

    pub fn as_slice(&self) -> &[(u64, u64)] {
        &self.blocks[..self.n as usize]
    }

    /// The blocks as `(start, end)` offsets from the cumulative ACK `ack`, for a compact
    /// packet field; unused entries are `(0, 0)`. A block lies within the receive window above
    /// `ack`, so the offsets fit a `u32` (the window is at most 1 GiB with window scaling).
    pub fn to_offsets(self, ack: u64) -> [u32; 2 * MAX_SACK_BLOCKS] {
        let mut o = [0u32; 2 * MAX_SACK_BLOCKS];
        for (i, &(s, e)) in self.as_slice().iter().enumerate() {
            debug_assert!(s > ack && e - ack <= u32::MAX as u64, "SACK block {s}..{e} above ack {ack}");
            o[2 * i] = (s - ack) as u32;
            o[2 * i + 1] = (e - ack) as u32;
        }
        o
    }

    /// Inverse of [`SackBlocks::to_offsets`]: a `(0, 0)` entry ends the list.
    pub fn from_offsets(ack: u64, o: &[u32; 2 * MAX_SACK_BLOCKS]) -> SackBlocks {
        let mut s = SackBlocks::NONE;
        for i in 0..MAX_SACK_BLOCKS {
            if o[2 * i + 1] == 0 {
                break;
            }
            s.push(ack + o[2 * i] as u64, ack + o[2 * i + 1] as u64);
        }
        s
    }
}

/// A pure ACK: the cumulative acknowledgment (next byte expected), the advertised window in
/// bytes (window scaling is implicit: the model carries the full value), the echoed
/// timestamp and the SACK blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ack {
    pub ack: u64,
    pub rwnd: u64,
    /// RFC 7323 TSecr: TS.Recent, the TSval of the segment that last advanced the left edge.
    pub tsecr: Nanos,
    /// RFC 2018 SACK blocks (none when SACK is off or nothing is held out of order).
    pub sack: SackBlocks,
}

impl Ack {
    /// An ACK without SACK blocks.
    #[cfg(test)]
    pub fn new(ack: u64, rwnd: u64, tsecr: Nanos) -> Ack {
        Ack { ack, rwnd, tsecr, sack: SackBlocks::NONE }
    }

    /// IP datagram length on the wire: 52 bytes plus the SACK option (4 + 8 per block).
    pub fn ip_len(&self) -> u32 {
        TCP_IP_HEADER + sack_option_bytes(self.sack.len())
    }
}

/// Parameters of one connection (both ends read the MSS).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TcpConfig {
    pub mss: u32,
    pub cc: CcKind,
    pub initial_cwnd_segments: u32,
    pub rto_min: Nanos,
    pub rto_max: Nanos,
    pub rto_initial: Nanos,
    /// Receive buffer = advertised window, bytes.
    pub rcv_wnd: u64,
    pub delack_timeout: Nanos,
    /// Selective acknowledgements (RFC 2018) on both ends; Linux negotiates them by default.
    /// Off: NewReno recovery (RFC 6582) and ACKs without SACK blocks.
    pub sack: bool,
    /// The receive buffer as Linux keeps it (`tcp_rmem`, `tcp_adv_win_scale`, autotuning);
    /// None: the advertised window is `rcv_wnd`, fixed (the model before kernel eras).
    pub rcvbuf: Option<RcvBuf>,
    /// The send buffer (`tcp_wmem`, `tcp_sndbuf_expand`); None: no limit.
    pub sndbuf: Option<SndBuf>,
    /// TCP Small Queues (`tcp_limit_output_bytes`); None: no limit (Linux before 3.6).
    pub tsq: Option<Tsq>,
    /// RACK loss detection (RFC 8985, net/ipv4/tcp_recovery.c) as of one Linux version; None:
    /// the DupThresh rule only, RACK's rule for retransmissions in recovery (the model before
    /// kernel eras). Needs SACK.
    pub rack: Option<LossEra>,
    /// Tail loss probe (Linux 3.10+ `tcp_schedule_loss_probe`) as of one version; None: off.
    pub tlp: Option<LossEra>,
    /// F-RTO (RFC 5682 with SACK, Linux `tcp_process_loss`, `tcp_frto` = 2) and the undo of a
    /// spurious RTO. Needs SACK.
    pub frto: bool,
}

/// Which Linux version's RACK and TLP code the sender follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossEra {
    /// Linux 4.9 (`tcp_recovery` = 1, `tcp_early_retrans` = 3): RACK only in Recovery and
    /// Loss, beside DupThresh, a 1 ms reordering window on send times, no reordering timer;
    /// PTO = max(2 SRTT, 10 ms), with one segment out at least 1.5 SRTT + 200 ms.
    Linux4_9,
    /// Linux 6.1: RACK is the loss detection (no DupThresh), RTT + reo_wnd with the
    /// reordering timer; PTO = 2 SRTT + 2 ms, with one segment out 2 SRTT + 200 ms.
    Linux6_1,
}

/// Linux's receive-buffer settings (net/ipv4/tcp_input.c, include/net/tcp.h).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RcvBuf {
    /// `tcp_rmem`: min, default (the initial `sk_rcvbuf`), max (autotuning's ceiling), bytes.
    pub rmem: [u64; 3],
    /// `tcp_adv_win_scale`: the window is `space − space / 2^scale` (2.4: 2, later 1).
    pub adv_win_scale: u8,
    /// `tcp_moderate_rcvbuf`: receive-buffer autotuning (`tcp_rcv_space_adjust`, Linux ≥ 2.6.7).
    pub autotune: bool,
}

/// Linux's send-buffer settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SndBuf {
    /// `tcp_wmem`: min, default (the initial `sk_sndbuf`), max (the ceiling of its growth).
    pub wmem: [u64; 3],
}

/// TCP Small Queues (Linux ≥ 3.6, `tcp_small_queue_check`): a socket sends no more while the
/// bytes (truesize) of its packets in the qdisc and device exceed
/// min(`limit_output_bytes`, max(2 truesize, pacing rate >> `pacing_shift`)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tsq {
    /// `tcp_limit_output_bytes`.
    pub limit_output_bytes: u64,
    /// `sk_pacing_shift`: 10 (about 1 ms of data); mac80211 sets 7 (about 8 ms) on sockets
    /// whose traffic leaves through a WiFi device (`tx_sk_pacing_shift`, Linux ≥ 5.1).
    pub pacing_shift: u8,
    /// Whether the host applies mac80211's shift to sockets sending over WiFi.
    pub wifi_pacing_shift: Option<u8>,
}

/// The memory Linux charges for one segment of `mss` payload bytes besides the payload:
/// `MAX_TCP_HEADER` (320 on x86-64 in Linux 6.1) + `SKB_DATA_ALIGN(sizeof(struct sk_buff))`
/// (256) + `SKB_DATA_ALIGN(sizeof(struct skb_shared_info))` (320): `SKB_TRUESIZE(mss +
/// MAX_TCP_HEADER)`. Used for the socket buffers and TCP Small Queues in every era (2.4's
/// structures were smaller; documented deviation).
pub const SKB_TRUESIZE_OVERHEAD: u64 = 320 + 256 + 320;

/// `truesize` of a segment of `len` payload bytes.
#[inline]
pub const fn skb_truesize(len: u64) -> u64 {
    len + SKB_TRUESIZE_OVERHEAD
}

/// Linux `tcp_win_from_space` (before 6.6's scaling ratio): the part of `space` bytes of
/// buffer offered as window.
#[inline]
pub const fn win_from_space(space: u64, adv_win_scale: u8) -> u64 {
    space - (space >> adv_win_scale)
}

/// The Linux generations whose TCP defaults the model offers, chosen per node by `tcp`
/// (`kernel` key) and overridden per flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KernelEra {
    /// Linux 2.4.20 (the testbeds of 2003-2004): NewReno with SACK, initial window 2
    /// segments, `tcp_rmem` = 4096 87380 174760 with `tcp_adv_win_scale` = 2 (a 64 KiB
    /// window), no autotuning, `tcp_wmem` = 4096 16384 131072, no TCP Small Queues.
    Linux2_4,
    /// Linux 4.9 (LTS): CUBIC, IW10, `tcp_rmem` = 4096 87380 6291456 with autotuning,
    /// `tcp_adv_win_scale` = 1, `tcp_wmem` = 4096 16384 4194304, TSQ at 262144 bytes with
    /// `sk_pacing_shift` 10 (mac80211 did not set its own before 5.1).
    Linux4_9,
    /// Linux 6.1 (LTS): CUBIC, IW10, `tcp_rmem` = 4096 131072 6291456 with autotuning,
    /// `tcp_adv_win_scale` = 1, `tcp_wmem` = 4096 16384 4194304, TSQ at 1048576 bytes,
    /// `sk_pacing_shift` 10 on wired devices and mac80211's 7 on WiFi.
    Linux6_1,
}

crate::words::words!(
    KernelEra:
    "2.4" => KernelEra::Linux2_4,
    "2.4.20" => KernelEra::Linux2_4,
    "4.9" => KernelEra::Linux4_9,
    "4.x" => KernelEra::Linux4_9,
    "6.1" => KernelEra::Linux6_1,
    "6.x" => KernelEra::Linux6_1,
);

impl KernelEra {
    /// The congestion control the era uses by default (2.4: NewReno; CUBIC since 2.6.19).
    pub fn default_cc(self) -> CcKind {
        match self {
            KernelEra::Linux2_4 => CcKind::NewReno,
            _ => CcKind::Cubic,
        }
    }

    /// The era's defaults, with congestion control `cc`.
    pub fn config(self, cc: CcKind) -> TcpConfig {
        let mut c = TcpConfig::new(cc);
        match self {
            KernelEra::Linux2_4 => {
                // 2.4: tp->snd_cwnd = 2 at connection start (tcp_init_metrics / RFC 2414).
                c.initial_cwnd_segments = 2;
                c.rcvbuf = Some(RcvBuf { rmem: [4096, 87380, 174760], adv_win_scale: 2, autotune: false });
                c.sndbuf = Some(SndBuf { wmem: [4096, 16384, 131072] });
                c.tsq = None;
                // 2.4 has none of RACK (4.4), TLP (3.10), F-RTO (2.6.24 in its RFC 5682 form).
            }
            KernelEra::Linux4_9 => {
                c.rack = Some(LossEra::Linux4_9);
                c.tlp = Some(LossEra::Linux4_9);
                c.frto = true;
                c.rcvbuf = Some(RcvBuf { rmem: [4096, 87380, 6291456], adv_win_scale: 1, autotune: true });
                c.sndbuf = Some(SndBuf { wmem: [4096, 16384, 4194304] });
                c.tsq = Some(Tsq { limit_output_bytes: 262144, pacing_shift: 10, wifi_pacing_shift: None });
            }
            KernelEra::Linux6_1 => {
                c.rack = Some(LossEra::Linux6_1);
                c.tlp = Some(LossEra::Linux6_1);
                c.frto = true;
                c.rcvbuf = Some(RcvBuf { rmem: [4096, 131072, 6291456], adv_win_scale: 1, autotune: true });
                c.sndbuf = Some(SndBuf { wmem: [4096, 16384, 4194304] });
                c.tsq = Some(Tsq { limit_output_bytes: 1048576, pacing_shift: 10, wifi_pacing_shift: Some(7) });
            }
        }
        if let Some(r) = c.rcvbuf {
            // The window the sender assumes before the first ACK (no handshake carries it).
            c.rcv_wnd = win_from_space(r.rmem[1], r.adv_win_scale);
        }
        c
    }
}

impl TcpConfig {
    pub fn new(cc: CcKind) -> TcpConfig {
        TcpConfig {
            mss: DEFAULT_MSS,
            cc,
            initial_cwnd_segments: INITIAL_CWND_SEGMENTS,
            rto_min: RTO_MIN,
            rto_max: RTO_MAX,
            rto_initial: RTO_INITIAL,
            rcv_wnd: DEFAULT_RCV_WND,
            delack_timeout: DELACK_TIMEOUT,
            sack: true,
            rcvbuf: None,
            sndbuf: None,
            tsq: None,
            rack: None,
            tlp: None,
            frto: false,
        }
    }
}

impl Default for TcpConfig {
    fn default() -> TcpConfig {
        TcpConfig::new(CcKind::Cubic)
    }
}
