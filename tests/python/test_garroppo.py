# SPDX-License-Identifier: Apache-2.0
"""The Garroppo et al. reproduction (airsched.repro.garroppo), its figures, and the `airsched
repro` and `airsched plot` commands. Numbers are checked as properties (orderings, sums, the
paper's qualitative shape), not as magic values; the paper's own tables are checked cell by cell."""

from __future__ import annotations

import difflib
import io
import struct
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from rich.console import Console

import airsched
from airsched import plots
from airsched.repro import garroppo

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
GARROPPO = SCENARIOS / "garroppo"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def png_size(path: Path) -> tuple[int, int]:
    """(width, height) in pixels from a PNG's IHDR chunk, after checking it is a PNG."""
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC, f"{path} is not a PNG"
    return struct.unpack(">II", data[16:24])


def assert_png(path: Path, width_in: float, height_in: float) -> None:
    """A PNG matplotlib reads back, of the size the figure was made with."""
    import matplotlib.image

    assert path.is_file() and path.stat().st_size > 5000, path
    expected = (round(width_in * plots.DPI), round(height_in * plots.DPI))
    assert png_size(path) == expected
    pixels = matplotlib.image.imread(path)
    assert pixels.shape[:2] == (expected[1], expected[0])
    assert pixels.std() > 0.05  # something is drawn, not a blank canvas


# ----- the paper's data ------------------------------------------------------------------------

# (share, position, station, scheduler, kbit/s), read off the paper's Tables 1 and 2.
PAPER_SPOTS = [
    ("1:4", "good", "ms1", "cbq", 4037),
    ("1:4", "good", "ms2", "whtb", 991),
    ("1:4", "medium", "ms2", "htb", 609),
    ("1:4", "bad", "ms1", "whtb", 3960),
    ("1:4", "very-bad", "ms1", "drr", 1449),
    ("1:4", "out-of-range", "ms1", "whtb", 3226),
    ("1:1", "good", "ms2", "htb", 2512),
    ("1:1", "medium", "ms1", "whtb", 2061),
    ("1:1", "bad", "ms2", "whtb", 956),
    ("1:1", "very-bad", "ms2", "cbq", 676),
    ("1:1", "out-of-range", "ms1", "drr", 201),
]


@pytest.mark.parametrize("share,position,station,scheduler,kbps", PAPER_SPOTS)
def test_paper_values_are_the_papers(share, position, station, scheduler, kbps):
    assert garroppo.paper_kbps(share, position, station, scheduler) == kbps


def test_paper_tables_have_every_cell_once():
    df = garroppo.paper_table()
    assert len(df) == 80
    for share in garroppo.SHARES:
        table = garroppo.paper_table(share)
        assert len(table) == 40
        assert not table.duplicated(["position", "station", "scheduler"]).any()
        # Out of range, MS2 receives nothing under any scheduler, in both tables.
        oor = table[(table["position"] == "out-of-range") & (table["station"] == "ms2")]
        assert list(oor["paper_kbps"]) == [0, 0, 0, 0]
    # Table 1's column sums, a check on every MS1 cell at once.
    t1 = garroppo.paper_table("1:4")
    sums = t1[t1["station"] == "ms1"].groupby("scheduler")["paper_kbps"].sum()
    assert sums.to_dict() == {"cbq": 12750, "htb": 14881, "drr": 11620, "whtb": 17868}


def test_the_gate_column_is_compared_with_the_papers_whtb():
    # The paper measured no gate: WHTB+gate stands beside its WHTB, and its tables keep 4 columns.
    for share in garroppo.SHARES:
        for position in garroppo.POSITIONS:
            for station in garroppo.STATIONS:
                assert garroppo.paper_kbps(share, position, station, "whtb-gate") == garroppo.paper_kbps(share, position, station, "whtb")
    assert garroppo.paper_kbps("1:4", "out-of-range", "ms1", "whtb-gate") == 3226
    assert set(garroppo.paper_table()["scheduler"]) == set(garroppo.PAPER_SCHEDULERS)


def test_paper_lookups_reject_unknown_keys():
    with pytest.raises(ValueError, match="share"):
        garroppo.paper_kbps("2:3", "good", "ms1", "cbq")
    with pytest.raises(ValueError, match="position"):
        garroppo.paper_kbps("1:4", "far", "ms1", "cbq")


# ----- moving MS2 ------------------------------------------------------------------------------


