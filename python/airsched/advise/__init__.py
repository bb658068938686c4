# SPDX-License-Identifier: Apache-2.0
"""``airsched advise``: from a cell (a scenario, or one imported from a live AP with ``airsched
import --cell``) and the user's objectives to a recommended, exported configuration.

* :mod:`.objectives`: objectives, constraints, the traffic mix, and the metrics of a run;
* :mod:`.catalogue`: the configurations to choose among (axes of ``--set`` bundles);
* :mod:`.search`: Optuna's sampler over the catalogue, runs through the sweep engine and its cache;
* :mod:`.answer`: the Pareto front, the recommendation and why, per-station comparison with the
  AP's current configuration, the export of the winner and the HTML report.

See docs/advise.md.
"""

from __future__ import annotations

from .objectives import Problem, load_problem
from .search import Advice, grid, prepare, search

__all__ = ["Advice", "Problem", "grid", "load_problem", "prepare", "search"]
