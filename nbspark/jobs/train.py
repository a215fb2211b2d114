"""spark-submit entry point: see `nbspark.cli.train_main` (and --help)."""

import sys

from nbspark.cli import train_main

if __name__ == "__main__":
    sys.exit(train_main())
