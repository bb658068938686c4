# SPDX-License-Identifier: Apache-2.0
"""What ``iw`` says about an access point's cell, and a scenario of that cell.

Reads two outputs of iw (the formats of iw 6.9 and 6.17, ``station.c`` and ``interface.c``; 6.17
prints a station's flags before its statistics, 6.9 after, and this reader takes either order):

* ``iw dev IF station dump`` (or ``station get MAC``): one ``Station MAC (on IF)`` block per
  station, then tab-indented ``label: value`` lines, each only when the kernel sent the attribute;
* ``iw dev IF info``: the interface's address, SSID, type, channel and width, transmit power.

:func:`cell_scenario` turns them (and, optionally, the AP's tc tree as ``airsched import``
writes it) into a scenario: each station at its MAC, transmit MCS and signal, the AP's queueing,
and every guess stated as a comment where it is made. Anything malformed or truncated is one
:class:`IwError` naming the file, the line and what was expected there.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field

from .importer import ImportError_

#: The noise floor airsched's radio model and its radiotap captures use (dBm): a station's SNR
#: is its signal minus this.
NOISE_FLOOR_DBM = -94
#: mac80211's default airtime weight (``sta->airtime_weight``, net/mac80211/sta_info.c).
DEFAULT_AIRTIME_WEIGHT = 256
#: The 802.11b rates (Mb/s) an 802.11b cell takes as a station's ``rate``.
DSSS_RATES = (1.0, 2.0, 5.5, 11.0)
#: 802.11a/g OFDM rates and the HT MCS of the same modulation and coding (6 and 9 Mb/s are both
#: BPSK: MCS 0; 48 and 54 are 64-QAM 2/3 and 3/4: MCS 5 and 6).
OFDM_TO_HT_MCS = {6.0: 0, 9.0: 0, 12.0: 1, 18.0: 2, 24.0: 3, 36.0: 4, 48.0: 5, 54.0: 6}


class IwError(ImportError_):
    """iw output that cannot be read; the message names the file, line and what was expected."""


@dataclass(frozen=True)
class Bitrate:
    """One ``tx bitrate:`` / ``rx bitrate:`` value (iw's ``parse_bitrate``)."""

    mbps: float | None  # None: "(unknown)"
    kind: str  # "legacy", "ht", "vht", "he" or "eht"
    mcs: int | None = None  # HT MCS index (0..31), or the VHT/HE/EHT MCS (0..13)
    nss: int = 1
    width_mhz: int = 20
    short_gi: bool = False  # HT/VHT short GI; HE/EHT: GI 0.8 us
    text: str = ""
    he_gi: int | None = None  # HE-GI n: 0 = 0.8 us, 1 = 1.6 us, 2 = 3.2 us

    def ht_mcs(self) -> tuple[int | None, list[str]]:
        """The 802.11n MCS (0..15, airsched's range) closest to this rate, with what was guessed."""
        notes: list[str] = []
        if self.kind == "ht" and self.mcs is not None:
            mcs = self.mcs
            if mcs > 15:
                notes.append(f"HT MCS {mcs} has {mcs // 8 + 1} streams; airsched models up to 2: MCS {8 + mcs % 8}")
                mcs = 8 + mcs % 8
            return mcs, notes
        if self.kind in ("vht", "he", "eht") and self.mcs is not None:
            m, n = self.mcs, self.nss
            if m > 7:
                notes.append(f"{self.kind.upper()}-MCS {m} is beyond 802.11n's 64-QAM 5/6: MCS 7's modulation taken")
                m = 7
            if n > 2:
                notes.append(f"{n} spatial streams; airsched models up to 2")
                n = 2
            return m + 8 * (n - 1), notes
        if self.kind == "legacy" and self.mbps is not None and self.mbps in OFDM_TO_HT_MCS:
            notes.append(f"legacy OFDM {self.mbps:g} Mb/s taken as the HT MCS of its modulation")
            return OFDM_TO_HT_MCS[self.mbps], notes
        return None, notes


@dataclass
class Station:
    """One block of ``iw dev IF station dump``. Fields the dump did not print are None."""

    mac: str
    ifname: str
    line: int  # of the ``Station`` header, for messages
    signal_dbm: int | None = None
    signal_avg_dbm: int | None = None
    tx_bitrate: Bitrate | None = None
    rx_bitrate: Bitrate | None = None
    expected_mbps: float | None = None
    tx_bytes: int | None = None
    rx_bytes: int | None = None
    tx_packets: int | None = None
    rx_packets: int | None = None
    tx_retries: int | None = None
    tx_failed: int | None = None
    tx_duration_us: int | None = None
    rx_duration_us: int | None = None
    airtime_weight: int | None = None
    connected_s: int | None = None
    inactive_ms: int | None = None
    flags: dict[str, str] = field(default_factory=dict)
    #: Lines this reader does not use, label -> value (iw adds lines from version to version).
    other: dict[str, str] = field(default_factory=dict)


@dataclass
class Interface:
    """``iw dev IF info``."""

    name: str
    addr: str | None = None
    ssid: str | None = None
    type: str | None = None
    channel: int | None = None
    freq_mhz: int | None = None
    width: str | None = None  # as iw prints it: "20 MHz (no HT)", "20 MHz", "40 MHz", "80 MHz", ...
    center1_mhz: int | None = None
    txpower_dbm: float | None = None

    @property
    def band(self) -> str | None:
        if self.freq_mhz is None:
            return None
        return "2.4GHz" if self.freq_mhz < 3000 else "5GHz"

    @property
    def width_mhz(self) -> int | None:
        m = re.match(r"(\d+)", self.width or "")
        return int(m.group(1)) if m else None


_MAC = r"[0-9a-fA-F]{2}(?::[0-9a-fA-F]{2}){5}"
_STATION = re.compile(rf"^Station ({_MAC}) \(on (\S+)\)\s*$")
_SIGNAL = re.compile(r"^(-?\d+)(?:\s*\[(-?\d+(?:,\s*-?\d+)*)\])?\s*dBm$")
_EXPECTED = re.compile(r"^(\d+)\.(\d+)Mbps$")
_INT_UNIT = re.compile(r"^(-?\d+)(?:\s*(ms|us|seconds))?$")
#: Tokens after the rate in a bitrate string, as iw 6.9/6.17's parse_bitrate prints them.
_RATE_TOKEN = re.compile(
    r"(?P<mcs>(?:VHT-|HE-|EHT-)?MCS) (?P<mcsn>\d+)|(?P<nss>(?:VHT|HE|EHT)-NSS) (?P<nssn>\d+)"
    r"|(?P<width>\d+|80P80)MHz|(?P<sgi>short GI)|(?P<gi>(?:HE|EHT)-GI) (?P<gin>\d+)"
    r"|(?P<other>(?:HE|EHT)-(?:DCM|RU-ALLOC)) (?P<othern>\S+)"
)
_INT_FIELDS = {
    "rx bytes": "rx_bytes", "tx bytes": "tx_bytes", "rx packets": "rx_packets", "tx packets": "tx_packets",
    "tx retries": "tx_retries", "tx failed": "tx_failed", "tx duration": "tx_duration_us",
    "rx duration": "rx_duration_us", "airtime weight": "airtime_weight", "connected time": "connected_s",
    "inactive time": "inactive_ms",
}
_FLAGS = ("authorized", "authenticated", "associated", "preamble", "WMM/WME", "MFP", "TDLS peer")
#: Sub-tables of ``-v`` and MLO link blocks: their rows are indented by two tabs and skipped.
_TABLES = ("MSDU", "TXQs")


def parse_bitrate(text: str, where: str) -> Bitrate:
    """A bitrate string of iw 6.9/6.17 (``650.0 MBit/s VHT-MCS 7 80MHz short GI VHT-NSS 2``)."""
    s = text.strip()
    m = re.match(r"^(?:(\d+(?:\.\d+)?) MBit/s|\(unknown\))", s)
    if not m:
        raise IwError(f"{where}: expected a bitrate such as `650.0 MBit/s VHT-MCS 7 80MHz short GI VHT-NSS 2`, got {s!r}")
    mbps = float(m.group(1)) if m.group(1) else None
    kind, mcs, nss, width, sgi, he_gi = "legacy", None, 1, 20, False, None
    rest = s[m.end():].strip()
    pos = 0
    while pos < len(rest):
        t = _RATE_TOKEN.match(rest, pos)
        if not t or (t.end() < len(rest) and rest[t.end()] != " "):
            raise IwError(f"{where}: cannot read {rest[pos:]!r} in bitrate {s!r} (truncated? expected MCS n, "
                          "VHT-MCS n, VHT-NSS n, HE-MCS n, HE-NSS n, HE-GI n, 40MHz, short GI ...)")
        if t.group("mcs"):
            prefix = t.group("mcs")[:-3].rstrip("-").lower()
            kind, mcs = (prefix or "ht"), int(t.group("mcsn"))
            if kind == "ht":
                nss = mcs // 8 + 1
        elif t.group("nss"):
            nss = int(t.group("nssn"))
        elif t.group("width"):
            width = 160 if t.group("width") == "80P80" else int(t.group("width"))
        elif t.group("sgi"):
            sgi = True
        elif t.group("gi"):
            sgi = t.group("gin") == "0"
            he_gi = int(t.group("gin"))
        pos = t.end() + 1
    return Bitrate(mbps, kind, mcs, nss, width, sgi, s, he_gi)


def parse_station_dump(text: str, path: str = "<station dump>") -> list[Station]:
    """Every station of an ``iw dev IF station dump``; raises :class:`IwError` naming the line of
    the first thing that is not iw's format, or of a block cut short."""
    stations: list[Station] = []
    cur: Station | None = None
    in_table = False
    for n, raw in enumerate(text.splitlines(), 1):
        where = f"{path}:{n}"
        if not raw.strip():
            continue
        m = _STATION.match(raw)
        if m:
            if cur is not None:
                _check_station(cur, path, n - 1)
            cur = Station(m.group(1).lower(), m.group(2), n)
            stations.append(cur)
            in_table = False
            continue
        if cur is None:
            raise IwError(f"{where}: expected `Station <mac> (on <interface>)`, as `iw dev IF station dump` starts, got {raw.strip()!r}")
        if raw.startswith("\t\t") or (in_table and raw.startswith("\t") and ":" not in raw):
            continue  # a row of a -v table (MSDU, TXQs) or of an MLO link block
        if not raw.startswith("\t") or ":" not in raw:
            raise IwError(f"{where}: expected a tab-indented `label: value` line of station {cur.mac}, got {raw.strip()!r} "
                          "(a line cut short?)")
        label, _, value = raw.strip().partition(":")
        label, value = label.strip(), value.strip()
        in_table = label in _TABLES or re.fullmatch(r"Link \d+", label) is not None
        if in_table:
            continue
        _station_line(cur, label, value, where)
    if cur is not None:
        _check_station(cur, path, len(text.splitlines()))
    if not stations:
        raise IwError(f"{path}:1: no `Station <mac> (on <interface>)` block: is this `iw dev IF station dump` output?")
    return stations


def _station_line(st: Station, label: str, value: str, where: str) -> None:
    if label in _INT_FIELDS:
        m = _INT_UNIT.match(value)
        if not m:
            raise IwError(f"{where}: {label}: expected an integer{' with its unit' if label.endswith(('time', 'duration')) else ''}, got {value!r}")
        setattr(st, _INT_FIELDS[label], int(m.group(1)))
    elif label in ("signal", "signal avg"):
        m = _SIGNAL.match(value)
        if not m:
            raise IwError(f"{where}: {label}: expected `-52 [-54, -55] dBm` (dBm, chains optional), got {value!r}")
        setattr(st, "signal_dbm" if label == "signal" else "signal_avg_dbm", int(m.group(1)))
    elif label in ("tx bitrate", "rx bitrate"):
        rate = parse_bitrate(value, f"{where}: {label}")
        setattr(st, "tx_bitrate" if label.startswith("tx") else "rx_bitrate", rate)
    elif label == "expected throughput":
        m = _EXPECTED.match(value)
        if not m:
            raise IwError(f"{where}: expected throughput: expected `415.39Mbps`, got {value!r}")
        # iw prints thr/1000 "." thr%1000 without zero padding: "40.39" is 40 039 (x 1000/1024 kbit/s).
        st.expected_mbps = (int(m.group(1)) * 1000 + int(m.group(2))) / 1000
    elif label in _FLAGS:
        st.flags[label] = value
    else:
        st.other[label] = value


def _check_station(st: Station, path: str, last_line: int) -> None:
    missing = [lab for lab, v in (("signal", st.signal_dbm if st.signal_avg_dbm is None else st.signal_avg_dbm),
                                  ("tx bitrate", st.tx_bitrate)) if v is None]
    if missing:
        raise IwError(f"{path}:{last_line}: station {st.mac} (line {st.line}) ends without a "
                      f"{' or '.join(f'`{m}:`' for m in missing)} line: the dump is truncated, or the driver does not "
                      "report it (airsched needs each station's signal and transmit rate)")


_CHANNEL = re.compile(r"^channel (\d+) \((\d+) MHz\)(?:, width: ([^,]+?))?(?:, center1: (\d+) MHz)?(?:, center2: \d+ MHz)?$")


def parse_info(text: str, path: str = "<iw info>") -> Interface:
    """``iw dev IF info``; raises :class:`IwError` naming the line of anything unreadable."""
    iface: Interface | None = None
    in_table = False
    for n, raw in enumerate(text.splitlines(), 1):
        where = f"{path}:{n}"
        s = raw.strip()
        if not s:
            continue
        if iface is None:
            m = re.fullmatch(r"Interface (\S+)", s)
            if not m:
                raise IwError(f"{where}: expected `Interface <name>`, as `iw dev IF info` starts, got {s!r}")
            iface = Interface(m.group(1))
            continue
        if raw.startswith("\t\t") and in_table:
            continue
        in_table = False
        word, _, rest = s.partition(" ")
        try:
            if word == "addr":
                if not re.fullmatch(_MAC, rest):
                    raise ValueError("a MAC address")
                iface.addr = rest.lower()
            elif word == "ssid":
                iface.ssid = rest
            elif word == "type":
                iface.type = rest
            elif word == "channel":
                m = _CHANNEL.match(s)
                if not m:
                    raise ValueError("`channel 36 (5180 MHz), width: 80 MHz, center1: 5210 MHz`")
                iface.channel, iface.freq_mhz = int(m.group(1)), int(m.group(2))
                iface.width = m.group(3)
                iface.center1_mhz = int(m.group(4)) if m.group(4) else None
            elif word == "txpower":
                m = re.fullmatch(r"(-?\d+(?:\.\d+)?) dBm", rest)
                if not m:
                    raise ValueError("`23.00 dBm`")
                iface.txpower_dbm = float(m.group(1))
            elif s == "multicast TXQ:":
                in_table = True
            elif word in ("ifindex", "wdev", "wiphy", "4addr:"):
                pass
            else:
                pass  # newer iw lines (e.g. per-link MLO lines) are not needed
        except ValueError as exc:
            raise IwError(f"{where}: {word}: expected {exc}, got {rest!r}") from None
    if iface is None:
        raise IwError(f"{path}:1: empty: expected `iw dev IF info` output")
    return iface


def read_live(dev: str, iw: str = "iw") -> tuple[str, str]:
    """``iw dev DEV info`` and ``iw dev DEV station dump`` of this machine."""

    def run(*args: str) -> str:
        cmd = [iw, "dev", dev, *args]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True)
        except FileNotFoundError:
            raise IwError(f"{iw}: not found: install iw, or save `iw dev {dev} info` and `iw dev {dev} station dump` "
                          f"on the AP and read them with --from DIR") from None
        except OSError as exc:
            raise IwError(f"{shlex.join(cmd)}: {exc.strerror or exc}") from None
        if p.returncode != 0:
            raise IwError(f"{shlex.join(cmd)}: {p.stderr.strip() or 'failed'}")
        return p.stdout

    return run("info"), run("station", "dump")


