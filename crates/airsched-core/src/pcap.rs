//! Packet captures of the simulated air and wire, as a monitor-mode sniffer and a wired tap
//! would record them: classic pcap files with nanosecond timestamps (the simulated clock),
//! radiotap + 802.11 (link type 127) for the channel and for each radio, Ethernet (link type 1)
//! for the wired link. An observer only: it reads what the exchange already decided and never
//! draws a random number, so a run with a tap gives the results of a run without one.
//!
//! Frames are truncated to their headers (radiotap, 802.11 MAC header, LLC/SNAP, IPv4 and the
//! transport header): `incl_len` is what is stored, `orig_len` the frame's length on the air
//! (FCS included) or on the wire (Ethernet header and FCS included).
//!
//! Each packet carries the transport header of what it is ([`Transport`]): UDP (RFC 768); a TCP
//! data segment or ACK (RFC 9293) with its sequence and acknowledgment numbers, the ACK flag, the
//! advertised window and the options Linux sends on an established connection (NOP, NOP,
//! timestamps, RFC 7323; NOP, NOP, SACK blocks, RFC 2018); an ICMP echo request (type 8) or
//! reply (type 0) with its identifier and sequence number (RFC 792). The IPv4 header (RFC 791)
//! and every transport checksum are valid for the packet's payload, which airsched does not carry
//! and the capture counts as zero bytes. Deviations, since the model has no handshake: both ends'
//! initial sequence numbers are 0 (the first data byte is sequence number 1), the window scale is
//! Linux's 7 (`tcp_select_initial_window` with the default 6 MB `tcp_rmem` maximum) though no SYN
//! says so, and a data segment's TSecr is 0 and its window the sender's default 64 KiB. The layout follows the
//! radiotap specification (radiotap.org, fields aligned to their size from the header start)
//! and IEEE 802.11-2016 9.2-9.3; ns-3's `WifiPhyHelper::GetRadiotapHeader` writes the same
//! field set.
//!
//! Addresses: WiFi node n (0 the AP, station i is node i + 1) is 02:00:00:00:01:nn, the AP's
//! BSSID its own address; the server's wired device is 02:00:00:00:00:fe, the AP's 02:00:00:00:00:01.

use crate::packet::{FlowKey, Packet};
use crate::phy::dsss::{DsssRate, Preamble};
use crate::phy::ht::{ChannelWidth, GuardInterval};
use crate::phy::TxRate;
use crate::time::Nanos;

/// `LINKTYPE_IEEE802_11_RADIOTAP` and `LINKTYPE_ETHERNET`.
pub const LINKTYPE_RADIOTAP: u32 = 127;
pub const LINKTYPE_ETHERNET: u32 = 1;
/// Bytes of each frame kept: enough for radiotap (36), the QoS data header (26), LLC/SNAP (8),
/// IPv4 (20) and the longest TCP header (60).
pub const SNAPLEN: u32 = 160;
/// The TCP window scale the captures assume (Linux's for its default `tcp_rmem`).
pub const TCP_WSCALE: u32 = 7;
/// The window a TCP data segment advertises (its sender receives no data), bytes.
pub const TCP_SENDER_WINDOW: u64 = 65_535 << TCP_WSCALE;

/// What a flow's packets are, for their transport header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    Udp,
    /// A TCP data segment (the flow's sender to its receiver).
    TcpSegment,
    /// A TCP ACK (a TCP flow's `.ack` flow).
    TcpAck,
    /// An ICMP echo request of a ping flow, `id` its identifier.
    EchoRequest {
        id: u16,
    },
    /// An ICMP echo reply (a ping flow's `.reply` flow), `id` the request's identifier.
    EchoReply {
        id: u16,
    },
    /// A live-emulation packet (`Protocol::External`): its real bytes stay in the emulator,
    /// so the capture holds its IPv4 header (the bound 5-tuple's protocol) and is cut there
    /// (a snap length shorter than the packet, which tshark marks as such).
    Opaque,
}
/// The noise floor the radiotap "antenna noise" field reports, dBm (thermal noise in 20 MHz,
/// -101 dBm, plus a 7 dB noise figure); the signal is this plus the frame's SNR.
pub const NOISE_DBM: i32 = -94;
/// SNR reported for a station without radio conditions (a perfect channel has none), dB.
pub const PERFECT_SNR_DB: i32 = 40;

