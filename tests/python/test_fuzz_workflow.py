# SPDX-License-Identifier: Apache-2.0
"""The workflow around the core on generated odd input (issue 29): sweep files, ``--set`` lines,
``import`` inputs (tc -j JSON and tc text: valid, truncated, of the wrong shape, binary) and
``compare`` inputs (run and sweep directories with damaged, missing or foreign files). Every case
must end in success or in airsched's own error with one-line messages: never another exception,
never a hang (a per-case alarm), never unbounded memory (each batch runs in a worker process
with a 3 GiB address-space limit).

``AIRSCHED_FUZZ_WORKFLOW_CASES`` sets the cases per kind (default 1500, the CI form; the long
mode is e.g. ``AIRSCHED_FUZZ_WORKFLOW_CASES=50000``), ``AIRSCHED_FUZZ_SEED`` the seed.
"""

from __future__ import annotations

import copy
import json
import multiprocessing as mp
import os
import random
import resource
import signal
import tempfile
from collections import Counter
from pathlib import Path

import pytest

import airsched
from airsched import compare, importer, sweeps

ROOT = Path(__file__).resolve().parents[2]
ANOMALY = str(ROOT / "scenarios" / "anomaly.toml")
CASES = int(os.environ.get("AIRSCHED_FUZZ_WORKFLOW_CASES", "1500"))
SEED = int(os.environ.get("AIRSCHED_FUZZ_SEED", "29"))
MEMORY_LIMIT = 3 << 30
#: A case that takes longer than this is a hang.
CASE_SECONDS = 20
#: Cases per task sent to a worker.
CHUNK = 50


class Hang(Exception):
    pass


def _alarm(signum, frame):  # noqa: ANN001
    raise Hang()


def _worker_init() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    signal.signal(signal.SIGALRM, _alarm)


def _one_line_errors(errors: list[str]) -> bool:
    return bool(errors) and all(isinstance(e, str) and e and "\n" not in e for e in errors)


# ----- generators ----------------------------------------------------------------------------------

VALUES = ["1", "-1", "0", "4", "7", "nan", "inf", "-inf", "1e308", "-1e308", "1e-320", "10000000", "9223372036854775807",
          "99999999999999999999", "true", '"x"', '""', "[]", "[1, 1]", "[1, 2]", "{}", "1979-05-27", "07:32:00",
          '"2Mbps"', "[[1]]", "{a = 1}", "0.5", "3", "1e400", "[nan]", '["a", "a"]', "2.0", "-0.0", '"11Mbps"',
          '"3s"', '"fifo"', "[4, 7]", '"\\u0000"', '"ü"']
KEYS = ['"cell.retry_limit"', '"station[fast].rate"', '"run.duration"', '"flow[0].rate"', "cell.retry_limit", '"x"', '""',
        '"station[9].snr"', '"station[slow].snr"', '"run.seed"', '"seed"', '"ap.tc"', '"flow[up].size"']


def _range(r: random.Random) -> str:
    keys = r.sample(["from", "to", "step", "count", "unit", "zz"], r.randint(0, 4))
    return "{" + ", ".join(f"{k} = {r.choice(VALUES)}" for k in keys) + "}"


def sweep_text(r: random.Random) -> str:
    lines = []
    if r.random() < 0.9:
        lines.append("[sweep]")
        if r.random() < 0.9:
            lines.append(f'scenario = "{r.choice([ANOMALY, "missing.toml", "/dev/null", "/etc", ANOMALY])}"')
        if r.random() < 0.6:
            lines.append(f"seeds = {r.choice([r.choice(VALUES), _range(r), '{from = 1, count = 3}', '[1, 2]', '{from = 1, count = 100000000}'])}")
        if r.random() < 0.2:
            lines.append(f"name = {r.choice(VALUES)}")
    if r.random() < 0.5:
        lines.append("[set]")
        lines += [f"{r.choice(KEYS)} = {r.choice(VALUES)}" for _ in range(r.randint(0, 3))]
    if r.random() < 0.8:
        lines.append("[parameters]")
        for _ in range(r.randint(0, 3)):
            value = r.choice([r.choice(VALUES), _range(r), "[" + ", ".join(r.choice(VALUES) for _ in range(r.randint(0, 4))) + "]",
                              "{from = 0, to = 100000000, step = 1}", "{from = 1, to = 7, step = 1}"])
            lines.append(f"{r.choice(KEYS)} = {value}")
    if r.random() < 0.3:
        lines.append("[variants.v]")
        for _ in range(r.randint(0, 3)):
            option = r.choice([r.choice(VALUES), f'{{scenario = "{ANOMALY}"}}', '{"cell.retry_limit" = ' + r.choice(VALUES) + "}"])
            lines.append(f"{r.choice(['a', 'b', 'seed', 'run_id'])} = {option}")
    if r.random() < 0.15:
        lines.insert(r.randrange(len(lines) + 1), r.choice(["[[x]]", "garbage", "[sweep", "a.b.c = 1", "\x00", "[parameters]"]))
    text = "\n".join(lines) + "\n"
    if r.random() < 0.1:
        text = text[: r.randrange(len(text) + 1)]
    return text


