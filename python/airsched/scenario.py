# SPDX-License-Identifier: Apache-2.0
"""Loading and checking scenario files.

A scenario is TOML text plus the name its errors should carry (the file's path as the user gave
it, or ``<string>`` for text handed over directly). The native core does all parsing and
validation, overrides included; this module only reads files, writes Python override values as
TOML, and reports on what the core accepted.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import _core
from ._errors import ScenarioError, line_col, native_errors

#: The name errors carry for a scenario given as text rather than as a file.
TEXT_PATH = "<string>"

PathLike = str | os.PathLike[str]

#: Settings that replace or add to a scenario's: ``{"cell.retry_limit": 4, "station[sta2].rate":
#: "2Mbps"}`` (Python values), or ``["cell.retry_limit=4", "station[1].rate=2Mbps"]`` (TOML values,
#: a bare word taken as a string, as ``airsched run --set`` takes them).
Overrides = Mapping[str, Any] | Iterable[str]

#: Where errors in overrides point, as the core names them: line N is the N-th override.
COMMAND_LINE = "<command line>"


@dataclass(frozen=True)
class ScenarioSource:
    """A scenario's TOML text and the path its error messages name."""

    text: str
    path: str

    def validate(self, overrides: Overrides | None = None) -> ScenarioInfo:
        """Check the scenario, with ``overrides`` applied, without running it; raises
        :class:`ScenarioError` listing every problem."""
        lines = override_lines(overrides)
        with native_errors():
            # The core owns parsing, overrides, defaults and units; it reports what it understood.
            info = _core.validate(self.text, self.path, lines)
        return ScenarioInfo(
            self.path,
            len(info["stations"]),
            len(info["flows"]),
            int(info["duration_ns"]),
            standard=str(info.get("standard", "802.11b")),
            cell=dict(info.get("cell") or {}),
            links=tuple(StationLink.from_native(link) for link in info.get("station_links", ())),
            ap_mac=dict(info["ap_mac"]) if info.get("ap_mac") else None,
            warnings=tuple(str(w) for w in info.get("warnings", ())),
        )


@dataclass(frozen=True)
class StationLink:
    """A station's link as the core configured it: its 802.11b rate, or (802.11n) its MCS and the
    MCS's PHY rate at the cell's width and guard interval."""

    name: str
    rate_mbps: float
    rate_control: str = "fixed"
    mcs: int | None = None
    airtime_weight: int | None = None
    #: 802.11ac/ax links: the spatial streams (an 802.11n MCS carries its own).
    nss: int | None = None

    @classmethod
    def from_native(cls, d: Mapping[str, Any]) -> StationLink:
        return cls(
            name=str(d["name"]),
            rate_mbps=float(d["rate_mbps"]),
            rate_control=str(d.get("rate_control", "fixed")),
            mcs=None if d.get("mcs") is None else int(d["mcs"]),
            airtime_weight=None if d.get("airtime_weight") is None else int(d["airtime_weight"]),
            nss=None if d.get("nss") is None else int(d["nss"]),
        )

    def describe(self) -> str:
        """``"MCS 7, 65 Mb/s"`` or ``"11 Mb/s (arf)"``."""
        rate = f"{self.rate_mbps:.4g} Mb/s"
        text = f"MCS {self.mcs}, {rate}" if self.mcs is not None else rate
        if self.nss is not None:
            text = text.replace(", ", f" x {self.nss} SS, ", 1)
        if self.airtime_weight is not None and self.airtime_weight != 256:
            text += f", airtime weight {self.airtime_weight}"
        if self.rate_control != "fixed":
            text += f" ({self.rate_control})"
        return text


@dataclass(frozen=True)
class ScenarioInfo:
    """What ``validate`` reports about a scenario the core accepted."""

    path: str
    stations: int
    flows: int
    duration_ns: int
    #: ``"802.11b"``, ``"802.11n"``, ``"802.11ac"`` or ``"802.11ax"``.
    standard: str = "802.11b"
    #: The cell's settings: 802.11b (preamble, basic rates...) or 802.11n (band, width_mhz,
    #: guard_interval, basic rates, aggregation limits).
    cell: dict[str, Any] = field(default_factory=dict, compare=False)
    #: One entry per station, in file order.
    links: tuple[StationLink, ...] = ()
    #: 802.11n: the AP's MAC queueing (mac_queue, driver_queue_limit, airtime, airtime_rx, aql,
    #: fq_kernel, tc); None in an 802.11b cell.
    ap_mac: dict[str, Any] | None = field(default=None, compare=False)
    #: Things the scenario sets that the run will accept but not model (tc options, weights
    #: without the scheduler that reads them), as ``airsched run`` prints them.
    warnings: tuple[str, ...] = ()

    @property
    def duration(self) -> str:
        """The simulated duration in the largest exact unit, e.g. ``"60s"`` or ``"250ms"``."""
        return format_ns(self.duration_ns)

    def describe_cell(self) -> str:
        """One line: ``"802.11n, 5GHz, 20 MHz, long GI; A-MPDU up to 4ms / 64 MPDUs"``."""
        c = self.cell
        if self.standard == "802.11b" or not c:
            return self.standard
        text = f"{self.standard}, {c['band']}, {c['width_mhz']} MHz, {c['guard_interval']} GI"
        if "nss" in c:
            text += f", {c['nss']} streams" + (f", {c['ltf']} HE-LTF" if "ltf" in c else "")
        return text + f"; A-MPDU up to {format_ns(int(c['max_aggregate_time_ns']))} / {c['max_aggregate_mpdus']} MPDUs"

    def describe_ap(self) -> str | None:
        """One line on the AP's MAC queueing (802.11n), else None."""
        m = self.ap_mac
        if not m:
            return None
        if m["mac_queue"] == "fifo":
            text = f"mac_queue fifo (driver limit {m['driver_queue_limit']} frames)"
        else:
            text = f"mac_queue fq-mac (fq_kernel {m['fq_kernel']})"
        text += f", airtime {m['airtime']}"
        if m["airtime"] != "off":
            text += f" (rx airtime {'on' if m['airtime_rx'] else 'off'}, AQL {'on' if m['aql'] else 'off'})"
        if m.get("tc") == "ap.queueing":
            text += ", qdisc fq_codel (queueing preset)"
        elif m.get("tc"):
            text += f", qdisc from {m['tc']}"
        return text


