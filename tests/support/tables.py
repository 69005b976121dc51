"""Tables played directly in tests: a watch that keeps the faults, and a house for scripted bots."""

from __future__ import annotations

from pathlib import Path

from referee.base.clock import TimeControl
from referee.bots.transport import Launch
from referee.conversation import faults as F
from referee.conversation.house import BotSource, House, TableWatch


class FaultList(TableWatch):
    """Keeps every fault a table tells of, in order, in :attr:`faults`."""

    def __init__(self) -> None:
        self.faults: list[F.Fault] = []

    def fault(self, fault: F.Fault) -> None:
        self.faults.append(fault)


def scripted_house(launch: Launch, tc: TimeControl, stderr_dir: Path, watch: TableWatch | None = None, **limits) -> House:
    """The house of a table whose bots ``launch`` scripts (no block: the mock clock may run it)."""
    return House(tc, stderr_dir, block=0, bots=BotSource(launch), watch=watch, **limits)
