# SPDX-License-Identifier: Apache-2.0
"""Figures say what they show, whole (issue 12, item 11): every series in a legend, log axes
with plain tick labels, PNG at 200 dpi or more, PDF and SVG by the suffix, titles naming the
scenario and seed."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import airsched
from airsched import plots
from airsched.repro import garroppo, hoiland

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def figures(monkeypatch) -> list[Any]:
    """Every matplotlib Figure saved while the test runs (they are still written)."""
    saved: list[Any] = []
    real_save = plots.save

    def capture(fig, path):
        saved.append(fig)
        return real_save(fig, path)

    monkeypatch.setattr(plots, "save", capture)
    return saved


def series_labels(fig) -> set[str]:
    """The labels of every drawn series (lines, bars) of every axes of ``fig``."""
    labels = set()
    for ax in fig.axes:
        for artist in [*ax.lines, *ax.containers, *ax.collections]:
            label = artist.get_label()
            if label and not label.startswith("_"):
                labels.add(label)
    return labels


def legend_labels(fig) -> list[str]:
    legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend() is not None)]
    return [text.get_text() for legend in legends for text in legend.get_texts()]


def titles(fig) -> str:
    parts = [fig._suptitle.get_text() if fig._suptitle is not None else ""]
    parts += [ax.get_title() for ax in fig.axes]
    return "\n".join(parts)


def _pings(answered: dict[str, list[str]]) -> pd.DataFrame:
    """UDP pings: per configuration, ten answered pings to each station named."""
    rows = []
    for configuration, stations in answered.items():
        for k, station in enumerate(stations):
            for seq in range(10):
                rows.append(("udp", configuration, station, seq, seq * 0.1, 2.0 + 3 * k + seq * 40.0))
    return pd.DataFrame(rows, columns=list(hoiland.PING_COLUMNS))


def _summary() -> pd.DataFrame:
    rows = []
    for configuration in hoiland.CONFIGURATIONS:
        for j, station in enumerate(hoiland.STATIONS):
            bulk = station in hoiland.BULK_STATIONS
            rows.append(
                {
                    "traffic": "udp",
                    "configuration": configuration,
                    "station": station,
                    "airtime_share": 0.3 if bulk else 0.01,
                    "airtime_down_s": 1.0,
                    "goodput_mbps": 10.0 + j if bulk else math.nan,
                    "ping_p50_ms": 20.0,
                    "ping_p90_ms": 40.0,
                    "ping_mean_ms": 25.0 + 100 * j,
                    "ping_sent": 10,
                    "ping_answered": 10,
                    "ampdu_mean_down": 20.0,
                    "ampdu_mean_up": 1.0,
                    "tcp_retransmits": 0,
                }
            )
    return pd.DataFrame(rows, columns=list(hoiland.SUMMARY_COLUMNS))


# ----- legends ---------------------------------------------------------------------------------


def test_ping_cdf_legend_names_every_station(figures, tmp_path):
    """The legend came from the first panel with a series: under FIFO only the fast stations'
    pings come back, so slow and pingonly were missing from it."""
    pings = _pings(
        {
            "fifo": ["fast1", "fast2"],
            "fq_codel": ["fast1", "fast2", "slow", "pingonly"],
            "fq-mac": ["fast1", "fast2", "slow", "pingonly"],
            "airtime": ["fast1", "fast2", "slow", "pingonly"],
        }
    )
    hoiland.plot_ping_cdf(pings, "udp", tmp_path / "cdf.png")
    (fig,) = figures
    labels = legend_labels(fig)
    assert sorted(labels) == sorted(series_labels(fig)) == sorted(hoiland.STATIONS)


def test_ping_cdf_legend_says_which_station_never_answered(figures, tmp_path):
    pings = _pings({c: ["fast1", "fast2", "slow"] for c in hoiland.CONFIGURATIONS})
    hoiland.plot_ping_cdf(pings, "udp", tmp_path / "cdf.png")
    hoiland.plot_pingonly_cdf(pings, "udp", tmp_path / "pingonly.png")
    cdf, pingonly = figures
    assert set(legend_labels(cdf)) == series_labels(cdf)
    assert "pingonly (no ping answered)" in legend_labels(cdf)
    assert set(legend_labels(pingonly)) == series_labels(pingonly) == {
        f"{hoiland.CONFIGURATION_LABELS[c]} (no ping answered)" for c in hoiland.PINGONLY_CONFIGURATIONS
    }


@pytest.fixture(scope="module")
def testbed(tmp_path_factory) -> tuple[list[Path], list[Any]]:
    """hoiland.plot_all of a reproduction with every station answered: the PNGs and Figures."""
    pings = _pings({c: list(hoiland.STATIONS) for c in hoiland.CONFIGURATIONS})
    rep = hoiland.Reproduction(_summary(), pings, scenarios={"udp": "scenarios/hoiland/udp.toml"}, seed=5)
    saved: list[Any] = []
    real_save = plots.save
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(plots, "save", lambda fig, path: (saved.append(fig), real_save(fig, path))[1])
        paths = hoiland.plot_all(rep, tmp_path_factory.mktemp("testbed"))
    return paths, saved


def test_every_testbed_figure_has_a_complete_legend(testbed):
    _paths, figures = testbed
    assert len(figures) == 4
    for fig in figures:
        labels = legend_labels(fig)
        assert labels, titles(fig)
        assert len(labels) == len(set(labels))
        assert set(labels) == series_labels(fig), titles(fig)


def _table() -> pd.DataFrame:
    """A run_table of share 1:4 where DRR (the first panel drawn) lacks MS2's rows."""
    rows = []
    for scheduler in garroppo.SCHEDULERS:
        for position in garroppo.POSITIONS:
            for station in garroppo.STATIONS:
                if scheduler == "cbq" and station == "ms2":
                    continue
                rows.append(
                    {
                        "share": "1:4",
                        "position": position,
                        "scheduler": scheduler,
                        "station": station,
                        "goodput_kbps": 1000.0,
                        "paper_kbps": garroppo.paper_kbps("1:4", position, station, scheduler),
                        "occupancy": 0.5,
                        "mean_rate_down_mbps": 11.0,
                        "retries": 0,
                        "drops_retry": 0,
                        "snr_mean_db": 10.0,
                    }
                )
    df = pd.DataFrame(rows, columns=list(garroppo.TABLE_COLUMNS))
    df.attrs["scenarios"] = [f"scenarios/garroppo/share-1-4-{s}.toml" for s in garroppo.SCHEDULERS]
    df.attrs["seed"] = 4
    return df


