"""Every scenario shipped in scenarios/ is valid, and the 802.11n QoS example shows what its
comment says."""

from __future__ import annotations

from pathlib import Path

import pytest

import airsched

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = sorted((ROOT / "scenarios").rglob("*.toml"))


def test_there_are_scenarios() -> None:
    assert len(SCENARIOS) > 20


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_shipped_scenario_validates(path: Path) -> None:
    info = airsched.validate(path)
    assert info.stations, f"{path} has stations"


def test_txop_limits_example_aggregates_as_its_comment_says() -> None:
    path = ROOT / "scenarios" / "80211n-txop-limits.toml"
    ns3 = airsched.run(path).stations.set_index("name")
    linux = airsched.run(path, overrides=["cell.txop_limits=802.11-2016"]).stations.set_index("name")
    assert (ns3.loc["sta", "ampdu_mean_down"], linux.loc["sta", "ampdu_mean_down"]) == (20.0, 15.0)
    assert ns3.loc["sta", "goodput_mbps"] > linux.loc["sta", "goodput_mbps"]


def test_80211n_example_gives_ef_pings_priority_and_minstrel_adapts() -> None:
    r = airsched.run(ROOT / "scenarios" / "80211n-edca-minstrel.toml")
    flows = r.flows.set_index("name")
    # The far station's EF pings use AC_VO: far below its best-effort pings behind the download.
    assert flows.loc["ping-vo", "rtt_p50_ms"] < 0.2 * flows.loc["ping-be", "rtt_p50_ms"]
    st = r.stations.set_index("name")
    # Minstrel keeps the near station near its top MCS and the far one far below it.
    assert st.loc["near", "mean_rate_down_mbps"] > 100
    assert st.loc["far", "mean_rate_down_mbps"] < 30
    assert flows.loc["get-near", "goodput_mbps"] > 5 * flows.loc["get-far", "goodput_mbps"]
