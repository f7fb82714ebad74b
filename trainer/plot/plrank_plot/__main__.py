"""python3 -m plrank_plot ...: the plrank-plot command (see cli.py)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
