"""python3 -m plrank_client ...: the command-line client (see cli.py)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
