"""spark-submit entry point: see `nbspark.app.cli.classify_main` (and --help)."""

import sys

from nbspark.app.cli import classify_main

if __name__ == "__main__":
    sys.exit(classify_main())