def test_position_override_is_the_file_edited():
    path = GARROPPO / "share-1-4-whtb.toml"
    text = path.read_text(encoding="utf-8")
    assert text.count('name = "ms2"\nip = "192.168.1.3"\nposition = "bad"') == 1
    for position in ("good", "out-of-range"):
        override = garroppo.position_override(position)
        assert override == {"station[ms2].position": position}
        edited = text.replace('name = "ms2"\nip = "192.168.1.3"\nposition = "bad"', f'name = "ms2"\nip = "192.168.1.3"\nposition = "{position}"')
        by_override = airsched.run(path, duration="3s", overrides=override)
        by_text = airsched.run(text=edited, duration="3s")
        pd.testing.assert_frame_equal(by_override.stations, by_text.stations)
        pd.testing.assert_frame_equal(by_override.samples, by_text.samples)
    with pytest.raises(ValueError, match="position: must be one of"):
        garroppo.position_override("underground")


def test_a_position_override_names_a_missing_station():
    walk = GARROPPO / "walk-drr.toml"
    with pytest.raises(airsched.ScenarioError) as exc:
        airsched.validate(walk, overrides=garroppo.position_override("bad", station="ms3"))
    assert exc.value.errors == [
        '<command line>:1:9: station[ms3].position: no [[station]] named "ms3"; did you mean "ms1"? '
        '(station names: "ms1", "ms2"; or select by index, station[0])'
    ]
    # The walking MS2 has a schedule (and its mode): a position replaces both.
    airsched.validate(walk, overrides=garroppo.position_override("bad"))


# ----- finding the scenarios -------------------------------------------------------------------


def test_scenarios_dir_is_found_and_can_be_given(monkeypatch, tmp_path):
    monkeypatch.delenv(garroppo.SCENARIOS_ENV, raising=False)
    assert garroppo.find_scenarios_dir() == SCENARIOS
    assert garroppo.find_scenarios_dir(GARROPPO) == SCENARIOS  # scenarios/garroppo also accepted
    assert garroppo.scenario_file("1:1", "cbq") == GARROPPO / "share-1-1-cbq.toml"
    with pytest.raises(airsched.ScenarioError, match=str(tmp_path)):
        garroppo.find_scenarios_dir(tmp_path)
    monkeypatch.setenv(garroppo.SCENARIOS_ENV, str(tmp_path))
    with pytest.raises(airsched.ScenarioError, match=garroppo.SCENARIOS_ENV):
        garroppo.find_scenarios_dir()


def test_gate_scenarios_are_the_whtb_ones_with_the_gate():
    """share-1-{4,1}-whtb-gate.toml and walk-whtb-gate.toml are their whtb files with one line
    changed: the qdisc gets the section 6.3 gate."""
    for stem in ("share-1-4-whtb", "share-1-1-whtb", "walk-whtb"):
        base = (GARROPPO / f"{stem}.toml").read_text(encoding="utf-8")
        gate = (GARROPPO / f"{stem}-gate.toml").read_text(encoding="utf-8")
        body = lambda t: t[t.index("[run]"):].splitlines()  # noqa: E731  (the header comments differ)
        changes = [line for line in difflib.ndiff(body(base), body(gate)) if line[:1] in "+-"]
        assert changes == [
            "- tc qdisc add dev wlan0 root handle 1: whtb",
            "+ tc qdisc add dev wlan0 root handle 1: whtb gate 10% gate_skip 8",
        ], stem


def test_walk_scenarios_are_the_share_1_4_ones_with_ms2_walking():
    for scheduler in garroppo.WALK_SCHEDULERS:
        walk = (GARROPPO / f"walk-{scheduler}.toml").read_text(encoding="utf-8")
        base = (GARROPPO / f"share-1-4-{scheduler}.toml").read_text(encoding="utf-8")
        body = lambda t: t[t.index("[run]"):]  # noqa: E731  (the header comments differ)
        changes = [line for line in difflib.ndiff(body(base).splitlines(), body(walk).splitlines()) if line[:1] in "+-"]
        assert '- duration = "82.92s"' in changes and '+ duration = "141s"' in changes
        assert '- position = "bad"' in changes and '+ schedule_mode = "linear"' in changes
        assert all(c.startswith(("+", "- duration", '- position = "bad"')) for c in changes), changes
        info = airsched.load(GARROPPO / f"walk-{scheduler}.toml").validate()
        assert info.duration == "141s"


