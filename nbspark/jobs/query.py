"""spark-submit entry point: see `nbspark.cli.query_main` (and --help)."""

import sys

from nbspark.cli import query_main

if __name__ == "__main__":
    sys.exit(query_main())
