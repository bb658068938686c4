"""Adds the rows of an extra run of run_ofdma_mixed.sh (more seeds of some cases, written with
OUT=PREFIX) to ofdma_mixed.csv and ofdma_mixed_summary.txt beside this script, each case's rows
kept together and in seed order (tests/ofdma_mixed_ns3.rs reads them so).

    python3 bench/ns3/merge_ofdma_mixed.py PREFIX
"""

import sys
from pathlib import Path

here = Path(__file__).parent


def merge_csv(main: Path, extra: Path) -> None:
    head, *rows = main.read_text().splitlines()
    extra_head, *more = extra.read_text().splitlines()
    assert head == extra_head, "different columns"
    cases: dict[tuple[str, str], list[str]] = {}
    for r in rows + more:
        f = r.split(",")
        cases.setdefault((f[0], f[1]), []).append(r)
    seen = set()
    for key, rs in cases.items():
        rs.sort(key=lambda r: int(r.split(",")[2]))
        for r in rs:
            f = r.split(",")
            k = (f[0], f[1], f[2], f[3], f[5])
            assert k not in seen, f"row twice: {k}"
            seen.add(k)
    main.write_text("\n".join([head] + [r for rs in cases.values() for r in rs]) + "\n")


def merge_summary(main: Path, extra: Path) -> None:
    def blocks(text: str) -> list[tuple[tuple[str, str, int], str]]:
        out = []
        lines = text.splitlines()
        for h, body in zip(lines[::2], lines[1::2]):
            f = dict(x.split("=") for x in h[2:].split())
            out.append(((f["n"], f["load"], int(f["seed"])), h + "\n" + body + "\n"))
        return out

    cases: dict[tuple[str, str], list[tuple[int, str]]] = {}
    for (n, load, seed), b in blocks(main.read_text()) + blocks(extra.read_text()):
        cases.setdefault((n, load), []).append((seed, b))
    main.write_text("".join(b for bs in cases.values() for _, b in sorted(bs)))


if __name__ == "__main__":
    prefix = sys.argv[1]
    merge_csv(here / "ofdma_mixed.csv", Path(prefix + ".csv"))
    merge_summary(here / "ofdma_mixed_summary.txt", Path(prefix + "_summary.txt"))
