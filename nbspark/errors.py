"""The one exception tree of nbspark. The command line catches ``NbsparkError`` as one, prints
its message as a single line on stderr and exits non-zero (2 for a config, 1 for the rest).

```
NbsparkError
├── ConfigError     a setting that is missing, mistyped or cannot apply (also a ValueError)
├── InputError      bad or missing input data
│   └── EmptyTable  a table whose every file is empty: no header, no rows
├── OutputError     an output or model directory that cannot be used
└── StorageError    a file system that cannot be reached: a scheme without its connector, a failed call
```

Every message is one line meant for the user: what is wrong, where, and what to do.
"""

from __future__ import annotations

__all__ = ["ConfigError", "EmptyTable", "InputError", "NbsparkError", "OutputError", "StorageError"]


class NbsparkError(Exception):
    """Base of every error nbspark raises on purpose; the message is one line for the user."""


class ConfigError(NbsparkError, ValueError):
    """A setting that is missing, of the wrong type, out of range, or that cannot apply to this run."""


class InputError(NbsparkError):
    """Bad or missing input; the message names the file (and line) where it can."""


class EmptyTable(InputError):
    """A table input whose every file is empty (no header line, no row): refused by a train, and a
    batch of nothing to a stream (``inputs.tables.headed``)."""


class OutputError(NbsparkError):
    """An output or model directory that cannot be used; the message says why."""


class StorageError(NbsparkError):
    """A path whose file system cannot be reached: no connector for its scheme, or a call that failed."""