/// The AP's wired device and the server's, as they appear in the Ethernet capture.
pub const AP_ETH_MAC: [u8; 6] = [2, 0, 0, 0, 0, 1];
pub const SERVER_ETH_MAC: [u8; 6] = [2, 0, 0, 0, 0, 0xfe];

/// The 802.11 address of WiFi node `node`.
pub fn wifi_mac(node: u32) -> [u8; 6] {
    [2, 0, 0, 0, 1 + (node >> 8) as u8, node as u8]
}

/// What the tap needs of a frame on the air.
#[derive(Clone, Copy, Debug)]
pub enum Kind<'a> {
    /// A data MPDU from WiFi node `from` to `to` (one of them the AP); `tid` for QoS data
    /// (802.11n), None for plain data (802.11b).
    Data { from: u32, to: u32, retry: bool, tid: Option<u8>, seq: u16, key: FlowKey, pkt: Packet },
    /// An ACK (or, `block`, a BlockAck) from `from` to `to`.
    Ack { from: u32, to: u32, block: bool },
    /// The AP's beacon.
    Beacon,
    /// An 802.11ax AP's BlockAckReq to station node `to` in a DL MU acknowledgement sequence.
    BlockAckReq { to: u32 },
    /// An 802.11ax AP's Basic Trigger (a BSRP one with `bsrp`) soliciting the station nodes
    /// `users[..n]` (broadcast).
    Trigger { users: &'a [u32], bsrp: bool },
    /// A station node's QoS Null frame (in an HE TB PPDU: nothing of the triggered category
    /// queued) with the Queue Size it reports for `tid`.
    QosNull { from: u32, tid: u8, queue_size: u8 },
    /// An 802.11ax AP's Multi-STA BlockAck (broadcast): per station node an all-ack context
    /// (`all_ack`) or a BlockAck context.
    MultiStaBa { users: &'a [(u32, bool)] },
}

/// The PHY side of a frame: when it started, its rate, how it was received.
#[derive(Clone, Copy, Debug)]
pub struct Phy {
    pub start: Nanos,
    pub rate: TxRate,
    /// Its length on the air, FCS included.
    pub len: u32,
    /// The receiver decoded it (false: collided or lost to noise; radiotap "bad FCS").
    pub fcs_ok: bool,
    /// SNR at its receiver, centi-dB (None: a perfect channel).
    pub snr_cdb: Option<i32>,
    /// Part of an A-MPDU: its reference number and whether it is the last MPDU.
    pub ampdu: Option<(u32, bool)>,
}

/// The PHY settings shared by every frame of the cell.
#[derive(Clone, Copy, Debug)]
pub struct CellPhy {
    pub preamble: Preamble,
    pub width: ChannelWidth,
    pub gi: GuardInterval,
    /// Channel centre frequency and radiotap channel flags.
    pub freq_mhz: u16,
    pub band_5ghz: bool,
}

/// One pcap file being written in memory.
pub struct Capture {
    pub name: String,
    pub bytes: Vec<u8>,
    pub frames: u64,
}

impl Capture {
    fn new(name: String, linktype: u32) -> Capture {
        let mut bytes = Vec::with_capacity(1 << 16);
        bytes.extend_from_slice(&0xa1b2_3c4du32.to_le_bytes()); // nanosecond timestamps
        bytes.extend_from_slice(&2u16.to_le_bytes());
        bytes.extend_from_slice(&4u16.to_le_bytes());
        bytes.extend_from_slice(&0i32.to_le_bytes()); // thiszone
        bytes.extend_from_slice(&0u32.to_le_bytes()); // sigfigs
        bytes.extend_from_slice(&SNAPLEN.to_le_bytes());
        bytes.extend_from_slice(&linktype.to_le_bytes());
        Capture { name, bytes, frames: 0 }
    }

    fn record(&mut self, t: Nanos, frame: &[u8], orig_len: u32) {
        let incl = frame.len().min(SNAPLEN as usize);
        self.bytes.extend_from_slice(&((t.0 / 1_000_000_000) as u32).to_le_bytes());
        self.bytes.extend_from_slice(&((t.0 % 1_000_000_000) as u32).to_le_bytes());
        self.bytes.extend_from_slice(&(incl as u32).to_le_bytes());
        self.bytes.extend_from_slice(&orig_len.max(incl as u32).to_le_bytes());
        self.bytes.extend_from_slice(&frame[..incl]);
        self.frames += 1;
    }
}

/// The captures of one run: the channel as a sniffer hears it, each radio (what it sent, and
/// what was addressed to it, beacons included), and the wired link.
pub struct Tap {
    phy: CellPhy,
    pub air: Capture,
    pub radios: Vec<Capture>,
    pub wire: Capture,
    /// Per WiFi node: the 802.11 sequence number of its next new plain data frame.
    seq: Vec<u16>,
    /// Per flow: what its packets are.
    transports: Vec<Transport>,
    beacon_seq: u16,
    ampdu_ref: u32,
    buf: Vec<u8>,
}

impl Tap {
    /// A tap for a cell whose WiFi nodes are named `radios` (the AP first) and whose flows
    /// (reply flows included) carry `transports`.
    pub fn new(phy: CellPhy, radios: &[String], transports: Vec<Transport>) -> Tap {
        Tap {
            phy,
            air: Capture::new("air".into(), LINKTYPE_RADIOTAP),
            radios: radios.iter().map(|r| Capture::new(r.clone(), LINKTYPE_RADIOTAP)).collect(),
            wire: Capture::new("wire".into(), LINKTYPE_ETHERNET),
            seq: vec![0; radios.len()],
            transports,
            beacon_seq: 0,
            ampdu_ref: 0,
            buf: Vec::with_capacity(SNAPLEN as usize),
        }
    }

    /// Every capture, the channel's first, then the radios', then the wire's.
    pub fn into_captures(self) -> Vec<Capture> {
        let mut out = vec![self.air];
        out.extend(self.radios);
        out.push(self.wire);
        out
    }

    /// The sequence number of a plain data frame of node `from`: a new one on a first attempt.
    pub fn next_seq(&mut self, from: u32, first_attempt: bool) -> u16 {
        let s = &mut self.seq[from as usize];
        if first_attempt {
            *s = s.wrapping_add(1) & 0x0fff;
        }
        *s
    }

    /// The reference number of the next A-MPDU.
    pub fn next_ampdu_ref(&mut self) -> u32 {
        self.ampdu_ref += 1;
        self.ampdu_ref
    }

    /// A frame on the air.
    pub fn air_frame(&mut self, kind: Kind<'_>, phy: Phy) {
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        self.radiotap(&mut buf, &phy);
        let (from, to) = match kind {
            Kind::Data { from, to, retry, tid, seq, key, pkt } => {
                dot11_data(&mut buf, from, to, retry, tid, seq);
                buf.extend_from_slice(&[0xaa, 0xaa, 0x03, 0, 0, 0, 0x08, 0x00]);
                self.ip_datagram(&mut buf, &key, &pkt);
                (from, Some(to))
            }
            Kind::Ack { from, to, block } => {
                buf.extend_from_slice(&[if block { 0x94 } else { 0xd4 }, 0, 0, 0]);
                buf.extend_from_slice(&wifi_mac(to));
                if block {
                    buf.extend_from_slice(&wifi_mac(from));
                    buf.extend_from_slice(&[0x04, 0, 0, 0]); // compressed bitmap; SSN 0
                    buf.extend_from_slice(&[0; 8]);
                }
                (from, Some(to))
            }
            Kind::BlockAckReq { to } => {
                // BlockAckReq (9.3.1.7): BAR Control (compressed, TID 0), Starting Sequence
                // Control 0.
                buf.extend_from_slice(&[0x84, 0, 0, 0]);
                buf.extend_from_slice(&wifi_mac(to));
                buf.extend_from_slice(&wifi_mac(0));
                buf.extend_from_slice(&[0x04, 0, 0, 0]);
                (0, Some(to))
            }
            Kind::Trigger { users, bsrp } => {
                // Trigger frame (9.3.1.22), RA broadcast: Common Info (Trigger Type 0, Basic,
                // or 4, BSRP; UL Length not reconstructed), then a User Info field per station
                // with its AID12 (the node number), a Basic one's with its Trigger Dependent
                // User Info octet.
                buf.extend_from_slice(&[0x24, 0, 0, 0]);
                buf.extend_from_slice(&[0xff; 6]);
                buf.extend_from_slice(&wifi_mac(0));
                buf.extend_from_slice(&[if bsrp { 4 } else { 0 }, 0, 0, 0, 0, 0, 0, 0]);
                for &u in users {
                    buf.extend_from_slice(&((u & 0x0fff) as u16).to_le_bytes());
                    buf.extend_from_slice(if bsrp { &[0; 3] } else { &[0; 4] });
                }
                (0, None)
            }
            Kind::QosNull { from, tid, queue_size } => {
                // QoS Null (subtype 12), ToDS; QoS Control: TID, bit 4 set (the Queue Size
                // subfield present), the Queue Size in the second octet.
                buf.extend_from_slice(&[0xc8, 0x01, 0, 0]);
                buf.extend_from_slice(&wifi_mac(0));
                buf.extend_from_slice(&wifi_mac(from));
                buf.extend_from_slice(&wifi_mac(0));
                buf.extend_from_slice(&[0, 0, tid | 0x10, queue_size]);
                (from, Some(0))
            }
            Kind::MultiStaBa { users } => {
                // BlockAck (9.3.1.8.7), RA broadcast, BA Control's type 11 (Multi-STA); per
                // station its AID TID Info (Ack Type bit 11 set for an all-ack context), a
                // BlockAck context adding Starting Sequence Control 0 and the bitmap.
                buf.extend_from_slice(&[0x94, 0, 0, 0]);
                buf.extend_from_slice(&[0xff; 6]);
                buf.extend_from_slice(&wifi_mac(0));
                buf.extend_from_slice(&[11 << 1, 0]);
                for &(u, all_ack) in users {
                    let info = (u & 0x07ff) as u16 | u16::from(all_ack) << 11;
                    buf.extend_from_slice(&info.to_le_bytes());
                    if !all_ack {
                        buf.extend_from_slice(&[0, 0]);
                        buf.extend_from_slice(&[0xff; 32]);
                    }
                }
                (0, None)
            }
            Kind::Beacon => {
                self.beacon_seq = self.beacon_seq.wrapping_add(1) & 0x0fff;
                buf.extend_from_slice(&[0x80, 0, 0, 0]);
                buf.extend_from_slice(&[0xff; 6]);
                buf.extend_from_slice(&wifi_mac(0));
                buf.extend_from_slice(&wifi_mac(0));
                buf.extend_from_slice(&(self.beacon_seq << 4).to_le_bytes());
                buf.extend_from_slice(&(phy.start.0 / 1000).to_le_bytes()); // TSF, µs
                buf.extend_from_slice(&100u16.to_le_bytes()); // beacon interval, TU
                buf.extend_from_slice(&0x0001u16.to_le_bytes()); // ESS
                buf.extend_from_slice(&[0, 8]);
                buf.extend_from_slice(b"airsched");
                (0, None)
            }
        };
        let orig = phy.len + (buf.len() as u32 - dot11_len(&buf));
        self.air.record(phy.start, &buf, orig);
        self.radios[from as usize].record(phy.start, &buf, orig);
        match to {
            Some(to) => self.radios[to as usize].record(phy.start, &buf, orig),
            None => {
                for r in self.radios.iter_mut().skip(1) {
                    r.record(phy.start, &buf, orig);
                }
            }
        }
        self.buf = buf;
    }

    /// A packet starts on the wired link at `t`, from the server (`from_server`) or the AP.
    pub fn wire_frame(&mut self, t: Nanos, from_server: bool, key: &FlowKey, pkt: &Packet) {
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        let (dst, src) = if from_server { (AP_ETH_MAC, SERVER_ETH_MAC) } else { (SERVER_ETH_MAC, AP_ETH_MAC) };
        buf.extend_from_slice(&dst);
        buf.extend_from_slice(&src);
        buf.extend_from_slice(&[0x08, 0x00]);
        self.ip_datagram(&mut buf, key, pkt);
        // Ethernet header 14 and FCS 4 around the datagram.
        self.wire.record(t, &buf, pkt.ip_len + 18);
        self.buf = buf;
    }

    /// The IPv4 header and the transport header of `pkt` (see the module's documentation).
    fn ip_datagram(&self, buf: &mut Vec<u8>, key: &FlowKey, pkt: &Packet) {
        let transport = self.transports.get(pkt.flow as usize).copied().unwrap_or(Transport::Udp);
        let tcp = matches!(transport, Transport::TcpSegment | Transport::TcpAck);
        let ip_len = pkt.ip_len.min(65_535);
        let ip = buf.len();
        buf.extend_from_slice(&[0x45, key.tos]);
        buf.extend_from_slice(&(ip_len as u16).to_be_bytes());
        // Linux sends TCP with DF and IP ID 0 (PMTU discovery); ICMP and UDP get an ID each.
        let (id, frag) = if tcp { (0u16, 0x4000u16) } else { (pkt.seq as u16, 0) };
        buf.extend_from_slice(&id.to_be_bytes());
        buf.extend_from_slice(&frag.to_be_bytes());
        buf.extend_from_slice(&[64, key.proto, 0, 0]);
        buf.extend_from_slice(&key.src_ip.to_be_bytes());
        buf.extend_from_slice(&key.dst_ip.to_be_bytes());
        let sum = checksum(0, &buf[ip..ip + 20]);
        buf[ip + 10..ip + 12].copy_from_slice(&sum.to_be_bytes());
        let l4 = buf.len();
        let l4_len = ip_len.saturating_sub(20);
        match transport {
            Transport::Udp => {
                buf.extend_from_slice(&key.sport.to_be_bytes());
                buf.extend_from_slice(&key.dport.to_be_bytes());
                buf.extend_from_slice(&(l4_len as u16).to_be_bytes());
                buf.extend_from_slice(&[0, 0]);
            }
            Transport::TcpSegment | Transport::TcpAck => {
                let segment = transport == Transport::TcpSegment;
                // The header: ip_len less the IP header and the payload (20, the timestamps, SACK).
                let hdr = (pkt.ip_len.saturating_sub(20 + pkt.payload)).clamp(20, 60) & !3;
                let (seq, ack) = if segment { (1 + pkt.seq, 1) } else { (1, 1 + pkt.ack) };
                let wnd = if segment { TCP_SENDER_WINDOW } else { pkt.wnd };
                buf.extend_from_slice(&key.sport.to_be_bytes());
                buf.extend_from_slice(&key.dport.to_be_bytes());
                buf.extend_from_slice(&(seq as u32).to_be_bytes());
                buf.extend_from_slice(&(ack as u32).to_be_bytes());
                buf.extend_from_slice(&[((hdr / 4) << 4) as u8, 0x10]); // data offset; ACK
                buf.extend_from_slice(&((wnd >> TCP_WSCALE).min(65_535) as u16).to_be_bytes());
                buf.extend_from_slice(&[0, 0, 0, 0]); // checksum (below), urgent pointer
                                                      // Timestamps in milliseconds (Linux's tcp_time_stamp_ts): a segment's TSval is
                                                      // its send time; an ACK's TSval its own send time and TSecr the segment's TSval.
                let ms = |t: Nanos| (t.0 / 1_000_000) as u32;
                let (tsval, tsecr) = if segment { (ms(pkt.echo), 0) } else { (ms(pkt.created), ms(pkt.echo)) };
                let mut opts = [1u8; 40];
                opts[2] = 8;
                opts[3] = 10;
                opts[4..8].copy_from_slice(&tsval.to_be_bytes());
                opts[8..12].copy_from_slice(&tsecr.to_be_bytes());
                let room = hdr as usize - 20;
                let blocks = pkt.sack.chunks(2).take_while(|b| b[1] != 0).count().min((room.saturating_sub(16)) / 8);
                if !segment && blocks > 0 {
                    opts[14] = 5;
                    opts[15] = (2 + 8 * blocks) as u8;
                    for (i, b) in pkt.sack.chunks(2).take(blocks).enumerate() {
                        let at = 16 + 8 * i;
                        opts[at..at + 4].copy_from_slice(&((ack + b[0] as u64) as u32).to_be_bytes());
                        opts[at + 4..at + 8].copy_from_slice(&((ack + b[1] as u64) as u32).to_be_bytes());
                    }
                }
                buf.extend_from_slice(&opts[..room.min(40)]);
                let pseudo = pseudo_header_sum(key, 6, l4_len);
                let sum = checksum(pseudo, &buf[l4..]);
                buf[l4 + 16..l4 + 18].copy_from_slice(&sum.to_be_bytes());
            }
            Transport::EchoRequest { id } | Transport::EchoReply { id } => {
                let kind = if matches!(transport, Transport::EchoRequest { .. }) { 8 } else { 0 };
                buf.extend_from_slice(&[kind, 0, 0, 0]);
                buf.extend_from_slice(&id.to_be_bytes());
                buf.extend_from_slice(&(pkt.seq as u16).to_be_bytes());
                let sum = checksum(0, &buf[l4..]);
                buf[l4 + 2..l4 + 4].copy_from_slice(&sum.to_be_bytes());
            }
            Transport::Opaque => {}
        }
        if transport == Transport::Udp {
            let sum = checksum(pseudo_header_sum(key, 17, l4_len), &buf[l4..]);
            // RFC 768: a computed zero is sent as all ones (zero means "no checksum").
            let sum = if sum == 0 { 0xffff } else { sum };
            buf[l4 + 6..l4 + 8].copy_from_slice(&sum.to_be_bytes());
        }
    }

    /// The radiotap header: TSFT, Flags, Rate (DSSS/OFDM) or MCS + A-MPDU status (HT),
    /// Channel, antenna signal and noise.
    fn radiotap(&self, buf: &mut Vec<u8>, phy: &Phy) {
        let ht = matches!(phy.rate, TxRate::Ht(_) | TxRate::Vht(_) | TxRate::He(_));
        // Bits: 0 TSFT, 1 Flags, 2 Rate, 3 Channel, 5 signal, 6 noise, 19 MCS, 20 A-MPDU,
        // 21 VHT, 23 HE.
        let mut present: u32 = 1 | 1 << 1 | 1 << 3 | 1 << 5 | 1 << 6;
        if ht {
            present |= match phy.rate {
                TxRate::Vht(_) => 1 << 21,
                TxRate::He(_) => 1 << 23,
                _ => 1 << 19,
            };
            if phy.ampdu.is_some() {
                present |= 1 << 20;
            }
        } else {
            present |= 1 << 2;
        }
        let start = buf.len();
        buf.extend_from_slice(&[0, 0, 0, 0]); // version, pad, length (set below)
        buf.extend_from_slice(&present.to_le_bytes());
        buf.extend_from_slice(&(phy.start.0 / 1000).to_le_bytes()); // TSFT at offset 8
        let short_preamble = !ht && self.phy.preamble == Preamble::Short;
        let mut flags = 0u8;
        if short_preamble {
            flags |= 0x02;
        }
        if !phy.fcs_ok {
            flags |= 0x40;
        }
        buf.push(flags);
        let (chan_flags, rate) = match phy.rate {
            TxRate::Dsss(r) => (0x0020 | 0x0080, Some(dsss_rate_500k(r))),
            TxRate::Ofdm(r) => (0x0040 | self.band_flag(), Some((r.mbps() * 2) as u8)),
            TxRate::Ht(_) | TxRate::Vht(_) | TxRate::He(_) => (0x0040 | self.band_flag(), None),
        };
        if let Some(r) = rate {
            buf.push(r);
        } else {
            buf.push(0); // pad the Channel field to 2 bytes
        }
        buf.extend_from_slice(&self.phy.freq_mhz.to_le_bytes());
        buf.extend_from_slice(&chan_flags.to_le_bytes());
        let snr_db = phy.snr_cdb.map_or(PERFECT_SNR_DB, |c| (c as f64 / 100.0).round() as i32);
        buf.push((NOISE_DBM + snr_db).clamp(-128, 127) as i8 as u8);
        buf.push(NOISE_DBM as i8 as u8);
        if let TxRate::Ht(mcs) = phy.rate {
            let known = 0x01 | 0x02 | 0x04; // bandwidth, MCS index, guard interval
            let mut f = if self.phy.width == ChannelWidth::Mhz40 { 1 } else { 0 };
            if self.phy.gi == GuardInterval::Short {
                f |= 0x04;
            }
            buf.extend_from_slice(&[known, f, mcs.index()]);
        }
        if ht {
            if let Some((reference, last)) = phy.ampdu {
                while !(buf.len() - start).is_multiple_of(4) {
                    buf.push(0);
                }
                buf.extend_from_slice(&reference.to_le_bytes());
                let aflags: u16 = 0x0004 | if last { 0x0008 } else { 0 }; // last known, is last
                buf.extend_from_slice(&aflags.to_le_bytes());
                buf.extend_from_slice(&[0, 0]);
            }
        }
        wide_radiotap(buf, start, phy.rate);
        let len = (buf.len() - start) as u16;
        buf[start + 2..start + 4].copy_from_slice(&len.to_le_bytes());
    }

    fn band_flag(&self) -> u16 {
        if self.phy.band_5ghz {
            0x0100
        } else {
            0x0080
        }
    }
}

/// The 802.11 header of a data frame (plain or QoS) between the AP and a station.
fn dot11_data(buf: &mut Vec<u8>, from: u32, to: u32, retry: bool, tid: Option<u8>, seq: u16) {
    let subtype = if tid.is_some() { 0x88 } else { 0x08 };
    let mut fc1 = if from == 0 { 0x02 } else { 0x01 }; // FromDS down, ToDS up
    if retry {
        fc1 |= 0x08;
    }
    buf.extend_from_slice(&[subtype, fc1, 0, 0]);
    let (a1, a2, a3) =
        if from == 0 { (wifi_mac(to), wifi_mac(0), wifi_mac(0)) } else { (wifi_mac(0), wifi_mac(from), wifi_mac(0)) };
    buf.extend_from_slice(&a1);
    buf.extend_from_slice(&a2);
    buf.extend_from_slice(&a3);
    buf.extend_from_slice(&(seq << 4).to_le_bytes());
    if let Some(t) = tid {
        buf.extend_from_slice(&[t, 0]);
    }
}

/// The ones' complement sum of the TCP/UDP pseudo-header (RFC 9293 3.1, RFC 768), unfolded.
fn pseudo_header_sum(key: &FlowKey, proto: u8, l4_len: u32) -> u32 {
    let words = [key.src_ip >> 16, key.src_ip & 0xffff, key.dst_ip >> 16, key.dst_ip & 0xffff, proto as u32, l4_len];
    words.iter().sum()
}

/// The Internet checksum (RFC 1071) of `data` after the partial sum `initial`; the payload the
/// capture leaves out is zero bytes, which add nothing to it.
fn checksum(initial: u32, data: &[u8]) -> u16 {
    let mut sum = initial as u64;
    for pair in data.chunks(2) {
        sum += (u16::from(pair[0]) << 8 | u16::from(*pair.get(1).unwrap_or(&0))) as u64;
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Bytes of `buf` after the radiotap header (the 802.11 frame as stored).
fn dot11_len(buf: &[u8]) -> u32 {
    buf.len() as u32 - u16::from_le_bytes([buf[2], buf[3]]) as u32
}

fn dsss_rate_500k(r: DsssRate) -> u8 {
    match r {
        DsssRate::R1 => 2,
        DsssRate::R2 => 4,
        DsssRate::R5_5 => 11,
        DsssRate::R11 => 22,
    }
}

/// The radiotap VHT (bit 21) or HE (bit 23) field of a VHT/HE frame (radiotap.org field
/// definitions): VHT: known (GI, bandwidth), flags, bandwidth, MCS/NSS of user 0; HE: data1-6
/// with the PPDU format, MCS, bandwidth, GI, HE-LTF size and streams.
fn wide_radiotap(buf: &mut Vec<u8>, start: usize, rate: TxRate) {
    let align2 = |buf: &mut Vec<u8>| {
        if !(buf.len() - start).is_multiple_of(2) {
            buf.push(0);
        }
    };
    match rate {
        TxRate::Vht(t) => {
            align2(buf);
            let known: u16 = 0x0004 | 0x0040;
            let flags = if t.gi == GuardInterval::Short { 0x04 } else { 0 };
            let bw = match t.width.mhz() {
                20 => 0,
                40 => 1,
                80 => 4,
                _ => 11,
            };
            buf.extend_from_slice(&known.to_le_bytes());
            buf.extend_from_slice(&[flags, bw, t.mcs << 4 | t.nss, 0, 0, 0, 0, 0, 0, 0]);
        }
        TxRate::He(t) => {
            use crate::phy::he::{HeFormat, HeGi, HeLtf};
            align2(buf);
            let format: u16 = match t.format {
                HeFormat::Su => 0,
                HeFormat::ErSu => 1,
                HeFormat::Mu => 2,
                HeFormat::Tb => 3,
            };
            let data1 = format | 0x0020 | 0x4000; // data MCS known, data BW/RU allocation known
            let data2: u16 = 0x0002; // GI known
            let data3 = u16::from(t.mcs) << 8;
            // Data Bandwidth/RU Allocation: the channel width of an SU PPDU (0-3), the
            // user's RU in an MU or TB PPDU (4-10: 26 to 2x996 tones).
            let multi_user = matches!(t.format, HeFormat::Mu | HeFormat::Tb);
            let bw: u16 = match (multi_user, t.ru.tones()) {
                (false, 242) => 0,
                (false, 484) => 1,
                (false, 996) => 2,
                (false, _) => 3,
                (true, 26) => 4,
                (true, 52) => 5,
                (true, 106) => 6,
                (true, 242) => 7,
                (true, 484) => 8,
                (true, 996) => 9,
                (true, _) => 10,
            };
            let gi: u16 = match t.gi {
                HeGi::Us0_8 => 0,
                HeGi::Us1_6 => 1,
                HeGi::Us3_2 => 2,
            };
            let ltf: u16 = match t.ltf {
                HeLtf::X1 => 1,
                HeLtf::X2 => 2,
                HeLtf::X4 => 3,
            };
            let data5 = bw | gi << 4 | ltf << 6;
            let data6 = u16::from(t.nss);
            for w in [data1, data2, data3, 0, data5, data6] {
                buf.extend_from_slice(&w.to_le_bytes());
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::phy::ht::HtMcs;

    fn cell() -> CellPhy {
        CellPhy {
            preamble: Preamble::Long,
            width: ChannelWidth::Mhz20,
            gi: GuardInterval::Long,
            freq_mhz: 2412,
            band_5ghz: false,
        }
    }

    #[test]
    fn radiotap_layouts_follow_the_alignment_rules() {
        // 802.11b: TSFT 8, Flags 16, Rate 17, Channel 18-21, signal 22, noise 23: 24 bytes.
        let tap = Tap::new(cell(), &["ap".into()], Vec::new());
        let mut buf = Vec::new();
        let p = Phy {
            start: Nanos(1_500_000),
            rate: TxRate::Dsss(DsssRate::R11),
            len: 100,
            fcs_ok: false,
            snr_cdb: Some(1250),
            ampdu: None,
        };
        tap.radiotap(&mut buf, &p);
        assert_eq!(buf.len(), 24);
        assert_eq!(u32::from_le_bytes(buf[4..8].try_into().unwrap()), 0x6f);
        assert_eq!(u64::from_le_bytes(buf[8..16].try_into().unwrap()), 1500);
        assert_eq!((buf[16], buf[17]), (0x40, 22));
        assert_eq!(u16::from_le_bytes([buf[18], buf[19]]), 2412);
        assert_eq!((buf[22] as i8, buf[23] as i8), (-94 + 13, -94));
        // HT in an A-MPDU: MCS at 24-26, A-MPDU status aligned to 28: 36 bytes.
        let mut buf = Vec::new();
        let p = Phy { rate: TxRate::Ht(HtMcs::new(15).unwrap()), ampdu: Some((7, true)), fcs_ok: true, ..p };
        tap.radiotap(&mut buf, &p);
        assert_eq!(buf.len(), 36);
        assert_eq!(u32::from_le_bytes(buf[4..8].try_into().unwrap()), 0x18006b);
        assert_eq!(&buf[24..27], &[0x07, 0, 15]);
        assert_eq!(u32::from_le_bytes(buf[28..32].try_into().unwrap()), 7);
    }
}
