"""``python -m nbspark``: the ``nbspark`` command (``app.command``)."""

import sys

from nbspark.app.command import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
