# SPDX-License-Identifier: Apache-2.0
"""What the command line prints and writes says what the run measured, whole: tables never cut a
cell, no binary float noise, one line per warning and per error, one --duration rule for every
command, figures in the format their suffix names, the seed in the summary (issue 12, items 7
to 9)."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

import airsched
from airsched import cli
from airsched.cli import _app, _options, _tables
from airsched.repro import garroppo, hoiland

from scenario_texts import CBR, mutate

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = REPO / "scenarios"

LONG_STATION = "a-station-whose-name-is-longer-than-a-table-cell-0123456789"
LONG_FLOW = "a-flow-whose-name-is-long-as-well-9876543210"

#: Binary float noise: a run of six or more 0s or 9s inside a fraction, then more digits
#: (30.000000000000004, 3817.2000000000003, 958.4639999999999).
NOISE = re.compile(r"\d\.\d*(?:0{6,}[1-9]|9{6,}\d)")

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def long_names_scenario(write_scenario) -> Path:
    text = CBR.replace("sta1", LONG_STATION).replace('name = "cbr"', f'name = "{LONG_FLOW}"')
    return write_scenario(text, "long-names.toml")


def run_cli(*args, columns: int, terminal: bool = False, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """``python -m airsched ARGS`` with stdout a pipe of a ``columns``-wide environment; with
    ``terminal``, rich is told stdout is a terminal (FORCE_COLOR), as an interactive shell is."""
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE", "NO_COLOR")}
    env["COLUMNS"] = str(columns)
    if terminal:
        env["FORCE_COLOR"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "airsched", *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=120,
    )


# ----- item 7: tables never cut a cell -----------------------------------------------------------


def test_rich_tables_never_truncate_when_piped(write_scenario):
    path = long_names_scenario(write_scenario)
    proc = run_cli("run", path, columns=80)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "…" not in out
    report = json.loads(run_cli("run", path, "--json", columns=80).stdout)
    # Every column header whole, on one line.
    for header in ("station", "rate Mb/s", "goodput Mb/s", "std Mb/s", "airtime %", "frames", "retries", "drops"):
        assert header in out, header
    for header in ("flow", "path", "goodput Mb/s", "sent", "received", "lost", "delay ms"):
        assert header in out, header
    # The long names whole, and each row's numbers on the same line as its name.
    (st,) = report["stations"]
    (row,) = [line for line in out.splitlines() if LONG_STATION in line and "→" not in line]
    for cell in (f"{st['goodput_mbps']:.3f}", f"{st['tx_frames']:,}", f"{100 * st['airtime_share']:.1f}"):
        assert cell in row, (cell, row)
    (fl,) = report["flows"]
    (row,) = [line for line in out.splitlines() if LONG_FLOW in line]
    assert f"server→{LONG_STATION}" in row
    for cell in (f"{fl['sent_packets']:,}", f"{fl['received_packets']:,}", f"{fl['delay_mean_ms']:.2f}"):
        assert cell in row, (cell, row)


def _first_column(out: str, title: str) -> list[str]:
    """The first column's text of the body rows of the table titled ``title``, line by line."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == title)
    body = []
    for line in lines[start + 1 :]:
        if line.startswith("└"):
            break
        if line.startswith("│"):
            body.append(line.split("│")[1].strip())
    return body


def test_rich_tables_fold_rather_than_cut_on_a_narrow_terminal(write_scenario):
    path = long_names_scenario(write_scenario)
    proc = run_cli("run", path, columns=60, terminal=True)
    assert proc.returncode == 0, proc.stderr
    out = ANSI.sub("", proc.stdout)
    assert "…" not in out
    # A cell too wide for the terminal goes on over more lines of its column: read back whole.
    assert "".join(_first_column(out, "stations")) == LONG_STATION
    assert "".join(_first_column(out, "flows")) == LONG_FLOW
    for number in ("1,000", "2.000"):
        assert number in out