# ----- the cell as a scenario ----------------------------------------------------------------


@dataclass
class Cell:
    """A scenario of an AP's cell and what was guessed to write it."""

    text: str
    stations: list[tuple[str, Station]]  # (scenario name, what iw said)
    guesses: list[str]


def _toml_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _comment(text: str) -> str:
    return "# " + text.replace("\n", " ")


def _flow_rate(bits_per_s: float) -> str:
    return f"{bits_per_s / 1e6:.3f}mbit"


#: The HE guard intervals by iw's ``HE-GI`` index, as airsched's ``guard_interval`` words.
HE_GI_WORDS = {0: "0.8us", 1: "1.6us", 2: "3.2us"}
#: The largest MCS and stream count airsched models per VHT/HE link.
WIDE_MAX_MCS = {"802.11ac": 9, "802.11ax": 11}
WIDE_MAX_NSS = 4


def cell_standard(info: Interface, rates: list[Bitrate]) -> str:
    """The cell's standard from what its stations transmit: 802.11ax if any HE (or EHT) rate,
    else 802.11ac if any VHT rate (at 5 GHz: VHT exists only there), else 802.11n, unless every
    rate is an 802.11b DSSS rate outside 5 GHz (802.11b)."""
    kinds = {r.kind for r in rates}
    if kinds & {"he", "eht"} and info.band in (None, "2.4GHz", "5GHz", "6GHz"):
        return "802.11ax"
    if "vht" in kinds and info.band in (None, "5GHz"):
        return "802.11ac"
    dsss = all(r.kind == "legacy" and r.mbps in DSSS_RATES for r in rates) and info.band != "5GHz"
    return "802.11b" if dsss and rates else "802.11n"


