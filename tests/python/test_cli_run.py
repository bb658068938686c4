# SPDX-License-Identifier: Apache-2.0
"""`airsched run`: the JSON it prints, the numbers' consistency, and the human-readable report."""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata

import pytest

import airsched
from airsched import cli

SUMMARY_KEYS = {
    "total_goodput_mbps",
    "sim_seconds",
    "measured_seconds",
    "wall_seconds",
    "events",
    "seed",
    "frames",
    "conservation",
    "stations",
    "flows",
    "nodes",
}
STATION_KEYS = {
    "name",
    "rate_mbps",
    "goodput_mbps",
    "goodput_std_mbps",
    "goodput_up_mbps",
    "goodput_down_mbps",
    "airtime_s",
    "airtime_share",
    "tx_frames",
    "tx_attempts",
    "retries",
    "collisions",
    "drops",
    "drops_queue",
    "drops_retry",
    "queue_delay_mean_ms",
}
FLOW_KEYS = {
    "name",
    "src",
    "dst",
    "protocol",
    "goodput_mbps",
    "goodput_std_mbps",
    "sent_packets",
    "received_packets",
    "lost_packets",
    "drops_queue",
    "drops_retry",
    "in_flight",
    "delay_mean_ms",
    "delay_max_ms",
    "queue_delay_mean_ms",
}
CONSERVATION_KEYS = {"offered", "delivered", "dropped_queue", "dropped_retry", "in_flight"}


@pytest.fixture(scope="module")
def downlink(cli_json, data):
    """Two saturated downlink flows to two 11 Mb/s stations, 3 s, no warm-up, seed 7."""
    return cli_json(data / "downlink2.toml")


def test_json_has_every_documented_key(downlink):
    assert set(downlink) >= SUMMARY_KEYS
    assert set(downlink["conservation"]) == CONSERVATION_KEYS
    assert [s["name"] for s in downlink["stations"]] == ["sta1", "sta2"]
    assert [f["name"] for f in downlink["flows"]] == ["down1", "down2"]
    for station in downlink["stations"]:
        assert set(station) >= STATION_KEYS
    for flow in downlink["flows"]:
        assert set(flow) >= FLOW_KEYS
    # nodes: the transmitters on the air, the AP first.
    assert [n["name"] for n in downlink["nodes"]] == ["ap", "sta1", "sta2"]


def test_run_settings_come_from_the_scenario(downlink):
    assert downlink["seed"] == 7
    assert downlink["sim_seconds"] == pytest.approx(3.0)
    assert downlink["measured_seconds"] == pytest.approx(3.0)  # warm-up 0s
    assert downlink["events"] > 0


def test_station_goodputs_add_up_to_the_total(downlink):
    total = downlink["total_goodput_mbps"]
    assert total > 1.0  # two saturated flows at 11 Mb/s carry several Mb/s
    assert sum(s["goodput_mbps"] for s in downlink["stations"]) == pytest.approx(total, rel=1e-9)
    assert sum(f["goodput_mbps"] for f in downlink["flows"]) == pytest.approx(total, rel=1e-9)
    for station in downlink["stations"]:
        # Every flow here is a downlink: all of a station's goodput is downstream.
        assert station["goodput_down_mbps"] == pytest.approx(station["goodput_mbps"], rel=1e-9)
        assert station["goodput_up_mbps"] == 0
        assert 0 < station["goodput_mbps"] < station["rate_mbps"]


def test_flow_packet_counts_are_consistent(downlink):
    for flow in downlink["flows"]:
        sent, received = flow["sent_packets"], flow["received_packets"]
        assert 0 < received <= sent
        # No warm-up: every packet sent is received, dropped or still on its way.
        assert sent == received + flow["drops_queue"] + flow["drops_retry"] + flow["in_flight"]
        assert flow["lost_packets"] == sent - received - flow["in_flight"]
        assert flow["delay_mean_ms"] > 0
        assert flow["delay_max_ms"] >= flow["delay_mean_ms"]


