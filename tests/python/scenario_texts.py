# SPDX-License-Identifier: Apache-2.0
"""The scenario texts of tests/python/data, and a helper to derive broken variants of them."""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).parent / "data"

CBR = (DATA / "cbr.toml").read_text(encoding="utf-8")
DOWNLINK2 = (DATA / "downlink2.toml").read_text(encoding="utf-8")


def mutate(text: str, old: str, new: str) -> str:
    """Replace the one occurrence of `old` in a scenario text (an error if it is not there once)."""
    assert text.count(old) == 1, f"{old!r} occurs {text.count(old)} times"
    return text.replace(old, new)
