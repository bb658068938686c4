"""`airsched repro all`: every reproduction into one directory and one report, with the numbers
of the reproductions' own commands."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
from test_report import CHROMIUM, _at_width

from airsched.repro import garroppo, scoreboard

ROOT = Path(__file__).resolve().parents[2]


def test_repro_all_writes_every_part_and_one_report(tmp_path: Path) -> None:
    out = tmp_path / "all"
    proc = subprocess.run([sys.executable, "-m", "airsched", "repro", "all", "--out", str(out), "--duration", "3s", "--seeds", "1,2"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    page = (out / "report.html").read_text()
    # Issue 27: the scoreboard per paper over the seeds, printed and written, the first seed's
    # cells being the numbers of the tables the report shows.
    board = pd.read_csv(out / "scoreboard.csv")
    assert list(board["paper"]) == list(scoreboard.PAPERS) and set(board["seeds"]) == {2}
    assert (board["within_10"] <= board["within_25"]).all() and (board["within_25"] <= board["cells"]).all()
    for r in board.itertuples():
        assert f"{r.within_10}/{r.cells} within 10 %" in proc.stdout and f"claims {r.claims_hold}/{r.claims} hold" in proc.stdout
    rates = pd.read_csv(out / "scoreboard-claims.csv")
    assert set(rates["seeds"]) == {2} and (rates["holds"] == (rates["held"] == 2)).all()
    assert board.set_index("paper")["claims_hold"].to_dict() == rates[rates["holds"]].groupby("paper").size().reindex(list(scoreboard.PAPERS), fill_value=0).to_dict()
    cells = pd.read_csv(out / "scoreboard-cells.csv")
    assert set(cells["seed"]) == {1, 2}
    t14 = pd.read_csv(out / "garroppo-1-4.csv").set_index(["position", "scheduler", "station"])
    c = cells[(cells["seed"] == 1) & (cells["cell"] == "share 1:4 MS2 bad htb ms2")].iloc[0]
    assert c["simulated"] == t14.loc[("bad", "htb", "ms2"), "goodput_kbps"] and c["reference"] == t14.loc[("bad", "htb", "ms2"), "paper_kbps"]
    assert 'id="papers"' in page
    for anchor in ("garroppo-1-4", "garroppo-1-1", "garroppo-walk-drr", "garroppo-walk-whtb", "garroppo-walk-whtb-gate", "hoiland", "valenzuela", "yip-kwok"):
        assert f'<section id="{anchor}">' in page
    # Issue 29: the scoreboard is the first thing on the page, each row counting a part's claims
    # (as its claims CSV says), booleans in words, no absolute scenario paths.
    assert page.index('<section id="scoreboard">') == page.index("<section")
    claims14 = pd.read_csv(out / "garroppo-1-4-claims.csv")
    assert '<a href="#garroppo-1-4">' in page and f"<td>{int(claims14['holds'].sum())} of {len(claims14)}</td>" in page
    assert "<td>True</td>" not in page and "<td>False</td>" not in page
    assert str(ROOT / "scenarios") not in page
    assert page.count("data:image/png;base64,") == 2 * 2 + 3 + 2 * 4 + 1
    for stem in ("garroppo-1-4", "garroppo-1-1"):
        claims = pd.read_csv(out / f"{stem}-claims.csv")
        assert list(claims.columns) == list(garroppo.CLAIM_COLUMNS) and len(claims) > 0
    # The table is the one `airsched repro garroppo` computes.
    table = pd.read_csv(out / "garroppo-1-4.csv")
    alone = garroppo.run_table("1:4", duration="3s", positions=["bad"], schedulers=["whtb"])
    mine = table[(table["position"] == "bad") & (table["scheduler"] == "whtb")].reset_index(drop=True)
    assert list(mine["goodput_kbps"]) == list(alone["goodput_kbps"])
    yk = pd.read_csv(out / "yip-kwok" / "yip-kwok.csv")
    assert set(yk["configuration"]) == {"fifo", "htb-sfq", "prio-tbf", "sfq"}
    hoiland = pd.read_csv(out / "hoiland" / "hoiland.csv")
    assert set(hoiland["traffic"]) == {"udp", "tcp"} and len(set(hoiland["configuration"])) == 4
    # Issue 29, reports: opened in headless Chromium at 1400 and 800 px, the page has no
    # horizontal scroll bar, every figure has its caption and every image decodes.
    if CHROMIUM is not None:
        for width in (1400, 800):
            body = _at_width(out / "report.html", width, tmp_path)
            assert int(body["data-viewport"]) == width
            assert int(body["data-page-width"]) <= width, f"repro all: horizontal overflow at {width} px"
            assert int(body["data-figures"]) > 0 and body["data-uncaptioned"] == "0"
            assert body["data-images"] == body["data-images-loaded"]