SET_KEYS = ["cell.retry_limit", "station[0].rate", "station[fast].rate", "station[9].rate", "station[-1].rate", "station[].rate",
            "station[fast.rate", "flow[0].rate", "flow[up].size", "run.duration", "run.seed", "run.warmup", "ap.tc", "ap",
            "station.fast.rate", "cell", "", " ", "a.b.c.d.e", "station[fast].snr", "station[fast].fading", "wired.rate",
            "[run]", "run.duration.x", "station[99999999999999999999].rate", "ü.ß", "cell.retry_limit.0"]


#: Lines a scenario takes, mutated below or kept.
GOOD_SETS = ["cell.retry_limit=4", 'station[fast].rate="2Mbps"', 'run.duration="3s"', "station[slow].snr=12", "run.seed=5",
             "flow[0].size=500", "station[1].rate=5.5Mbps", "cell.retry_limit = 7", 'station[fast].fading={sigma=2, coherence="1s"}']


def set_line(r: random.Random) -> str:
    if r.random() < 0.2:
        line = r.choice(GOOD_SETS)
        if r.random() < 0.5:
            i = r.randrange(len(line) + 1)
            line = line[:i] + r.choice(["", "x", "\"", "[", "]", ".", "=", " ", "\u0000", "9" * 25]) + line[i + r.randint(0, 2):]
        return line
    if r.random() < 0.1:
        return "".join(chr(r.randrange(1, 0x3000)) for _ in range(r.randint(0, 30)))
    value = r.choice(VALUES + ['"tc qdisc add dev wlan0 root pfifo"', "{sigma = 2, coherence = \"1s\"}", '"', "[", "{", "2Mbps",
                               "11Mbps", "bad", "1s", "=", "a = b"])
    sep = r.choice(["=", "=", "=", " = ", "==", ""])
    return f"{r.choice(SET_KEYS)}{sep}{value}"


QDISC_JSON = [
    {"kind": "htb", "handle": "1:", "root": True, "refcnt": 2, "options": {"r2q": 10, "default": "0x10", "direct_packets_stat": 0}},
    {"kind": "fq_codel", "handle": "10:", "parent": "1:10", "options": {"limit": 10240, "flows": 1024, "quantum": 1514,
                                                                        "target": 4999, "interval": 99999, "ecn": True}},
    {"kind": "tbf", "handle": "20:", "parent": "1:20", "options": {"rate": 125000, "burst": 10000, "lat": 50000}},
    {"kind": "pfifo", "handle": "30:", "parent": "1:30", "options": {"limit": 100}},
    {"kind": "ingress", "handle": "ffff:", "parent": "ffff:fff1", "options": {}},
]
CLASS_TEXT = ("class htb 1:1 root rate 10Mbit ceil 10Mbit burst 1600b cburst 1600b\n"
              "class htb 1:10 parent 1:1 leaf 10: prio 0 quantum 12500 rate 5Mbit ceil 10Mbit burst 1600b cburst 1600b\n"
              "class htb 1:20 parent 1:1 leaf 20: prio 1 rate 3Mbit ceil 10Mbit burst 1600b cburst 1600b\n"
              "class htb 1:30 parent 1:1 leaf 30: prio 2 rate 2Mbit ceil 10Mbit burst 1600b cburst 1600b\n")
FILTER_JSON = [
    {"protocol": "ip", "pref": 1, "kind": "u32", "chain": 0},
    {"protocol": "ip", "pref": 1, "kind": "u32", "chain": 0, "options": {"fh": "800::800", "order": 2048, "key_ht": "800",
                                                                          "bkt": "0", "flowid": "1:10",
                                                                          "match": {"value": "a000001", "mask": "ffffffff", "off": 16}}},
    {"protocol": "all", "pref": 2, "kind": "fw", "chain": 0, "options": {"handle": "0x5", "classid": "1:20"}},
]
QDISC_TEXT = ("qdisc htb 1: root refcnt 2 r2q 10 default 0x10 direct_packets_stat 0\n"
              "qdisc tbf 20: parent 1:20 rate 1Mbit burst 10000b lat 50ms\n"
              "qdisc pfifo 30: parent 1:30 limit 100p\n")
