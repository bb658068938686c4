"""`--flent FILE.flent.gz`: flent itself loads the file, finds its test, and plots it."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest

import airsched

flent_resultset = pytest.importorskip("flent.resultset", reason="flent is not installed (it is in airsched's test extra)")

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    out = tmp_path_factory.mktemp("flent")
    path = out / "bufferbloat.flent.gz"
    proc = subprocess.run(
        [sys.executable, "-m", "airsched", "run", str(ROOT / "scenarios" / "tcp-bufferbloat.toml"), "--duration", "5s", "--flent", str(path)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    return path, airsched.run(ROOT / "scenarios" / "tcp-bufferbloat.toml", duration="5s")


def test_flent_loads_the_series_of_the_run(written) -> None:
    path, r = written
    rs = flent_resultset.load(str(path))
    assert rs.meta("NAME") == "tcp_download"
    s = r.samples[r.samples["kind"] == "flow"]
    download = s[s["name"] == "download"].set_index("time_s")["goodput_mbps"]
    assert rs.x_values == pytest.approx(list(download.index))
    assert rs.series("TCP download") == pytest.approx(list(download))
    pings = r.pings[r.pings["flow"] == "ping"]
    raw = rs.raw_values["Ping (ms) ICMP"]
    assert [v["val"] for v in raw] == pytest.approx(list(pings["rtt_ms"]))
    per_x = rs.series("Ping (ms) ICMP")
    x = rs.x_values[5]
    window = pings[(pings["time_s"] > x - 0.2) & (pings["time_s"] <= x)]["rtt_ms"]
    assert per_x[5] == pytest.approx(window.mean()) if len(window) else per_x[5] is None
    assert rs.meta("SERIES_META")["TCP download"]["UNITS"] == "Mbits/s"


def test_flent_plots_and_exports_it(written, tmp_path: Path) -> None:
    path, r = written
    png = tmp_path / "totals.png"
    proc = subprocess.run([sys.executable, "-m", "flent", "-i", str(path), "-p", "totals", "-o", str(png)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert png.stat().st_size > 10_000
    csv = tmp_path / "totals.csv"
    proc = subprocess.run([sys.executable, "-m", "flent", "-i", str(path), "-f", "csv", "-p", "totals", "-o", str(csv)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    header, *rows = csv.read_text().splitlines()
    col = header.split(",").index("TCP download")
    mean = sum(float(row.split(",")[col]) for row in rows) / len(rows)
    flow = r.flows.set_index("name").loc["download"]
    # The mean of the per-interval samples is the flow's goodput over the measured time.
    assert math.isclose(mean, flow["goodput_mbps"], rel_tol=0.02)
