# SPDX-License-Identifier: Apache-2.0
# Type stubs of the native module (crates/airsched-py). tests/python/test_native.py checks that
# every name here exists at run time.

from typing import Any, Callable

def version() -> str: ...
def validate(text: str, path: str, overrides: list[str] = ...) -> dict[str, Any]: ...
def toml_string(text: str) -> str: ...
def tc_check(text: str, path: str) -> dict[str, Any]: ...
def schema() -> dict[str, list[tuple[str, str, str, str]]]: ...
def calibrate(
    snr_from_db: float,
    snr_to_db: float,
    step_db: float,
    payload: int,
    block: int,
    rate_control: str,
    duration: str,
    seed: int,
    progress: Callable[[int, int], None] | None = None,
) -> str: ...

class ScenarioError(ValueError):
    errors: list[str]

class SimulationError(RuntimeError): ...

class Simulation:
    def __init__(
        self,
        text: str,
        path: str,
        seed: int | None = None,
        duration: str | None = None,
        overrides: list[str] = ...,
    ) -> None: ...
    @property
    def now_ns(self) -> int: ...
    @property
    def end_ns(self) -> int: ...
    @property
    def events(self) -> int: ...
    def advance(self, until_ns: int) -> None: ...
    def finish(self) -> dict[str, Any]: ...
