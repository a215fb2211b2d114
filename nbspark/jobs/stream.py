"""spark-submit entry point: see `nbspark.app.stream.stream_main` (and --help)."""

import sys

from nbspark.app.stream import stream_main

if __name__ == "__main__":
    sys.exit(stream_main())