FILTER_TEXT = ("filter parent 1: protocol ip pref 1 u32 chain 0\n"
               "filter parent 1: protocol ip pref 1 u32 chain 0 fh 800::800 order 2048 key ht 800 bkt 0 flowid 1:10\n"
               "  match 0a000001/ffffffff at 16\n")
ODD = [None, True, -3, 2**70, 1.5, float("nan"), "", "x", "0x", "-1", "nanbit", "1e999", [], {}, [1], {"a": 1}, "1:", "ffff:"]


def _mutate_json(r: random.Random, template: list) -> str:
    data = json.loads(json.dumps(template))
    for _ in range(r.randint(0, 3)):
        entry = r.choice(data) if data else {}
        target = entry.get("options") if isinstance(entry.get("options"), dict) and r.random() < 0.6 else entry
        if target:
            key = r.choice(list(target))
            if r.random() < 0.2:
                del target[key]
            else:
                target[key] = copy.deepcopy(r.choice(ODD))
    text = json.dumps(data, allow_nan=True)
    if r.random() < 0.1:
        text = json.dumps(r.choice([{"kind": "htb"}, [[1]], ["x"], 3, None, [{"kind": 1, "handle": "1:"}]]))
    return text


def _mutate_text(r: random.Random, text: str) -> str:
    words = text.split(" ")
    for _ in range(r.randint(0, 3)):
        i = r.randrange(len(words))
        words[i] = r.choice(["nanbit", "-3", "1e999", "", "rate", "limit", "qdisc", "class", "0x", "\n", "ü", "1:", "parent"])
    return " ".join(words)


def import_input(r: random.Random) -> tuple[str, str, dict[str, str]]:
    q = _mutate_json(r, QDISC_JSON) if r.random() < 0.6 else _mutate_text(r, QDISC_TEXT)
    c = _mutate_text(r, CLASS_TEXT) if r.random() < 0.8 else _mutate_json(r, [{"class": "htb", "handle": "1:10", "parent": "1:",
                                                                                 "rate": 625000}])
    f = _mutate_json(r, FILTER_JSON) if r.random() < 0.6 else _mutate_text(r, FILTER_TEXT)
    inputs = [q, c, f]
    for i in range(3):
        if r.random() < 0.15:
            inputs[i] = inputs[i][: r.randrange(len(inputs[i]) + 1)]  # truncated
        if r.random() < 0.05:
            inputs[i] = "".join(chr(r.randrange(0, 256)) for _ in range(r.randint(0, 200)))  # binary
    return inputs[0], inputs[1], {"1:": inputs[2]}


# ----- cases, run in a worker -----------------------------------------------------------------------


def _guarded(fn, *args) -> tuple[str, str]:  # noqa: ANN001
    signal.alarm(CASE_SECONDS)
    try:
        return fn(*args)
    except Hang:
        return "bad", f"no answer within {CASE_SECONDS} s"
    except MemoryError:
        return "bad", "out of memory"
    except Exception as exc:  # noqa: BLE001 - anything else is the defect looked for
        return "bad", f"{type(exc).__name__}: {exc}"
    finally:
        signal.alarm(0)


def _sweep_case(text: str) -> tuple[str, str]:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "s.toml"
        path.write_text(text, encoding="utf-8")
        try:
            n = len(sweeps.load_sweep(path).runs())
        except airsched.ScenarioError as exc:
            return ("refused", "") if _one_line_errors(exc.errors) else ("bad", f"error lines {exc.errors!r}")
        return "accepted", str(n)


def _set_case(line: str) -> tuple[str, str]:
    try:
        airsched.validate(ANOMALY, overrides=[line])
    except airsched.ScenarioError as exc:
        return ("refused", "") if _one_line_errors(exc.errors) else ("bad", f"error lines {exc.errors!r}")
    return "accepted", ""


def _import_case(q: str, c: str, f: dict[str, str]) -> tuple[str, str]:
    try:
        importer.import_devices([importer.DeviceInput("eth0", q, c, f)])
    except importer.ImportError_ as exc:
        lines = str(exc).splitlines()
        return ("refused", "") if _one_line_errors(lines) else ("bad", f"error {exc!r}")
    return "accepted", ""


def run_batch(kind: str, cases: list) -> list[tuple[str, str, str]]:
    fn = {"sweep": _sweep_case, "set": _set_case, "import": _import_case}[kind]
    out = []
    for case in cases:
        verdict, detail = _guarded(fn, *(case if isinstance(case, tuple) else (case,)))
        out.append((verdict, detail, repr(case)[:2000]))
    return out


