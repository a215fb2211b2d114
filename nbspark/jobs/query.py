"""spark-submit entry point: see `nbspark.app.cli.query_main` (and --help)."""

import sys

from nbspark.app.cli import query_main

if __name__ == "__main__":
    sys.exit(query_main())
