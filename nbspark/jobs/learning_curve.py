"""spark-submit entry point: see `nbspark.app.cli.curve_main` (and --help)."""

import sys

from nbspark.app.cli import curve_main

if __name__ == "__main__":
    sys.exit(curve_main())
