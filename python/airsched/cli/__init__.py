# SPDX-License-Identifier: Apache-2.0
"""The ``airsched`` command line (``airsched = "airsched.cli:main"``; ``python -m airsched``).

A package as pip's ``commands``: ``_app`` holds the typer app, its exit codes (0/1/2/3/130) and
the error handling; one module per group of commands defines them; :data:`COMMANDS` and
:data:`GROUPS` below register them on the app, in the order ``airsched --help`` lists them.
Shared options are in ``_options``, the progress bars in ``_progress``, the rich tables in
``_tables``. Command modules import pandas, matplotlib and the like only when they run.
"""

from __future__ import annotations

import os

# The command line does no linear algebra: numpy, when a command imports it (plots, reports,
# Parquet), must not start a pool of OpenBLAS/OpenMP threads that spin beside the simulation
# on a small machine. A value the user set wins.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

from . import advise, calibrate, compare, emulate, examples, export, kernel, repro, results, run, sweep, tc  # noqa: E402
from ._app import app, main  # noqa: E402

#: The commands, in the order of ``airsched --help`` (which lists them before the groups).
COMMANDS = (
    ("run", run.run_command),
    ("export", export.export_command),
    ("import", export.import_command),
    ("calibrate", calibrate.calibrate_command),
    ("plot", results.plot_command),
    ("sweep", sweep.sweep_command),
    ("report", results.report_command),
    ("compare", compare.compare_command),
    ("advise", advise.advise_command),
    ("validate", run.validate_command),
    ("examples", examples.examples_command),
    ("emulate", emulate.emulate_command),
)

#: The groups of subcommands (``airsched tc check``...), each a typer app of its module.
GROUPS = (
    ("tc", tc.tc_app),
    ("conformance", kernel.conformance_app),
    ("repro", repro.repro_app),
)

for _name, _command in COMMANDS:
    app.command(_name)(_command)
for _name, _group in GROUPS:
    app.add_typer(_group, name=_name)
del _name, _command, _group, _var

__all__ = ["COMMANDS", "GROUPS", "app", "main"]
