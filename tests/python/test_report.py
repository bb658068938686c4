"""`airsched report`: a self-contained HTML page, opened in headless Chromium to check what it
shows (tables with the run's own rows, every embedded figure decoded)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

import airsched

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="headless Chromium is not installed (Debian package `chromium`; CI must install it to test the report)",
)


def dump_dom(page: Path) -> str:
    """The DOM after Chromium loaded the page and ran its load handlers."""
    proc = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=10000", "--dump-dom", page.resolve().as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


class Page(HTMLParser):
    """What a reader sees: section ids, table rows by table class, image alt texts, body data."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.sections: list[str] = []
        self.images: list[tuple[str, str]] = []
        self.rows: dict[str, list[list[str]]] = {}
        self.body: dict[str, str] = {}
        self._table: str | None = None
        self._cell: list[str] | None = None
        self._row: list[str] | None = None
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list) -> None:
        a = dict(attrs)
        if tag == "section":
            self.sections.append(a.get("id", ""))
        elif tag == "img":
            self.images.append((a.get("alt", ""), a.get("src", "")[:22]))
        elif tag == "table":
            self._table = (a.get("class") or "").replace("dataframe", "").strip()
            self.rows.setdefault(self._table, [])
        elif tag == "tr" and self._table is not None:
            self._row = []
        elif tag == "td" and self._row is not None:
            self._cell = []
        elif tag == "body":
            self.body = {k: v for k, v in attrs}

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._cell is not None and self._row is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row:
            self.rows[self._table].append(self._row)
            self._row = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