def _wide_cell_lines(info: Interface, rates: list[Bitrate], standard: str, guess: Callable[[str], str]) -> list[str]:
    """``[cell]`` lines of an 802.11ac/ax cell: band, width, the AP's streams, guard interval."""
    out = []
    if info.band:
        out.append(f'band = "{info.band}"  # channel {info.channel} ({info.freq_mhz} MHz)')
    widths = [r.width_mhz for r in rates if r.kind in ("vht", "he", "eht")]
    w = info.width_mhz or max(widths, default=80)
    if w > 160:
        out.append("width = 160  " + guess(f"the AP runs {info.width}; airsched models up to 160 MHz"))
    elif info.width_mhz:
        out.append(f"width = {w}  # iw: {info.width}")
    else:
        out.append(f"width = {w}  " + guess("no channel width in iw's info: the widest station rate's"))
    nss = max((r.nss for r in rates if r.kind in ("vht", "he", "eht")), default=1)
    out.append(f"nss = {min(max(nss, 2), WIDE_MAX_NSS)}  " + guess(
        f"the AP's spatial streams are not in iw's output: the most a station uses ({nss}), at least 2"))
    if standard == "802.11ax":
        gis = [r.he_gi for r in rates if r.kind in ("he", "eht") and r.he_gi in HE_GI_WORDS]
        gi = max(set(gis), key=gis.count) if gis else 0
        out.append(f'guard_interval = "{HE_GI_WORDS[gi]}"  # HE-GI {gi}, the most common among the HE stations\' '
                   "transmit rates")
    else:
        vht = [r for r in rates if r.kind == "vht"]
        sgi = sum(1 for r in vht if r.short_gi)
        gi = "short" if vht and 2 * sgi >= len(vht) else "long"
        out.append(f'guard_interval = "{gi}"  # {sgi} of {len(vht)} VHT stations\' transmit rates use the short GI')
    return out


