"""``python -m twostep``: see :mod:`twostep.scale.cli`."""

import sys

from .scale.cli import main

if __name__ == "__main__":
    sys.exit(main())