def _testbed_summary() -> pd.DataFrame:
    """A summary of every configuration and station, with values of every width."""
    rows = []
    for k, configuration in enumerate(hoiland.CONFIGURATIONS):
        for j, station in enumerate(hoiland.STATIONS):
            bulk = station in hoiland.BULK_STATIONS
            rows.append(
                {
                    "traffic": "udp",
                    "configuration": configuration,
                    "station": station,
                    "airtime_share": (j + 1) / 10 if bulk else 0.0,
                    "airtime_down_s": 1.0,
                    "goodput_mbps": 12.345 * (k + 1) if bulk else math.nan,
                    "ping_p50_ms": 1234.5 + k,
                    "ping_p90_ms": 2345.6 + j,
                    "ping_mean_ms": 1500.25,
                    "ping_sent": 300,
                    "ping_answered": 299,
                    "ampdu_mean_down": 31.5,
                    "ampdu_mean_up": 1.0,
                    "tcp_retransmits": 0,
                }
            )
    return pd.DataFrame(rows, columns=list(hoiland.SUMMARY_COLUMNS))


def test_repro_tables_keep_every_column_at_80_columns(monkeypatch, capsys):
    """`airsched repro hoiland > file` at 80 columns dropped a column and cut others."""
    monkeypatch.setenv("COLUMNS", "80")
    summary = _testbed_summary()
    tables = hoiland.format_tables(summary, "udp")
    _tables._print_tables(tables, gap=True)
    out = capsys.readouterr().out
    assert "…" not in out
    (latency,) = [line for line in out.splitlines() if line.startswith("FIFO") and "1234.5 /" in line]
    for station in hoiland.STATIONS:
        assert station in out
    # All four stations' p50 / p90 on the FIFO row of the latency table, whole.
    for j in range(len(hoiland.STATIONS)):
        assert f"1234.5 / {2345.6 + j:.1f}" in latency, latency
    for c in hoiland.CONFIGURATIONS:
        text = hoiland.paper_text("udp", "ping_mean_ms", c)
        if text:
            assert text in out
    for table in tables:
        assert table.title in out


# ----- item 7: no float noise in CSVs and printed descriptions --------------------------------


NOISY = [0.1 + 0.2, 3817.2000000000003, 958.4639999999999, 30.000000000000004]


def test_repro_csvs_have_no_float_noise(tmp_path):
    df = pd.DataFrame(
        {
            "share": "1:4",
            "position": "good",
            "scheduler": "drr",
            "station": "ms1",
            "goodput_kbps": NOISY,
            "paper_kbps": 1,
            "occupancy": [v / 1e4 for v in NOISY],
            "mean_rate_down_mbps": 11.0,
            "retries": 0,
            "drops_retry": 0,
            "snr_mean_db": 13.67,
        }
    )
    assert NOISE.search(df.to_csv()), "the test data must be noisy as pandas writes it"
    path = garroppo.write_csv(df, tmp_path / "g.csv")
    text = path.read_text()
    assert not NOISE.search(text), text
    back = pd.read_csv(path)
    for column in ("goodput_kbps", "occupancy"):
        assert back[column].tolist() == pytest.approx(df[column].tolist(), rel=1e-9)

    summary = _testbed_summary()
    summary["airtime_share"] = [NOISY[i % len(NOISY)] / 100 for i in range(len(summary))]
    rep = hoiland.Reproduction(summary, pd.DataFrame(columns=list(hoiland.PING_COLUMNS)))
    (csv,) = hoiland.write(rep, tmp_path / "h", runs=False)
    text = csv.read_text()
    assert not NOISE.search(text), text
    assert pd.read_csv(csv)["airtime_share"].tolist() == pytest.approx(summary["airtime_share"].tolist(), rel=1e-9)


def test_repro_garroppo_csv_has_no_float_noise(tmp_path):
    """The CLI writes the table through the same writer: a real (short) table, no noise."""
    df = garroppo.run_table("1:4", duration="3s", positions=["good", "medium"], schedulers=["cbq", "whtb"])
    text = garroppo.write_csv(df, tmp_path / "g.csv").read_text()
    assert not NOISE.search(text), text


def test_validate_prints_no_float_noise():
    runner = CliRunner()
    cases = [[str(p)] for p in sorted(SCENARIOS.rglob("*.toml"))]
    ht = str(SCENARIOS / "hoiland" / "udp.toml")
    # Short guard interval and 40 MHz: MCS rates like 144.444... Mb/s.
    cases += [[ht, "--set", "cell.guard_interval=short", "--set", f"cell.width={w}"] for w in (20, 40)]
    for args in cases:
        result = runner.invoke(cli.app, ["validate", *args])
        assert result.exit_code == 0, (args, result.output)
        assert not NOISE.search(result.output), result.output


