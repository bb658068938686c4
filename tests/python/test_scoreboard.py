# SPDX-License-Identifier: Apache-2.0
"""Issue 27: the scoreboard's rules (cells on the mean over seeds, claims in 8 of 10 seeds) and
Høiland-Jørgensen's claims as checks (a tie is not an ordering)."""

from __future__ import annotations

import pandas as pd
import pytest

from airsched.repro import hoiland, scoreboard


def test_cells_are_judged_on_the_mean_over_the_seeds_and_claims_on_8_of_10() -> None:
    cells = pd.DataFrame(
        [("hoiland", "a", s, v, 100.0) for s, v in zip(range(1, 11), [80.0, 120.0] * 5, strict=True)]  # mean 100: within 10 %
        + [("hoiland", "b", s, 111.0, 100.0) for s in range(1, 11)]  # 11 % off: within 25 % only
        + [("hoiland", "c", s, 130.0, 100.0) for s in range(1, 11)],  # 30 % off: neither
        columns=list(scoreboard.CELL_COLUMNS),
    )
    claims = pd.DataFrame(
        [("hoiland", "eight", s, s <= 8) for s in range(1, 11)] + [("hoiland", "seven", s, s <= 7) for s in range(1, 11)],
        columns=list(scoreboard.CLAIM_COLUMNS),
    )
    (row,) = scoreboard.score(cells, claims).itertuples()
    assert (row.seeds, row.cells, row.within_10, row.within_25) == (10, 3, 1, 2)
    assert (row.claims, row.claims_hold) == (2, 1)
    assert row.claims_mean_per_seed == pytest.approx(1.5) and row.claims_ci > 0
    # Per-seed medians of |error| are 0.2 (a at 80 or 120), 0.11, 0.3 -> 0.2 every seed.
    assert row.median_error == pytest.approx(0.2) and row.median_error_ci == pytest.approx(0.0)
    rates = scoreboard.claim_rates(claims).set_index("claim")
    assert rates.loc["eight", "holds"] and not rates.loc["seven", "holds"]
    assert "1/3 within 10 %, 2/3 within 25 %" in scoreboard.lines(scoreboard.score(cells, claims))[2]


def _summary() -> pd.DataFrame:
    """A Høiland summary in which every statement of the papers holds."""
    rows = []
    for t in hoiland.TRAFFICS:
        for c in hoiland.CONFIGURATIONS:
            for s in hoiland.STATIONS:
                slow = s == "slow"
                share = {"fifo": 0.8 if slow else 0.1, "fq_codel": 0.8 if slow else 0.1, "fq-mac": 0.4 if slow else 0.3}.get(c, 1 / 3)
                ampdu = {"fq_codel": 8.0 if t == "udp" else 14.0, "fq-mac": 23.0, "airtime": 23.0, "fifo": 10.0}[c]
                if t == "tcp":
                    p50 = {"fifo": 300.0, "fq_codel": 250.0 if slow else 30.0, "fq-mac": 30.0, "airtime": 30.0}[c]
                else:
                    p50 = 10.0
                if s == "pingonly":
                    p50 = {"udp": {"fq-mac": 12.0, "airtime": 5.0}, "tcp": {"fq-mac": 12.0, "airtime": 14.0}}[t].get(c, p50)
                goodput = {"fifo": 10.0, "fq_codel": 12.0, "fq-mac": 20.0, "airtime": 25.0}[c] if s != "pingonly" else 0.0
                rows.append({"traffic": t, "configuration": c, "station": s, "airtime_share": share, "airtime_down_s": 1.0,
                             "goodput_mbps": goodput, "ping_p50_ms": p50, "ping_p90_ms": p50, "ping_mean_ms": 12.0 if c == "fq-mac" else 10.0,
                             "ping_sent": 100, "ping_answered": 100, "ampdu_mean_down": ampdu, "ampdu_mean_up": 1.0, "tcp_retransmits": 0})
    df = pd.DataFrame(rows, columns=list(hoiland.SUMMARY_COLUMNS))
    return df


def test_every_hoiland_statement_is_checked_and_holds_on_a_summary_made_to_hold() -> None:
    claims = hoiland.check_claims(_summary())
    keyed = {(c.traffic, c.quantity, c.configuration, c.station) for c in claims}
    statements = {k for k, p in hoiland.PAPER.items() if p.value is None or p.text.startswith((">", "<")) or "notch" in p.text}
    assert keyed == statements
    assert all(c.holds for c in claims), [c for c in claims if not c.holds]


def test_a_tie_is_not_an_ordering() -> None:
    # FQ-CoDel's TCP throughput 0.5 % above FIFO's is a tie: "> FIFO" does not hold.
    df = _summary()
    tcp = (df.traffic == "tcp") & df.station.isin(hoiland.BULK_STATIONS)
    df.loc[tcp & (df.configuration == "fq_codel"), "goodput_mbps"] = 10.0 * 1.005
    claim = next(c for c in hoiland.check_claims(df) if (c.traffic, c.quantity, c.configuration) == ("tcp", "throughput_mbps", "fq_codel"))
    assert not claim.holds
    df.loc[tcp & (df.configuration == "fq_codel"), "goodput_mbps"] = 10.0 * 1.02
    claim = next(c for c in hoiland.check_claims(df) if (c.traffic, c.quantity, c.configuration) == ("tcp", "throughput_mbps", "fq_codel"))
    assert claim.holds


def test_hoiland_cells_are_the_numbers_the_papers_state() -> None:
    cells = {name: (sim, ref) for name, sim, ref in hoiland.paper_cells(_summary())}
    assert cells["udp fifo throughput_mbps"] == (30.0, 20.0)  # three bulk stations at 10 Mb/s
    assert cells["udp airtime slow airtime_share"] == (pytest.approx(1 / 3), pytest.approx(1 / 3))
    assert cells["tcp fq-mac fast2 ping_p50_ms"][1] == pytest.approx(19.25)
    assert not any("> 200" in n for n in cells)  # a bound is a claim, not a cell