def test_garroppo_figures_have_complete_legends_and_name_their_runs(figures, tmp_path):
    df = _table()
    garroppo.plot_goodput(df, tmp_path / "goodput.png")
    garroppo.plot_occupancy(df, tmp_path / "occupancy.png")
    goodput, occupancy = figures
    assert sorted(legend_labels(goodput)) == sorted(series_labels(goodput)) == sorted(
        f"{st.upper()} {what}" for st in garroppo.STATIONS for what in ("sim", "paper")
    )
    assert sorted(legend_labels(occupancy)) == sorted(series_labels(occupancy)) == ["MS1", "MS2"]
    for fig in figures:
        assert "scenarios/garroppo/share-1-4-*.toml" in titles(fig) and "seed 4" in titles(fig)


# ----- log axes, resolution, formats -----------------------------------------------------------


def test_log_axes_have_plain_tick_labels(testbed):
    _paths, figures = testbed
    checked = 0
    for fig in figures:
        fig.canvas.draw()
        for ax in fig.axes:
            for axis, scale in ((ax.xaxis, ax.get_xscale()), (ax.yaxis, ax.get_yscale())):
                if scale != "log":
                    continue
                texts = [t.get_text() for t in axis.get_ticklabels() if t.get_text()]
                if not texts:  # a shared axis labelled on its neighbour
                    continue
                for text in texts:
                    assert "^" not in text and "$" not in text and "e+" not in text, texts
                    float(text.replace(",", ""))  # a plain number
                checked += 1
    assert checked >= 3  # the CDFs' two bottom panels and the throughput figure's ping axis
    # Never an exponent, also where "{:g}" would write one (1e+06, 1e-05).
    assert [plots.plain_number(v) for v in (1, 10, 100, 1000, 0.5, 20, 1e6, 1e-5)] == [
        "1", "10", "100", "1000", "0.5", "20", "1000000", "0.00001"
    ]


