# SPDX-License-Identifier: Apache-2.0
"""Issue 12's defects, one regression test each (named after the defect). The fuzz test over the
whole way is tests/python/test_fuzz_runs.py; tc check's error order is a core test
(tc::check::tests); truncated tables, float noise, doubled prefixes, plot formats, package data
and figures are in test_cli_output.py, test_cli_errors.py, test_package_data.py and
test_figures.py."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import airsched

ROOT = Path(__file__).resolve().parents[2]
CBR = ROOT / "scenarios" / "two-stations-cbr.toml"

ONE_STATION = '[[station]]\nname = "sta1"\nrate = "11Mbps"\n'


def errors(text: str, **overrides: str) -> list[str]:
    with pytest.raises(airsched.ScenarioError) as info:
        airsched.validate(text=text, overrides=overrides or None)
    return info.value.errors


@pytest.mark.parametrize(
    ("key", "value", "bound"),
    [
        ("run.sample_interval", "1ns", "at least 1ms"),
        ("flow[0].rate", "4294967296Mbit", "at most 10Gbit"),
        ("wired.rate", "99999tbit", "at most 10Gbit"),
        ("cell.beacon_interval", "1ns", "1 to 65535 time units"),
        ("wired.delay", "1h", "at most 1s"),
    ],
)
def test_unbounded_quantities_are_refused_with_their_bound(key: str, value: str, bound: str) -> None:
    errs = errors(CBR.read_text(), **{key: value})
    assert len(errs) == 1 and f": {key}: " in errs[0] and bound in errs[0], errs


def test_a_packet_rate_above_one_per_microsecond_is_refused() -> None:
    errs = errors(CBR.read_text(), **{"flow[0].rate": "9gbit", "flow[0].size": 64})
    assert "more than one packet per 1us" in errs[0], errs


def test_ctrl_c_stops_any_run_within_a_second_and_keeps_the_partial_results(tmp_path: Path) -> None:
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "airsched", "run", str(ROOT / "scenarios" / "hoiland" / "udp.toml"), "--duration", "1h", "--out", str(out)]
    # A shell's background jobs ignore SIGINT; the child gets the default, as at a terminal.
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(3.0)  # imports, parsing, and some simulation
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    waited = time.monotonic() - sent
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert "interrupted: stopped at" in stderr and "marked partial" in stderr, stderr
    # Within a second of simulation work; the rest is writing the tables (generous on a loaded
    # CI machine).
    assert waited < 10, waited
    summary = json.loads((out / "summary.json").read_text())
    assert summary["partial"] is True and 0 < summary["sim_seconds"] < 3600, summary["sim_seconds"]
    assert (out / "stations.parquet").exists()


def test_ctrl_c_without_out_says_nothing_was_written() -> None:
    cmd = [sys.executable, "-m", "airsched", "run", str(ROOT / "scenarios" / "hoiland" / "udp.toml"), "--duration", "1h"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(2.5)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "interrupted: nothing written" in stderr, stderr


def test_hundreds_of_saturating_flows_refuse_sends_instead_of_a_drop_storm() -> None:
    flows = "".join(f'[[flow]]\nname = "f{i}"\nsrc = "sta1"\ndst = "server"\nrate = "saturate"\n' for i in range(300))
    r = airsched.run(text=f'[run]\nduration = "2s"\n{ONE_STATION}{flows}')
    c = r.summary["conservation"]
    # Every refusal at the station's own full queue is ENOBUFS, not a sent-and-dropped packet.
    assert c["dropped_queue"] == 0, c
    assert r.flows["refused_sends"].sum() > 0
    assert c["offered"] == c["delivered"] + c["dropped_retry"] + c["in_flight"] + c["dropped_queue"]
    # One refusal per dequeue at most, not one per flow: fewer refusals than frames sent.
    assert r.flows["refused_sends"].sum() <= r.stations["tx_frames"].sum() + 1


def test_validate_and_run_agree_on_a_duration_too_short_for_the_samples() -> None:
    text = f'[run]\nduration = "100ms"\n{ONE_STATION}'
    with pytest.raises(airsched.ScenarioError) as by_validate:
        airsched.validate(text=text)
    with pytest.raises(airsched.ScenarioError) as by_run:
        airsched.run(text=text)
    assert by_validate.value.errors == by_run.value.errors
    # The file's own line is at fault, not a command line that was never given.
    assert by_run.value.errors[0].startswith("<string>:2:12: run.duration: ")


@pytest.mark.parametrize(
    ("name", "text", "fragment"),
    [
        ("nan snr", ONE_STATION + "snr = nan\n", "station[0].snr: NaN is not a level in dB"),
        ("two stations, one address", ONE_STATION + 'ip = "192.168.1.9"\n[[station]]\nname = "b"\nrate = "2Mbps"\nip = "192.168.1.9"\n',
         "station[1].ip: 192.168.1.9 is also the address of station \"sta1\""),
        ("a station with the AP's address", ONE_STATION + 'ip = "192.168.1.1"\n', "192.168.1.1 is also the address of the AP"),
        ("an empty scenario", "", "the scenario is empty"),
        ("a comments-only scenario", "# nothing here\n", "the scenario is empty"),
        ("zero stations", '[run]\nduration = "5s"\n', "the cell has no stations"),
        ("a sample interval as long as the window", '[run]\nduration = "3s"\nsample_interval = "2s"\n' + ONE_STATION,
         "holds fewer than two sample intervals of 2s"),
    ],
)
def test_accepted_nonsense_is_refused(name: str, text: str, fragment: str) -> None:
    errs = errors(text)
    assert any(fragment in e for e in errs), (name, errs)


def test_durations_in_minutes_and_hours() -> None:
    info = airsched.validate(CBR, overrides={"run.duration": "10min"})
    assert info.duration_ns == 600 * 10**9
    assert airsched.validate(CBR, overrides={"run.duration": "1h"}).duration_ns == 3600 * 10**9


def test_summary_json_and_json_output_carry_the_provenance(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "airsched", "run", str(CBR), "--seed", "7", "--duration", "3s",
                           "--out", str(tmp_path), "--json"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    for doc in (json.loads(proc.stdout), json.loads((tmp_path / "summary.json").read_text())):
        p = doc["provenance"]
        assert p["scenario_path"] == str(CBR) and p["scenario_text"] == CBR.read_text()
        assert p["seed"] == 7 == doc["seed"] and p["overrides"] == ["run.seed=7", 'run.duration="3s"']
        assert p["airsched_version"] == airsched.__version__ and len(p["scenario_sha256"]) == 64
        # What the core resolved, defaults included.
        assert p["resolved"]["duration_ns"] == 3 * 10**9 and len(p["resolved"]["stations"]) == 2


@pytest.mark.parametrize("duration", ["2005ms", "2014ms", "2017ms", "2035ms"])
def test_medium_busy_and_airtime_shares_never_exceed_one_on_short_windows(duration: str) -> None:
    # An A-MPDU exchange that straddles the window's edge counts up to the edge only (it was
    # counted whole at its start: on these windows of 5 to 35 ms the busy share was 1.47, 1.07,
    # 1.10 and 1.06).
    r = airsched.run(ROOT / "scenarios" / "hoiland" / "udp.toml", duration=duration,
                     overrides={"run.sample_interval": "1ms", "ap.queueing": "fq-mac"})
    assert 0 < r.summary["medium_busy_share"] <= 1.0, r.summary["medium_busy_share"]
    assert (r.stations["airtime_share"] <= 1.0).all(), r.stations["airtime_share"].tolist()
    # Both edges are exact: the window's busy time is at most the window.
    assert r.summary["medium_busy_share"] * r.summary["measured_seconds"] <= r.summary["measured_seconds"]
