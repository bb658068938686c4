# SPDX-License-Identifier: Apache-2.0
"""The Høiland-Jørgensen reproduction (airsched.repro.hoiland) and `airsched repro hoiland`.

The papers' shape is checked with margins, not magic values. The slow-marked tests run 10 s
simulations by default (8 s measured after the 2 s warm-up); AIRSCHED_SLOW=1 runs the papers'
full 30 s. TCP assertions are kept to the robust shape (balanced airtime under the airtime
scheduler, FIFO latency far above FQ-MAC's), as TCP's details still move."""

from __future__ import annotations

import io
import math
import os
import struct
from pathlib import Path

import pandas as pd
import pytest
from rich.console import Console

import airsched
from airsched import plots
from airsched.repro import hoiland

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
HOILAND = SCENARIOS / "hoiland"
#: Per-run simulated time of the shape tests: bounded unless AIRSCHED_SLOW=1 (then the papers' 30 s).
DURATION = None if os.environ.get("AIRSCHED_SLOW") == "1" else "10s"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def assert_png(path: Path, width_in: float, height_in: float) -> None:
    """A PNG of the size the figure was made with, with something drawn on it."""
    import matplotlib.image

    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC, f"{path} is not a PNG"
    assert path.stat().st_size > 5000, path
    expected = (round(width_in * plots.DPI), round(height_in * plots.DPI))
    assert struct.unpack(">II", data[16:24]) == expected
    assert matplotlib.image.imread(path).std() > 0.05


@pytest.fixture(scope="module")
def udp() -> hoiland.Reproduction:
    return hoiland.run_testbed("udp", duration=DURATION)


@pytest.fixture(scope="module")
def tcp() -> hoiland.Reproduction:
    return hoiland.run_testbed("tcp", duration=DURATION)


def cell(rep: hoiland.Reproduction, configuration: str, station: str, column: str) -> float:
    rows = rep.summary.set_index(["configuration", "station"])
    return float(rows.loc[(configuration, station), column])


def total(rep: hoiland.Reproduction, configuration: str, column: str) -> float:
    return float(rep.totals().set_index("configuration").loc[configuration, column])


# ----- the papers' values ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "key,value",
    [
        (("udp", "throughput_mbps", "fifo"), 20.0),
        (("udp", "throughput_mbps", "fq-mac"), 70.0),
        (("udp", "throughput_mbps", "airtime"), 100.0),
        (("udp", "ping_mean_ms", "fifo"), 300.0),
        (("udp", "ping_mean_ms", "fq-mac"), 10.0),
        (("udp", "ping_mean_ms", "airtime"), 10.0),
    ],
)
def test_blog_values_are_the_blogs(key, value):
    found = hoiland.paper(*key)
    assert found is not None and found.value == value and "blog" in found.source


def test_next_steps_tcp_latencies():
    p = lambda c, s: hoiland.paper("tcp", "ping_p50_ms", c, s)  # noqa: E731
    assert p("fq_codel", "slow").value == 200 and p("fq_codel", "fast1").value == 35
    # FQ-MAC: the slow station gets the fast stations' FQ-CoDel median, the fast ones 45 % less.
    assert p("fq-mac", "slow").value == 35 and p("fq-mac", "fast2").value == pytest.approx(19.25)
    assert p("airtime", "slow") == p("fq-mac", "slow")  # "retaining the same median"
    assert p("fifo", "slow") is None and hoiland.paper("tcp", "ping_p50_ms", "fifo").text == "several 100"
    assert hoiland.paper_text("tcp", "ping_p50_ms", "fq_codel") == "slow > 200, fast ~35"
    assert hoiland.paper("udp", "throughput_mbps", "fq_codel") is None  # the blog has no FQ-CoDel qdisc run
    assert hoiland.paper_text("udp", "throughput_mbps", "fq_codel") == ""


def test_every_paper_key_is_a_known_traffic_configuration_and_station():
    quantities = {"airtime_share", "throughput_mbps", "ping_mean_ms", "ping_p50_ms", "pingonly", "ampdu_mean_down"}
    for (traffic, quantity, configuration, station), value in hoiland.PAPER.items():
        assert traffic in hoiland.TRAFFICS and configuration in hoiland.CONFIGURATIONS
        assert quantity in quantities and station in {"all", "fast", *hoiland.STATIONS}
        assert value.text and value.source
    with pytest.raises(ValueError, match="configuration: must be one of"):
        hoiland.paper("udp", "throughput_mbps", "sfq")


