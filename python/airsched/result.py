# SPDX-License-Identifier: Apache-2.0
"""The results of one run: a summary, and tidy tables as pandas DataFrames.

The native core hands results over as plain column lists; this module gives each table fixed
column types, turns them into DataFrames on first use, and writes them as Parquet and JSON.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import _core
from ._errors import SimulationError

if TYPE_CHECKING:  # pandas is imported on first use: `airsched --version` need not pay for it.
    import pandas as pd

STR, FLOAT, INT = "str", "float", "int"

#: The result schema, declared once in the native core (``crates/airsched-core/src/results.rs``):
#: per table, its columns in order as ``(name, type, unit, description)``, type one of
#: ``"str"``, ``"float"``, ``"int"``. ``"summary"`` and its nested ``"conservation"`` are records
#: (one value per column) rather than tables.
SCHEMA: dict[str, list[tuple[str, str, str, str]]] = _core.schema()
_RECORDS = ("summary", "conservation")


def _columns(table: str) -> dict[str, str]:
    return {name: kind for name, kind, _unit, _doc in SCHEMA[table]}


# Column order and type of each table, from the core's schema. A column the native result has
# beyond these still comes through (after them, with the type pandas infers).
STATION_COLUMNS: dict[str, str] = _columns("stations")
RATE_COLUMNS: dict[str, str] = _columns("rates")
#: 802.11n A-MPDU size distribution: PPDU attempts per station, direction and MPDU count.
AGGREGATE_COLUMNS: dict[str, str] = _columns("aggregates")
FLOW_COLUMNS: dict[str, str] = _columns("flows")
PING_COLUMNS: dict[str, str] = _columns("pings")
SAMPLE_COLUMNS: dict[str, str] = _columns("samples")
NODE_COLUMNS: dict[str, str] = _columns("nodes")
#: Every row table, in the core's order (stations, flows, samples, nodes, rates, pings,
#: aggregates).
TABLES: dict[str, dict[str, str]] = {name: _columns(name) for name in SCHEMA if name not in _RECORDS}
#: Summary entries the core documents, ``conservation`` (a dict of packet counts) last.
SUMMARY_KEYS: tuple[str, ...] = (*_columns("summary"), "conservation")
#: Tables that appear, row by row, in the JSON summary (samples are only in samples.parquet).
JSON_TABLES = ("stations", "flows", "nodes", "rates", "aggregates")
#: Tables of what only some cells have (a Bluetooth piconet and its coexistence with the WLAN, a
#: PCF's polls and CFPs, an 802.11ax AP's OFDMA, the AP's soft admission control) or only some runs ask for (mac80211's
#: statistics, ``--mac-stats``):
#: printed after the flows, and written by :meth:`Result.write`, only when they have rows.
OPTIONAL_TABLES = ("bluetooth", "coexistence", "polls", "cfp", "ofdma", "mac80211_stations", "mac80211_txqs", "demotions")

Columns = dict[str, list[Any]]


class Result:
    """What one simulation run produced.

    ``summary`` is a dict of scalars (plus ``conservation``, a dict of packet counts);
    ``stations``, ``flows``, ``samples`` and ``nodes`` are DataFrames with one row per station,
    flow, sample or node; ``rates``, ``pings`` and ``aggregates`` hold the PHY rates used, every
    answered ping and the A-MPDU size distribution.
    """

    def __init__(
        self,
        summary: Mapping[str, Any],
        tables: Mapping[str, Mapping[str, Sequence[Any]] | None],
        tc: Sequence[Mapping[str, Any]] = (),
        warnings: Sequence[str] = (),
    ) -> None:
        missing = [key for key in SUMMARY_KEYS if key not in summary]
        if missing:
            raise SimulationError(f"the native summary lacks {', '.join(missing)}")
        self._summary = dict(summary)
        #: Packet capture files of the run (``run(..., pcap=DIR)``), else empty.
        self.pcaps: list[Path] = []
        #: Queue length per interface and delays per flow at each sample (``run(...,
        #: queues=True)``: columns time_s, node, dev, qlen, backlog_bytes; time_s, flow,
        #: received, queue_delay_ms, delay_ms), else None.
        self.queues: pd.DataFrame | None = None
        self.flow_delays: pd.DataFrame | None = None
        self._tc = [dict(t) for t in tc]
        self._warnings = list(warnings)
        self._columns: dict[str, Columns] = {
            name: _checked_columns(name, tables.get(name), schema) for name, schema in TABLES.items()
        }

    @classmethod
    def from_native(cls, raw: Mapping[str, Any]) -> Result:
        """Build from the dict ``_core.Simulation.finish()`` returns."""
        return cls(
            raw["summary"],
            {name: raw.get(name) for name in TABLES},
            raw.get("tc", ()),
            raw.get("warnings", ()),
        )

    @property
    def summary(self) -> dict[str, Any]:
        return self._summary

    @property
    def tc(self) -> list[dict[str, Any]]:
        """Every interface's qdisc tree at the end of the run: a list of
        ``{"node", "dev", "qdiscs": [...], "qdisc_text", "class_text"}``, where each qdisc is
        ``{"kind", "handle", "parent", "options", "stats", "xstats", "classes"}`` as
        ``tc -s -j qdisc show`` would give it, and the texts are ``tc -s qdisc|class show``."""
        return self._tc

    @property
    def warnings(self) -> list[str]:
        """Things accepted but not modelled (tc options); check them before trusting a result."""
        return self._warnings

    @cached_property
    def stations(self) -> pd.DataFrame:
        return self._frame("stations")

    @cached_property
    def flows(self) -> pd.DataFrame:
        return self._frame("flows")

    @cached_property
    def samples(self) -> pd.DataFrame:
        return self._frame("samples")

    @cached_property
    def nodes(self) -> pd.DataFrame:
        return self._frame("nodes")

    @cached_property
    def interfaces(self) -> pd.DataFrame:
        """Bytes, packets and drops out of every interface per sample interval (the paper's
        xnetload): time_s, node, dev, bytes_per_second, packets_per_second, drops."""
        return self._frame("interfaces")

    @cached_property
    def pings(self) -> pd.DataFrame:
        """Every answered ping of the measured window: flow, seq, time_s (reply arrival), rtt_ms."""
        return self._frame("pings")

    @cached_property
    def rates(self) -> pd.DataFrame:
        """Attempts per station, direction ("down": AP to station, "up") and PHY rate."""
        return self._frame("rates")

    @cached_property
    def aggregates(self) -> pd.DataFrame:
        """802.11n A-MPDU sizes: per station and direction ("down": AP to station, "up"), how
        many PPDU attempts carried ``mpdus`` MPDUs (``count``) and their share of the direction's
        attempts. Empty in an 802.11b cell."""
        return self._frame("aggregates")

    @cached_property
    def bluetooth(self) -> pd.DataFrame:
        """Per Bluetooth slave and direction ("down": the AP's bnepN to the slave, "up"):
        L2CAP throughput, packets, retransmissions, slot share, losses to the WLAN
        (docs/model-bluetooth.md). Empty without ``[[bluetooth]]``."""
        return self._frame("bluetooth")

    @cached_property
    def coexistence(self) -> pd.DataFrame:
        """Per WLAN station and direction: data frames and ACKs checked against the piconet and
        those a Bluetooth packet corrupted. Empty without ``[[bluetooth]]``."""
        return self._frame("coexistence")

    @cached_property
    def cfp(self) -> pd.DataFrame:
        """One row per contention-free period of a point-coordinated cell (``[cell] pcf``):
        its TBTT, start, duration, polls, data frames each way, beacons inside it and why it
        ended (docs/model-pcf.md). Empty without PCF."""
        return self._frame("cfp")

    @cached_property
    def polls(self) -> pd.DataFrame:
        """Per station, its part of the contention-free periods: polls, data frames down and
        up, Null answers, polls it did not decode. Empty without PCF."""
        return self._frame("polls")

    @cached_property
    def ofdma(self) -> pd.DataFrame:
        """Per station, its part of an 802.11ax AP's multi-user exchanges (``[ap] ofdma``): DL
        MU PPDUs it was a user of and their MPDUs, Basic Triggers that solicited it, its TB
        PPDUs (QoS Null only, lost) and their MPDUs, its mean RU size each way
        (docs/model-ofdma.md). Empty without OFDMA."""
        return self._frame("ofdma")

    @cached_property
    def mac80211_stations(self) -> pd.DataFrame:
        """Per station, mac80211's airtime counters at the end of the run (``iw station dump``'s
        tx/rx duration and airtime weight, debugfs ``airtime``'s deficits, AQL pending).
        Empty unless the run was asked for them (``mac_stats``) in an FQ-MAC cell."""
        return self._frame("mac80211_stations")

    @cached_property
    def mac80211_txqs(self) -> pd.DataFrame:
        """Per station and TID, FQ-MAC's counters at the end of the run as debugfs
        ``stations/*/aqm`` lists them. Empty unless asked for, as ``mac80211_stations``."""
        return self._frame("mac80211_txqs")

    @cached_property
    def demotions(self) -> pd.DataFrame:
        """Per flow through the AP, the soft admission control of VO and VI (``[ap]
        admission_sojourn``): times demoted to best effort, packets queued there while demoted
        (docs/next-steps-qos.md). Empty when it is off."""
        return self._frame("demotions")

    def _frame(self, table: str) -> pd.DataFrame:
        import pandas as pd

        schema = TABLES[table]
        columns = self._columns[table]
        # Built column by column so that an empty table still has every column, with its type.
        data = {
            name: values.to_pandas()
            if isinstance(values, _Coded)
            else pd.Series(_array(values), dtype=_DTYPES.get(schema.get(name, "")))
            for name, values in columns.items()
        }
        return pd.DataFrame(data)

    def _write_parquet(self, table: str, path: Path) -> None:
        """One table as Parquet, straight from its columns to Arrow arrays (numbers without a
        copy, text from its codes), with the schema pandas would write for the DataFrame
        (``to_parquet(index=False)``): ``pd.read_parquet`` gives back :meth:`_frame`'s frame,
        types included, without the DataFrame ever being built here."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        schema = TABLES[table]
        columns = self._columns[table]
        if table in self.__dict__:  # the DataFrame exists already: write it as it is
            frame = self.__dict__[table]
            frame.to_parquet(path, engine="pyarrow", index=False)
            return
        arrays = [_arrow_column(values, schema.get(name)) for name, values in columns.items()]
        meta = _pandas_metadata([(name, schema.get(name)) for name in columns])
        fields = pa.schema([pa.field(name, arr.type) for name, arr in zip(columns, arrays)], metadata=meta)
        # Dictionary encoding for the text columns only: on the numbers (nearly all distinct)
        # the writer's dictionaries cost tens of MB for nothing.
        text = [name for name in columns if schema.get(name) == STR]
        pq.write_table(pa.Table.from_arrays(arrays, schema=fields), path, use_dictionary=text, row_group_size=ROW_GROUP)

    def rows(self, table: str) -> list[dict[str, Any]]:
        """One table's rows as plain dicts, NaN and infinities as ``None`` (as in
        :meth:`to_json_dict`); e.g. ``rows("bluetooth")`` for the printed report."""
        return _rows(self._columns[table])

    def to_json_dict(self) -> dict[str, Any]:
        """The JSON object ``airsched run --json`` prints: the summary, then one object per
        station, flow and node, per PHY rate (``rates``) and per A-MPDU size (``aggregates``) of
        each station and direction. NaN and infinities become ``None`` (JSON ``null``)."""
        out = {key: _json_value(value) for key, value in self._summary.items()}
        for table in JSON_TABLES:
            out[table] = _rows(self._columns[table])
        out["warnings"] = list(self._warnings)
        out["tc"] = [
            {k: _json_value(v) for k, v in iface.items() if k not in ("qdisc_text", "class_text")}
            for iface in self._tc
        ]
        return out

    def write(self, out_dir: str | os.PathLike[str]) -> Path:
        """Write stations/flows/samples/interfaces/nodes/rates/pings/aggregates ``.parquet`` (and
        queues/flow_delays ``.parquet`` of a run that traced them, and the
        :data:`OPTIONAL_TABLES` of a cell that has rows in them) and ``summary.json`` into
        ``out_dir`` (created if needed); returns the directory."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        for table in TABLES:
            rows = len(next(iter(self._columns[table].values()), ()))
            if table in OPTIONAL_TABLES and not rows:
                (out / f"{table}.parquet").unlink(missing_ok=True)  # a previous run's, in the same directory
                continue
            self._write_parquet(table, out / f"{table}.parquet")
        for name in ("queues", "flow_delays"):  # only when the run traced them
            frame = getattr(self, name)
            if frame is not None:
                frame.to_parquet(out / f"{name}.parquet", engine="pyarrow", index=False)
        with open(out / "summary.json", "w", encoding="utf-8") as f:
            f.write(json_text(self.to_json_dict()))
        return out

    def __repr__(self) -> str:
        s = self._summary
        return (
            f"<airsched.Result: {plural(len(self._columns['stations']['name']), 'station')}, "
            f"{plural(len(self._columns['flows']['name']), 'flow')}, "
            f"{s.get('sim_seconds', math.nan):g} s simulated, "
            f"{s.get('total_goodput_mbps', math.nan):.3f} Mb/s total goodput>"
        )


# pandas dtype of each column type: "string" (not object) so text columns say what they hold.
_DTYPES = {STR: "string", FLOAT: "float64", INT: "int64"}
#: Rows per Parquet row group: the writer holds one group's pages at a time.
ROW_GROUP = 65_536


def _checked_columns(
    table: str, columns: Mapping[str, Sequence[Any]] | None, schema: dict[str, str]
) -> Columns:
    """Copy a table's columns, in schema order, checking that the core kept its contract."""
    if columns is None:
        raise SimulationError(f"the native result has no {table!r} table")
    missing = [name for name in schema if name not in columns]
    if missing:
        raise SimulationError(f"the native {table!r} table lacks column(s) {', '.join(missing)}")
    ordered = {name: _column(table, name, columns[name]) for name in schema}
    ordered.update({name: _column(table, name, values) for name, values in columns.items() if name not in schema})
    lengths = {len(values) for values in ordered.values()}
    if len(lengths) > 1:
        raise SimulationError(f"the native {table!r} table has columns of unequal length")
    return ordered


#: numpy dtype of each tag of a typed column (see ``typed_table_to_py`` in crates/airsched-py),
#: and the ``memoryview`` format of the same little-endian values.
_TYPED = {"f8": "<f8", "i8": "<i8", "dict": "<u4"}
_FORMATS = {"f8": "d", "i8": "q", "dict": "I"}
_SIZES = {"f8": 8, "i8": 8, "dict": 4}


def _column(table: str, name: str, values: Any) -> Any:
    """A column as a list, or, for the typed columns of the tables that grow with the run
    (samples, pings: ``("f8" | "i8", bytes)`` or ``("dict", codes, names)``), as a
    :class:`_Typed` view of the bytes (text as codes into its names, :class:`_Coded`): numpy is
    imported only when a table is turned into a DataFrame or Arrow arrays, not by a run whose
    samples nobody reads (``airsched run --json``)."""
    if isinstance(values, tuple) and values and values[0] in _TYPED:
        tag, raw = values[0], values[1]
        if len(raw) % _SIZES[tag]:
            raise SimulationError(f"the native {table!r} column {name!r} has a partial value")
        array = _Typed(raw, tag)
        if tag == "dict":
            if len(array) and max(array.view) >= len(values[2]):
                raise SimulationError(f"the native {table!r} column {name!r} has a code without a name")
            return _Coded(array, list(values[2]))
        return array
    return list(values)


class _Typed:
    """Numbers in the native little-endian bytes (8 bytes a value, 4 a code), read without a
    copy: as Python numbers by iteration, as a numpy array through ``__array__``."""

    def __init__(self, raw: bytes, tag: str) -> None:
        self.raw, self.tag = raw, tag
        self.view = memoryview(raw).cast(_FORMATS[tag])

    def __len__(self) -> int:
        return len(self.view)

    def __iter__(self) -> Any:
        return iter(self.view)

    def __getitem__(self, i: Any) -> Any:
        return self.__array__()[i]

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        import numpy as np

        array = np.frombuffer(self.raw, dtype=_TYPED[self.tag])
        return array if dtype is None else array.astype(dtype, copy=False)

    def tolist(self) -> list[Any]:
        return self.view.tolist()


class _Coded:
    """A text column held as codes into its distinct values (4 bytes a row), turned into an
    Arrow-backed pandas string array only when a DataFrame is built, never into one Python str
    object per row."""

    def __init__(self, codes: Any, names: list[str]) -> None:
        self.codes, self.names = codes, names

    def __len__(self) -> int:
        return len(self.codes)

    def __iter__(self) -> Any:
        names = self.names
        return (names[int(c)] for c in self.codes)

    def tolist(self) -> list[str]:
        return list(self)

    def to_pandas(self) -> Any:
        import pandas as pd

        return pd.Series(pd.arrays.ArrowStringArray(_arrow_column(self, STR)), dtype=_DTYPES[STR])


def _arrow_column(values: Any, kind: str | None) -> Any:
    """A column as an Arrow array built from its buffers: numbers without a copy, text from its
    codes or its list. (``pa.array`` would import pandas to look at the values, 40 MB.)"""
    import numpy as np
    import pyarrow as pa

    def strings(items: list[str]) -> Any:
        encoded = [x.encode() for x in items]
        offsets = np.zeros(len(encoded) + 1, dtype=np.int32)
        np.cumsum([len(b) for b in encoded], out=offsets[1:])
        return pa.Array.from_buffers(pa.string(), len(encoded), [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))])

    if isinstance(values, _Coded):
        codes = np.ascontiguousarray(values.codes, dtype=np.int32)
        indices = pa.Array.from_buffers(pa.int32(), len(codes), [None, pa.py_buffer(codes)])
        return pa.DictionaryArray.from_arrays(indices, strings(values.names)).cast(pa.string())
    values = _array(values)
    if kind is None:  # a column beyond the schema: by what it holds
        probe = np.asarray(values)
        kind = FLOAT if probe.dtype.kind == "f" else INT if probe.dtype.kind in "iub" else STR
    if kind == STR:
        return strings([str(v) for v in values])
    dtype, arrow = (np.float64, pa.float64()) if kind == FLOAT else (np.int64, pa.int64())
    data = np.ascontiguousarray(values, dtype=dtype)
    return pa.Array.from_buffers(arrow, len(data), [None, pa.py_buffer(data)])


def _array(values: Any) -> Any:
    """A typed column as its numpy array (no copy); any other column as it is."""
    if isinstance(values, _Typed):
        import numpy as np

        return np.asarray(values)
    return values


def _pandas_metadata(columns: list[tuple[str, str | None]]) -> dict[bytes, bytes]:
    """The ``pandas`` schema metadata that ``pa.Schema.from_pandas(frame, preserve_index=False)``
    gives a frame of :meth:`Result._frame`'s dtypes (Arrow's documented pandas metadata format),
    so that ``pd.read_parquet`` restores those dtypes; written without importing pandas, which
    would cost a run with ``--out`` 40 MB (test_result checks it against pyarrow's own)."""
    import importlib.metadata

    import pyarrow as pa

    kinds = {STR: ("object", "string"), FLOAT: ("float64", "float64"), INT: ("int64", "int64")}
    entries = []
    for name, kind in columns:
        pandas_type, numpy_type = kinds.get(kind or "", ("object", "object"))
        entries.append({"name": name, "field_name": name, "pandas_type": pandas_type, "numpy_type": numpy_type, "metadata": None})
    doc = {
        "index_columns": [],
        "column_indexes": [],
        "columns": entries,
        "attributes": {},
        "creator": {"library": "pyarrow", "version": pa.__version__},
        "pandas_version": importlib.metadata.version("pandas"),
    }
    return {b"pandas": json.dumps(doc).encode()}


#: Keys of a time in seconds: the core counts time in integer nanoseconds, so these are printed
#: to the nanosecond (9 decimals), without the float noise of the conversion (30.000000000000004).
_SECONDS_SUFFIXES = ("_s", "_seconds")


def json_text(doc: Mapping[str, Any]) -> str:
    """``doc`` (:meth:`Result.to_json_dict`) as ``airsched run --json`` prints it and
    ``summary.json`` holds it: indented, times in seconds rounded to the nanosecond."""
    return json.dumps(_ns_rounded(doc), indent=2, allow_nan=False) + "\n"


def _ns_rounded(value: Any, key: str = "") -> Any:
    if isinstance(value, float) and key.endswith(_SECONDS_SUFFIXES):
        return round(value, 9)
    if isinstance(value, Mapping):
        return {k: _ns_rounded(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_ns_rounded(v, key) for v in value]
    return value


def _json_value(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {k: _json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_value(v) for v in value]
    return value


def _rows(columns: Columns) -> list[dict[str, Any]]:
    names = list(columns)
    return [
        {name: _json_value(value) for name, value in zip(names, row, strict=True)}
        for row in zip(*columns.values(), strict=True)
    ]


def plural(n: int, noun: str) -> str:
    """``"1 station"``, ``"2 stations"``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"
