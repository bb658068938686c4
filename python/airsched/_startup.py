# SPDX-License-Identifier: Apache-2.0
"""Ctrl-C while the command line is still importing its modules (the first few tenths of a
second): exit 130 with one line instead of a KeyboardInterrupt traceback from an import.

Installed when this module is imported (first thing in the package's ``__init__``) and the process is the ``airsched`` command (the console
script, or ``python -m airsched``); :func:`ready` (called by ``airsched.cli.main``) hands SIGINT
back to Python's handler, under which the commands turn Ctrl-C into their own messages. A
library import (``import airsched`` in a program) leaves SIGINT alone.
"""

from __future__ import annotations

import os
import signal
import sys


def _is_command() -> bool:
    argv0 = os.path.basename(sys.argv[0]) if sys.argv else ""
    if argv0 in ("airsched", "airsched.exe"):
        return True
    orig = getattr(sys, "orig_argv", [])
    return "-m" in orig and orig[orig.index("-m") + 1:orig.index("-m") + 2] == ["airsched"]


def _interrupted(signum: int, frame: object) -> None:
    os.write(2, b"interrupted\n")
    os._exit(130)


def quiet_start() -> None:
    """When this process is the ``airsched`` command: Ctrl-C exits at once, quietly, until
    :func:`ready`."""
    if _is_command() and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _interrupted)


def ready() -> None:
    """The command's modules are imported: Ctrl-C is a KeyboardInterrupt again."""
    if signal.getsignal(signal.SIGINT) is _interrupted:
        signal.signal(signal.SIGINT, signal.default_int_handler)


quiet_start()
