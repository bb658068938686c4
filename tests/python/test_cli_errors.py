# SPDX-License-Identifier: Apache-2.0
"""Bad input on the command line: exit code 2 (1 for `validate` of an invalid file), one
`error: FILE:LINE:COL: ...` line per problem on stderr, nothing on stdout, no traceback."""

from __future__ import annotations

import re

import pytest

from scenario_texts import CBR, mutate

# (name, text to replace in cbr.toml, replacement, marker on the bad line, text the error names)
BAD_SCENARIOS = [
    ("unknown_key", "seed = 3", 'seed = 3\nduraton = "5s"', "duraton", "duraton"),
    ("bad_unit", 'duration = "5s"', 'duration = "5 fortnights"', "fortnights", "run.duration"),
    ("unknown_station", 'dst = "sta1"', 'dst = "sta9"', "sta9", "sta9"),
    ("negative_duration", 'duration = "5s"', 'duration = "-5s"', "-5s", "run.duration"),
    ("toml_syntax", "[run]", "[run", "[run", ""),
]


def bad_file(write_scenario, old, new, marker):
    text = mutate(CBR, old, new)
    line = next(i for i, text_line in enumerate(text.splitlines(), 1) if marker in text_line)
    return write_scenario(text, "bad.toml"), line


def assert_reported(proc, path, line, names, code):
    assert proc.returncode == code, (proc.stdout, proc.stderr)
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    pattern = rf"^error: {re.escape(str(path))}:{line}:\d+: .*{re.escape(names)}"
    assert re.search(pattern, proc.stderr, re.M), proc.stderr


@pytest.mark.parametrize("name,old,new,marker,names", BAD_SCENARIOS, ids=[c[0] for c in BAD_SCENARIOS])
def test_run_reports_bad_scenario(cli, write_scenario, name, old, new, marker, names):
    path, line = bad_file(write_scenario, old, new, marker)
    assert_reported(cli("run", path), path, line, names, code=2)


@pytest.mark.parametrize("name,old,new,marker,names", BAD_SCENARIOS, ids=[c[0] for c in BAD_SCENARIOS])
def test_validate_reports_bad_scenario(cli, write_scenario, name, old, new, marker, names):
    path, line = bad_file(write_scenario, old, new, marker)
    assert_reported(cli("validate", path), path, line, names, code=1)


def test_every_error_is_reported_not_just_the_first(cli, write_scenario):
    text = mutate(mutate(CBR, "seed = 3", 'seed = 3\nduraton = "5s"'), 'dst = "sta1"', 'dst = "sta9"')
    path = write_scenario(text, "two-errors.toml")
    proc = cli("validate", path)
    assert proc.returncode == 1
    errors = [e for e in proc.stderr.splitlines() if e.startswith(f"error: {path}:")]
    assert len(errors) == 2, proc.stderr


@pytest.mark.parametrize("command", ["run", "validate"])
def test_missing_file(cli, tmp_path, command):
    path = tmp_path / "no-such-scenario.toml"
    proc = cli(command, path)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == f"error: {path}: no such file\n"


def test_bad_duration_option(cli, data):
    proc = cli("run", data / "cbr.toml", "--duration", "5 fortnights")
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    assert re.search(r"^error: <command line>.*run\.duration.*fortnights", proc.stderr, re.M), proc.stderr


def test_negative_seed_option(cli, data):
    proc = cli("run", data / "cbr.toml", "--seed", "-1", "--json")
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert re.search(r"^error: <command line>.*run\.seed", proc.stderr, re.M), proc.stderr


def test_validate_good_file(cli, data):
    path = data / "downlink2.toml"
    proc = cli("validate", path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"{path}: ok (2 stations, 2 flows, duration 3s)\n"
    assert proc.stderr == ""


HT_CELL = """[cell]
standard = "802.11n"
width = 40
[ap]
queueing = "airtime"
[[station]]
name = "fast"
mcs = 15
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


def test_validate_80211n_file(cli, write_scenario):
    path = write_scenario(HT_CELL, "ht.toml")
    proc = cli("validate", path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (
        f"{path}: ok (2 stations, 1 flow, duration 10s)\n"
        "  cell: 802.11n, 5GHz, 40 MHz, long GI; A-MPDU up to 4ms / 64 MPDUs\n"
        "  ap: mac_queue fq-mac (fq_kernel 4.11), airtime ath9k (rx airtime on, AQL off)\n"
        "  fast: MCS 15, 270 Mb/s\n"
        "  slow: MCS 0, 13.5 Mb/s, airtime weight 512\n"
    )
    # The weight only means something to the mac80211 scheduler: validate says so (once "warning:").
    assert proc.stderr == (
        f"warning: {path}: station[1].airtime_weight: only the mac80211 airtime scheduler "
        '([ap] airtime = "mac80211") uses station weights; this run ignores it\n'
    )


def test_validate_80211n_errors(cli, write_scenario):
    path = write_scenario(HT_CELL.replace("mcs = 15", 'rate = "11Mbps"'), "ht.toml")
    assert_reported(cli("validate", path), path, 8, "station[0].rate: 802.11n stations take `mcs`", code=1)
