"""spark-submit entry point: see `nbspark.app.cli.train_main` (and --help)."""

import sys

from nbspark.app.cli import train_main

if __name__ == "__main__":
    sys.exit(train_main())