# ----- scenario files --------------------------------------------------------------------------


def test_scenario_files_are_found(monkeypatch, tmp_path):
    monkeypatch.delenv("AIRSCHED_SCENARIOS", raising=False)
    assert hoiland.find_scenarios_dir() == SCENARIOS
    assert hoiland.find_scenarios_dir(HOILAND) == SCENARIOS
    assert hoiland.scenario_file("tcp") == HOILAND / "tcp.toml"
    with pytest.raises(airsched.ScenarioError, match="hoiland/udp.toml"):
        hoiland.find_scenarios_dir(tmp_path)
    with pytest.raises(ValueError, match="traffic: must be one of udp, tcp"):
        hoiland.scenario_file("icmp")
    with pytest.raises(ValueError, match="configuration: must be one of fifo"):
        hoiland.configuration_overrides("sfq")


@pytest.mark.parametrize("traffic", hoiland.TRAFFICS)
def test_each_configuration_is_an_override_of_the_aps_queueing(traffic):
    path = hoiland.scenario_file(traffic)
    for configuration in hoiland.CONFIGURATIONS:
        overrides = hoiland.configuration_overrides(configuration)
        assert set(overrides) <= {"ap.queueing", "ap.tc"}
        assert overrides["ap.queueing"] == configuration
        info = airsched.validate(path, overrides=overrides)
        assert info.duration == "32s"
    # The override is the configuration: FIFO runs pfifo_fast at the AP, FQ-MAC no qdisc of its
    # own above the mac80211 queues.
    fifo = airsched.run(path, overrides=hoiland.configuration_overrides("fifo"), duration="2.4s")
    fq_mac = airsched.run(path, overrides=hoiland.configuration_overrides("fq-mac"), duration="2.4s")
    root = lambda r: next(i for i in r.tc if i["node"] == "ap" and i["dev"] == "wlan0")["qdiscs"][0]["kind"]  # noqa: E731
    assert (root(fifo), root(fq_mac)) == ("pfifo_fast", "pfifo")
    assert fq_mac.stations["ampdu_mean_down"].max() > fifo.stations["ampdu_mean_down"].max()


@pytest.mark.parametrize("given,expected", [(4, "4s"), (7.5, "7.5s"), ("10", "10s"), (" 3 ", "3s"), ("500ms", "500ms"), (None, None)])
def test_durations_in_seconds_or_with_a_unit(given, expected):
    assert hoiland.normalize_duration(given) == expected


# ----- the summary and tables ------------------------------------------------------------------


def test_summary_has_a_row_per_configuration_and_station(udp):
    s = udp.summary
    assert list(s.columns) == list(hoiland.SUMMARY_COLUMNS)
    assert len(s) == 16 and set(s["traffic"]) == {"udp"}
    assert list(dict.fromkeys(s["configuration"])) == list(hoiland.CONFIGURATIONS)
    assert list(s["station"][:4]) == list(hoiland.STATIONS)
    # The AP's transmit airtime is shared out among the four stations.
    assert ((s.groupby("configuration")["airtime_share"].sum() - 1).abs() < 1e-9).all()
    assert s[s["station"] == "pingonly"]["goodput_mbps"].isna().all()
    assert (s[s["station"] != "pingonly"]["goodput_mbps"] > 0).all()
    assert set(udp.results) == {("udp", c) for c in hoiland.CONFIGURATIONS}
    # The pings table holds every answered ping the summary counts.
    counts = udp.pings.groupby(["configuration", "station"]).size()
    for r in s.itertuples():
        assert counts.get((r.configuration, r.station), 0) == r.ping_answered


def test_totals_sum_the_bulk_flows_and_pool_their_pings(udp):
    t = udp.totals().set_index("configuration")
    s = udp.summary
    airtime = s[(s["configuration"] == "airtime") & (s["station"] != "pingonly")]
    assert t.loc["airtime", "throughput_mbps"] == pytest.approx(airtime["goodput_mbps"].sum())
    pings = udp.pings.query("configuration == 'airtime' and station != 'pingonly'")["rtt_ms"]
    assert t.loc["airtime", "ping_mean_ms"] == pytest.approx(pings.mean(), rel=1e-9)
    assert t.loc["airtime", "airtime_max_min"] == pytest.approx(airtime["airtime_share"].max() / airtime["airtime_share"].min())


