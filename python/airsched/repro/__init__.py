# SPDX-License-Identifier: Apache-2.0
"""Reproductions of published experiments, run from the scenario files in ``scenarios/``.

* :mod:`airsched.repro.garroppo`: Garroppo et al., "The Wireless Hierarchical Token Bucket",
  Tables 1 and 2 and Figures 6 to 9 (``airsched repro garroppo``, ``airsched repro garroppo-walk``).
* :mod:`airsched.repro.hoiland`: Høiland-Jørgensen's testbed of two fast, one slow and one
  ping-only station under FIFO, FQ-CoDel, FQ-MAC and the airtime scheduler, from the blog post on
  the performance anomaly and "Bufferbloat mitigation in the WiFi stack - status and next steps"
  (``airsched repro hoiland``).
"""
