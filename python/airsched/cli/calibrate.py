# SPDX-License-Identifier: Apache-2.0
"""``airsched calibrate``: the channel monitor's calibration table."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from ._app import EXIT_BAD_INPUT, EXIT_INVALID, _reported_errors
from ._options import DURATION_FORMS, _duration
from ._progress import _progress_bar


def calibrate_command(
    out: Annotated[Path, typer.Option("--out", "-o", help="Write the calibration table (TOML) here.")],
    snr_from: Annotated[float, typer.Option(help="Lowest SNR in dB.")] = -8.0,
    snr_to: Annotated[float, typer.Option(help="Highest SNR in dB.")] = 20.0,
    step: Annotated[float, typer.Option(help="SNR step in dB.")] = 0.5,
    payload: Annotated[int, typer.Option(help="UDP payload bytes per packet (the paper: 1024).")] = 1024,
    block: Annotated[int, typer.Option(help="Packets per measurement block, n (the paper: 100).")] = 100,
    rate_control: Annotated[str, typer.Option(help="Rate control of the link: fixed, arf, aarf, minstrel.")] = "arf",
    duration: Annotated[
        str, typer.Option(help=f"Simulated time per SNR point, 1 s warm-up included: {DURATION_FORMS}.")
    ] = "11s",
    seed: Annotated[int, typer.Option(help="Seed of every point's run.")] = 1,
) -> None:
    """Calibrate the AP's Wireless Channel Monitor as Garroppo et al. do (section 4.2): a
    saturated UDP flow over a link at each SNR, goodput n L / tau over blocks of n packets.
    The table is what `[monitor] calibration = "FILE"` reads."""
    from .. import _core
    from .._errors import native_errors

    with _reported_errors(EXIT_BAD_INPUT), native_errors(), _progress_bar(enabled=True) as progress:
        def report(done: int, total: int) -> None:
            if progress is not None:
                progress(done / total)

        text = _core.calibrate(snr_from, snr_to, step, payload, block, rate_control, _duration(duration), seed, report)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        print(f"error: {exc.filename or out}: cannot write the table: {exc.strerror or exc}", file=sys.stderr)
        raise typer.Exit(EXIT_INVALID) from None
    points = text.count("[[point]]")
    print(f"wrote {out} ({points} SNR points)")
