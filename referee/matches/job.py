"""A match as a job: :class:`MatchJob`, the one front door of a match's settings.

``referee match`` builds one from its options, a league from its file (one per table,
:func:`tournaments.runner.make_job`), and a league's match process decodes one from its input
(``python -m tournaments.worker``); :meth:`MatchJob.spec` is the match it plays.  Every bound a
setting has is in its type here (``Meta``), read by msgspec as it converts or decodes, so the
three agree: a day for any clock, 16 MiB for a line, and so on.  No safety setting has a
default: a job that leaves out ``sandbox`` is refused, never played unconfined.  What a type
cannot say (a game's own rules on players and deals, a bot's command that must resolve, a
name that must be printable) stays with whoever builds the job.

:func:`bound_problem` says what a bound a value broke is, in words, for both front doors.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

import msgspec
import msgspec.inspect as mi
from msgspec import Meta, Struct

from referee.base.clock import MAX_SECONDS, TimeControl
from referee.bots.bot import Bot
from referee.bots.spawn import Confinement
from referee.engine import variant
from referee.engine.core.deal import Deal
from referee.engine.core.shuffle import Derivation
from referee.matches.spec import Isolation, MatchSpec
from referee.stats.sprt import SprtSpec

#: Seconds of a clock: at most a day (longer ones are mistakes, and infinite or huge ones cannot
#: be sent to a bot in milliseconds).
Seconds = Annotated[float, Meta(ge=0, le=MAX_SECONDS, extra={"unit": " s"})]
#: A move's time: more than nothing, at most a day.
MoveSeconds = Annotated[float, Meta(gt=0, le=MAX_SECONDS, extra={"unit": " s", "too_low": "a bot needs some time to move"})]
#: How late past a move's allowance an answer is still accepted (``--time-margin``), in
#: milliseconds: at most a minute.
MarginMs = Annotated[float, Meta(ge=0, le=60_000, extra={"unit": " ms"})]
#: The longest line a bot may write: a bot's line is held in memory whole before it is decoded.
MaxLine = Annotated[int, Meta(ge=256, le=16 << 20, extra={"unit": " bytes"})]
MaxFaults = Annotated[int, Meta(ge=1, le=1_000_000)]
MemoryMb = Annotated[int, Meta(ge=1, le=1 << 24, extra={"unit": " MiB"})]  # 16 TiB
CpuSeconds = Annotated[int, Meta(ge=1, le=1_000_000, extra={"unit": " s"})]
#: Processes and threads a sandboxed bot may have at once: its init counts as one.
Processes = Annotated[int, Meta(ge=2, le=1 << 16)]
Deals = Annotated[int, Meta(ge=1, le=1_000_000)]  # per game, in games of fixed deals
Games = Annotated[int, Meta(ge=1, le=100_000)]  # per orientation
#: The longest name of a bot: it names the bot's stderr files and every table and line of a result.
MAX_NAME = 64
BotName = Annotated[str, Meta(min_length=1, max_length=MAX_NAME)]
Confidence = Annotated[float, Meta(gt=0, lt=1)]
#: The name of an event (``referee match --event``), as the log's header keeps it.
MAX_EVENT = 200
EventName = Annotated[str, Meta(min_length=1, max_length=MAX_EVENT)]
#: How deals come from the seed: one of :data:`referee.engine.core.shuffle.DERIVATIONS`.
DealsFrom = Derivation


class _Job(Struct, forbid_unknown_fields=True, kw_only=True, frozen=True):
    pass


class GameJob(_Job, frozen=True):
    """The game: its id, seats, options, and how long the match is."""

    variant: str
    players: int
    options: dict[str, Any]
    deals: Deals | None
    games: Games | None


class ClockJob(_Job, frozen=True):
    """The time control, in seconds (:class:`~referee.base.clock.TimeControl`)."""

    startup: Seconds
    move: MoveSeconds
    bank: Seconds | None
    increment: Seconds
    margin: Seconds = 0.0

    def time_control(self) -> TimeControl:
        return TimeControl(startup=self.startup, move=self.move, bank=self.bank, increment=self.increment, margin=self.margin)


class LimitsJob(_Job, frozen=True):
    """What a bot may do: faults before it forfeits, the longest line, its process's limits
    (``None``: none, or in the sandbox its default)."""

    max_faults: MaxFaults
    max_line: MaxLine
    memory_mb: MemoryMb | None
    cpu_seconds: CpuSeconds | None
    max_processes: Processes
    #: only the process on turn runs (``"strict"``), or all of them (PROTOCOL.md, "Fair play")
    isolation: Isolation = "concurrent"


class BotJob(_Job, frozen=True):
    """A bot: its name, its command (resolved), where it runs and with what added to its
    environment, and whether it runs in the sandbox (no default: say it)."""

    name: BotName
    argv: Annotated[list[str], Meta(min_length=1)]
    cwd: str | None
    env: dict[str, str]
    sandbox: bool
    #: the bot's own clock, where it is not the match's (``referee match --tc``, a league bot's
    #: ``clock``); the log's header keeps it
    tc: ClockJob | None = None


class MatchJob(_Job, frozen=True):
    """Everything a match needs, as data (see the module's docstring)."""

    game: GameJob
    tc: ClockJob
    limits: LimitsJob
    seed: Annotated[int, Meta(ge=0)]
    #: no default: a league whose database was played before deals were keyed deals splitmix64,
    #: and a job that forgot it would deal its tables something else
    deals_from: DealsFrom
    bots: list[BotJob]
    log: str
    stderr_dir: str
    #: what no sandboxed bot may see, besides the log, its stderr files and the deal file
    hidden: list[str]
    confidence: Confidence = 0.95
    sprt: SprtSpec | None = None
    #: the deal file the match plays instead of seeded deals (``referee match --deals-file``)
    deals_file: str | None = None
    deals_file_sha256: str | None = None
    #: a league's match process writes ``{"k": "alive"}`` this often during the match
    heartbeat: float | None = None
    #: the event the match belongs to (``referee match --event``), kept in the log's header
    event: EventName | None = None

    def deal_list(self) -> list[Deal] | None:
        """The deals of :attr:`deals_file`, read and checked against :attr:`deals_file_sha256`
        (``None`` without a file): what a league's match process plays.

        Raises:
          BadDeal: the file cannot be read, is not the one the job names, or holds a bad deal.
        """
        if self.deals_file is None:
            return None
        import hashlib

        from referee.engine.core.deal import parse_deal_lines
        from referee.engine.core.errors import BadDeal

        try:
            data = Path(self.deals_file).read_bytes()
        except OSError as exc:
            raise BadDeal(f"the deal file {self.deals_file}: {exc.strerror or exc}") from None
        if self.deals_file_sha256 is not None and hashlib.sha256(data).hexdigest() != self.deals_file_sha256:
            raise BadDeal(f"the deal file {self.deals_file} is not the one the job names (its SHA-256 differs)")
        g = self.game
        return parse_deal_lines(data.decode("utf-8", "replace").splitlines(), variant(g.variant).shape(g.players, g.options))

    def spec(self, deal_file: list[Deal] | None = None) -> MatchSpec:
        """The match to play (``deal_file``: the deals of :attr:`deals_file`, read).

        Raises:
          RulesError: an unknown game.
        """
        g, lim = self.game, self.limits
        bots = [Bot(b.name, list(b.argv), Confinement(memory_mb=lim.memory_mb, cpu_seconds=lim.cpu_seconds,
                                                     cwd=None if b.cwd is None else Path(b.cwd), env=b.env or None,
                                                     sandbox=b.sandbox, processes=lim.max_processes),
                    tc=None if b.tc is None else b.tc.time_control())
                for b in self.bots]
        return MatchSpec(variant(g.variant), bots, g.players, dict(g.options), deals=g.deals, games=g.games, seed=self.seed, deals_from=self.deals_from,
                         deal_file=deal_file, deal_file_name=self.deals_file, deal_file_sha256=self.deals_file_sha256,
                         tc=self.tc.time_control(), max_faults=lim.max_faults, max_line=lim.max_line, log_path=Path(self.log),
                         stderr_dir=Path(self.stderr_dir), confidence=self.confidence, sprt=self.sprt,
                         hidden=tuple(Path(p) for p in self.hidden), isolation=lim.isolation, event=self.event)


def within(value: Any, kind: Any) -> bool:
    """Whether ``value`` is a ``kind`` (within its bounds)."""
    try:
        msgspec.convert(value, kind)
    except msgspec.ValidationError:
        return False
    return True


_PATH = re.compile(r"\.([A-Za-z_]\w*)|\[(\d+)\]")


def bound_problem(exc: msgspec.ValidationError, root: Any, given: Any, names: str | dict[str, str]) -> str | None:
    """When ``exc`` says a value broke a bound of its type, the problem in words:
    ``--max-line: 99999999 is out of bounds (from 256 to 16777216 bytes)``; ``None`` for any
    other problem.  ``root`` is the type converted or decoded into and ``given`` what was given
    for it; ``names`` is how the front door calls the setting: one name, or names by the
    field's dotted path (the path itself when it has none)."""
    message, _, at = str(exc).partition(" - at `")
    if not re.match(r"Expected `(int|float|str|array)` (of length )?[<>]=? ", message):
        return None
    info: Any = mi.type_info(root)
    value, path = given, []
    for key, index in _PATH.findall(at.rstrip("`").removeprefix("$")):
        info, _ = _bounded(info)
        part: str | int = int(index) if index else key
        path.append(part)
        if isinstance(part, int):
            info = info.item_type if isinstance(info, mi.ListType) else None
        else:
            info = next((f.type for f in getattr(info, "fields", ()) if f.name == part), None)
        try:
            value = value[part]
        except (KeyError, IndexError, TypeError):
            value = None
        if info is None:
            return None
    info, extra = _bounded(info)
    unit = extra.get("unit", "")
    dotted = ".".join(str(p) for p in path)
    name = names if isinstance(names, str) else names.get(dotted, dotted)
    if isinstance(info, (mi.StrType, mi.ListType)):
        what = " characters" if isinstance(info, mi.StrType) else " items"
        return f"{name}: {value!r:.80} is out of bounds ({_range(info.min_length, None, info.max_length, None, what)})"
    if not isinstance(info, (mi.IntType, mi.FloatType)):
        return None
    shown = f"{value:g}" if isinstance(value, float) else str(value)
    low = isinstance(value, (int, float)) and (info.ge is not None and value < info.ge or info.gt is not None and value <= info.gt)
    why = f": {extra['too_low']}" if low and "too_low" in extra else ""
    return f"{name}: {shown} is out of bounds ({_range(info.ge, info.gt, info.le, info.lt, unit)}){why}"


def _bounded(info: Any) -> tuple[Any, dict[str, str]]:
    """The type under its metadata and ``| None``, and its words (``Meta(extra=…)``: ``unit``,
    and ``too_low``, why a value under the lower bound is refused)."""
    extra: dict[str, str] = {}
    while isinstance(info, (mi.Metadata, mi.UnionType)):
        if isinstance(info, mi.Metadata):
            extra = {**(info.extra or {}), **extra}
            info = info.type
        else:
            info = next(t for t in info.types if not isinstance(t, mi.NoneType))
    return info, extra


def _range(ge: float | None, gt: float | None, le: float | None, lt: float | None, unit: str) -> str:
    """A type's bounds in words: "from 256 to 16777216 bytes", "between 0 and 1", "at least 2"."""
    def n(x: float) -> str:
        return str(x) if isinstance(x, int) else f"{x:g}"

    low = f"from {n(ge)}" if ge is not None else f"more than {n(gt)}" if gt is not None else ""
    if le is not None:
        if ge is not None:
            return f"{low} to {n(le)}{unit}"
        return f"{low + ' and ' if low else ''}at most {n(le)}{unit}"
    if lt is not None:
        return f"between {n(gt)} and {n(lt)}{unit}" if gt is not None else f"{low + ' and ' if low else ''}less than {n(lt)}{unit}"
    return (f"at least {n(ge)}" if ge is not None else low) + unit
