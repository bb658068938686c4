# SPDX-License-Identifier: Apache-2.0
"""``airsched conformance ...``: airsched's tc and queueing against the running Linux kernel."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from ._app import EXIT_BAD_INPUT, EXIT_INVALID

conformance_app = typer.Typer(
    help="Check airsched's tc against the running Linux kernel (root; see docs/kernel-conformance.md).",
    no_args_is_help=True,
)


@conformance_app.command("kernel")
def conformance_kernel_command(
    scripts: Annotated[
        list[Path] | None,
        typer.Argument(metavar="[SCRIPT...]", help="tc scripts (default: the packaged corpus, `airsched examples` lists it)."),
    ] = None,
) -> None:
    """Apply each tc script line by line to veth devices in a new network namespace and compare
    the kernel's verdict per line and its trees with airsched's; print a markdown table. Exit 1
    if any script disagrees."""
    from .. import kernel

    reason = kernel.unavailable()
    if reason:
        print(f"error: cannot run against the kernel: {reason}", file=sys.stderr)
        raise typer.Exit(EXIT_BAD_INPUT)
    from ..packaged import package_dir

    corpus = package_dir("kernel_corpus")
    paths = scripts or (sorted(corpus.glob("*.tc")) if corpus is not None else [])
    if not paths:
        print("error: no scripts given and the package has no kernel_corpus (a wheel built without it?); "
              "pass tc scripts as arguments", file=sys.stderr)
        raise typer.Exit(EXIT_BAD_INPUT)
    results, have = kernel.run_corpus(paths)
    print(f"kernel {os.uname().release}, iproute2 {'.'.join(map(str, kernel.tc_version()))}; kinds: {', '.join(sorted(have))}")
    print()
    print("| script | verdict | lines | trees | note |")
    print("|---|---|---|---|---|")
    bad = 0
    for r in results:
        if r.skipped:
            print(f"| {r.name} | skipped | | | {r.skipped} |")
            continue
        bad += not r.agrees
        note = "; ".join(r.differences()) or ("htb bursts as iproute2 < 6.14 rounds them" if r.old_tc_rounding else "")
        lines = sum(k == a for k, a in r.verdicts.values())
        trees = "same" if r.trees and r.trees_agree else ("differ" if r.trees else "-")
        print(f"| {r.name} | {'agrees' if r.agrees else 'DISAGREES'} | {lines}/{len(r.verdicts)} | {trees} | {note.replace('|', '/')} |")
    ran = sum(1 for r in results if not r.skipped)
    print()
    print(f"{ran - bad} of {ran} scripts agree ({len(results) - ran} skipped: kinds this kernel lacks)")
    if bad:
        raise typer.Exit(EXIT_INVALID)


@conformance_app.command("behaviour")
def conformance_behaviour_command(
    seconds: Annotated[float, typer.Option(help="Seconds per tree (1 s of it warm-up).")] = 5.0,
    scale: Annotated[float, typer.Option(help="Every rate of the trees and flows times this (0.4 in a QEMU guest: "
                                         "its Python sender keeps up with about 1000 packets/s).")] = 1.0,
    case: Annotated[list[str] | None, typer.Option(help="Only the trees whose name contains this (repeatable).")] = None,
) -> None:
    """Shape a veth link between two namespaces with each tree of airsched.behaviour.CASES, send
    UDP flows through it, and print per-flow goodput and one-way delay against airsched's wired
    link with the same tree (markdown)."""
    from .. import behaviour, kernel

    reason = kernel.unavailable()
    if reason:
        print(f"error: cannot run against the kernel: {reason}", file=sys.stderr)
        raise typer.Exit(EXIT_BAD_INPUT)
    if seconds < 2:
        print("error: --seconds: at least 2 (1 s is warm-up)", file=sys.stderr)
        raise typer.Exit(EXIT_BAD_INPUT)
    with kernel.Netns() as ns:
        have = ns.kinds()
    if not 0 < scale <= 1:
        print("error: --scale: above 0 and at most 1", file=sys.stderr)
        raise typer.Exit(EXIT_BAD_INPUT)
    wanted = tuple(c for c in behaviour.CASES if not case or any(w in c.name for w in case))
    cases = tuple(behaviour.scaled(c, scale) for c in wanted if kernel.kinds_used(c.tc) <= have)
    for c in wanted:
        if not kernel.kinds_used(c.tc) <= have:
            print(f"skipped: {c.name} (kinds this kernel lacks: {', '.join(sorted(kernel.kinds_used(c.tc) - have))})")
    print(behaviour.table(behaviour.compare(cases, seconds=seconds)))
