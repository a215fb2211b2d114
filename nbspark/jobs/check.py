"""spark-submit entry point: see `nbspark.app.cli.check_main` (and --help)."""

import sys

from nbspark.app.cli import check_main

if __name__ == "__main__":
    sys.exit(check_main())
