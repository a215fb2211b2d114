"""spark-submit entry point: see `nbspark.cli.classify_main` (and --help)."""

import sys

from nbspark.cli import classify_main

if __name__ == "__main__":
    sys.exit(classify_main())