# ----- item 8: warnings and errors, one line each ------------------------------------------------


def test_warnings_are_not_prefixed_twice(capsys):
    _app._warn("s.toml:3:5: station[1].airtime_weight: warning: only the mac80211 scheduler uses weights")
    _app._warn("t.tc:1:66: warning: at \"offload\": ignored")
    _app._warn("warning: already prefixed")
    _app._warn("no prefix at all")
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        "warning: s.toml:3:5: station[1].airtime_weight: only the mac80211 scheduler uses weights",
        'warning: t.tc:1:66: at "offload": ignored',
        "warning: already prefixed",
        "warning: no prefix at all",
    ]


HT_WEIGHT = """[cell]
standard = "802.11n"
[ap]
queueing = "airtime"
[[station]]
name = "slow"
mcs = 0
airtime_weight = 512
[[flow]]
name = "down"
src = "server"
dst = "slow"
rate = "saturate"
"""


@pytest.mark.parametrize("command", ["validate", "run"])
def test_doubled_warning_prefix_is_gone(cli, write_scenario, command):
    path = write_scenario(HT_WEIGHT, "ht.toml")
    args = ("run", path, "--duration", "1500ms") if command == "run" else ("validate", path)
    proc = cli(*args)
    assert proc.returncode == 0, proc.stderr
    warnings = [line for line in proc.stderr.splitlines() if "airtime_weight" in line]
    assert len(warnings) == 1, proc.stderr
    assert warnings[0].startswith(f"warning: {path}:") and warnings[0].count("warning:") == 1


def test_multi_line_errors_print_as_one_line_each(cli, write_scenario, tmp_path):
    # A tc script given as a number: the core's message shows an example over three lines.
    path = write_scenario(mutate(CBR, "[run]", "[ap]\ntc = 5\n[run]"), "tc5.toml")
    proc = cli("validate", path)
    assert proc.returncode == 1
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {path}:3:") and "ap.tc" in lines[0], proc.stderr
    assert "integer 5" in lines[0]
    # A calibration file that is not TOML: the parser's message spans lines with an excerpt.
    (tmp_path / "cal.toml").write_text("garbage [[\n")
    scenario = write_scenario(
        '[[station]]\nname = "b"\nrate = "11Mbps"\nsnr = 8\n[monitor]\ncalibration = "cal.toml"\n', "s.toml"
    )
    proc = cli("validate", scenario)
    assert proc.returncode == 1
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"error: {scenario}:6:") and "monitor.calibration" in lines[0]
    assert "line 1, column 9" in lines[0] and "expected `=`" in lines[0]
    assert "|" not in lines[0]  # the parser's source excerpt is left out


def test_one_line_keeps_single_lines_and_joins_the_rest():
    from airsched._errors import one_line

    assert one_line("f.toml:1:2: key: message") == "f.toml:1:2: key: message"
    assert one_line("a: TOML parse error at line 2, column 4\n  |\n2 | ab\n  |    ^\nexpected `\"`\n") == (
        'a: TOML parse error at line 2, column 4; expected `"`'
    )
    assert one_line('k: e.g. tc = """\ntc qdisc add dev wlan0 root pfifo\n""", found 5') == (
        'k: e.g. tc = """; tc qdisc add dev wlan0 root pfifo; """, found 5'
    )
    err = airsched.ScenarioError(["x.toml:1:1: k: first\nsecond", "y"])
    assert err.errors == ["x.toml:1:1: k: first; second", "y"]


# ----- item 8: --duration, one rule for every command ----------------------------------------------


@pytest.mark.parametrize(
    "given,expected",
    [("5", "5s"), (" 2.5 ", "2.5s"), ("10s", "10s"), ("500ms", "500ms"), ("10min", "10min"), (None, None), ("x", "x")],
)
def test_duration_bare_number_is_seconds(given, expected):
    assert _options._duration(given) == expected