def test_format_tables_show_every_figure_with_the_papers_values(udp):
    buf = io.StringIO()
    console = Console(file=buf, width=200)
    tables = hoiland.format_tables(udp.summary, "udp")
    assert len(tables) == len(hoiland.TABLE_TITLES)
    for table in tables:
        console.print(table)
    text = buf.getvalue()
    for key in hoiland.TABLE_TITLES:
        assert hoiland.table_title(key, "udp") in text
    for label in hoiland.CONFIGURATION_LABELS.values():
        assert label in text
    for paper_text in ("~20", "just < 70", "just > 100", "~300", "slow > fast1 + fast2", "1/3 each", "< FQ-MAC"):
        assert paper_text in text
    assert f"{total(udp, 'fq-mac', 'throughput_mbps'):.1f}" in text
    assert f"{100 * cell(udp, 'airtime', 'slow', 'airtime_share'):.1f}" in text
    with pytest.raises(ValueError, match="no tcp rows"):
        hoiland.format_tables(udp.summary, "tcp")


def test_run_testbed_reports_progress_and_runs_a_subset():
    calls: list[float] = []
    rep = hoiland.run_testbed("udp", duration=3, progress=calls.append, configurations=["airtime", "fifo"])
    assert list(dict.fromkeys(rep.summary["configuration"])) == ["airtime", "fifo"]
    assert calls == sorted(calls) and calls[-1] == 1.0 and 0 < calls[0] < 0.5
    assert rep.results[("udp", "airtime")].summary["sim_seconds"] == 3.0
    with pytest.raises(ValueError, match="traffic: must be one of udp, tcp, both"):
        hoiland.run_testbed("icmp")
    with pytest.raises(airsched.ScenarioError, match="warm-up"):
        hoiland.run_testbed("udp", duration="1s", configurations=["fifo"])


# ----- files and figures -----------------------------------------------------------------------


def test_write_and_figures(udp, tmp_path):
    paths = hoiland.write(udp, tmp_path / "out")
    csv = pd.read_csv(paths[0])
    assert paths[0].name == "hoiland.csv" and list(csv.columns) == list(hoiland.SUMMARY_COLUMNS)
    assert len(csv) == 16
    pd.testing.assert_series_equal(csv["airtime_share"], udp.summary["airtime_share"], check_dtype=False)
    run_dir = tmp_path / "out" / "runs" / "udp-fq-mac"
    assert run_dir in paths and (run_dir / "aggregates.parquet").is_file()
    figures = hoiland.plot_all(udp, tmp_path / "fig")
    assert [p.name for p in figures] == [
        f"hoiland-udp-{what}.png" for what in ("airtime", "throughput", "ping-cdf", "pingonly-cdf")
    ]
    sizes = {"ping-cdf": (plots.FIGSIZE[0], 6.0)}
    for path in figures:
        what = path.stem.removeprefix("hoiland-udp-")
        assert_png(path, *sizes.get(what, plots.FIGSIZE))


# ----- the command line ------------------------------------------------------------------------


def test_repro_hoiland_writes_the_csv_and_figures(cli, tmp_path):
    out = tmp_path / "out"
    proc = cli("repro", "hoiland", "--traffic", "udp", "--duration", "4", "--out", out, "--plot")
    assert proc.returncode == 0, proc.stderr
    for key in hoiland.TABLE_TITLES:
        assert hoiland.table_title(key, "udp") in proc.stdout
    assert "TCP:" not in proc.stdout
    df = pd.read_csv(out / "hoiland.csv")
    assert len(df) == 16 and set(df["traffic"]) == {"udp"}
    for what in ("airtime", "throughput", "ping-cdf", "pingonly-cdf"):
        path = out / f"hoiland-udp-{what}.png"
        assert path.is_file() and path.read_bytes()[:8] == PNG_MAGIC
        assert f"wrote {path}" in proc.stdout
    assert (out / "runs" / "udp-airtime" / "pings.parquet").is_file()
    assert proc.stderr == ""


