"""Deadlines of the server's requests, kept by one task of the event loop (``Deadlines``).

A timer a deadline (``asyncio.timeout``, ``loop.call_later``) cost 4 µs a request with uvloop, 3 %
of a 1 KB check; a task that wakes every ``tick`` seconds and looks at every deadline costs a dict
entry a request, and meets each deadline to within ``tick``. The body's deadline (``serve.app``)
and the next request head's (``serve.server``) are both kept so.
"""

from __future__ import annotations

import asyncio
import time

__all__ = ["Deadlines"]


class Deadlines:
    """Deadlines ``seconds`` from when each is started, kept by one task of the running event loop
    (made at the first ``start``) that wakes every ``tick`` (a tenth of ``seconds``, at most a
    second) and calls, once, the ``late`` of each deadline past and not stopped."""

    def __init__(self, seconds: float):
        self.seconds, self.tick = seconds, min(1.0, seconds / 10)
        self.due: dict = {}  # key -> (when, late)
        self.keeper: asyncio.Task | None = None

    def start(self, key, late) -> None:
        """``late()`` is called if ``key`` is neither stopped nor started again within ``seconds``."""
        if self.keeper is None:
            self.keeper = asyncio.get_running_loop().create_task(self._keep())
        self.due[key] = (time.monotonic() + self.seconds, late)

    def stop(self, key) -> None:
        self.due.pop(key, None)

    def pending(self, key) -> bool:
        """Whether ``key``'s deadline is started and has not passed (nor been stopped)."""
        return key in self.due

    async def _keep(self) -> None:
        while True:
            await asyncio.sleep(self.tick)
            now = time.monotonic()
            for key, entry in list(self.due.items()):
                if entry[0] <= now and self.due.get(key) is entry:  # a late() may stop or start others
                    del self.due[key]
                    entry[1]()