@needs_chromium
def test_run_report_shows_the_runs_tables_and_figures(tmp_path: Path) -> None:
    result = airsched.run(ROOT / "scenarios" / "hoiland" / "tcp.toml", duration="4s")
    result.write(tmp_path / "run")
    page = tmp_path / "report.html"
    proc = subprocess.run(
        [sys.executable, "-m", "airsched", "report", str(tmp_path / "run"), "-o", str(page), "--scenario", str(ROOT / "scenarios" / "hoiland" / "tcp.toml")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    text = page.read_text()
    assert "[[station]]" in text and "tcp.toml" in text  # the scenario file is shown
    assert not re.search(r'(src|href)="(?!data:)', text), "the page references a file"
    dom = Page(dump_dom(page))
    assert dom.sections == ["provenance", "run0"]
    assert [r[0] for r in dom.rows["stations"]] == list(result.stations["name"])
    assert [r[0] for r in dom.rows["flows"]] == list(result.flows["name"])
    goodput = {r[0]: float(r[2]) for r in dom.rows["stations"]}
    for name, value in zip(result.stations["name"], result.stations["goodput_mbps"]):
        assert goodput[name] == pytest.approx(value, rel=1e-3)
    alts = [alt for alt, _ in dom.images]
    for expected in ("goodput and airtime per station", "goodput over time", "latency CDF and latency over time",
                     "TCP congestion window over time", "queueing delay per flow", "A-MPDU sizes"):
        assert expected in alts
    assert all(src.startswith("data:image/png;base64") for _, src in dom.images)
    # Chromium decoded every embedded figure.
    assert dom.body["data-images"] == dom.body["data-images-loaded"] == str(len(alts))
    qdiscs = [r for r in dom.rows["tc"] if r[0] == "ap" and r[1] == "wlan0"]
    assert qdiscs and int(qdiscs[0][5]) == result.tc[[i["node"] == "ap" and i["dev"] == "wlan0" for i in result.tc].index(True)]["qdiscs"][0]["stats"]["bytes"]


@needs_chromium
def test_sweep_report_shows_means_with_intervals(tmp_path: Path) -> None:
    spec = tmp_path / "sweep.toml"
    spec.write_text(
        f'[sweep]\nscenario = "{ROOT / "scenarios" / "anomaly.toml"}"\nseeds = [1, 2, 3]\n'
        '[set]\n"run.duration" = "2s"\n[parameters]\n"station[slow].rate" = ["1Mbps", "11Mbps"]\n'
    )
    df = airsched.sweep(spec, tmp_path / "out", jobs=1)
    page = airsched.report.write_report(tmp_path / "out", tmp_path / "sweep.html")
    dom = Page(dump_dom(page))
    assert dom.sections == ["provenance", "sweep", "run0"]
    assert "run.duration=&quot;2s&quot;" in page.read_text() or 'run.duration="2s"' in page.read_text()
    stats = dom.rows["stats"]
    assert len(stats) == 2 * 2 * 2  # rates x stations x (goodput, airtime)
    fast = df[(df["station[slow].rate"] == "1Mbps") & (df["name"] == "fast")]["goodput_mbps"]
    row = next(r for r in stats if r[:3] == ["1Mbps", "fast", "goodput_mbps"])
    assert row[3] == "3" and row[4].startswith(f"{fast.mean():.4f} ± ")
    assert "goodput_mbps per configuration with error bars" in [a for a, _ in dom.images]
    assert dom.body["data-images"] == dom.body["data-images-loaded"]


def test_report_of_a_directory_without_results_is_bad_input(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "airsched", "report", str(tmp_path)], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"error: {tmp_path}: not a results directory")


def test_run_report_shows_the_piconets_tables_when_there_is_one(tmp_path: Path) -> None:
    """Without a browser: the page's tables as the HTML has them."""
    from airsched.report import render

    result = airsched.run(ROOT / "scenarios" / "yip-kwok" / "coexistence.toml", duration="3s")
    result.write(tmp_path / "bt")
    page = Page(render(tmp_path / "bt"))
    assert [(r[0], r[1], int(r[-4])) for r in page.rows["bluetooth"]] == list(
        zip(result.bluetooth["name"], result.bluetooth["direction"], result.bluetooth["hit_by_wlan"])
    )
    assert [(r[0], r[1], int(r[3])) for r in page.rows["coexistence"]] == list(
        zip(result.coexistence["station"], result.coexistence["direction"], result.coexistence["data_hit_by_bt"])
    )
    plain = airsched.run(ROOT / "scenarios" / "anomaly.toml", duration="2s")
    plain.write(tmp_path / "plain")
    text = render(tmp_path / "plain")
    page = Page(text)
    assert "stations" in page.rows and "bluetooth" not in page.rows and "coexistence" not in page.rows
    assert "<h3>bluetooth</h3>" not in text


def _at_width(page: Path, width: int, shots: Path) -> dict:
    """Chromium at a window ``width`` px wide: the body's layout record (see report._SCRIPT),
    and a screenshot of the page's top in ``shots`` (printed: the test output names it)."""
    args = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", f"--window-size={width},1000"]
    dom = subprocess.run([*args, "--virtual-time-budget=10000", "--dump-dom", page.resolve().as_uri()],
                         capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    shot = shots / f"{page.stem}-{width}px.png"
    subprocess.run([*args, "--virtual-time-budget=10000", f"--screenshot={shot}", page.resolve().as_uri()],
                   capture_output=True, text=True, timeout=120)
    print(f"screenshot: {shot}")
    return Page(dom.stdout).body


@needs_chromium
@pytest.mark.parametrize("width", [1400, 800])
def test_reports_fit_the_window_and_caption_every_figure(tmp_path: Path, width: int) -> None:
    """Issue 29, reports: the run and sweep pages use the window's width (no 750-px column), have
    no horizontal scroll bar at 1400 or 800 px (wide tables scroll in their own box), caption
    every figure, and are titled by the scenario or sweep, not the directory."""
    result = airsched.run(ROOT / "scenarios" / "tcp-bufferbloat.toml", duration="3s", queues=True)
    result.write(tmp_path / "out-dir")
    run_page = airsched.report.write_report(tmp_path / "out-dir", tmp_path / "run.html")
    spec = tmp_path / "sweep.toml"
    spec.write_text(f'[sweep]\nname = "rates"\nscenario = "{ROOT / "scenarios" / "anomaly.toml"}"\nseeds = [1, 2]\n'
                    '[set]\n"run.duration" = "2s"\n[parameters]\n"station[slow].rate" = ["1Mbps", "2Mbps", "5.5Mbps", "11Mbps"]\n'
                    '"station[fast].rate" = ["1Mbps", "2Mbps", "5.5Mbps", "11Mbps"]\n')
    airsched.sweep(spec, tmp_path / "sweep-out", jobs=2)
    sweep_page = airsched.report.write_report(tmp_path / "sweep-out", tmp_path / "sweep.html")
    assert "<title>tcp-bufferbloat (seed 1): airsched report</title>" in run_page.read_text()
    assert "<title>sweep rates: airsched report</title>" in sweep_page.read_text()
    for page in (run_page, sweep_page):
        body = _at_width(page, width, tmp_path)
        assert int(body["data-viewport"]) == width
        assert int(body["data-page-width"]) <= width, f"{page.name}: horizontal overflow at {width} px"
        assert int(body["data-figures"]) > 0 and body["data-uncaptioned"] == "0"
        assert body["data-images"] == body["data-images-loaded"]
    # Full width: at 1400 px the run's stations table is not squeezed into a narrow column.
    assert "max-width:1100px" not in run_page.read_text()