@pytest.mark.parametrize(
    "args,names",
    [
        (("--plot",), ["--plot", "--out"]),
        (("--traffic", "icmp"), ["--traffic", "udp", "tcp", "both", "icmp"]),
        (("--duration", "5 fortnights"), ["duration", "fortnights"]),
    ],
    ids=["plot-without-out", "traffic", "duration"],
)
def test_bad_options_exit_2_naming_them(cli, args, names):
    proc = cli("repro", "hoiland", *args)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stdout == "" and "Traceback" not in proc.stderr
    for name in names:
        assert name in proc.stderr


# ----- the papers' shape -----------------------------------------------------------------------


@pytest.mark.slow
def test_udp_has_the_papers_shape(udp):
    """Blog Figs. 1, 2 and 6, next steps Fig. 3, with UDP floods."""
    shares = lambda c: [cell(udp, c, s, "airtime_share") for s in hoiland.BULK_STATIONS]  # noqa: E731
    fifo, codel, fqmac, airtime = (total(udp, c, "throughput_mbps") for c in hoiland.CONFIGURATIONS)
    # FIFO: the anomaly. About the blog's 20 Mb/s; the slow station takes more airtime than the
    # two fast ones together (here ~85 %). FQ-CoDel over the same driver FIFO does no better.
    assert 15 < fifo < 25
    for configuration in ("fifo", "fq_codel"):
        fast1, fast2, slow = shares(configuration)
        assert slow > 0.75 and slow > 3 * (fast1 + fast2), configuration
    assert codel < 25
    # FQ-MAC and Airtime: several times FIFO's throughput. FQ-MAC gives each station one
    # A-MPDU per turn, but the slow station's turns last longer (its aggregates are sized for
    # 4 ms at the chain's slowest rate and retried through the chain), so it still takes more
    # than its third (blog Fig. 1: "improves things a lot"); the airtime scheduler charges
    # every try and shares the air out, which lifts the throughput (blog: just under 70 to
    # just over 100 Mb/s, x1.4; here x1.2).
    assert fqmac > 3 * fifo and airtime > 3 * fifo
    fast1, fast2, slow = shares("fq-mac")
    assert slow > 0.40 and slow > 1.3 * max(fast1, fast2)
    assert 55 < fqmac < 80
    assert airtime > 1.15 * fqmac
    assert max(shares("airtime")) / min(shares("airtime")) < 1.05
    # Full aggregates to the fast stations only once mac80211 queues per TID (next steps 3.2).
    for station in hoiland.FAST_STATIONS:
        assert cell(udp, "fq-mac", station, "ampdu_mean_down") > 10 * cell(udp, "fq_codel", station, "ampdu_mean_down")
    # Latency: FQ-CoDel keeps the fast stations' pings short but not the slow one's; the airtime
    # scheduler's sparse-station boost gives the ping-only station lower latency than FQ-MAC (Fig. 6).
    assert cell(udp, "fq_codel", "slow", "ping_p50_ms") > 10 * max(
        cell(udp, "fq_codel", s, "ping_p50_ms") for s in hoiland.FAST_STATIONS
    )
    assert cell(udp, "airtime", "pingonly", "ping_p50_ms") < 0.6 * cell(udp, "fq-mac", "pingonly", "ping_p50_ms")
    for configuration in ("fq-mac", "airtime"):
        assert total(udp, configuration, "ping_mean_ms") < 50, configuration


@pytest.mark.slow
def test_tcp_has_the_papers_shape(tcp):
    """Next steps Fig. 2 (latency with TCP downloads) and the airtime scheduler's fairness."""
    shares = [cell(tcp, "airtime", s, "airtime_share") for s in hoiland.BULK_STATIONS]
    assert max(shares) / min(shares) < 1.25
    # FIFO: the slow station's pings wait several times longer than under FQ-MAC.
    assert cell(tcp, "fifo", "slow", "ping_p50_ms") > 3 * cell(tcp, "fq-mac", "slow", "ping_p50_ms")
    # FQ-CoDel: the slow station's median is several times the fast stations'.
    fast = max(cell(tcp, "fq_codel", s, "ping_p50_ms") for s in hoiland.FAST_STATIONS)
    assert cell(tcp, "fq_codel", "slow", "ping_p50_ms") > 3 * fast
    for configuration in hoiland.CONFIGURATIONS:
        assert total(tcp, configuration, "throughput_mbps") > 10, configuration
        assert not math.isnan(cell(tcp, configuration, "pingonly", "ping_p50_ms")), configuration
