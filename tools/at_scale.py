#!/usr/bin/env python3
"""``python -m twostep at-scale`` from a checkout: the same program, with the same arguments.

    .venv/bin/python tools/at_scale.py --backend numpy --widths 40 --seeds spike=40:1 --force

The commands that wrote ``results/at_scale/`` and everything the program does are in
:mod:`twostep.scale.at_scale` (``python -m twostep at-scale --help``). The names of that
module (``EXPERIMENTS``, ``measure``, ...) are importable from here, as the benchmarks do.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from twostep.scale.at_scale import *  # noqa: E402,F401,F403  (its names, for the benchmarks)
from twostep.scale.at_scale import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(prog="python tools/at_scale.py"))