def _wide_station_lines(r: Bitrate, standard: str, guess: Callable[[str], str]) -> list[str]:
    """A VHT or HE station's lines: its standard, MCS, streams and width as iw saw them, within
    what airsched models (an HE rate in an HE cell, a VHT rate otherwise; an EHT rate as HE)."""
    own = "802.11ax" if r.kind in ("he", "eht") else "802.11ac"
    out = [f'standard = "{own}"  # tx bitrate {r.text}']
    mcs, nss = r.mcs, r.nss
    top = WIDE_MAX_MCS[own]
    if mcs is not None and mcs > top:
        out.append(f"mcs = {top}  " + guess(f"{r.kind.upper()}-MCS {mcs} is beyond {own}'s MCS {top}"))
    else:
        out.append(f"mcs = {mcs}")
    if nss > WIDE_MAX_NSS:
        out.append(f"nss = {WIDE_MAX_NSS}  " + guess(f"{nss} spatial streams; airsched models up to {WIDE_MAX_NSS}"))
    else:
        out.append(f"nss = {nss}")
    out.append(f"width = {min(r.width_mhz, 160)}")
    if own == "802.11ax":
        out.append('rate_control = "fixed"  # the rate iw saw, held (HE drivers choose rates in firmware)')
    else:
        out.append('rate_control = "fixed"  # the rate iw saw, held; "minstrel_ht" lets it follow the SNR')
    return out