def test_run_accepts_a_bare_number_of_seconds(data):
    result = CliRunner().invoke(cli.app, ["run", str(data / "cbr.toml"), "--duration", "2", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["sim_seconds"] == 2


@pytest.mark.parametrize(
    "args,target",
    [
        (["repro", "garroppo"], "airsched.repro.garroppo.run_table"),
        (["repro", "garroppo-walk"], "airsched.repro.garroppo.run_walk"),
        (["repro", "hoiland"], "airsched.repro.hoiland.run_testbed"),
    ],
    ids=["garroppo", "garroppo-walk", "hoiland"],
)
def test_every_repro_duration_takes_the_same_forms(monkeypatch, args, target):
    seen = []

    class Stop(Exception):
        pass

    def fake(*_args, duration=None, **_kwargs):
        seen.append(duration)
        raise Stop

    monkeypatch.setattr(target, fake)
    for given in ("5", "5s"):
        result = CliRunner().invoke(cli.app, [*args, "--duration", given])
        assert isinstance(result.exception, Stop), result.output
    assert seen == ["5s", "5s"]


def test_calibrate_duration_takes_a_bare_number(monkeypatch, tmp_path):
    seen = []

    def fake(*args):
        seen.append(args[6])  # snr_from, snr_to, step, payload, block, rate_control, duration
        return "[[point]]\n"

    monkeypatch.setattr(airsched._core, "calibrate", fake)
    result = CliRunner().invoke(cli.app, ["calibrate", "-o", str(tmp_path / "c.toml"), "--duration", "3"])
    assert result.exit_code == 0, result.output
    assert seen == ["3s"]


# ----- item 8: plot writes the format the suffix names ------------------------------------------

MAGIC = {"png": b"\x89PNG\r\n\x1a\n", "pdf": b"%PDF-"}


@pytest.fixture(scope="module")
def run_out(tmp_path_factory, data) -> Path:
    out = tmp_path_factory.mktemp("plot") / "run"
    result = CliRunner().invoke(cli.app, ["run", str(data / "downlink2.toml"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


@pytest.mark.parametrize("suffix", ["png", "pdf", "svg", "PDF"])
def test_plot_writes_the_format_its_suffix_names(run_out, suffix):
    target = run_out / f"figure.{suffix}"
    result = CliRunner().invoke(cli.app, ["plot", str(run_out), "-o", str(target)])
    assert result.exit_code == 0, result.output
    data = target.read_bytes()
    kind = suffix.lower()
    if kind == "svg":
        assert b"<svg" in data[:1000]
    else:
        assert data.startswith(MAGIC[kind]), data[:16]


@pytest.mark.parametrize("name", ["figure.jpg", "figure"])
def test_plot_rejects_other_suffixes_in_one_line(run_out, name):
    target = run_out / name
    result = CliRunner().invoke(cli.app, ["plot", str(run_out), "-o", str(target)])
    assert result.exit_code == 2
    assert result.stdout == "" and not target.exists()
    (line,) = result.stderr.splitlines()
    assert line.startswith("error: --output:") and ".png, .pdf, .svg" in line


# ----- item 9: the seed in the text summary ----------------------------------------------------------


def test_run_summary_shows_the_seed(data):
    result = CliRunner().invoke(cli.app, ["run", str(data / "cbr.toml"), "--seed", "7"])
    assert result.exit_code == 0, result.output
    assert re.search(r"· seed 7 ·", result.stdout), result.stdout
    result = CliRunner().invoke(cli.app, ["run", str(data / "cbr.toml")])
    assert re.search(r"· seed 3 ·", result.stdout), result.stdout  # the scenario's own


def test_summary_seed_falls_back_to_the_provenance(data):
    from rich.console import Console

    report = airsched.run(data / "cbr.toml", duration="2s").to_json_dict()
    del report["seed"], report["provenance"]
    console = Console(record=True, width=200)
    _tables._print_report(console, dict(report, provenance={"seed": 11}))
    assert "· seed 11 ·" in console.export_text()
    console = Console(record=True, width=200)
    _tables._print_report(console, report)
    assert "seed" not in console.export_text()


# ----- the piconet's tables ---------------------------------------------------------------------


def _table_row(output: str, title: str, *first_cells: str) -> list[str]:
    """The cells of the row of the printed table ``title`` whose first cells are ``first_cells``."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == title)
    for line in lines[start + 1 :]:
        if not line.startswith(("│", "┃", "┏", "┡", "└")):
            break
        cells = [c.strip() for c in line.strip("│").split("│")]
        if cells[: len(first_cells)] == list(first_cells):
            return cells
    raise AssertionError(f"no row {first_cells} in the {title} table:\n{output}")


def test_run_prints_the_bluetooth_and_coexistence_tables_of_a_piconet_only():
    path = SCENARIOS / "yip-kwok" / "coexistence.toml"
    result = CliRunner().invoke(cli.app, ["run", str(path), "--duration", "4s"])
    assert result.exit_code == 0, result.output
    r = airsched.run(path, duration="4s")
    for _, b in r.bluetooth.iterrows():
        cells = _table_row(result.stdout, "bluetooth", b["name"], b["direction"])
        assert cells[3] == f"{b['l2cap_mbps']:.3f}"
        assert cells[8] == f"{b['hit_by_wlan']:,}" and cells[11] == f"{b['delivered']:,}", cells
    assert r.coexistence["data_hit_by_bt"].sum() > 0
    for _, c in r.coexistence.iterrows():
        cells = _table_row(result.stdout, "coexistence", c["station"], c["direction"])
        assert cells[2:4] == [f"{c['data_frames']:,}", f"{c['data_hit_by_bt']:,}"], cells
        share = f"{100 * c['data_hit_by_bt'] / c['data_frames']:.1f}" if c["data_frames"] else "–"
        assert cells[4] == share, cells
    # A cell without Bluetooth: neither table (they are empty), the JSON without them either.
    plain = CliRunner().invoke(cli.app, ["run", str(SCENARIOS / "anomaly.toml"), "--duration", "2s"])
    assert plain.exit_code == 0 and "stations" in plain.stdout
    assert "bluetooth" not in plain.stdout and "coexistence" not in plain.stdout
    js = CliRunner().invoke(cli.app, ["run", str(path), "--duration", "3s", "--json"])
    assert js.exit_code == 0, js.output
    assert "bluetooth" not in json.loads(js.stdout)


def test_run_prints_the_polls_of_a_pcf_cell_under_a_summary_of_its_cfps():
    path = SCENARIOS / "pcf-anomaly.toml"
    result = CliRunner().invoke(cli.app, ["run", str(path), "--duration", "3s"])
    assert result.exit_code == 0, result.output
    r = airsched.run(path, duration="3s")
    assert len(r.cfp) > 10
    for _, p in r.polls.iterrows():
        cells = _table_row(result.stdout, "pcf", p["station"])
        assert cells[1:5] == ["yes", f"{p['polls']:,}", f"{p['data_down']:,}", f"{p['data_up']:,}"], cells
    text = " ".join(result.stdout.split())
    assert f"{len(r.cfp):,} CFPs, mean {r.cfp['duration_ms'].mean():,.2f} ms" in text
    plain = CliRunner().invoke(cli.app, ["run", str(SCENARIOS / "anomaly.toml"), "--duration", "2s"])
    assert plain.exit_code == 0 and "pcf" not in plain.stdout and "CFPs" not in plain.stdout


def test_run_prints_each_stations_part_of_the_ofdma_exchanges():
    path = SCENARIOS / "wifi6-ofdma-ul.toml"
    result = CliRunner().invoke(cli.app, ["run", str(path), "--duration", "1s"])
    assert result.exit_code == 0, result.output
    r = airsched.run(path, duration="1s")
    assert len(r.ofdma) == 20 and r.ofdma["dl_mu_ppdus"].sum() > 0 and r.ofdma["ul_triggers"].sum() > 0
    for _, o in r.ofdma.iterrows():
        cells = _table_row(result.stdout, "ofdma", o["station"])
        assert cells[1:3] == [f"{o['dl_mu_ppdus']:,}", f"{o['dl_mpdus']:,}"], cells
        assert cells[4:7] == [f"{o['ul_triggers']:,}", f"{o['ul_tb_ppdus']:,}", f"{o['ul_qos_null']:,}"], cells
    # Downlink OFDMA only: no uplink columns; a cell without OFDMA: no table.
    dl = CliRunner().invoke(cli.app, ["run", str(path), "--duration", "1s", "--set", 'ap.ofdma="dl"'])
    assert dl.exit_code == 0, dl.output
    assert "ofdma" in dl.stdout and "Triggers" not in dl.stdout
    plain = CliRunner().invoke(cli.app, ["run", str(SCENARIOS / "anomaly.toml"), "--duration", "2s"])
    assert plain.exit_code == 0 and "ofdma" not in plain.stdout
