# SPDX-License-Identifier: Apache-2.0
"""One qdisc over several interfaces (docs/tc.md): ifb/imq scripts through `airsched tc check`,
the interfaces table (bytes out of each interface per sample, the paper's xnetload) and
`airsched plot --kind interface`."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

import airsched
from airsched import cli

ROOT = Path(__file__).resolve().parents[2]
IFB = ROOT / "scenarios" / "yip-kwok" / "ifb-htb-sfq.toml"


def test_tc_check_lists_the_bindings_and_refuses_a_redirect_to_an_unknown_device(tmp_path: Path) -> None:
    good = tmp_path / "ifb.tc"
    good.write_text(
        "ip link add ifb0 type ifb\n"
        "tc qdisc add dev wlan0 clsact\n"
        "tc filter add dev wlan0 egress matchall action mirred egress redirect dev ifb0\n"
        "tc qdisc add dev ifb0 root sfq\n"
    )
    r = CliRunner().invoke(cli.app, ["tc", "check", str(good)])
    assert r.exit_code == 0, r.output
    assert "dev ifb0\n  qdisc sfq" in r.output
    assert "redirect wlan0 -> ifb0 -> wlan0 (clsact egress, matchall filter prio 49152, line 3)" in r.output
    bad = tmp_path / "bad.tc"
    bad.write_text(good.read_text().replace("dev ifb0\ntc", "dev ifb1\ntc"))
    r = CliRunner().invoke(cli.app, ["tc", "check", str(bad)])
    assert r.exit_code == 1
    errors = [line for line in r.output.splitlines() if line.startswith("error:")]
    assert errors == [f'error: {bad}:3:75: at "ifb1": redirect to unknown device "ifb1"; the ifb devices are ifb0'], r.output


def test_the_interfaces_table_shows_ifb0_as_the_sum_of_the_devices_it_binds() -> None:
    r = airsched.run(IFB, duration="4s")
    t = r.interfaces
    assert list(t.columns) == ["time_s", "node", "dev", "bytes_per_second", "packets_per_second", "drops"]
    ap = t[t["node"] == "ap"]
    assert set(ap["dev"]) == {"wlan0", "eth0", "ifb0"}
    by = {dev: rows.set_index("time_s")["bytes_per_second"] for dev, rows in ap.groupby("dev")}
    # Two queues in series, neither backlogged behind ifb0 (both classes below their links'
    # capacity): what ifb0 sends in an interval, wlan0 and eth0 send, within a packet each.
    diff = (by["ifb0"] - by["wlan0"] - by["eth0"]).abs()
    assert (diff <= 2 * 1490).all(), diff
    # The parent class: 5 Mbit/s = 625 000 bytes a second out of ifb0 (it is saturated),
    # within two packets an interval (the bucket's burst), and within 0.1 % on the mean.
    assert ((by["ifb0"] - 625_000).abs() <= 2 * 1490).all(), by["ifb0"]
    assert abs(by["ifb0"].mean() / 625_000 - 1) < 1e-3, by["ifb0"].mean()


def test_plot_kind_interface_draws_the_nodes_interfaces(tmp_path: Path) -> None:
    out = tmp_path / "run"
    r = CliRunner().invoke(cli.app, ["run", str(IFB), "--duration", "3", "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert (out / "interfaces.parquet").is_file()
    r = CliRunner().invoke(cli.app, ["plot", str(out), "--kind", "interface"])
    assert r.exit_code == 0, r.output
    png = out / "interfaces.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    r = CliRunner().invoke(cli.app, ["plot", str(out), "--kind", "interface", "--node", "nobody"])
    assert r.exit_code == 2
    assert "no interface samples of node 'nobody'" in r.output


def test_export_refuses_a_script_with_virtual_devices_rather_than_leaving_them_out() -> None:
    r = CliRunner().invoke(cli.app, ["export", str(IFB)])
    assert r.exit_code != 0
    assert "does not write ip link, clsact and mirred lines yet" in r.output
