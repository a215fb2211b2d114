"""One task keeps every deadline: a late one is called once, a stopped or restarted one is not."""

import asyncio

from nbspark.serve.deadlines import Deadlines


def test_a_deadline_past_is_called_once_and_a_stopped_or_restarted_one_not_yet():
    async def keep():
        deadlines, called = Deadlines(1.0), []  # ticks every 0.1 s
        deadlines.start("late", lambda: called.append("late"))
        deadlines.start("stopped", lambda: called.append("stopped"))
        deadlines.start("again", lambda: called.append("again"))
        deadlines.stop("stopped")
        await asyncio.sleep(0.5)
        deadlines.start("again", lambda: called.append("again"))  # due 1 s from now
        assert called == [] and deadlines.pending("late")
        await asyncio.sleep(0.8)
        assert called == ["late"] and not deadlines.pending("late") and deadlines.pending("again")
        await asyncio.sleep(0.5)
        assert called == ["late", "again"] and deadlines.due == {}
        deadlines.keeper.cancel()

    asyncio.run(keep())
