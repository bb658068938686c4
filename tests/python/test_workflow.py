# SPDX-License-Identifier: Apache-2.0
"""Issue 29: the workflow around the core (repro all, compare, sweeps, import) on a user's odd
input. Each test fails on the code before the issue's fix of its item."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from airsched import cli

ROOT = Path(__file__).resolve().parents[2]
ANOMALY = ROOT / "scenarios" / "anomaly.toml"
DOWNLINK = ROOT / "scenarios" / "anomaly-downlink.toml"
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "python")}


def _airsched(*args: str, cwd: Path | None = None, columns: int | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    env = dict(ENV)
    if columns is not None:
        env["COLUMNS"] = str(columns)
    return subprocess.run([sys.executable, "-m", "airsched", *args], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=timeout)


def test_repro_all_takes_a_bare_number_of_seconds(monkeypatch, tmp_path):
    """Item 2: `repro all --duration 5` is 5 s, as every --duration is documented."""
    from airsched.repro import all as repro_all

    seen = {}

    def fake_run_all(out, duration=None, **kw):
        seen["duration"] = duration
        return Path(out) / "report.html"

    monkeypatch.setattr(repro_all, "run_all", fake_run_all)
    result = CliRunner().invoke(cli.app, ["repro", "all", "--out", str(tmp_path), "--duration", "5"])
    assert result.exit_code == 0, result.output
    assert seen["duration"] == "5s"


def test_compare_takes_a_bare_duration_and_never_cuts_its_tables(tmp_path):
    """Items 2 and 3: compare --duration 2 is 2 s; piped (or on a narrow terminal) the headers
    and cells are whole: no ellipsis, no column squeezed to nothing."""
    third = tmp_path / "a-scenario-with-a-rather-long-file-name.toml"
    third.write_text(ANOMALY.read_text(encoding="utf-8"), encoding="utf-8")
    proc = _airsched("compare", str(ANOMALY), str(DOWNLINK), str(third), "--duration", "2", columns=40)
    assert proc.returncode == 0, proc.stderr
    assert "…" not in proc.stdout
    for label in ("anomaly-downlink", "Δ a-scenario-with-a-rather-long-file-name", "goodput_mbps", "queue_delay_mean_ms"):
        assert label in proc.stdout, label


def test_compare_output_with_a_suffix_it_cannot_draw_is_one_line_before_running(tmp_path):
    """Item 4: `compare ... -o compare.txt` was a ValueError traceback after the tables."""
    proc = _airsched("compare", str(ANOMALY), str(DOWNLINK), "--duration", "2", "-o", str(tmp_path / "compare.txt"))
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    (line,) = proc.stderr.splitlines()
    assert line.startswith("error: --output: ") and ".png" in line and "compare.txt" in line


def _render(table) -> str:
    import io

    from rich.console import Console

    console = Console(width=400, file=io.StringIO(), color_system=None)
    console.print(table)
    return console.file.getvalue()


def test_sweep_statistics_and_compare_keep_the_station_names_of_parameters():
    """Item 5: rich read "station[ms1].rate" as markup, so two parameters printed as
    "station.rate" twice; a sweep's compare labels lost their station the same way."""
    import pandas as pd

    from airsched import compare, stats

    by = ["station[ms1].rate", "station[ms2].rate", "name"]
    df = pd.DataFrame(
        [{"station[ms1].rate": r1, "station[ms2].rate": r2, "name": "ms1", "seed": s, "goodput_mbps": 1.0 + s}
         for r1 in ("1Mbps", "11Mbps") for r2 in ("2Mbps",) for s in (1, 2)]
    )
    text = _render(stats.stats_table(stats.summarize(df, by, ["goodput_mbps"]), by, "[bold]s"))
    assert "station[ms1].rate" in text and "station[ms2].rate" in text and "[bold]s" in text
    rows = [{"name": "ms1", "goodput_mbps": 1.0}]
    inputs = [compare.Input(f"station[ms2].position={p}", pd.DataFrame(rows), None) for p in ("good", "bad")]
    text = _render(compare.format_table(compare.compare(inputs, "stations", ["goodput_mbps"]), "stations"))
    assert "station[ms2].position=good" in text and "Δ station[ms2].position=bad" in text


