"""spark-submit entry point: see `nbspark.app.curve.curve_main` (and --help)."""

import sys

from nbspark.app.curve import curve_main

if __name__ == "__main__":
    sys.exit(curve_main())
