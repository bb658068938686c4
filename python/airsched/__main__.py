# SPDX-License-Identifier: Apache-2.0
"""``python -m airsched``: the same command line as ``airsched``."""

from .cli import main

main()