def _fuzz(kind: str, cases: list) -> Counter:
    outcomes: Counter[str] = Counter()
    failures = []
    ctx = mp.get_context("spawn")
    with ctx.Pool(processes=2, initializer=_worker_init) as pool:
        jobs = [pool.apply_async(run_batch, (kind, cases[i:i + CHUNK])) for i in range(0, len(cases), CHUNK)]
        for job in jobs:
            for verdict, detail, case in job.get(timeout=CHUNK * CASE_SECONDS + 60):
                outcomes[verdict] += 1
                if verdict == "bad" and len(failures) < 5:
                    failures.append(f"{detail}\n--- case ---\n{case}")
    print(f"fuzz {kind}: {len(cases)} cases, seed {SEED}: {dict(outcomes)}")
    assert not failures, "\n\n".join(failures)
    return outcomes


def test_sweep_files() -> None:
    r = random.Random(SEED)
    outcomes = _fuzz("sweep", [sweep_text(r) for _ in range(CASES)])
    assert outcomes["accepted"] > CASES // 50 and outcomes["refused"] > CASES // 4, dict(outcomes)


def test_set_lines() -> None:
    r = random.Random(SEED + 1)
    outcomes = _fuzz("set", [set_line(r) for _ in range(CASES)])
    assert outcomes["accepted"] > CASES // 50 and outcomes["refused"] > CASES // 4, dict(outcomes)


def test_import_inputs() -> None:
    r = random.Random(SEED + 2)
    outcomes = _fuzz("import", [import_input(r) for _ in range(CASES)])
    assert outcomes["accepted"] > CASES // 50 and outcomes["refused"] > CASES // 4, dict(outcomes)


# ----- compare: damaged directories (in this process: each case reads a few small files) --------------


@pytest.fixture(scope="module")
def dirs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("compare-fuzz")
    for seed in (1, 2):
        airsched.run(ANOMALY, duration="3s", seed=seed).write(root / f"run{seed}")
    spec = root / "s.toml"
    spec.write_text(f'[sweep]\nscenario = "{ANOMALY}"\nseeds = [1]\n[set]\n"run.duration" = "2s"\n'
                    f'[parameters]\n"cell.retry_limit" = [2, 7]\n', encoding="utf-8")
    airsched.sweep(spec, root / "sweep", jobs=1)
    return {"run1": root / "run1", "run2": root / "run2", "sweep": root / "sweep"}


def _damage(r: random.Random, src: Path, dst: Path) -> None:
    import shutil

    shutil.copytree(src, dst)
    files = [p for p in dst.rglob("*") if p.is_file()]
    for _ in range(r.randint(1, 3)):
        p = r.choice(files)
        if not p.exists():
            continue
        data = p.read_bytes()
        how = r.randrange(6)
        if how == 0:
            p.write_bytes(data[: r.randrange(len(data) + 1)])
        elif how == 1:
            p.unlink()
        elif how == 2:
            p.write_bytes(bytes(r.randrange(256) for _ in range(r.randint(0, 300))))
        elif how == 3 and p.suffix == ".json":
            p.write_text(json.dumps(r.choice([[], {}, None, 3, "x", {"columns": 3}, {"runs": [1], "columns": []},
                                              {"name": "x", "columns": ["seed"], "runs": [{"run_id": 5}]}])))
        elif how == 4:
            p.write_bytes(data.replace(b"name", b"nome"))
        else:
            i = r.randrange(len(data) + 1)
            p.write_bytes(data[:i] + bytes([r.randrange(256)]) + data[i + 1:])


def test_compare_inputs(dirs, tmp_path) -> None:
    r = random.Random(SEED + 3)
    n = max(CASES // 10, 50)  # each case copies and reads whole directories: fewer of them
    outcomes: Counter[str] = Counter()
    for i in range(n):
        base = r.choice(["run1", "sweep"])
        damaged = tmp_path / f"d{i}"
        _damage(r, dirs[base], damaged)
        items = [dirs["run2"], damaged] if base == "run1" else [damaged]
        signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(CASE_SECONDS)
        try:
            inputs = compare.load_inputs(items)
            if len(inputs) >= 2:
                for table in ("stations", "flows"):
                    if all(getattr(x, table) is not None for x in inputs):
                        compare.format_table(compare.compare(inputs, table), table)
            outcomes["accepted"] += 1
        except airsched.ScenarioError as exc:
            assert _one_line_errors(exc.errors), exc.errors
            outcomes["refused"] += 1
        finally:
            signal.alarm(0)
    print(f"fuzz compare: {n} cases, seed {SEED}: {dict(outcomes)}")
    assert outcomes["refused"] > n // 10 and outcomes["accepted"] > 0, dict(outcomes)