@pytest.mark.parametrize(
    ("body", "key", "words"),
    [
        ('seeds = {from = 1, count = 100000000000}\n[parameters]\n"cell.retry_limit" = [4]\n', "sweep.seeds", "at most 10000 seeds"),
        ('seeds = [1]\n[parameters]\n"cell.retry_limit" = {from = nan, to = 5, step = 1}\n', "cell.retry_limit", "finite"),
        ('seeds = [1]\n[parameters]\n"cell.retry_limit" = {from = 1, to = inf, step = 1}\n', "cell.retry_limit", "finite"),
        ('seeds = [1]\n[parameters]\n"cell.retry_limit" = {from = 1, to = 1e308, count = 3}\n', None, None),
        ('seeds = [1]\n[parameters]\n"cell.retry_limit" = {from = 0, to = 10000000, step = 1}\n', "cell.retry_limit", "at most 10000 values"),
        ('seeds = [1]\n[parameters]\n"cell.retry_limit" = {from = -1e308, to = 1e308, step = 1e300}\n', "cell.retry_limit", "at most 10000 values"),
        ('seeds = {from = 1, count = 1000}\n[parameters]\n"cell.retry_limit" = {from = 1, to = 200, step = 1}\n', "cell.retry_limit", "at most 100000"),
        ('seeds = [1]\n[parameters]\n"cell.retry_limit" = [4, 7, 4]\n', "cell.retry_limit", "listed twice"),
        ('seeds = [1]\n[set]\n"run.duration" = 1979-05-27\n', "run.duration", "cannot write a date"),
    ],
)
def test_sweep_files_are_bounded_with_one_line_errors_at_their_line(tmp_path, body, key, words):
    """Item 6 (and "duplicate grid points" of the next in line): nan, inf, huge ranges and seed
    counts, repeated grid points and values a scenario cannot hold are one error line at the
    sweep file's line, at once (no traceback, no hang, no unbounded memory)."""
    import time

    from airsched import ScenarioError, sweeps

    path = tmp_path / "s.toml"
    path.write_text(f'[sweep]\nscenario = "{ANOMALY}"\n{body}', encoding="utf-8")
    start = time.monotonic()
    with pytest.raises(ScenarioError) as exc:
        sweeps.load_sweep(path).runs()
    assert time.monotonic() - start < 20
    if key is None:  # the core's own bound on each value, at the parameter's line
        assert all(line.startswith(f"{path}:5:1: ") and "\n" not in line and "inf" not in line for line in exc.value.errors)
        return
    (line,) = exc.value.errors
    lines = path.read_text(encoding="utf-8").splitlines()
    n = next(i for i, text in enumerate(lines, 1) if text.startswith((f'"{key}"', key.split(".")[-1])))
    assert line.startswith(f"{path}:{n}:1: {key}: "), line
    assert words in line, line


def test_seeds_option_is_bounded():
    from airsched import sweeps

    with pytest.raises(ValueError, match="at most 10000 seeds"):
        sweeps.parse_seeds("1-100000000000")
    assert sweeps.parse_seeds("3-5,9") == [3, 4, 5, 9]


@pytest.mark.parametrize(
    ("files", "words"),
    [
        ({"eth0.qdisc.json": "this is not json"}, "neither tc -j JSON nor tc qdisc show text"),
        ({"eth0.qdisc.json": '{"kind": "htb"}'}, "expected a JSON array"),
        ({"eth0.qdisc.json": '[{"kind": "htb", "handle": 1}]'}, 'entry 0: "handle" is a JSON number'),
        ({"eth0.qdisc.json": '[["htb"]]'}, "entry 0: expected a JSON object"),
        ({"eth0.qdisc.json": b"\x7fELF\x02\x01\x01\x00\x00\xff\xfe"}, "not UTF-8 text"),
        ({"eth0.qdisc.json": b"[\x00]"}, "a NUL byte"),
        ({"eth0.qdisc.json": ""}, "empty"),
        ({}, "eth0.qdisc.json: no such file"),
        ({"eth0.qdisc.json": "qdisc tbf 1: root refcnt 2 rate nanbit burst 10Kb lat 50ms"}, "is not a rate"),
        ({"eth0.qdisc.json": '[{"kind": "pfifo", "handle": "1:", "root": true, "options": {"limit": -3}}]'}, "sizes must be positive"),
        ({"eth0.qdisc.json": '[{"kind": "tbf", "handle": "1:", "root": true, "options": {"rate": "x"}}]'}, "not tc's output"),
        ({"eth0.qdisc.json": '[{"kind": "htb", "handle": "1:", "root": true, "options": {}}]',
          "eth0.filter.1_.json": "[{]"}, "not valid JSON"),
        ({"eth0.qdisc.json": '[{"kind": "htb", "handle": "1:", "root": true, "options": {}}]',
          "eth0.class.txt": "\x01\x02 binary junk"}, "neither tc -j JSON nor tc class show text"),
    ],
)
def test_import_from_a_directory_checks_its_input(tmp_path, files, words):
    """Item 9: invalid JSON exited 0 with no output; JSON of the wrong shape and binary files
    gave tracebacks; `rate nanbit` and `limit -3` went into the tc text. Each is now one error
    line (exit 2) naming the file or device."""
    for name, content in files.items():
        data = content if isinstance(content, bytes) else content.encode("utf-8")
        (tmp_path / name).write_bytes(data)
    proc = _airsched("import", "eth0", "--from", str(tmp_path), timeout=60)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert lines and all(line.startswith("error: ") for line in lines), proc.stderr
    assert words in proc.stderr, proc.stderr


