# SPDX-License-Identifier: Apache-2.0
"""The rich tables and summary lines of a run, printed without cutting any cell."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # rich is imported where a table is drawn: `run --json` never loads it
    from rich.console import Console, RenderableType
    from rich.table import Table

#: Width of the console that measures a table's natural width (wider than any table).
_MEASURE_WIDTH = 100_000


def _wide_enough(console: Console, renderables: list[RenderableType]) -> Console:
    """``console``, widened so that no table cell is cut with an ellipsis. Written to a file or
    a pipe, tables get their natural width (nothing wraps); on a terminal, cells fold (wrap
    onto more lines) rather than being cut, and a table whose narrowest form is wider than the
    terminal is printed at that width (the terminal wraps its lines)."""
    from rich.console import Console
    from rich.measure import Measurement
    from rich.table import Table
    from rich.text import Text

    for renderable in renderables:
        if isinstance(renderable, Table):
            for column in renderable.columns:
                column.overflow = "fold"
    probe = Console(width=_MEASURE_WIDTH, color_system=None, force_terminal=False, file=io.StringIO())
    sizes = [Measurement.get(probe, probe.options, r) for r in renderables]
    needed = max((m.minimum if console.is_terminal else m.maximum for m in sizes), default=0)
    if not console.is_terminal:  # a title wider than its table stays on one line too
        for r in renderables:
            if isinstance(r, Table) and isinstance(r.title, (str, Text)):
                title = Text.from_markup(r.title) if isinstance(r.title, str) else r.title
                r.min_width = max(r.min_width or 0, title.cell_len)
                needed = max(needed, title.cell_len)
    if needed > console.width:
        console.width = needed
    return console


def _print_tables(tables: list[RenderableType], gap: bool = False) -> None:
    """Print rich tables on stdout without cutting any cell (see :func:`_wide_enough`); with
    ``gap``, an empty line after each."""
    from rich.console import Console

    console = _wide_enough(Console(), tables)
    for table in tables:
        console.print(table)
        if gap:
            console.print()



def _print_report(console: Console, report: dict[str, Any]) -> None:
    """The tables and summary lines of a run, from its JSON form (plain values, NaN as None),
    with the ``bluetooth`` and ``coexistence`` rows when ``report`` has them and they are not
    empty."""
    tables = [_stations_table(report["stations"]), _flows_table(report["flows"])]
    if report.get("bluetooth"):
        tables.append(_bluetooth_table(report["bluetooth"]))
    if report.get("coexistence"):
        tables.append(_coexistence_table(report["coexistence"]))
    if report.get("polls"):
        tables.append(_polls_table(report["polls"], report.get("cfp") or [], report["measured_seconds"]))
    if report.get("ofdma"):
        tables.append(_ofdma_table(report["ofdma"]))
    console = _wide_enough(console, tables)
    for table in tables:
        console.print(table)
    wall, events = report["wall_seconds"], report["events"]
    seed = report.get("seed", (report.get("provenance") or {}).get("seed"))
    seed_text = "" if seed is None else f" · seed {seed}"
    rate = f" ({_fmt(events / wall / 1e6, 2)} M events/s)" if wall else ""
    c = report["conservation"]
    lines = (
        f"total goodput {_fmt(report['total_goodput_mbps'], 3)} Mb/s · "
        f"simulated {report['sim_seconds']:g} s (measured {report['measured_seconds']:g} s){seed_text} · "
        f"wall {_fmt_seconds(wall)} · {events:,} events{rate}",
        f"packets: {c['offered']:,} offered, {c['delivered']:,} delivered, "
        f"{c['dropped_queue']:,} dropped in queues, {c['dropped_retry']:,} dropped after retries, "
        f"{c['in_flight']:,} in flight at the end",
    )
    for line in lines:
        # soft_wrap: a summary line stays one line (a terminal wraps it; a pipe gets it whole).
        console.print(line, highlight=False, soft_wrap=True)


def _stations_table(stations: list[dict[str, Any]]) -> Table:
    from rich.table import Table
    from rich.text import Text

    table = Table(title="stations", title_justify="left")
    headers = ["station", "rate Mb/s", "goodput Mb/s", "std Mb/s", "airtime %", "frames", "retries", "drops"]
    # 802.11n: mean MPDUs per A-MPDU to the station.
    ampdu = any(st.get("ampdu_mean_down") is not None for st in stations)
    if ampdu:
        headers.append("A-MPDU")
    for header in headers:
        table.add_column(header, justify="left" if header == "station" else "right")
    for st in stations:
        share = st["airtime_share"]
        cells = [
            Text(st["name"]),
            _fmt(st["rate_mbps"], 1),
            _fmt(st["goodput_mbps"], 3),
            _fmt(st["goodput_std_mbps"], 3),
            _fmt(None if share is None else 100 * share, 1),
            f"{st['tx_frames']:,}",
            f"{st['retries']:,}",
            f"{st['drops']:,}",
        ]
        if ampdu:
            cells.append(_fmt(st.get("ampdu_mean_down"), 1))
        table.add_row(*cells)
    return table


def _flows_table(flows: list[dict[str, Any]]) -> Table:
    from rich.table import Table
    from rich.text import Text

    table = Table(title="flows", title_justify="left")
    pings = any(fl.get("rtt_samples") for fl in flows)
    headers = ["flow", "path", "goodput Mb/s", "sent", "received", "lost", "delay ms"]
    if pings:
        headers += ["rtt p50 ms", "rtt p99 ms"]
    for header in headers:
        table.add_column(header, justify="left" if header in ("flow", "path") else "right")
    for fl in flows:
        cells = [
            Text(fl["name"]),
            Text(f"{fl['src']}→{fl['dst']}"),
            _fmt(fl["goodput_mbps"], 3),
            f"{fl['sent_packets']:,}",
            f"{fl['received_packets']:,}",
            f"{fl['lost_packets']:,}",
            _fmt(fl["delay_mean_ms"], 2),
        ]
        if pings:
            cells += [_fmt(fl.get("rtt_p50_ms"), 2), _fmt(fl.get("rtt_p99_ms"), 2)]
        table.add_row(*cells)
    return table


def _bluetooth_table(rows: list[dict[str, Any]]) -> Table:
    """Per slave and direction ("down": the AP's bnepN to the slave): docs/model-bluetooth.md."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title="bluetooth", title_justify="left")
    headers = ["slave", "dir", "types", "L2CAP Mb/s", "data pkts", "retrans", "POLL/NULL", "slots %", "hit by WLAN", "lost", "dups", "delivered"]
    for header in headers:
        table.add_column(header, justify="left" if header in ("slave", "dir", "types") else "right")
    for b in rows:
        share = b["slot_share"]
        table.add_row(
            Text(b["name"]),
            b["direction"],
            Text(b["packet_types"]),
            _fmt(b["l2cap_mbps"], 3),
            f"{b['data_packets']:,}",
            f"{b['retransmissions']:,}",
            f"{b['empty_packets']:,}",
            _fmt(None if share is None else 100 * share, 1),
            f"{b['hit_by_wlan']:,}",
            f"{b['lost_errors']:,}",
            f"{b['duplicates']:,}",
            f"{b['delivered']:,}",
        )
    return table


def _polls_table(rows: list[dict[str, Any]], cfps: list[dict[str, Any]], measured_s: float) -> Table:
    """PCF: each station's polls, under a title summing up the CFPs (docs/model-pcf.md)."""
    from rich.table import Table
    from rich.text import Text

    total_ms = sum(c["duration_ms"] for c in cfps)
    mean = _fmt(total_ms / len(cfps) if cfps else None, 2)
    share = _fmt(100 * total_ms / 1e3 / measured_s if measured_s else None, 1)
    late = sum(1 for c in cfps if c["start_s"] > c["tbtt_s"])
    idle = sum(1 for c in cfps if c["ended"] == "idle")
    caption = f"{len(cfps):,} CFPs, mean {mean} ms, {share} % of the time, {late:,} foreshortened, {idle:,} ended idle"
    table = Table(title="pcf", title_justify="left", caption=caption, caption_justify="left")
    for header in ["station", "pollable", "polls", "data down", "data up", "Null", "unanswered"]:
        table.add_column(header, justify="left" if header == "station" else "right")
    for p in rows:
        table.add_row(
            Text(p["station"]),
            "yes" if p["cf_pollable"] else "no",
            f"{p['polls']:,}",
            f"{p['data_down']:,}",
            f"{p['data_up']:,}",
            f"{p['nulls']:,}",
            f"{p['unanswered']:,}",
        )
    return table


def _ofdma_table(rows: list[dict[str, Any]]) -> Table:
    """OFDMA: each station's DL MU PPDUs and its answers to Basic Triggers, with the mean RU
    size each way (docs/model-ofdma.md)."""
    from rich.table import Table
    from rich.text import Text

    triggers = any(o["ul_triggers"] for o in rows)
    table = Table(title="ofdma", title_justify="left")
    headers = ["station", "DL MU PPDUs", "DL MPDUs", "DL RU tones"]
    if triggers:
        headers += ["Triggers", "TB PPDUs", "QoS Null", "lost", "UL MPDUs", "UL RU tones"]
    for header in headers:
        table.add_column(header, justify="left" if header == "station" else "right")
    for o in rows:
        cells = [Text(o["station"]), f"{o['dl_mu_ppdus']:,}", f"{o['dl_mpdus']:,}", _fmt(o["dl_ru_tones_mean"], 0)]
        if triggers:
            cells += [
                f"{o['ul_triggers']:,}",
                f"{o['ul_tb_ppdus']:,}",
                f"{o['ul_qos_null']:,}",
                f"{o['ul_lost']:,}",
                f"{o['ul_mpdus']:,}",
                _fmt(o["ul_ru_tones_mean"], 0),
            ]
        table.add_row(*cells)
    return table


def _coexistence_table(rows: list[dict[str, Any]]) -> Table:
    """Per WLAN station and direction: frames checked against the piconet and those it hit."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title="coexistence", title_justify="left")
    for header in ["station", "dir", "data frames", "hit by BT", "hit %", "ACKs", "ACKs hit", "ACK hit %"]:
        table.add_column(header, justify="left" if header in ("station", "dir") else "right")

    def share(hit: int, of: int) -> str:
        return _fmt(100 * hit / of if of else None, 1)

    for c in rows:
        table.add_row(
            Text(c["station"]),
            c["direction"],
            f"{c['data_frames']:,}",
            f"{c['data_hit_by_bt']:,}",
            share(c["data_hit_by_bt"], c["data_frames"]),
            f"{c['acks']:,}",
            f"{c['acks_hit_by_bt']:,}",
            share(c["acks_hit_by_bt"], c["acks"]),
        )
    return table


def _fmt_seconds(seconds: float) -> str:
    return f"{seconds:.2f} s" if seconds >= 1 else f"{seconds * 1e3:.1f} ms"


def _fmt(value: float | None, decimals: int) -> str:
    """A float with fixed decimals; "–" where it is undefined (None, from NaN)."""
    return "–" if value is None else f"{value:,.{decimals}f}"
