# SPDX-License-Identifier: Apache-2.0
"""Whatever text a scenario holds, validation answers with ScenarioError or success: never
another exception, never a crash of the native parser."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import airsched

from scenario_texts import CBR

LINES = CBR.splitlines(keepends=True)


def check(text: str) -> None:
    try:
        airsched.validate(text=text)
    except airsched.ScenarioError as exc:
        assert exc.errors, "a ScenarioError must name at least one problem"
        assert all(line.startswith("<string>") for line in exc.errors), exc.errors


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=300))
def test_arbitrary_text(text):
    check(text)


@settings(max_examples=150, deadline=None)
@given(st.integers(0, len(LINES) - 1), st.text(max_size=40))
def test_valid_scenario_with_one_line_replaced(index, line):
    check("".join(LINES[:index]) + line + "\n" + "".join(LINES[index + 1 :]))


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from(["duration", "warmup", "rate", "size", "dst", "src", "name", "seed"]),
    st.one_of(st.text(max_size=20), st.integers(), st.floats(allow_nan=True)),
)
def test_valid_scenario_with_one_value_replaced(key, value):
    lines = [
        f"{key} = {value!r}\n".replace("'", '"') if line.split("=")[0].strip() == key else line
        for line in LINES
    ]
    check("".join(lines))