# ----- the table -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def short_table() -> pd.DataFrame:
    """Table 1, every scheduler and position, 6 s per run."""
    return garroppo.run_table("1:4", duration="6s", seed=1)


def test_run_table_has_a_row_per_position_scheduler_and_station(short_table):
    df = short_table
    assert list(df.columns) == list(garroppo.TABLE_COLUMNS)
    assert len(df) == 50  # 5 positions x (the paper's 4 schedulers + WHTB+gate) x 2 stations
    assert not df.duplicated(["position", "scheduler", "station"]).any()
    assert set(df["share"]) == {"1:4"}
    assert list(dict.fromkeys(df["position"])) == list(garroppo.POSITIONS)  # the paper's row order
    merged = df.merge(garroppo.paper_table("1:4"), on=["share", "position", "scheduler", "station"])
    assert len(merged) == 40 and (merged["paper_kbps_x"] == merged["paper_kbps_y"]).all()
    gate = df[df["scheduler"] == "whtb-gate"]
    assert len(gate) == 10 and list(gate["paper_kbps"]) == list(df[df["scheduler"] == "whtb"]["paper_kbps"])


def test_run_table_moves_ms2_only(short_table):
    for scheduler, rows in short_table.groupby("scheduler"):
        ms2 = rows[rows["station"] == "ms2"].set_index("position").loc[list(garroppo.POSITIONS)]
        ms1 = rows[rows["station"] == "ms1"]
        # MS2's SNR falls from good to out-of-range, position after position.
        assert ms2["snr_mean_db"].is_monotonic_decreasing and ms2["snr_mean_db"].is_unique, scheduler
        assert ms2["snr_mean_db"].iloc[0] - ms2["snr_mean_db"].iloc[-1] > 15
        # MS1 stays where it is.
        assert ms1["snr_mean_db"].max() - ms1["snr_mean_db"].min() < 0.5, scheduler
        assert ms2.loc["out-of-range", "goodput_kbps"] == 0
        assert ms2.loc["out-of-range", "drops_retry"] > 0
        assert ms2.loc["good", "retries"] <= ms2.loc["out-of-range", "retries"]


def test_run_table_occupancy_shares_the_airtime(short_table):
    per_run = short_table.groupby(["position", "scheduler"])["occupancy"].sum()
    assert ((per_run - 1.0).abs() < 1e-6).all()
    assert (short_table["goodput_kbps"] >= 0).all()
    # Both in good positions, a 4:1 share gives MS1 most of the air.
    good = short_table[short_table["position"] == "good"].set_index(["scheduler", "station"])["occupancy"]
    for scheduler in garroppo.SCHEDULERS:
        assert good[scheduler, "ms1"] > good[scheduler, "ms2"]


def test_run_table_reports_progress_and_a_subset():
    calls: list[float] = []
    df = garroppo.run_table(
        "1:1", duration="3s", progress=calls.append, positions=["bad", "good"], schedulers=["whtb"]
    )
    assert list(df["position"]) == ["good", "good", "bad", "bad"]  # sorted into the paper's order
    assert calls == sorted(calls) and calls[-1] == 1.0 and 0 < calls[0] < 0.5
    with pytest.raises(ValueError, match="scheduler: must be one of"):
        garroppo.run_table("1:4", schedulers=["fifo"])


def test_run_table_errors_name_the_file_and_position():
    with pytest.raises(airsched.ScenarioError) as exc:
        garroppo.run_table("1:4", duration="1 fortnight", positions=["bad"], schedulers=["drr"])
    assert "duration" in str(exc.value)


def test_format_table_has_every_scheduler_position_and_the_paper(short_table):
    buf = io.StringIO()
    Console(file=buf, width=200).print(garroppo.format_table(short_table))
    text = buf.getvalue()
    for label in list(garroppo.SCHEDULER_LABELS.values()) + list(garroppo.POSITION_LABELS.values()):
        assert label in text
    assert "sim (paper)" in text and "1:4" in text
    one = short_table.iloc[0]
    assert f"{one.goodput_kbps:.0f} ({one.paper_kbps})" in text
    drr_ms2 = short_table.query("position == 'out-of-range' and station == 'ms2' and scheduler == 'drr'")
    assert f"{100 * drr_ms2['occupancy'].iloc[0]:.0f}/" in text


# ----- figures ---------------------------------------------------------------------------------