def test_import_from_a_directory_still_imports_tc_output(tmp_path):
    (tmp_path / "eth0.qdisc.json").write_text(
        '[{"kind": "tbf", "handle": "1:", "root": true, "options": {"rate": 125000, "burst": 10000, "lat": 50000}}]')
    proc = _airsched("import", "eth0", "--from", str(tmp_path), timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "tc qdisc add dev eth0 root handle 1: tbf rate 1000000bit burst 10000 latency 50000us\n"


def test_validate_refuses_a_bluetooth_client_with_the_servers_address(tmp_path):
    """Item 8: docs/limits.md says one node per IPv4 address; a Bluetooth client holding the
    server's was accepted."""
    text = ANOMALY.read_text(encoding="utf-8") + '\n[[bluetooth]]\nname = "bt1"\nip = "10.0.0.1"\n'
    path = tmp_path / "clash.toml"
    path.write_text(text, encoding="utf-8")
    line = len(text.splitlines())
    proc = _airsched("validate", str(path))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stderr.startswith(f"error: {path}:{line}:6: bluetooth[0].ip: 10.0.0.1 is also the address of the server")


def _children(pid: int) -> set[int]:
    kids: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            kids |= {int(k) for k in (task / "children").read_text().split()}
        except OSError:
            pass
    return kids


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text().replace("\0", " ")
    except OSError:
        return ""


def _alive(pid: int) -> bool:
    """Running (a zombie no one reaped has exited)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux /proc")
def test_sweep_pool_workers_exit_when_the_sweep_is_killed(tmp_path):
    """Item 10: a SIGKILLed sweep left its pool workers waiting for tasks forever."""
    import time

    spec = tmp_path / "s.toml"
    spec.write_text(f'[sweep]\nscenario = "{ANOMALY}"\nseeds = {{from = 1, count = 6}}\n[set]\n"run.duration" = "100000s"\n',
                    encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "airsched", "sweep", str(spec), "-o", str(tmp_path / "out"), "-j", "2"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    try:
        deadline = time.monotonic() + 60
        workers: set[int] = set()
        while time.monotonic() < deadline and len(workers) < 2:
            assert proc.poll() is None
            # The pool's workers: the sweep's python children (not the resource tracker).
            workers = {k for k in _children(proc.pid) if "spawn_main" in _cmdline(k)}
            time.sleep(0.05)
        assert len(workers) == 2, "the pool did not start"
        time.sleep(1.0)  # the workers are simulating
        assert all(_alive(w) for w in workers)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_alive(w) for w in workers):
        time.sleep(0.1)
    left = [w for w in workers if _alive(w)]
    for w in left:
        os.kill(w, signal.SIGKILL)
    assert not left, "pool workers outlived the sweep"


def test_an_interrupted_sweep_says_what_it_kept(tmp_path):
    """Next in line: a sweep interrupted by Ctrl-C said nothing."""
    import time

    spec = tmp_path / "s.toml"
    spec.write_text(f'[sweep]\nscenario = "{ANOMALY}"\nseeds = {{from = 1, count = 40}}\n[set]\n"run.duration" = "20s"\n',
                    encoding="utf-8")
    out = tmp_path / "out"
    # A shell's background jobs ignore SIGINT; the child gets the default, as at a terminal.
    proc = subprocess.Popen([sys.executable, "-m", "airsched", "sweep", str(spec), "-o", str(out), "-j", "1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(list((out / "runs").glob("*.parquet"))) < 2:
        assert proc.poll() is None
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    line = err.strip().splitlines()[-1]
    done = len(list((out / "runs").glob("*.parquet")))
    assert line == f"interrupted: {done} of 40 runs are in {out / 'runs'}; the same command resumes the sweep where it stopped"


def test_validate_does_not_read_an_endless_file():
    """Next in line: `validate /dev/zero` read without limit."""
    proc = _airsched("validate", "/dev/zero", timeout=60)
    assert proc.returncode == 2
    assert proc.stderr == "error: /dev/zero: larger than 16 MiB: not a scenario, sweep or tc file\n"


def test_tc_check_of_an_empty_file_says_so(tmp_path):
    """Next in line: `tc check` of an empty file printed nothing."""
    path = tmp_path / "empty.tc"
    path.write_text("# nothing yet\n\n", encoding="utf-8")
    proc = _airsched("tc", "check", str(path), timeout=60)
    assert proc.returncode == 0 and proc.stdout == f"{path}: no tc commands: every device keeps its default qdisc\n"


def test_flent_of_a_cell_without_tcp_download_warns(tmp_path):
    """Next in line: --flent on a UDP-only cell wrote an empty "TCP download" series silently."""
    proc = _airsched("run", str(ANOMALY), "--duration", "2", "--flent", str(tmp_path / "a.flent.gz"))
    assert proc.returncode == 0, proc.stderr
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("warning: --flent")]
    assert len(warnings) == 2 and '"TCP download" series is empty' in warnings[0] and "no ping flow" in warnings[1]
    import airsched
    from airsched.flent import flent_warnings

    assert flent_warnings(airsched.run(ROOT / "scenarios" / "tcp-bufferbloat.toml", duration="3s")) == []


def test_ctrl_c_while_the_command_imports_is_one_line():
    """Next in line: SIGINT in the first tenths of a second printed a KeyboardInterrupt
    traceback from an import. The command's process (argv[0] "airsched") gets Ctrl-C as "exit
    130, one line" until its modules are imported; a program importing airsched keeps Python's
    handler."""
    code = ("import os, signal, sys; sys.argv[0] = '/usr/bin/airsched'; import airsched; "
            "os.kill(os.getpid(), signal.SIGINT); import time; time.sleep(5); print('not interrupted')")
    # A shell's background job (`cmd &` without job control) starts with SIGINT ignored, which
    # the children would inherit and keep: each starts with the default disposition, as a
    # terminal's command does.
    dfl = {"preexec_fn": lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV, timeout=60, **dfl)
    assert (proc.returncode, proc.stdout, proc.stderr) == (130, "", "interrupted\n")
    code = "import signal, airsched; assert signal.getsignal(signal.SIGINT) is signal.default_int_handler"
    assert subprocess.run([sys.executable, "-c", code], env=ENV, timeout=60, **dfl).returncode == 0
    # Once main() runs, Ctrl-C is the commands' own (`run` says what it kept): ready() hands it back.
    code = ("import signal, sys; sys.argv[0] = 'airsched'; import airsched; from airsched import _startup; "
            "assert signal.getsignal(signal.SIGINT) is not signal.default_int_handler; _startup.ready(); "
            "assert signal.getsignal(signal.SIGINT) is signal.default_int_handler")
    assert subprocess.run([sys.executable, "-c", code], env=ENV, timeout=60, **dfl).returncode == 0


def test_json_times_carry_no_float_noise(tmp_path):
    """Next in line: `--json` printed sim_seconds as 30.000000000000004; times in seconds are
    counted in integer nanoseconds, and print to the nanosecond (summary.json alike)."""
    import json

    proc = _airsched("run", str(ANOMALY), "--json", "--out", str(tmp_path / "o"))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["sim_seconds"] == 30.0 and doc["measured_seconds"] == 29.0
    assert all(repr(s["airtime_s"]) == repr(round(s["airtime_s"], 9)) for s in doc["stations"])
    assert '"sim_seconds": 30.0,' in proc.stdout
    assert json.loads((tmp_path / "o" / "summary.json").read_text()) == doc


def test_sweep_statistics_are_never_cut_when_piped(tmp_path):
    """Item 3's sibling: the sweep's statistics table, piped or narrow, keeps its title and
    headers whole (it was printed at the terminal's width, 80 columns when piped)."""
    spec = tmp_path / "s.toml"
    spec.write_text(f'[sweep]\nscenario = "{ANOMALY}"\nseeds = [1, 2]\n[set]\n"run.duration" = "2s"\n'
                    f'[parameters]\n"station[slow].rate" = ["1Mbps", "2Mbps"]\n', encoding="utf-8")
    proc = _airsched("sweep", str(spec), "-o", str(tmp_path / "out"), "-j", "1", columns=40, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "…" not in proc.stdout
    assert "s: stations (mean ± 95% Student-t CI over seeds)" in proc.stdout.splitlines()[0]
    assert "station[slow].rate" in proc.stdout and "goodput_mbps" in proc.stdout