def cell_scenario(info: Interface, stations: list[Station], tc_text: str = "", *,
                  sources: tuple[str, ...] = (), duration: str = "30s", noise_floor_dbm: int = NOISE_FLOOR_DBM,
                  traffic: bool = True) -> Cell:
    """A scenario of the cell ``iw dev IF info`` and ``station dump`` describe: the cell's
    standard (802.11b, n, ac or ax, from the richest rate a station transmits at), band, width
    and guard interval; per station its MAC, standard, transmit MCS and streams (or legacy rate),
    SNR (signal average over ``noise_floor_dbm``) and airtime weight; the AP's tc tree
    (``tc_text``, as :func:`airsched.importer.import_devices` writes it, on ``info.name``); and,
    with ``traffic``, each station's mean rates since association as constant-rate UDP flows.
    Every assumption is a ``# guess:`` comment at the line it concerns and in ``Cell.guesses``."""
    guesses: list[str] = []
    out: list[str] = []

    def guess(text: str) -> str:
        guesses.append(text)
        return _comment(f"guess: {text}")

    rates = [st.tx_bitrate for st in stations if st.tx_bitrate is not None]
    standard = cell_standard(info, rates)
    out.append("# A scenario of a live cell, written by `airsched import --cell` (python/airsched/iw.py) from")
    for src in sources:
        out.append(f"#   {src}")
    out.append("# Lines marked `guess:` are assumptions; check them against the AP before trusting the numbers.")
    out.append("")
    out += ["[run]", f"duration = {_toml_str(duration)}", 'warmup = "2s"', "seed = 1", ""]
    out.append("[cell]")
    kinds = sorted({r.kind for r in rates})
    out.append(f'standard = "{standard}"  # stations\' transmit rates are {", ".join(kinds) or "unknown"}')
    if standard == "802.11n":
        if info.band:
            out.append(f'band = "{info.band}"  # channel {info.channel} ({info.freq_mhz} MHz)')
        w = info.width_mhz or max((r.width_mhz for r in rates), default=20)
        if w > 40:
            out.append("width = 40  " + guess(f"the AP runs {info.width}; airsched's 802.11n models 20 and 40 MHz"))
        else:
            out.append(f"width = {w}  # iw: {info.width or 'no width printed'}")
        sgi = sum(1 for r in rates if r.short_gi)
        gi = "short" if rates and 2 * sgi >= len(rates) else "long"
        out.append(f'guard_interval = "{gi}"  # {sgi} of {len(rates)} stations\' transmit rates use the short GI')
    elif standard in ("802.11ac", "802.11ax"):
        out += _wide_cell_lines(info, rates, standard, guess)
    else:
        out.append('basic_rates = ["1Mbps", "2Mbps"]  ' + guess("the BSS's basic rates are not in iw's output"))
    out.append("")
    out.append("[ap]")
    if standard != "802.11b":
        out.append('mac_queue = "fq-mac"  ' + _comment("mac80211's intermediate queues (every mac80211 driver since Linux 4.10)"))
        weights = any(st.airtime_weight is not None for st in stations)
        airtime_seen = any(st.tx_duration_us is not None for st in stations)
        if airtime_seen or weights:
            out.append('airtime = "mac80211"  ' + guess(
                "the dump reports per-station airtime (tx duration) and weights, which mac80211 keeps for its airtime "
                "scheduler; debugfs airtime_flags was not read: set airtime = \"off\" if it is 0"))
        else:
            out.append('airtime = "off"  ' + guess("no per-station airtime in the dump: no airtime scheduler assumed"))
    if tc_text.strip():
        body = re.sub(rf"\bdev {re.escape(info.name)}\b", "dev wlan0", tc_text.strip())
        if info.name != "wlan0":
            out.append(_comment(f"the AP's tree on {info.name}, as airsched's wlan0"))
        out.append('tc = """')
        out += body.splitlines()
        out.append('"""')
    else:
        out.append(guess("no tc tree given (mac80211 devices often run noqueue): airsched's default pfifo of txqueuelen packets"))
    out.append("")
    names: list[tuple[str, Station]] = []
    for i, st in enumerate(stations, 1):
        name = f"sta{i}"
        names.append((name, st))
        out += ["[[station]]", f'name = "{name}"', f'mac = "{st.mac}"']
        r = st.tx_bitrate
        assert r is not None  # checked by parse_station_dump
        if standard == "802.11b":
            mb = r.mbps if r.mbps in DSSS_RATES else max((x for x in DSSS_RATES if r.mbps is None or x <= r.mbps), default=1.0)
            note = f"tx bitrate {r.text}" + ("" if mb == r.mbps else f"; {guess('rounded down to an 802.11b rate')[2:]}")
            out.append(f'rate = "{mb:g}Mbps"  # {note}')
        elif r.kind == "legacy" and r.mbps in OFDM_TO_HT_MCS:
            # A legacy OFDM rate: most likely an 802.11a/g client (a non-HT station; an HT
            # client's rate control rarely settles on a legacy rate).
            phy = "802.11g" if info.band == "2.4GHz" else "802.11a"
            out.append(f'standard = "{phy}"  ' + guess(f"tx bitrate {r.text} has no MCS: a non-HT ({phy}) client"))
            out.append(f'rate = "{r.mbps:g}Mbps"')
            out.append('rate_control = "fixed"  # the rate iw saw, held (non-HT links take only fixed rates here)')
        elif standard in ("802.11ac", "802.11ax") and r.kind in ("vht", "he", "eht") and r.mcs is not None:
            out += _wide_station_lines(r, standard, guess)
        else:
            if standard != "802.11n" and r.kind == "ht":
                out.append('standard = "802.11n"  # an HT client in the cell')
            mcs, notes = r.ht_mcs()
            if mcs is None:
                mcs = 0
                notes.append(f"rate {r.text!r} has no MCS: MCS 0")
            line = f"mcs = {mcs}  # tx bitrate {r.text}"
            if notes:
                line += "; " + guess("; ".join(notes))[2:]
            out.append(line)
            out.append('rate_control = "fixed"  # the rate iw saw, held; "minstrel_ht" lets it follow the SNR')
        sig = st.signal_avg_dbm if st.signal_avg_dbm is not None else st.signal_dbm
        assert sig is not None
        which = "signal avg" if st.signal_avg_dbm is not None else "signal (no average printed)"
        out.append(f"snr = {sig - noise_floor_dbm}  # {which} {sig} dBm over a noise floor of {noise_floor_dbm} dBm")
        if st.airtime_weight is not None and st.airtime_weight != DEFAULT_AIRTIME_WEIGHT and standard != "802.11b":
            out.append(f"airtime_weight = {st.airtime_weight}")
        if st.tx_packets and st.tx_retries is not None:
            out.append(_comment(f"iw: {st.tx_retries} retries and {st.tx_failed or 0} failures in {st.tx_packets} "
                                f"frames sent ({st.tx_retries / st.tx_packets:.1%} retried)"))
        out.append("")
    if traffic:
        for name, st in names:
            if not st.connected_s:
                continue
            for direction, nbytes, src, dst in (("down", st.tx_bytes, "server", name), ("up", st.rx_bytes, name, "server")):
                if not nbytes:
                    continue
                bps = nbytes * 8 / st.connected_s
                if bps < 1000:
                    continue
                out += ["[[flow]]", f'name = "{name}-{direction}"', 'protocol = "udp"', f'src = "{src}"', f'dst = "{dst}"',
                        f'rate = "{_flow_rate(bps)}"  ' + guess(
                            f"the mean rate since association ({nbytes} bytes {'to' if direction == 'down' else 'from'} "
                            f"the station in {st.connected_s} s) as constant-rate UDP: iw counts no flows or bursts"),
                        "size = 1472", ""]
    return Cell("\n".join(out).rstrip() + "\n", names, guesses)