def test_table_figures_are_pngs_of_the_expected_size(short_table, tmp_path):
    occ = garroppo.plot_occupancy(short_table, tmp_path / "a" / "occ.png")  # parents are made
    assert_png(occ, *plots.FIGSIZE)
    goodput = garroppo.plot_goodput(short_table, tmp_path / "goodput.png")
    assert_png(goodput, plots.FIGSIZE[0], garroppo.GOODPUT_FIG_HEIGHT)


@pytest.fixture(scope="module")
def walk() -> airsched.Result:
    return garroppo.run_walk("whtb")


def test_walking_ms2s_snr_falls_then_rises(walk):
    s = walk.samples
    ms2 = s[(s["kind"] == "station") & (s["name"] == "ms2")].set_index("time_s")["snr_db"]
    ms1 = s[(s["kind"] == "station") & (s["name"] == "ms1")].set_index("time_s")["snr_db"]
    smooth = ms2.rolling(5, center=True).mean()
    assert 60 <= smooth.idxmin() <= 80
    start, low, end = ms2.loc[0:20].mean(), ms2.loc[60:80].mean(), ms2.loc[120:141].mean()
    assert start - low > 15 and end - low > 15
    assert ms1.max() - ms1.min() < 8  # MS1 only fades around its good position
    # The monitor's estimate for MS2 is lower while it is away than before it left.
    est = s[(s["kind"] == "station") & (s["name"] == "ms2")].set_index("time_s")["estimate_mbps"]
    assert est.loc[60:80].mean() < est.loc[0:20].mean()


def test_walk_and_sample_figures(walk, tmp_path):
    assert_png(garroppo.plot_walk(walk, tmp_path / "walk.png"), plots.FIGSIZE[0], 6.0)
    for what in plots.WHAT:
        assert_png(plots.plot_samples(walk, tmp_path / f"{what}.png", what=what), *plots.FIGSIZE)
    assert_png(plots.plot_samples(walk.samples, tmp_path / "flows.png", kind="flow"), *plots.FIGSIZE)


def test_plot_samples_refuses_what_is_not_there(tmp_path, data):
    plain = airsched.run(data / "cbr.toml", duration="2s")  # no radio conditions: no SNR
    with pytest.raises(ValueError, match="no station samples of snr"):
        plots.plot_samples(plain, tmp_path / "snr.png", what="snr")
    with pytest.raises(ValueError, match="what: must be one of goodput, estimate, snr"):
        plots.plot_samples(plain, tmp_path / "x.png", what="delay")
    assert not (tmp_path / "snr.png").exists()


def test_importing_the_cli_does_not_import_matplotlib():
    code = "import sys, airsched.cli; sys.exit('matplotlib' in sys.modules or 'pandas' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


# ----- the command line ------------------------------------------------------------------------


def test_repro_garroppo_writes_the_table_and_figures(cli, tmp_path):
    out = tmp_path / "out"
    proc = cli("repro", "garroppo", "--share", "1:1", "--duration", "3s", "--out", out, "--plot")
    assert proc.returncode == 0, proc.stderr
    assert "Out-of-Range" in proc.stdout and "WHTB" in proc.stdout
    df = pd.read_csv(out / "garroppo-1-1.csv")
    assert len(df) == 50 and list(df.columns) == list(garroppo.TABLE_COLUMNS)
    assert "WHTB+gate" in proc.stdout and "claims as checks" in proc.stdout
    claims = pd.read_csv(out / "garroppo-1-1-claims.csv")
    assert list(claims.columns) == list(garroppo.CLAIM_COLUMNS)
    assert set(claims["claim"]) == {c[1] for c in garroppo.CLAIMS if c[0] == "1:1"}
    assert_png(out / "garroppo-1-1-occupancy.png", *plots.FIGSIZE)
    assert_png(out / "garroppo-1-1-goodput.png", plots.FIGSIZE[0], garroppo.GOODPUT_FIG_HEIGHT)
    # no progress bar off a terminal; the only lines are the cbq scenarios' warning that Linux 6.3
    # removed cbq (issue 15)
    assert all("cbq was removed from Linux in 6.3" in line for line in proc.stderr.splitlines()), proc.stderr


