"""One match on a Dask cluster: ``referee match --cluster ADDRESS``.

The coordinator (the ``referee match`` process) keeps the match: the deal stream's plan, the
ledger that takes every board in board order, the SPRT, the log and the result
(:mod:`referee.matches.match`).  A worker plays whole segments, one game in one seating from its
start to its end by processes of its own (:func:`segment_task`), exactly as a lane here would,
and sends back the segment's log lines and what its chunks tell the result; the coordinator
holds them until the log takes them.  So the log and the result are the ones ``-j 1`` gives for
the same seed and bots, whichever worker played what and in which order.

**Exactly once.**  A segment's chunks reach the match only through its future, which resolves
once.  When a worker dies in the middle of a segment, the scheduler plays the segment again on
another worker, from its start, with fresh processes (the dead worker's bots die with it: they
are spawned to be killed with the thread that started them); nothing of the first attempt was
taken, so no deal is counted twice and the bots are charged nothing for it.  A segment whose
workers died :data:`~referee.base.cluster.ALLOWED_FAILURES` times stops the match with one line, as
a bot that cannot start does: the machine's doing, never the bot's.

**Stopping.**  When the match ends early (the SPRT decided, Ctrl-C, a failure), its segments
still playing are cancelled and told to stop through a Dask ``Event`` named for the match: a
worker checks it every :data:`STOP_POLL` seconds and ends its segment's bots.

Bot commands and working directories are resolved on the workers, so they must exist at the same
paths there (as for leagues on a cluster); the bots' stderr files come back with the segment and
are written beside the log here.
"""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import trio

from referee.base.cluster import ALLOWED_FAILURES, Address, ClusterUnavailable, connect, workers
from referee.matches.lanes import SegmentPlayed
from referee.matches.match import play_segment
from referee.matches.spec import MatchSpec

#: How often a worker playing a segment looks whether its match has stopped (seconds).
STOP_POLL = 0.5


class SegmentStopped(Exception):
    """A segment ended on its worker because its match had stopped (nobody waits for it)."""


class ClusterSegments:
    """The coordinator's side: segments submitted to a Dask client and awaited from trio, at most
    ``lanes`` at once (:class:`referee.matches.lanes.Cluster`)."""

    def __init__(self, client: Any, lanes: int, workers: int) -> None:
        self.client = client
        self.lanes = lanes
        #: the workers connected when the match began
        self.workers = workers
        self.match = f"referee-match-{uuid.uuid4().hex}"
        self._threads = trio.CapacityLimiter(lanes)

    async def play(self, spec: MatchSpec, game: int, orientation: int, start: int) -> SegmentPlayed:
        from distributed import KilledWorker

        future = self.client.submit(segment_task, spec, game, orientation, start, self.match, pure=False,
                                    key=f"{self.match}-g{game}-o{orientation}")
        try:
            return await trio.to_thread.run_sync(future.result, abandon_on_cancel=True, limiter=self._threads)
        except KilledWorker:
            raise ClusterUnavailable(f"the workers playing game {game + 1} in seating {orientation + 1} died "
                                     f"{ALLOWED_FAILURES} times; the match was stopped") from None
        finally:
            if not future.done():
                future.cancel()

    def stop(self) -> None:
        import distributed

        distributed.Event(self.match, client=self.client).set()
        self.match = f"referee-match-{uuid.uuid4().hex}"  # the next match on this client


@contextmanager
def on_cluster(address: Address, lanes: int | None = None, *, timeout: float = 30.0) -> Iterator[ClusterSegments]:
    """The segments of a match played on the cluster at ``address`` (``local:N`` starts one here
    for the block), ``lanes`` at once: by default as many as the workers connected.

    Raises:
        ClusterUnavailable: Dask is missing, the scheduler cannot be reached, it has no workers.
    """
    with connect(address, timeout=timeout) as client:
        connected = len(workers(client))
        if connected == 0:
            raise ClusterUnavailable(f"--cluster {address}: the scheduler has no workers")
        yield ClusterSegments(client, lanes or connected, connected)


# -- on a worker ----------------------------------------------------------------------------------


def segment_task(spec: MatchSpec, game: int, orientation: int, start: int, match: str) -> SegmentPlayed:
    """The task: play one segment of ``match`` on this worker (:func:`play_segment`), the bots'
    stderr in a private folder, and send it all back.

    Raises:
        SegmentStopped: the match stopped first (the SPRT decided, Ctrl-C); nobody waits for it.
    """
    import distributed

    stop = distributed.Event(match)
    with tempfile.TemporaryDirectory(prefix="referee-segment-") as tmp:
        folder = Path(tmp)
        played = trio.run(_play_until_stopped, spec, game, orientation, start, folder, stop)
        played.stderr = {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}
    try:
        played.worker = distributed.get_worker().address
    except ValueError:
        pass
    return played


async def _play_until_stopped(spec: MatchSpec, game: int, orientation: int, start: int, folder: Path, stop: Any) -> SegmentPlayed:
    played: SegmentPlayed | None = None

    async def watch(scope: trio.CancelScope) -> None:
        while not await trio.to_thread.run_sync(stop.wait, STOP_POLL, abandon_on_cancel=True):
            pass
        scope.cancel()

    failure: Exception | None = None
    async with trio.open_nursery() as nursery:
        nursery.start_soon(watch, nursery.cancel_scope)
        try:
            played = await play_segment(spec, game, orientation, start, folder)
        except Exception as exc:  # noqa: BLE001 — raised below as itself, not in an exception group
            failure = exc
        nursery.cancel_scope.cancel()
    if failure is not None:
        raise failure
    if played is None:
        raise SegmentStopped(f"game {game + 1} in seating {orientation + 1}: the match stopped first")
    return played
