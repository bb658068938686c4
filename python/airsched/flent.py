# SPDX-License-Identifier: Apache-2.0
"""A run as a flent data file (``.flent.gz``), so that flent's own plots and tools open it:
``flent -i run.flent.gz -p totals -o totals.png``.

The file is flent's result set, version 4: gzipped JSON of ``metadata``, ``x_values`` (seconds
from T0 at the run's sample interval), ``results`` (each series' value per x, null for a gap)
and ``raw_values`` (each measurement with its absolute time). It claims flent's
``tcp_download`` test, whose series it fills: ``TCP download`` (Mbit/s, the sum of the
run's TCP flows from the server or AP to the stations, per sample interval) and ``Ping (ms)
ICMP`` (the round-trip times of the run's first ping flow, the mean per interval). Every flow's
goodput is there too as ``FLOW::<name>`` (flent keeps series its test does not plot), and the
AP's airtime per station as flent's WiFi statistics (``wifi_stats`` runner series).

T0 is the time the file is written; simulated time runs from it.
"""

from __future__ import annotations

import datetime as _dt
import gzip
import json
import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import _core

if TYPE_CHECKING:
    from .result import Result

#: flent's result-set file format version written here.
FILEFORMAT_VERSION = 4
#: The flent test this file claims (it must be one flent ships).
TEST_NAME = "tcp_download"
DOWNLOAD = "TCP download"
PING = "Ping (ms) ICMP"
_FMT = "%Y-%m-%dT%H:%M:%S.%fZ"


def flent_data(result: Result, title: str = "", t0: _dt.datetime | None = None) -> dict[str, Any]:
    """The result set flent reads, as a dict (see the module documentation)."""
    t0 = t0 or _dt.datetime.now(_dt.timezone.utc).replace(tzinfo=None)
    epoch = t0.replace(tzinfo=_dt.timezone.utc).timestamp()
    samples = result.samples
    step = float(result.summary["sample_interval_s"])
    flows = result.flows.set_index("name")
    fl = samples[samples["kind"] == "flow"]
    xs = sorted(set(float(x) for x in fl["time_s"]))
    keys = {x: round(x, 9) for x in xs}
    results: dict[str, list[float | None]] = {}
    raw: dict[str, list[dict[str, Any]]] = {}
    tcp_down = [
        name
        for name, row in flows.iterrows()
        if row["protocol"] == "tcp" and row["src"] in ("server", "ap") and row["dst"] not in ("server", "ap")
    ]
    by_flow = {name: rows.set_index("time_s")["goodput_mbps"] for name, rows in fl.groupby("name", sort=False)}
    for name, series in by_flow.items():
        results[f"FLOW::{name}"] = [_num(series.get(x)) for x in xs]
    total = [sum(_num(by_flow[n].get(x)) or 0.0 for n in tcp_down) if tcp_down else None for x in xs]
    results[DOWNLOAD] = total
    raw[DOWNLOAD] = [{"t": epoch + x, "val": v} for x, v in zip(xs, total) if v is not None]
    pings = result.pings
    ping_flows = list(dict.fromkeys(pings["flow"]))
    per_x: list[float | None] = [None] * len(xs)
    raw[PING] = []
    if ping_flows:
        rows = pings[pings["flow"] == ping_flows[0]]
        raw[PING] = [{"t": epoch + float(t), "val": float(v), "seq": int(s)} for t, v, s in zip(rows["time_s"], rows["rtt_ms"], rows["seq"])]
        for i, x in enumerate(xs):
            window = rows[(rows["time_s"] > x - step) & (rows["time_s"] <= x)]["rtt_ms"]
            per_x[i] = float(window.mean()) if len(window) else None
    results[PING] = per_x
    stations = list(result.stations["name"])
    # flent's wifi_stats: per station, the airtime of the run (µs) as one measurement at the end.
    airtime = {f"wifi_stats_ap::airtime_tx::{s}": float(a) * 1e6 for s, a in zip(stations, result.stations["airtime_down_s"])}
    for name, value in airtime.items():
        results[name] = [None] * (len(xs) - 1) + [value] if xs else []
    metadata = {
        "NAME": TEST_NAME,
        "TITLE": title,
        "NOTE": f"simulated by airsched {_core.version()}",
        "HOST": "server",
        "HOSTS": ["server"],
        "LOCAL_HOST": "airsched",
        "TIME": t0.strftime(_FMT),
        "T0": t0.strftime(_FMT),
        "LENGTH": float(result.summary["sim_seconds"]),
        "TOTAL_LENGTH": float(result.summary["sim_seconds"]),
        "STEP_SIZE": step,
        "IP_VERSION": 4,
        "FLENT_VERSION": "airsched",
        "TEST_PARAMETERS": {"wifi_stats_hosts": "ap", "wifi_stats_interfaces": "wlan0", "wifi_stats_stations": ",".join(stations)},
        "SERIES_META": {
            DOWNLOAD: {"UNITS": "Mbits/s", "FLOWS": tcp_down},
            PING: {"UNITS": "ms", "FLOW": ping_flows[0] if ping_flows else None},
            **{f"FLOW::{n}": {"UNITS": "Mbits/s"} for n in by_flow},
        },
        "BATCH_NAME": None,
        "BATCH_TIME": None,
        "BATCH_TITLE": None,
        "BATCH_UUID": None,
        "DATA_FILENAME": None,
    }
    return {"metadata": metadata, "version": FILEFORMAT_VERSION, "x_values": [keys[x] for x in xs], "results": results, "raw_values": raw}


def flent_warnings(result: Result) -> list[str]:
    """What of the ``tcp_download`` test a run cannot fill: no TCP download (its series is
    empty), no ping (no latency series)."""
    flows = result.flows
    tcp_down = flows[(flows["protocol"] == "tcp") & flows["src"].isin(["server", "ap"]) & ~flows["dst"].isin(["server", "ap"])]
    out = []
    if not len(tcp_down):
        out.append(f'the "{DOWNLOAD}" series is empty: the scenario has no TCP flow from the server or AP to a station '
                   "(its flows are in the FLOW:: series)")
    if not len(result.pings):
        out.append(f'the "{PING}" series is empty: the scenario has no ping flow')
    return out


def write_flent(result: Result, path: str | os.PathLike[str], title: str = "") -> Path:
    """Write ``result`` as a gzipped flent data file at ``path`` (``*.flent.gz``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = flent_data(result, title)
    data["metadata"]["DATA_FILENAME"] = path.name
    with gzip.open(path, "wt", encoding="utf-8") as f:
        json.dump(data, f, indent=2, sort_keys=True, allow_nan=False)
    return path


def _num(value: Any) -> float | None:
    if value is None:
        return None
    v = float(value)
    return v if math.isfinite(v) else None