def import_cell(dev: str, from_dir: str | None = None, *, duration: str = "30s", traffic: bool = True) -> Cell:
    """The cell of the AP's wireless device ``dev``: from this machine (``iw dev DEV info``,
    ``iw dev DEV station dump`` and the device's tc tree), or from files saved in ``from_dir``:
    ``DEV.iw-info.txt``, ``DEV.station-dump.txt`` and, if there, the tc files ``airsched import
    --from`` reads (``DEV.qdisc.json``, ``DEV.class.txt``, ``DEV.filter.PARENT.json``)."""
    from pathlib import Path

    from .importer import _read_input, import_devices, read_saved
    from .importer import read_live as read_live_tc

    if from_dir is None:
        info_text, dump_text = read_live(dev)
        info_src, dump_src = f"iw dev {dev} info", f"iw dev {dev} station dump"
        tc_inputs = read_live_tc([dev])
        tc_src = f"tc qdisc/class/filter show dev {dev}"
    else:
        d = Path(from_dir)
        ipath, spath = d / f"{dev}.iw-info.txt", d / f"{dev}.station-dump.txt"
        for p in (ipath, spath):
            if not p.exists():
                raise IwError(f"{p}: no such file (--cell --from DIR reads DIR/{dev}.iw-info.txt (iw dev {dev} info) "
                              f"and DIR/{dev}.station-dump.txt (iw dev {dev} station dump))")
        # The importer's readers: size-bounded, UTF-8 text, one error line naming the file.
        info_text, dump_text = _read_input(ipath, "iw"), _read_input(spath, "iw")
        info_src, dump_src = str(ipath), str(spath)
        q = d / f"{dev}.qdisc.json"
        tc_inputs, tc_src = [], ""
        if q.exists():
            tc_inputs, tc_src = read_saved(d, [dev]), str(q)
    info = parse_info(info_text, info_src)
    stations = parse_station_dump(dump_text, dump_src)
    tc_text = ""
    warnings: list[str] = []
    if tc_inputs:
        imported = import_devices(tc_inputs)
        tc_text, warnings = imported.text, imported.warnings
    sources = (info_src, dump_src) + ((tc_src,) if tc_src else ())
    cell = cell_scenario(info, stations, tc_text, sources=sources, duration=duration, traffic=traffic)
    cell.guesses[:0] = warnings
    return cell
