# SPDX-License-Identifier: Apache-2.0
"""Traffic control from the command line and the Python API: tc scripts in scenarios, their
statistics as tc prints them, `airsched tc check`, and tc errors located in the files."""

from __future__ import annotations

from pathlib import Path

import pytest

import airsched

ROOT = Path(__file__).resolve().parents[2]

SHAPED = """
[run]
duration = "4s"
warmup = "1s"
[cell]
beacons = false
[[station]]
name = "sta1"
rate = "11Mbps"
[ap]
tc = \"\"\"
tc qdisc add dev wlan0 root handle 1: htb default 10
tc class add dev wlan0 parent 1: classid 1:1 htb rate 2mbit
tc class add dev wlan0 parent 1:1 classid 1:10 htb rate 2mbit
tc qdisc add dev wlan0 parent 1:10 handle 10: sfq perturb 10
\"\"\"
[[flow]]
name = "down"
src = "server"
dst = "sta1"
rate = "saturate"
size = 1472
"""


def test_htb_on_the_ap_shapes_the_downlink_and_reports_tc_statistics() -> None:
    r = airsched.run(text=SHAPED)
    # 2 Mbit/s of link-layer bytes (IP + 14) is 2 * 1472 / 1514 Mbit/s of UDP payload.
    assert r.flows.loc[0, "goodput_mbps"] == pytest.approx(2.0 * 1472 / 1514, rel=0.01)
    ap = next(t for t in r.tc if t["node"] == "ap" and t["dev"] == "wlan0")
    kinds = [q["kind"] for q in ap["qdiscs"]]
    assert kinds == ["htb", "sfq"]
    htb = ap["qdiscs"][0]
    assert htb["handle"] == "1:" and htb["parent"] == "root"
    leaf = next(c for c in htb["classes"] if c["classid"] == "1:10")
    assert leaf["leaf"] == "10:"
    # The leaf's sent bytes are the shaped rate over the whole run (4 s, warm-up included).
    assert leaf["stats"]["bytes"] * 8 / 4.0 == pytest.approx(2e6, rel=0.03)
    # tc -s text, as on a real box.
    assert "qdisc htb 1: root" in ap["qdisc_text"]
    assert "class htb 1:10 parent 1:1 leaf 10:" in ap["class_text"]
    # JSON carries the structured part.
    j = r.to_json_dict()
    assert j["tc"][0]["qdiscs"][0]["kind"] == "htb"
    assert j["warnings"] == []


def test_cli_tc_stats_prints_every_interface(cli, write_scenario) -> None:
    path = write_scenario(SHAPED)
    proc = cli("run", path, "--tc-stats")
    assert proc.returncode == 0, proc.stderr
    for header in ("# ap dev wlan0", "# sta1 dev wlan0", "# ap dev eth0", "# server dev eth0"):
        assert header in proc.stdout
    assert "qdisc sfq 10: parent 1:10" in proc.stdout
    assert " Sent " in proc.stdout and " backlog " in proc.stdout


def test_tc_errors_in_a_scenario_name_file_line_and_column(cli, write_scenario) -> None:
    bad = SHAPED.replace("htb rate 2mbit\ntc qdisc", "htb ceil 2mbit\ntc qdisc")
    path = write_scenario(bad)
    proc = cli("run", path)
    assert proc.returncode == 2
    # The class line without a rate is line 14 of the file; the error points at its end.
    first = proc.stderr.splitlines()[0]
    assert first.startswith(f"error: {path}:14:62: ap.tc:"), first
    assert '"rate" is required' in first


def test_tc_warnings_reach_stderr_and_the_json(cli, write_scenario) -> None:
    text = SHAPED.replace("handle 1: htb default 10", "handle 1: htb default 10 offload")
    path = write_scenario(text)
    proc = cli("run", path, "--json")
    assert proc.returncode == 0, proc.stderr
    assert "warning:" in proc.stderr and "offload" in proc.stderr
    import json

    assert any("offload" in w for w in json.loads(proc.stdout)["warnings"])


def test_tc_check_prints_the_tree(cli, tmp_path) -> None:
    script = tmp_path / "shaping.tc"
    script.write_text(
        "# a tc -b batch file\n"
        "qdisc add dev eth0 root handle 1: prio\n"
        "qdisc add dev eth0 parent 1:1 handle 10: tbf rate 1mbit burst 10k latency 50ms\n",
        encoding="utf-8",
    )
    proc = cli("tc", "check", script)
    assert proc.returncode == 0, proc.stderr
    assert "prio" in proc.stdout and "tbf" in proc.stdout and "eth0" in proc.stdout


def test_tc_check_reports_errors_with_positions(cli, tmp_path) -> None:
    script = tmp_path / "bad.tc"
    script.write_text("tc qdisc add dev eth0 root handle 1: tbf rate 1mbit\n", encoding="utf-8")
    proc = cli("tc", "check", script)
    assert proc.returncode == 1
    assert f"error: {script}:1:" in proc.stderr
    missing = cli("tc", "check", tmp_path / "nope.tc")
    assert missing.returncode == 2 and "no such file" in missing.stderr


@pytest.mark.parametrize(
    "name", ["valenzuela/table3-htb-2400-900.toml", "yip-kwok/htb-sfq.toml", "yip-kwok/prio-tbf.toml"]
)
def test_paper_scenarios_validate(cli, name) -> None:
    proc = cli("validate", ROOT / "scenarios" / name)
    assert proc.returncode == 0, proc.stderr
    assert "ok" in proc.stdout