def test_conservation_matches_the_flows(downlink):
    c = downlink["conservation"]
    flows = downlink["flows"]
    assert c["offered"] == c["delivered"] + c["dropped_queue"] + c["dropped_retry"] + c["in_flight"]
    assert c["offered"] == sum(f["sent_packets"] for f in flows)
    assert c["delivered"] == sum(f["received_packets"] for f in flows)


def test_airtime_shares_are_fractions_that_fit_in_the_air(downlink):
    shares = [s["airtime_share"] for s in downlink["stations"]]
    assert all(0.0 < share <= 1.0 for share in shares)
    assert sum(shares) <= 1.0 + 1e-9
    for s in downlink["stations"]:
        assert s["airtime_share"] == pytest.approx(s["airtime_s"] / downlink["measured_seconds"], rel=1e-9)
        # Each delivered frame took one attempt plus its retries.
        assert s["tx_attempts"] >= s["tx_frames"] + s["retries"]


def test_ap_sends_a_beacon_every_beacon_interval(downlink):
    (ap,) = [n for n in downlink["nodes"] if n["name"] == "ap"]
    # Default beacon interval 102.4 ms over 3 s: 29.3 target beacon times.
    assert abs(ap["beacons"] - 3.0 / 0.1024) <= 1
    # Downlink only: every data frame is the AP's, the stations send nothing but ACKs.
    assert ap["tx_attempts"] == ap["beacons"] + sum(s["tx_attempts"] for s in downlink["stations"])
    assert downlink["frames"] == sum(n["tx_attempts"] for n in downlink["nodes"])


def test_overrides_on_the_command_line(cli_json, data):
    out = cli_json(data / "downlink2.toml", "--seed", "99", "--duration", "2s")
    assert out["seed"] == 99
    assert out["sim_seconds"] == pytest.approx(2.0)


def test_human_report(cli, data, downlink):
    proc = cli("run", data / "downlink2.toml")
    assert proc.returncode == 0, proc.stderr
    # A short run that is not on a terminal shows no progress bar: stderr stays empty.
    assert proc.stderr == ""
    out = proc.stdout
    for text in ("sta1", "sta2", "down1", "down2", "server→sta1", "total goodput", "events/s"):
        assert text in out
    # Same scenario and seed as the JSON run: the same total goodput is printed.
    assert f"{downlink['total_goodput_mbps']:.3f}" in out
    for station in downlink["stations"]:
        assert f"{station['goodput_mbps']:.3f}" in out
        assert f"{100 * station['airtime_share']:.1f}" in out


def test_version(cli):
    proc = cli("--version")
    assert proc.returncode == 0
    assert proc.stdout == f"airsched {airsched.__version__}\n"
    assert airsched.__version__ == airsched._core.version() != ""


def test_console_script_is_the_cli_main():
    try:
        (script,) = metadata.distribution("airsched").entry_points.select(name="airsched")
    except metadata.PackageNotFoundError:
        pytest.skip("airsched is imported from a source tree, not installed")
    assert script.group == "console_scripts"
    assert script.load() is cli.main


def test_json_run_imports_no_table_drawing_nor_validation_library(data):
    """`airsched run --json` is the path sweeps, scripts and the emulator call once per run: it
    loads neither rich (tables, bars) nor pydantic (typer >= 0.29 coerces every option through
    it) nor numpy/pandas; each would add tens of milliseconds and megabytes to every run
    (issue 28, bench/README.md)."""
    code = (
        "import sys\n"
        "from airsched.cli import main\n"
        f"sys.argv = ['airsched', 'run', {str(data / 'cbr.toml')!r}, '--duration', '2s', '--json']\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as e:\n"
        "    assert not e.code, e.code\n"
        "heavy = [m for m in ('rich', 'pydantic', 'numpy', 'pandas') if m in sys.modules]\n"
        "sys.stderr.write('HEAVY=' + ','.join(heavy))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert '"total_goodput_mbps"' in proc.stdout
    assert proc.stderr.endswith("HEAVY="), proc.stderr