@pytest.mark.parametrize(
    "args,names",
    [
        (("repro", "garroppo", "--share", "2:3"), ["--share", "1:4", "1:1", "2:3"]),
        (("repro", "garroppo-walk", "--scheduler", "cbq"), ["--scheduler", "drr", "whtb"]),
        (("repro", "garroppo", "--plot"), ["--plot", "--out"]),
        (("repro", "garroppo", "--duration", "5 fortnights"), ["duration", "fortnights"]),
        (("plot", ".", "--what", "delay"), ["--what", "goodput", "estimate", "snr"]),
    ],
    ids=["share", "scheduler", "plot-without-out", "duration", "what"],
)
def test_bad_options_exit_2_naming_them(cli, args, names):
    proc = cli(*args)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stdout == "" and "Traceback" not in proc.stderr
    for name in names:
        assert name in proc.stderr


def test_repro_finds_no_scenarios_where_told_to_look(cli, tmp_path):
    proc = cli("repro", "garroppo", "--scenarios", tmp_path)
    assert proc.returncode == 2
    assert str(tmp_path) in proc.stderr and "Traceback" not in proc.stderr


def test_plot_names_a_missing_directory_or_file(cli, tmp_path):
    missing = tmp_path / "no-such-results"
    proc = cli("plot", missing)
    assert proc.returncode == 2 and f"error: {missing}: no such directory" in proc.stderr
    proc = cli("plot", tmp_path)
    assert proc.returncode == 2 and f"{tmp_path / 'samples.parquet'}: no such file" in proc.stderr


def test_run_out_then_plot(cli, tmp_path):
    out = tmp_path / "res"
    proc = cli("run", GARROPPO / "walk-drr.toml", "--duration", "8s", "--out", out)
    assert proc.returncode == 0, proc.stderr
    proc = cli("plot", out, "-o", tmp_path / "snr.png", "--what", "snr")
    assert proc.returncode == 0, proc.stderr
    assert_png(tmp_path / "snr.png", *plots.FIGSIZE)
    proc = cli("plot", out)  # default: RESULTS_DIR/goodput.png
    assert proc.returncode == 0 and (out / "goodput.png").is_file()


