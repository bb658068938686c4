# SPDX-License-Identifier: Apache-2.0
"""Reproductions of published experiments, run from the scenario files in ``scenarios/``.

* :mod:`airsched.repro.garroppo`: Garroppo et al., "The Wireless Hierarchical Token Bucket",
  Tables 1 and 2 and Figures 6 to 9 (``airsched repro garroppo``, ``airsched repro garroppo-walk``).
"""