def test_png_figures_are_at_least_200_dpi(testbed):
    from PIL import Image

    paths, _figures = testbed
    assert plots.DPI >= 200
    for path in paths:
        assert path.read_bytes()[:8] == PNG_MAGIC
        with Image.open(path) as image:
            dpi = image.info["dpi"]
            width, height = image.size
        assert min(dpi) >= 199.5, (path, dpi)  # the pHYs chunk (dots per metre, rounded)
        assert width >= plots.FIGSIZE[0] * 200 and height >= plots.FIGSIZE[1] * 200


def test_figures_are_written_in_the_format_the_suffix_names(tmp_path):
    pdf = hoiland.plot_airtime(_summary(), "udp", tmp_path / "airtime.pdf")
    assert pdf.read_bytes().startswith(b"%PDF-")
    svg = garroppo.plot_occupancy(_table(), tmp_path / "occupancy.SVG")
    assert b"<svg" in svg.read_bytes()[:1000]
    names = [p.name for p in hoiland.plot_all((_summary(), _pings({})), tmp_path, suffix=".svg")]
    assert names == [f"hoiland-udp-{w}.svg" for w in ("airtime", "throughput", "ping-cdf", "pingonly-cdf")]


def test_a_figure_with_another_suffix_is_refused(tmp_path):
    fig = plots.new_figure()
    fig.subplots().plot([0, 1], [0, 1])
    with pytest.raises(ValueError, match=r"suffix \.jpg; use \.png, \.pdf, \.svg"):
        plots.save(fig, tmp_path / "x.jpg")
    assert not (tmp_path / "x.jpg").exists()


# ----- titles -----------------------------------------------------------------------------------


def test_testbed_figure_titles_name_the_scenario_and_seed(testbed):
    _paths, figures = testbed
    for fig in figures:
        text = titles(fig)
        assert "UDP" in text and "scenarios/hoiland/udp.toml" in text and "seed 5" in text, text


def test_run_testbed_and_run_table_record_their_scenarios_and_seed():
    rep = hoiland.run_testbed("udp", duration="3s", seed=None, configurations=["airtime"])
    assert rep.scenarios == {"udp": "scenarios/hoiland/udp.toml"}
    assert rep.seed == int(rep.results[("udp", "airtime")].summary["seed"])
    df = garroppo.run_table("1:1", duration="3s", seed=6, positions=["good"], schedulers=["drr", "whtb"])
    assert garroppo.table_run_label(df) == ("scenarios/garroppo/share-1-1-*.toml", 6)


def test_sample_and_walk_titles_name_the_scenario_and_seed(figures, tmp_path, data):
    result = airsched.run(data / "downlink2.toml", seed=8)
    plots.plot_samples(result, tmp_path / "goodput.png", scenario="data/downlink2.toml")
    assert "goodput per station" in titles(figures[-1]) and "data/downlink2.toml, seed 8" in titles(figures[-1])
    walk = garroppo.run_walk("whtb", duration="3s", seed=2)
    garroppo.plot_walk(walk, tmp_path / "walk.png", scenario="scenarios/garroppo/walk-whtb.toml")
    assert "scenarios/garroppo/walk-whtb.toml, seed 2" in titles(figures[-1])


def test_plot_command_titles_the_figure_with_the_runs_seed(tmp_path, data, figures):
    from typer.testing import CliRunner

    from airsched import cli

    out = tmp_path / "run"
    result = CliRunner().invoke(cli.app, ["run", str(data / "downlink2.toml"), "--seed", "12", "--out", str(out)])
    assert result.exit_code == 0, result.output
    result = CliRunner().invoke(cli.app, ["plot", str(out), "-o", str(tmp_path / "g.svg")])
    assert result.exit_code == 0, result.output
    assert "seed 12" in titles(figures[-1])