def load(scenario: PathLike | None = None, *, text: str | None = None) -> ScenarioSource:
    """Read a scenario file, or wrap scenario text; exactly one of the two must be given.

    A file that cannot be read raises :class:`ScenarioError` naming the path.
    """
    if (scenario is None) == (text is None):
        raise TypeError("give either a scenario path or text=..., not both and not neither")
    if text is not None:
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, not {type(text).__name__}")
        return ScenarioSource(text, TEXT_PATH)
    assert scenario is not None
    path = os.fspath(scenario)
    if not isinstance(path, str):
        raise TypeError(f"scenario must be a str or os.PathLike[str] path, not {type(path).__name__}")
    from .packaged import resolve

    path = resolve(path)
    return ScenarioSource(read_text(path), path)


#: The largest scenario, sweep or tc file read (docs/limits.md): the largest shipped scenario is
#: a few kB, and a file without end (/dev/zero, a FIFO fed forever) must not be read without limit.
MAX_FILE_BYTES = 16 << 20


def read_text(path: str) -> str:
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        if "\n" in path:
            hint = " (scenario text goes in text=..., not in the path)"
        elif Path(path).parts[:1] in (("scenarios",), ("sweeps",)):
            hint = " (nor in the package: `airsched examples` lists the scenarios and sweeps shipped with airsched)"
        else:
            hint = ""
        raise ScenarioError(f"{path}: no such file{hint}") from None
    except IsADirectoryError:
        raise ScenarioError(f"{path}: is a directory, not a scenario file") from None
    except OSError as exc:
        raise ScenarioError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if len(data) > MAX_FILE_BYTES:
        raise ScenarioError(f"{path}: larger than {MAX_FILE_BYTES >> 20} MiB: not a scenario, sweep or tc file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, col = line_col(data, exc.start)
        raise ScenarioError(f"{path}:{line}:{col}: file is not UTF-8 text (TOML must be)") from None


def validate(
    scenario: PathLike | None = None, *, text: str | None = None, overrides: Overrides | None = None
) -> ScenarioInfo:
    """Check a scenario (with ``overrides``, see :func:`airsched.run`) without running it; raises
    :class:`ScenarioError` listing every problem."""
    return load(scenario, text=text).validate(overrides)


def override_lines(overrides: Overrides | None) -> list[str]:
    """``overrides`` as the core takes them, one ``KEY=VALUE`` string each (TOML values).

    A mapping's values are Python values written as TOML (``"2Mbps"`` stays a string, ``4`` an
    integer, a dict an inline table); strings of a list are passed as they are. The core checks
    keys and values.
    """
    if overrides is None:
        return []
    if isinstance(overrides, Mapping):
        lines = []
        for key, value in overrides.items():
            if not isinstance(key, str):
                raise TypeError(f"override keys must be str like 'cell.retry_limit', not {type(key).__name__}")
            lines.append(f"{key}={toml_value(value, key)}")
        return lines
    if isinstance(overrides, (str, bytes)):
        raise TypeError("overrides must be a mapping or a list of 'KEY=VALUE' strings, not a single str")
    lines = list(overrides)
    for line in lines:
        if not isinstance(line, str):
            raise TypeError(f"overrides must be 'KEY=VALUE' strings, not {type(line).__name__}")
    return lines


_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def toml_value(value: Any, key: str = "value") -> str:
    """A Python value as TOML: bool, int, float, str (and paths), lists and dicts of them."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, (str, os.PathLike)):
        return toml_string(os.fspath(value))
    if isinstance(value, Mapping):
        items = []
        for k, v in value.items():
            if not isinstance(k, str):
                raise TypeError(f"{key}: table keys must be str, not {type(k).__name__}")
            items.append(f"{k if _BARE_KEY.match(k) else toml_string(k)} = {toml_value(v, f'{key}.{k}')}")
        return "{" + ", ".join(items) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v, f"{key}[{i}]") for i, v in enumerate(value)) + "]"
    raise TypeError(
        f"{key}: cannot write a {type(value).__name__} as a scenario value "
        "(give a bool, int, float, str, list or dict)"
    )


def toml_string(text: str) -> str:
    """``text`` as a TOML basic string, quoted and escaped (the core's own quoting)."""
    return _core.toml_string(text)


_UNITS = ((1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "us"))


def format_ns(ns: int) -> str:
    """A duration in the largest unit that states it exactly, as the core writes durations."""
    for scale, unit in _UNITS:
        if ns % scale == 0:
            return f"{ns // scale}{unit}"
    return f"{ns}ns"
