# SPDX-License-Identifier: Apache-2.0
"""The Python API: airsched.run / validate / load, Result tables, and errors."""

from __future__ import annotations

import pytest

import airsched

from scenario_texts import CBR, DOWNLINK2, mutate


@pytest.fixture(scope="module")
def cbr_result():
    """2 Mbit/s CBR to an 11 Mb/s station, 5 s with 1 s warm-up, progress recorded."""
    fractions: list[float] = []
    result = airsched.run(text=CBR, progress=fractions.append)
    return result, fractions


def test_cbr_below_capacity_is_delivered_whole(cbr_result):
    result, _ = cbr_result
    (flow,) = result.flows.itertuples(index=False)
    assert flow.goodput_mbps == pytest.approx(2.0, rel=0.01)
    assert flow.lost_packets == 0
    assert flow.drops_queue == 0 and flow.drops_retry == 0
    assert flow.received_packets > 0
    # 1000-byte payloads at 2 Mbit/s over 4 measured seconds: 1000 packets.
    assert flow.sent_packets == pytest.approx(1000, abs=2)
    assert 0 < flow.delay_mean_ms <= flow.delay_max_ms < 50
    (station,) = result.stations.itertuples(index=False)
    assert station.goodput_mbps == pytest.approx(flow.goodput_mbps, rel=1e-9)
    assert station.drops == 0
    assert result.summary["total_goodput_mbps"] == pytest.approx(flow.goodput_mbps, rel=1e-9)


def test_cbr_samples_average_to_the_rate(cbr_result):
    result, _ = cbr_result
    samples = result.samples
    flow_samples = samples[samples["kind"] == "flow"]
    assert len(flow_samples) >= 2
    assert (flow_samples["name"] == "cbr").all()
    assert (samples["time_s"] > 1.0).all()  # nothing from the warm-up
    assert flow_samples["goodput_mbps"].mean() == pytest.approx(2.0, rel=0.02)


def test_summary(cbr_result):
    result, _ = cbr_result
    s = result.summary
    assert s["seed"] == 3
    assert s["sim_seconds"] == pytest.approx(5.0)
    assert s["measured_seconds"] == pytest.approx(4.0)
    assert s["wall_seconds"] > 0
    c = s["conservation"]
    assert c["offered"] == c["delivered"] + c["dropped_queue"] + c["dropped_retry"] + c["in_flight"]
    assert c["dropped_queue"] == c["dropped_retry"] == 0


def test_tables_have_documented_types(cbr_result):
    result, _ = cbr_result
    stations, flows, samples, nodes = result.stations, result.flows, result.samples, result.nodes
    assert stations["name"].dtype == "string"
    assert stations["goodput_mbps"].dtype == "float64"
    assert stations["tx_frames"].dtype == "int64"
    assert flows["src"].dtype == "string" and flows["dst"].dtype == "string"
    assert flows["sent_packets"].dtype == "int64"
    assert flows["delay_mean_ms"].dtype == "float64"
    assert samples["time_s"].dtype == "float64" and samples["kind"].dtype == "string"
    assert nodes["beacons"].dtype == "int64"
    assert list(flows["src"]) == ["server"] and list(flows["dst"]) == ["sta1"]
    assert list(stations["rate_mbps"]) == [11.0]


def test_progress_reports_increasing_fractions_up_to_one(cbr_result):
    _, fractions = cbr_result
    assert len(fractions) >= 2
    assert all(0 < a < b for a, b in zip(fractions, fractions[1:], strict=False))
    assert fractions[-1] == 1.0


def test_scenario_error_lists_every_problem():
    text = mutate(mutate(CBR, "seed = 3", 'seed = 3\nduraton = "5s"'), 'dst = "sta1"', 'dst = "sta9"')
    with pytest.raises(airsched.ScenarioError) as info:
        airsched.run(text=text)
    exc = info.value
    assert isinstance(exc, ValueError) and isinstance(exc, airsched.AirschedError)
    assert len(exc.errors) == 2
    assert all(e.startswith("<string>:") for e in exc.errors)
    assert str(exc) == "\n".join(exc.errors)
    assert any("duraton" in e for e in exc.errors) and any("sta9" in e for e in exc.errors)


def test_native_exception_does_not_leak():
    with pytest.raises(airsched.ScenarioError) as info:
        airsched.validate(text="[run\n")
    assert type(info.value) is airsched.ScenarioError
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_missing_file(tmp_path):
    path = tmp_path / "absent.toml"
    with pytest.raises(airsched.ScenarioError) as info:
        airsched.run(path)
    assert info.value.errors == [f"{path}: no such file"]


def test_bad_duration_argument():
    with pytest.raises(airsched.ScenarioError) as info:
        airsched.run(text=CBR, duration="-1s")
    assert info.value.errors[0].startswith("<command line>")
    assert "run.duration" in info.value.errors[0]


def test_duration_argument_overrides_the_file():
    result = airsched.run(text=CBR, duration="2s", seed=11)
    assert result.summary["sim_seconds"] == pytest.approx(2.0)
    assert result.summary["measured_seconds"] == pytest.approx(1.0)
    assert result.summary["seed"] == 11


@pytest.mark.parametrize("seed", [-1, 2**64])
def test_seed_out_of_range(seed):
    with pytest.raises(airsched.ScenarioError, match="run.seed"):
        airsched.run(text=CBR, seed=seed)


def test_validate_reports_counts_and_duration(data):
    info = airsched.validate(data / "downlink2.toml")
    assert (info.stations, info.flows, info.duration_ns, info.duration) == (2, 2, 3_000_000_000, "3s")
    assert info.path == str(data / "downlink2.toml")
    assert airsched.validate(text=DOWNLINK2).path == "<string>"


def test_result_repr_names_the_run(cbr_result):
    result, _ = cbr_result
    text = repr(result)
    assert text.startswith("<airsched.Result: 1 station, 1 flow, 5 s simulated, ")
    assert f"{result.summary['total_goodput_mbps']:.3f} Mb/s" in text


def test_validate_describes_an_80211n_cell():
    text = '[cell]\nstandard = "802.11n"\nguard_interval = "short"\n[ap]\nqueueing = "fq_codel"\n[[station]]\nname = "a"\n'
    info = airsched.validate(text=text)
    assert info.standard == "802.11n"
    assert (info.cell["band"], info.cell["width_mhz"], info.cell["guard_interval"]) == ("5GHz", 20, "short")
    assert info.cell["basic_rates_mbps"] == [6.0, 12.0, 24.0]
    assert info.cell["txop_limits"] == "802.11-2016"
    ns3 = airsched.validate(text=text.replace('"short"\n', '"short"\ntxop_limits = "802.11-2020"\n', 1))
    assert ns3.cell["txop_limits"] == "802.11-2020"
    assert info.links == (airsched.StationLink("a", pytest.approx(72.222, abs=1e-3), "fixed", 7, 256),)
    assert info.ap_mac == {
        "mac_queue": "fifo",
        "driver_queue_limit": 123,
        "airtime": "off",
        "airtime_rx": True,
        "aql": False,
        "fq_kernel": "4.11",
        "tc": "ap.queueing",
    }
    b = airsched.validate(text='[[station]]\nname = "a"\nrate = "5.5Mbps"\n')
    assert (b.standard, b.ap_mac, b.links[0].rate_mbps, b.links[0].mcs) == ("802.11b", None, 5.5, None)