def test_repro_garroppo_walk_writes_figure_and_samples(cli, tmp_path):
    proc = cli("repro", "garroppo-walk", "--scheduler", "drr", "--duration", "10s", "--out", tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "ms2" in proc.stdout
    assert_png(tmp_path / "garroppo-walk-drr.png", plots.FIGSIZE[0], 6.0)
    samples = pd.read_parquet(tmp_path / "samples.parquet")
    assert set(samples.query("kind == 'station'")["name"]) == {"ms1", "ms2"}


# ----- the paper's qualitative shape -----------------------------------------------------------


@pytest.mark.slow
def test_table_1_has_the_papers_shape():
    """Table 1 at the paper's full run length. Good: every scheduler gives MS1 its 4 Mbit/s
    (3.6 or more). Medium to Very Bad: WHTB keeps MS1 at 3.2 Mbit/s or more, above every other
    scheduler, and holds MS2 to 35 % of the air or less. Out-of-Range: WHTB still gives MS1
    several times what CBQ and DRR do and twice HTB's (the paper: 4.7, 4.7 and 2.7 times), though
    less than the paper's 3.2 Mbit/s (the documented deviation: each undeliverable frame still
    costs four attempts at 1 Mb/s)."""
    df = garroppo.run_table("1:4")
    g = df.set_index(["position", "scheduler", "station"])
    for scheduler in garroppo.SCHEDULERS:
        assert g.loc[("good", scheduler, "ms1"), "goodput_kbps"] >= 3600, scheduler
    for position in ("medium", "bad", "very-bad"):
        whtb = g.loc[(position, "whtb", "ms1"), "goodput_kbps"]
        assert whtb >= 3200, position
        for scheduler in ("drr", "cbq", "htb"):
            assert g.loc[(position, scheduler, "ms1"), "goodput_kbps"] < whtb, (position, scheduler)
        assert g.loc[(position, "whtb", "ms2"), "occupancy"] <= 0.35, position
        assert g.loc[(position, "whtb", "ms2"), "occupancy"] < g.loc[(position, "drr", "ms2"), "occupancy"]
    oor = g.loc[("out-of-range", "whtb", "ms1"), "goodput_kbps"]
    assert oor >= 2500
    for scheduler, times in (("drr", 3), ("cbq", 3), ("htb", 2)):
        assert g.loc[("out-of-range", scheduler, "ms1"), "goodput_kbps"] * times < oor, scheduler


@pytest.mark.slow
def test_table_2_cbq_and_drr_hold_the_share_and_meet_the_papers_values():
    """Table 2 (1:1): CBQ and DRR keep MS1 and MS2 equal wherever MS2 is (the paper: they
    "operate to try and maintain the imposed ratio"), and their MS1 goodput is within 10 % of the
    paper's in Good, Medium, Bad and Out-of-Range (Very Bad differs: 0.78 vs 0.57-0.71 Mbit/s)."""
    df = garroppo.run_table("1:1")
    g = df.set_index(["position", "scheduler", "station"])
    for scheduler in ("cbq", "drr"):
        for position in ("good", "medium", "bad", "very-bad"):
            ms1 = g.loc[(position, scheduler, "ms1"), "goodput_kbps"]
            ms2 = g.loc[(position, scheduler, "ms2"), "goodput_kbps"]
            assert abs(ms1 / ms2 - 1) < 0.05, (scheduler, position, ms1, ms2)
        for position in ("good", "medium", "bad", "out-of-range"):
            row = g.loc[(position, scheduler, "ms1")]
            assert abs(row["goodput_kbps"] / row["paper_kbps"] - 1) < 0.10, (scheduler, position, row["goodput_kbps"], row["paper_kbps"])
    # WHTB protects MS1 in every degraded position: above DRR in Medium, by half again from Bad on.
    whtb_ms1 = lambda position: g.loc[(position, "whtb", "ms1"), "goodput_kbps"]  # noqa: E731
    assert whtb_ms1("medium") > g.loc[("medium", "drr", "ms1"), "goodput_kbps"]
    for position in ("bad", "very-bad", "out-of-range"):
        assert whtb_ms1(position) > 1.5 * g.loc[(position, "drr", "ms1"), "goodput_kbps"], position


def test_calibrate_writes_a_table_the_monitor_reads(cli, tmp_path):
    """`airsched calibrate` runs the paper's procedure and writes a table; a scenario's
    [monitor] calibration reads it, and the monitor's estimate is the table's value at the
    station's SNR (noise off: every report reads the same row)."""
    out = tmp_path / "cal.toml"
    r = cli("calibrate", "-o", str(out), "--snr-from", "2", "--snr-to", "14", "--step", "6", "--duration", "4s")
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    assert text.count("[[point]]") == 3
    import re

    assert [float(x) for x in re.findall(r"^snr_db = (\S+)$", text, re.M)] == [2.0, 8.0, 14.0]
    goodputs = [float(x) for x in re.findall(r"^goodput_bps = (\S+)$", text, re.M)]
    assert goodputs[0] < goodputs[1] <= goodputs[2] and goodputs[2] > 4.5e6
    scenario = tmp_path / "s.toml"
    scenario.write_text(
        '[run]\nduration = "4s"\n[[station]]\nname = "b"\nrate_control = "arf"\nsnr = 8\n'
        '[[flow]]\nname = "d"\nsrc = "ap"\ndst = "b"\nrate = "saturate"\nsize = 1024\n'
        '[monitor]\ncalibration = "cal.toml"\nnoise = 0\n'
    )
    res = airsched.run(scenario)
    st = res.stations.iloc[0]
    assert st["estimate_mean_mbps"] == pytest.approx(goodputs[1] / 1e6, rel=1e-6)
    assert st["rel_goodput_end"] == pytest.approx(goodputs[1] / goodputs[2], abs=1e-4)


def test_calibrate_rejects_bad_options(cli, tmp_path):
    r = cli("calibrate", "-o", str(tmp_path / "c.toml"), "--step", "0")
    assert r.returncode == 2 and "--step" in r.stderr
    r = cli("calibrate", "-o", str(tmp_path / "c.toml"), "--rate-control", "sticky")
    assert r.returncode == 2 and "--rate-control" in r.stderr and "minstrel" in r.stderr


def test_a_bad_calibration_file_is_reported_at_the_scenario_key(tmp_path):
    (tmp_path / "cal.toml").write_text("[[point]]\nsnr_db = 1\n")
    scenario = tmp_path / "s.toml"
    scenario.write_text('[[station]]\nname = "b"\nrate = "11Mbps"\nsnr = 8\n[monitor]\ncalibration = "cal.toml"\n')
    with pytest.raises(airsched.ScenarioError) as exc:
        airsched.run(scenario)
    (line,) = exc.value.errors
    assert "s.toml:6:" in line and "monitor.calibration" in line and "missing key `goodput_bps`" in line


# ----- the AP's transmit buffers (issue 27) -------------------------------------------------------


def test_the_aps_transmit_buffers_turn_table_2s_htb_column_the_papers_way():
    """Table 2 (1:1), HTB, MS2 Bad and Very Bad, 20 s runs. The paper's MS1 gets more than MS2
    (1492 / 1153, 778 / 369). With the AP's 8 HostAP transmit buffers (the scenarios' tx_buffers)
    so does airsched's; with one frame below the qdisc (the model before issue 27) MS2 got more
    than twice MS1's (docs/repro-garroppo.md, *The AP's transmit buffers and the HTB column*)."""
    for position in ("bad", "very-bad"):
        goodput = {}
        for buffers in (8, 1):
            res = airsched.run(garroppo.scenario_file("1:1", "htb"), duration="20s", seed=1,
                               overrides={**garroppo.position_override(position), "ap.tx_buffers": buffers})
            st = res.stations.set_index("name")["goodput_down_mbps"]
            goodput[buffers] = (float(st["ms1"]), float(st["ms2"]))
        (ms1, ms2), (ms1_one, ms2_one) = goodput[8], goodput[1]
        assert ms1 > 1.2 * ms2, (position, goodput)
        assert ms2_one > 2 * ms1_one, (position, goodput)
    text = garroppo.scenario_file("1:1", "htb").read_text()
    assert "\ntx_buffers = 8\n" in text


# ----- the gate (paper section 6.3) --------------------------------------------------------------


def test_the_gate_does_not_lift_ms1_out_of_range_because_ms2s_tokens_bind_first():
    """WHTB+gate against the paper's WHTB, Out-of-Range, share 1:4 (20 s runs). The paper's WHTB
    gave MS1 3226 kbit/s; airsched's WHTB gives about 2940, and the gate changes that by less
    than 2 %: MS1 stays 5-15 % below the paper's number with or without it.

    Why (docs/repro-garroppo.md): out of range the monitor's estimate is 0, so each MS2 frame is
    charged the quantum, 1 Mbit/s / r2q 10 = 12 500 bytes = 100 ms of the 1 Mbit/s class's
    tokens: MS2 gets exactly 10 frames per second (hand-computed), each undeliverable and dropped
    at the retry limit. That bound acts before any DRR turn does, so there is nothing for the gate
    to hold back. With 7 attempts a frame (about 62 ms of air) MS2 no longer waits for tokens, DRR
    turns bind, and the gate does lift MS1, by more than 15 %."""
    df = garroppo.run_table("1:4", duration="20s", positions=["out-of-range"], schedulers=["whtb", "whtb-gate"])
    g = df.set_index(["scheduler", "station"])
    paper = garroppo.paper_kbps("1:4", "out-of-range", "ms1", "whtb-gate")
    assert paper == 3226
    whtb, gate = g.loc[("whtb", "ms1"), "goodput_kbps"], g.loc[("whtb-gate", "ms1"), "goodput_kbps"]
    assert abs(gate / whtb - 1) < 0.02, (whtb, gate)
    for ms1 in (whtb, gate):
        assert 0.85 * paper <= ms1 <= 0.95 * paper, ms1
    measured_s = 20 - 1  # after the scenarios' 1 s warm-up
    for scheduler in ("whtb", "whtb-gate"):
        frames_per_s = g.loc[(scheduler, "ms2"), "drops_retry"] / measured_s
        assert frames_per_s == pytest.approx(1_000_000 / (12_500 * 8), rel=0.03), scheduler
    # The contrast: with the usual 7 attempts the gate acts.
    seven = {}
    for scheduler in ("whtb", "whtb-gate"):
        res = airsched.run(garroppo.scenario_file("1:4", scheduler), duration="20s", seed=1,
                           overrides={**garroppo.position_override("out-of-range"), "cell.retry_limit": 7})
        seven[scheduler] = float(res.stations.set_index("name").loc["ms1", "goodput_down_mbps"])
    assert seven["whtb-gate"] > 1.15 * seven["whtb"], seven


# ----- section 6's claims ------------------------------------------------------------------------


def _summary(share: str, ms1: dict[str, list[float]], ms2: dict[str, list[float]], occ2: dict[str, list[float]]) -> pd.DataFrame:
    """A hand-made run_table-like summary: per scheduler, MS1 and MS2 goodput and MS2 occupancy
    over the five positions Good to Out-of-Range."""
    rows = []
    for scheduler in ms1:
        for k, position in enumerate(garroppo.POSITIONS):
            for station, goodput, occ in (("ms1", ms1[scheduler][k], 1 - occ2[scheduler][k]),
                                          ("ms2", ms2[scheduler][k], occ2[scheduler][k])):
                rows.append({"share": share, "position": position, "scheduler": scheduler, "station": station,
                             "goodput_kbps": goodput, "occupancy": occ})
    return pd.DataFrame(rows)


def test_claim_checker_on_a_hand_made_table():
    """One WHTB column that keeps MS1 over 3.2 Mbit/s and MS2 under 35 % of the air (the claims
    hold), one that lets MS1 fall to 3000 kbit/s Out-of-Range with MS2 at 40 % (they fail)."""
    ms1 = {"whtb": [3900, 3500, 3400, 3300, 3250], "whtb-gate": [3900, 3500, 3400, 3300, 3000]}
    ms2 = {"whtb": [980, 780, 450, 150, 0], "whtb-gate": [980, 800, 450, 150, 0]}
    occ = {"whtb": [0.20, 0.22, 0.25, 0.30, 0.34], "whtb-gate": [0.20, 0.22, 0.25, 0.30, 0.40]}
    claims = garroppo.check_claims(_summary("1:4", ms1, ms2, occ))
    assert list(claims.columns) == list(garroppo.CLAIM_COLUMNS)
    c = claims.set_index(["claim", "scheduler"])
    assert c.loc[("6.1-whtb-3.2", "whtb"), "holds"]
    assert c.loc[("6.1-whtb-3.2", "whtb"), "simulated"] == "MS1 min 3250 (Out-of-Range)"
    assert not c.loc[("6.1-whtb-3.2", "whtb-gate"), "holds"]
    assert c.loc[("6.1-whtb-3.2", "whtb-gate"), "simulated"] == "MS1 min 3000 (Out-of-Range)"
    assert c.loc[("6.1-fig6-whtb-35", "whtb"), "holds"] and not c.loc[("6.1-fig6-whtb-35", "whtb-gate"), "holds"]
    # Good: 3900 and 980 are within 5 % of 4000 and 1000.
    assert c.loc[("6.1-good", "whtb"), "holds"]
    # Medium: 3500/780 = 4.49, 12 % off 4:1; 3500/800 = 4.375 is 9.4 % off and holds.
    assert not c.loc[("6.1-medium-others", "whtb"), "holds"]
    assert c.loc[("6.1-medium-others", "whtb-gate"), "holds"]
    assert c.loc[("6.1-medium-others", "whtb-gate"), "simulated"] == "MS1 3900->3500, MS2 980->800, ratio 4.38"
    # Claims comparing with CBQ, HTB or DRR need their rows: left out of a WHTB-only table.
    assert "6.1-whtb-best" not in set(claims["claim"]) and "6.2-ratio" not in set(claims["claim"])
    # The paper's side is always the paper's own Table 1: its WHTB keeps MS1 at 3226 at least.
    assert (claims["paper_holds"] | (claims["claim"] != "6.1-whtb-3.2")).all()
    assert c.loc[("6.1-whtb-3.2", "whtb-gate"), "paper"] == "MS1 min 3226 (Out-of-Range)"


def test_claims_on_the_papers_own_tables():
    """Every claim holds on the paper's own numbers except three, computed by hand: HTB's
    Out-of-Range aggregate in Table 1 is 1205 + 0 kbit/s, not below 1 Mbit/s; HTB's MS1/MS2 in
    Table 2 is 1492/1153 = 1.29 (Bad) and 778/369 = 2.11 (Very Bad), not within 10 % of 1; and
    WHTB's MS2 share of the air by the paper's own indirect method reaches 1 - 1825/(2511 + 2514)
    = 63.7 % in Very Bad, above the 60 % the text gives."""
    failing = set()
    for share in garroppo.SHARES:
        claims = garroppo.check_claims(garroppo.paper_summary(share))
        assert (claims["holds"] == claims["paper_holds"]).all()  # the same table on both sides
        failing |= {(r.claim, r.scheduler) for r in claims.itertuples() if not r.paper_holds}
        if share == "1:1":
            fig7 = claims.set_index(["claim", "scheduler"]).loc[("6.2-fig7-whtb", "whtb"), "paper"]
            assert fig7 == f"MS2 max {100 * (1 - 1825 / 5025):.0f} %"
    assert failing == {("6.1-aggregate", "htb"), ("6.2-ratio", "htb"), ("6.2-fig7-whtb", "whtb"), ("6.2-fig7-whtb", "whtb-gate")}
