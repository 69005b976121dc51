"""``referee check BOT``: a compliance check for bot authors.

It plays a few deals of every game the referee knows (each variant of
:func:`referee.engine.variant_names`, with each of its player counts) with the candidate bot
against the sample bots, in every seating, and then says in plain words everything the bot got
wrong: each fault (late answers, lines that are not JSON or do not fit the schema, with the JSON
path, illegal plays with what was legal, plays out of turn, crashes with the tail of stderr,
start-up failures), output nobody asked for, and harmless oddities (messages of unknown types,
slow answers or start-ups, not exiting after ``match_end``).  It ends with ``PASS`` or ``FAIL``.
In the cross games each game's line also counts the turns of several tiles, the stops and the
closed doubles the bot was offered and made, and in sea_kozel, general and blitz the second
doubles, chains and declarations (a hundred, writing off or declining a fish), so an author sees
that those paths were exercised.

Decisions too rare to wait for are *staged* (:mod:`referee.matches.staging`): for each, an extra game
begins with moves the referee makes itself up to a position where a seat must make it, so the
bot is asked in one of the seatings for certain (sea_kozel: 6-6 led for a hundred, and a fish
to write off or decline; mexican_train: another seat's train open by its marker, and a double
left hanging; kolbasa: a knife, and a double to insert into a junction).  A bot that is offered such a choice and never takes it is told so as
a harmless oddity.  One bug must not hide another: when the bot faulted in a staged game whose
position comes after its first deal and never answered the decision (a fault between deals
forfeits the next deal and ends the staged line; a crash on a later deal's message is found
only at the staged turn), the position is staged once more in a *further match* of its own,
from seed ``seed + 1`` (:meth:`Setup.seed`), whose first deal holds it, so that nothing the bot
does between deals comes before it; its log's header holds that seed and its opening, as every
staged match's does, so it verifies.  Where no first deal of that seed offers the position
(sea_kozel's hundred never comes in a game's first deal) the report says so.

Each game is a match played by the driver of ``referee match`` (:func:`~referee.matches.match.run_match`),
which the check watches, so its log replays and verifies.  A game still going after ``deals``
deals in a seating is stopped there, drawn (its ``game_end`` says "deal limit"), so that the
whole check takes seconds.  Output written after the last turn is found when the bot has exited (its
pipe then holds all of it), not by waiting a while.  Games run a few at once, each at its own
table; the first runs alone, so that a bot that cannot start at all is reported at
once.  After three timeouts in all, games not yet begun are skipped: each one would only
wait out the same clock again.
"""

from __future__ import annotations

import math
import os
import re
import signal
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import trio

from protocol import messages as m
from referee.base.clock import TimeControl
from referee.base.errors import BotStartError
from referee.base.seeds import fresh_seed, seed_text
from referee.base.signals import cancel_on_signals
from referee.bots.bot import Bot
from referee.bots.sandbox import DEFAULT_MEMORY_MB, DEFAULT_PROCESSES, bot_files, bot_home, named_paths
from referee.bots.spawn import Confinement
from referee.bots.transport import BotTransport
from referee.conversation import faults as F
from referee.conversation.lines import from_record
from referee.conversation.players import Player
from referee.conversation.table import _safe
from referee.engine import variant, variant_names
from referee.engine.core.errors import BadOption
from referee.engine.core.game import Variant
from referee.engine.core.shuffle import SEED_LIMIT
from referee.engine.core.state import DealState
from referee.matches.match import DealStream, run_match
from referee.matches.roster import Roster
from referee.matches.spec import Isolation, MatchSpec
from referee.matches.staging import STAGES, Opening, find_opening
from referee.matches.watch import Watch
from referee.records import records as R
from referee.sides import side_of
from referee.sides.base import GameSide, Stage

#: The opponents' folder, inside the package so that the check works from any install: links to
#: the repository's sample_bots/ (the bots authors read), whose files a wheel holds as such.
SAMPLE_DIR = Path(__file__).resolve().parent / "sample-bots"
#: The opponents, in the order they are taken.
SAMPLES = ("greedy_bot.py", "random_bot.py", "first_bot.py")
STOP_AFTER_TIMEOUTS = 3  # games not begun are skipped after this many timeouts in all
JOBS = 3  # games played at once after the first
SLOW = 0.5  # an answer or start-up over this share of its limit is worth a note


@dataclass(frozen=True)
class Setup:
    """One game of the check: a variant with a number of players (default options); a staged
    one begins with the moves that lead to the position its ``stage`` wants
    (:mod:`referee.matches.staging`)."""

    variant: str
    players: int
    options: dict[str, Any]
    stage: Stage | None = None
    #: 0, or the number of a further match of a staged game (:func:`_check_all`), which stages the
    #: same decision in the first deal of seed ``seed + again``
    again: int = 0

    @property
    def pairs(self) -> bool:
        return variant(self.variant).game.uses_pairs(self.players, self.options)

    @property
    def side(self) -> GameSide:
        """The game's side: the decisions it counts (:attr:`GameSide.decisions`)."""
        return side_of(variant(self.variant), self.players, self.options)

    @property
    def title(self) -> str:
        staged = "" if self.stage is None else f", staged: {self.stage.title}"
        again = f", further match {self.again}" if self.again else ""
        return f"{self.variant}, {self.players} players" + (" in pairs" if self.pairs else "") + staged + again

    @property
    def slug(self) -> str:
        return (f"{self.variant}-{self.players}" + ("" if self.stage is None else f"-{self.stage.name}")
                + (f"-again{self.again}" if self.again else ""))

    def seed(self, seed: int) -> int:
        """The seed of this game's match, given the check's: its own, or ``seed + again`` for a
        further match (its log's header holds it, with the opening found from it)."""
        return (seed + self.again) % SEED_LIMIT


def setups(only: str | None = None) -> list[Setup]:
    """Every variant with each of its player counts (``only``: one variant)."""
    out = []
    for vid in variant_names(refereed=True):
        if only is not None and vid != only:
            continue
        v = variant(vid)
        for n in sorted(v.players):
            out.append(Setup(vid, n, v.resolve_options(n)))
        for stage in STAGES.get(vid, ()):
            out += [Setup(vid, n, v.resolve_options(n), stage) for n in sorted(v.players)]
    return out


@dataclass
class Problem:
    """Something the bot got wrong (it makes the check fail)."""

    kind: str  # a fault kind, or "unsolicited" / "start"
    setup: Setup
    where: str  # "seating 1, deal 2, seat 3"
    detail: str
    line: str | None = None
    stderr: str = ""
    hint: str | None = None  # the fault's own hint, when it has one


@dataclass
class GameReport:
    setup: Setup
    opponents: list[str]
    deals: int = 0  # deals played, all seatings together
    problems: list[Problem] = field(default_factory=list)
    remarks: Counter[str] = field(default_factory=Counter)
    answers: int = 0
    slowest: float = 0.0  # seconds, the slowest accepted answer
    slowest_where: str = ""
    startups: list[float] = field(default_factory=list)  # seconds to each valid hello
    exits: list[str] = field(default_factory=list)  # how processes ended after match_end, if oddly
    forfeited: bool = False  # only with a max_faults of the caller's (a ladder's check): the check's own never forfeits
    skipped: str | None = None
    cross: Counter[str] = field(default_factory=Counter)  # see _Watch.cross
    hello: dict | None = None
    others_faults: list[str] = field(default_factory=list)  # faults of the sample bots (not the candidate's)
    unexercised: bool = False  # a staged game whose staged decision never reached the candidate
    staged_faults: int = 0  # offers of the staged decision the candidate answered with a fault
    staged_at: int | None = None  # the deal of the staged position (0: the first), if one was found
    no_further: bool = False  # :attr:`hidden`, but no first deal of the further match's seed offers the position
    staged_answers: list[str] = field(default_factory=list)  # the candidate's plays at the staged turns, in words

    @property
    def hidden(self) -> bool:
        """A staged game whose decision the candidate never answered (it never reached it, or it
        faulted at each offer) after a fault of its own, where the position came after the
        game's first deal: a fault between deals, or one of a deal before, may be why (a crash
        found only at the staged turn was often caused before it), so a further match stages it
        in a first deal (:func:`_check_all`)."""
        if self.setup.stage is None or self.skipped or not self.staged_at or not self.problems:
            return False
        return self.unexercised or self.staged_faults >= self.cross[self.setup.stage.offered]


@dataclass
class CheckOptions:
    deals: int = 4
    tc: TimeControl = field(default_factory=TimeControl)
    seed: int = field(default_factory=fresh_seed)  # a fresh secret one unless given
    only: str | None = None
    #: never reached: a fault costs the deal, never the rest of the game, so every deal is
    #: played and one bug cannot hide another in the deals after it (the deals are few, and
    #: timeouts skip the games not yet begun, so the check stays short)
    max_faults: int = 1_000_000
    max_line: int = 65536
    log_dir: Path = Path("referee-logs/check")
    sandbox: bool = False  # the candidate runs in the sandbox (the sample bots never do)
    cwd: Path | None = None  # the candidate's working directory (the sample bots keep the referee's)
    env: dict[str, str] | None = None  # variables added to the candidate's environment (a ladder's entry's)
    memory_mb: int | None = None  # the candidate's memory cap (in the sandbox: its default when None)
    isolation: Isolation = "concurrent"  # "strict": only the process on turn runs (PROTOCOL.md, "Fair play")
    jobs: int = field(default_factory=lambda: max(1, min(JOBS, os.cpu_count() or 1)))


@dataclass
class CheckReport:
    bot: str
    command: list[str]
    options: CheckOptions
    games: list[GameReport]
    not_started: str | None = None
    #: per process that could not start: its label, what happened, its stderr's tail
    start_failures: list[tuple[str, str, str]] = field(default_factory=list)
    planned: int = 0  # games the check meant to play

    @property
    def problems(self) -> list[Problem]:
        return [p for g in self.games for p in g.problems]

    @property
    def passed(self) -> bool:
        return self.not_started is None and not self.problems and not any(g.skipped for g in self.games)


class _Watch(Watch):
    """What the check sees of one game's match as :func:`~referee.matches.match.run_match` plays it:
    the candidate's handshakes, its answers with their times, the moves it was offered and made,
    its faults (with the tail of its stderr), and at the end the lines it wrote that nobody
    asked for and how its processes ended."""

    def __init__(self, candidate: Bot, report: GameReport, on_timeout: Callable[[], None]) -> None:
        self.candidate = candidate
        self.report = report
        self.on_timeout = on_timeout
        self.side = report.setup.side
        self.rosters: dict[int, Roster] = {}  # by orientation: each is a segment of its own
        self.seatings: dict[int, list[Player]] = {}  # by orientation, the players in each seat
        self.seating: list[Player] = []  # the players of the deal being played, by seat
        self.orientation = 0
        self.hellos: list[R.Hello] = []
        self.plays: list[tuple[float, str]] = []  # seconds, where
        #: the moves the candidate was offered and made (multi-tile turns, stop, closing, declarations…:
        #: the side's :attr:`~referee.sides.base.GameSide.decisions`)
        self.cross: Counter[str] = Counter()
        self.memo: dict[str, Any] = {}  # the side's notes across the candidate's turns
        #: by seat: the candidate's turn on now offers the staged decision (its answer, or its fault, comes next)
        self.staged_turn: dict[int, bool] = {}
        self.staged_answers: list[str] = []  # its plays there, in words (the records' ``as``)

    def seated(self, roster: Roster) -> None:
        for o in roster.orientations:
            self.rosters[o] = roster

    def _mine(self, seat: int) -> bool:
        return bool(self.seating) and self.seating[seat].bot is self.candidate

    def record(self, record: R.Record) -> None:
        if isinstance(record, R.Game):
            self.seatings[record.orientation] = self.rosters[record.orientation].seat(record.orientation)
        elif isinstance(record, R.Deal):  # games of a fixed number of deals go deal by deal through the orientations
            self.orientation = record.orientation
            self.seating = self.seatings[self.orientation]
        elif isinstance(record, R.DealEnd):
            self.report.deals += 1
        elif isinstance(record, R.Hello):
            self.hellos.append(record)
        elif isinstance(record, R.Play) and self._mine(record.seat) and not record.staged:
            if self.staged_turn.pop(record.seat, False):
                self.staged_answers.append(record.as_)
            self.plays.append(((record.ms or 0.0) / 1000, f"seating {self.orientation + 1}, seat {record.seat}"))
            self.cross.update(self.side.made(record, self.memo))

    def asked(self, seat: int, state: DealState, turn: m.Turn) -> None:
        """``seat`` is asked for a play: what the candidate is offered."""
        if not self._mine(seat):
            return
        offered = list(self.side.offered(seat, state, turn, self.memo))
        self.cross.update(offered)
        stage = self.report.setup.stage
        self.staged_turn[seat] = stage is not None and stage.offered in offered

    def fault(self, fault: F.Fault) -> None:
        report = self.report
        where = f"seating {self.orientation + 1}, deal {fault.deal + 1}, seat {fault.seat}"
        if fault.bot != self.candidate.name:
            report.others_faults.append(f"{fault.bot} ({where}): {fault.kind}: {fault.detail}")
            return
        tail = ""
        if fault.kind in (F.CRASH, F.STARTUP) and self.rosters:
            mine = [p for r in self.rosters.values() for p in r.players.values() if p.bot is self.candidate]
            holder = self.seating[fault.seat] if self.seating and self._mine(fault.seat) else None
            proc = holder.channel.proc if holder is not None else next((p.channel.proc for p in mine if p.channel.proc is not None), None)
            tail = proc.stderr_tail() if proc is not None else ""
        report.problems.append(Problem(fault.kind, report.setup, where, fault.detail, fault.line, tail, fault.hint))
        if self.staged_turn.pop(fault.seat, False):
            report.staged_faults += 1
        if _is_timeout(fault):
            self.on_timeout()

    def closed(self, player: Player, proc: BotTransport, unread: list[bytes]) -> None:
        """Lines the candidate wrote after its last turn, when nothing was asked (each would be a
        fault at the next turn of a longer match), and an exit that was not clean."""
        if player.bot is not self.candidate:
            return
        report = self.report
        for line in unread:
            report.problems.append(Problem("unsolicited", report.setup, "after the last deal",
                                           "wrote a line when nothing was asked", F.cut(line)))
        rc = proc.returncode
        if rc == -signal.SIGKILL:
            report.exits.append("did not exit within 1 s after match_end (the referee killed it)")
        elif rc not in (0, None):
            report.exits.append(f"ended with code {rc} after match_end (expected 0)")


def _opponents(setup: Setup, index: int, seed: int) -> list[Bot]:
    count = 1 if setup.pairs or setup.players == 2 else setup.players - 1
    bots = []
    for k in range(count):
        script = SAMPLES[(index + k) % len(SAMPLES)]
        argv = [sys.executable, str(SAMPLE_DIR / script)]
        if script.startswith("random"):
            argv.append(str(seed % (1 << 32) + k))
        bots.append(Bot(f"sample {script}", argv))
    return bots


def _is_timeout(fault: F.Fault) -> bool:
    return fault.kind == F.TIMEOUT or (fault.kind == F.STARTUP and "no hello within" in fault.detail)


def _fixed_deals(v: Variant, setup: Setup, deals: int) -> int:
    """The length of a check's game of a fixed number of deals: a multiple of 4 covering ``deals``
    (sport's leads go round the table), unless the game allows only its own (mexican_train's seven
    rounds); the deal limit stops it after ``deals``."""
    want = 4 * math.ceil(deals / 4)
    try:
        v.new_game(setup.players, setup.options, want)
    except BadOption:
        assert v.game.default_deals is not None
        return v.game.default_deals
    return want


def _game_deals(v: Variant, setup: Setup, opts: CheckOptions) -> int | None:
    """The deals of a game of the check's match: ``None`` for a game to a target."""
    return None if v.to_target else _fixed_deals(v, setup, opts.deals)


def staged_opening(setup: Setup, opts: CheckOptions) -> Opening | None:
    """The opening of a staged game (``None``: none found, or not staged), searched from the
    game's seed on the deals it deals; a further match's lies in the game's first deal, so that
    nothing the bot does between deals can come before it."""
    if setup.stage is None:
        return None
    v = variant(setup.variant)
    seed = setup.seed(opts.seed)
    stream = DealStream(v.shape(setup.players, setup.options), seed, None, None)
    return find_opening(v, setup.players, setup.options, _game_deals(v, setup, opts), stream.__getitem__, setup.stage, seed,
                        **({"within": 1} if setup.again else {}))


async def check_game(setup: Setup, index: int, name: str, argv: list[str], opts: CheckOptions,
                     on_timeout: Callable[[], None] = lambda: None, opening: Opening | None = None) -> GameReport:
    """Play ``setup`` with the candidate against sample bots, every seating, and report.

    The game is a match of :func:`~referee.matches.match.run_match`, the driver of ``referee match``,
    watched as it is played; its log verifies.  A game still going after ``opts.deals`` deals in
    a seating is stopped there, drawn (a deal limit: the log's header says so, and the game's
    ``game_end``); a staged game stops after the deal of its staged position (``opening``, when
    the caller has searched for it already: :func:`staged_opening`).

    Raises:
        BotStartError: the candidate (or a sample bot) could not be started at all.
    """
    v = variant(setup.variant)
    seed = setup.seed(opts.seed)
    bot = Bot(name, argv, Confinement(sandbox=opts.sandbox, cwd=opts.cwd, memory_mb=opts.memory_mb, env=opts.env))
    bots = [bot, *_opponents(setup, index, seed)]
    report = GameReport(setup, [b.name.removeprefix("sample ") for b in bots[1:]])
    deals = _game_deals(v, setup, opts)
    deal_limit = opts.deals
    if setup.stage is not None and opening is None:
        # A search of a fraction of a second: in a thread, so the games beside it keep their clocks.
        opening = await trio.to_thread.run_sync(staged_opening, setup, opts)
    if opening is not None:
        deal_limit = opening.deal + 1  # the staged deal is the game's last
        report.staged_at = opening.deal
    spec = MatchSpec(
        v, bots, setup.players, setup.options,
        deals=deals, games=1 if v.to_target else None,
        seed=seed, tc=opts.tc, max_faults=opts.max_faults, max_line=opts.max_line,
        log_path=opts.log_dir / f"{setup.slug}.jsonl", stderr_dir=opts.log_dir / f"{setup.slug}.stderr",
        hidden=(opts.log_dir,), deal_limit=deal_limit, opening=[] if opening is None else opening.moves, isolation=opts.isolation,
    )
    watch = _Watch(bot, report, on_timeout)
    # Several games share this trio loop: the table never blocks it (block=0).
    result = await run_match(spec, watch=watch, block=0, handle_signals=False)
    result.close()
    entry = result.entries[0]  # the candidate's part in the match, every segment's together
    report.forfeited = entry.forfeited
    report.cross = watch.cross
    report.staged_answers = watch.staged_answers
    report.unexercised = setup.stage is not None and not watch.cross[setup.stage.offered]
    report.remarks = Counter(entry.remarks)
    if watch.plays:
        report.answers = len(watch.plays)
        report.slowest, report.slowest_where = max(watch.plays)
    report.startups = [h.ms / 1000 for h in watch.hellos if h.b == 0 and h.ms is not None and h.read and _said_hello(h.read[-1])]
    if entry.hello is not None:
        report.hello = {"name": entry.hello.name, "version": entry.hello.version, "author": entry.hello.author,
                        "protocol": entry.hello.protocol}
    return report


def _said_hello(h: R.Heard) -> bool:
    """Whether the last line of a handshake was a hello."""
    try:
        return isinstance(from_record(h).judged.msg, m.BotHello)
    except ValueError:
        return False


async def run_check(command: str, argv: list[str], name: str, opts: CheckOptions,
                    progress: Callable[[GameReport], None] | None = None) -> CheckReport:
    """Check the bot ``argv`` in every game of :func:`setups`.

    A bot that cannot be started at all (its first game) gives a report with ``not_started``.

    Raises:
        Terminated: Ctrl-C, SIGTERM or SIGHUP (in the main thread), after every bot was ended.
    """
    async with cancel_on_signals(raise_after=True):
        return await _check_all(argv, name, opts, progress)
    raise AssertionError("unreachable: a signal raises Terminated")


async def _check_all(argv: list[str], name: str, opts: CheckOptions,
                     progress: Callable[[GameReport], None] | None) -> CheckReport:
    todo = setups(opts.only)
    report = CheckReport(name, argv, opts, [], planned=len(todo))
    timeouts = 0

    def on_timeout() -> None:
        nonlocal timeouts
        timeouts += 1

    results: dict[int, GameReport] = {}
    further: dict[int, GameReport] = {}  # by the index of the staged game each one plays again

    async def one(i: int, setup: Setup, opening: Opening | None = None) -> GameReport:
        if timeouts >= STOP_AFTER_TIMEOUTS:
            game = GameReport(setup, [])
            game.skipped = f"skipped after {timeouts} timeouts in other games (fix those first)"
        else:
            try:
                game = await check_game(setup, i, name, argv, opts, on_timeout, opening)
            except BotStartError as exc:
                game = GameReport(setup, [])
                game.problems.append(Problem("start", setup, "at the start of the game", str(exc)))
        if progress is not None and not setup.again:
            progress(game)
        return game

    async def first_pass(i: int, setup: Setup) -> None:
        async with limiter:
            results[i] = await one(i, setup)

    async def again(i: int) -> None:
        """The staged position of game ``i``, hidden by the bot's faults, in a further match."""
        setup = replace(results[i].setup, again=1)
        opening = await trio.to_thread.run_sync(staged_opening, setup, opts)
        if opening is None:
            results[i].no_further = True
            return
        async with limiter:
            further[i] = await one(i, setup, opening)

    if not todo:
        return report
    try:
        results[0] = await check_game(todo[0], 0, name, argv, opts, on_timeout)
    except BotStartError as exc:
        report.not_started = str(exc)
        report.start_failures = exc.failures
        return report
    if progress is not None:
        progress(results[0])
    limiter = trio.CapacityLimiter(max(1, opts.jobs))
    async with trio.open_nursery() as nursery:
        for i, setup in enumerate(todo[1:], start=1):
            nursery.start_soon(first_pass, i, setup)
    # One bug must not hide another: a staged decision the bot's faults kept from it is staged
    # once more, in a match of its own whose first deal holds it.
    async with trio.open_nursery() as nursery:
        for i in range(len(todo)):
            if results[i].hidden:
                nursery.start_soon(again, i)
    report.games = [g for i in range(len(todo)) for g in (results[i], further.get(i)) if g is not None]
    return report


# -- the report, in words ------------------------------------------------------------------------

_KIND_TITLES = {
    F.TIMEOUT: "late answer (timeout)",
    F.ILLEGAL: "illegal play",
    F.BAD_OUTPUT: "bad output",
    F.OUT_OF_TURN: "output out of turn",
    F.CRASH: "crash",
    F.STARTUP: "start-up failure",
    "unsolicited": "output nobody asked for",
    "start": "could not start",
}
_EXAMPLES = 3  # problems shown in full per kind
#: Hints by kind, for problems whose fault carries none of its own (see :mod:`referee.conversation.faults`);
#: ``referee match`` gives them with its faults too.
KIND_HINTS = {
    F.ILLEGAL: "any entry of turn.legal, copied as it is, is a legal answer",
    F.OUT_OF_TURN: "answer each hello and each turn with exactly one line, and write nothing else",
    "unsolicited": "answer each hello and each turn with exactly one line, and write nothing else",
    F.CRASH: "its stderr is in the log directory below, one file per process",
    F.STARTUP: F.ANSWER_HELLO,
}


#: What a bot's stderr says when the sandbox stopped it, and what that means in plain words.
_SANDBOX_SIGNS = (
    (("Read-only file system",),
     ("it writes a file outside /tmp (next to its own files?): in the sandbox everything but /tmp is read-only, "
      "so write to /tmp (or $TMPDIR) instead")),
    (("Network is unreachable", "Temporary failure in name resolution", "Name or service not known",
      "getaddrinfo", "ENETUNREACH", "EAI_AGAIN", "Connection refused", "ECONNREFUSED"),
     "it needs the network, and the sandbox has none: bring what it downloads along in its directory"),
    (("Resource temporarily unavailable", "EAGAIN", "can't start new thread", "pthread_create"),
     (f"it starts more processes or threads than the sandbox allows ({DEFAULT_PROCESSES} by default; "
      "referee match --max-processes and a league's max_processes raise it)")),
    (("Permission denied", "EACCES", "not readable by other users"),
     ("it cannot read some of its files as the sandbox's user: make its directory readable by everyone "
      "(chmod -R a+rX DIR), or it opens something outside its own directory")),
    (("Could not find or load main class", "ClassNotFoundException", "NoClassDefFoundError", "ModuleNotFoundError",
      "Cannot find module", "No module named", "can't open file", "cannot open shared object file"),
     ("it cannot find a class, module or library it loads: the sandbox shows only the system, the bot's own "
      "directory, its working directory and the folders its command line names (relative ones from --cwd, else from here): "
      "name the folder there, or give --cwd")),
    (("MemoryError", "Cannot allocate memory", "out of memory", "Could not reserve enough space", "Error occurred during "
      "initialization of VM", "Failed to reserve", "ENOMEM"),
     (f"it needs more memory than the sandbox's cap ({DEFAULT_MEMORY_MB} MiB by default, its /tmp included; "
      "referee match --memory-mb and a league's memory_mb raise it; a JVM needs flags: PROTOCOL.md)")),
    (("No such file or directory", "ENOENT", "not found"),
     ("it opens a file outside its own directory (the sandbox shows only the system, the bot's own "
      "directory, its working directory, the paths its command line names, and an empty /tmp): keep what it "
      "needs beside it, or name it on its command line")),
)


def sandbox_verdict(sandboxed: CheckReport, plain: CheckReport) -> list[str]:
    """Plain words on a bot that failed the check in the sandbox, given the same check
    without it: whether the sandbox is the cause, and what in it the bot trips over."""
    if not plain.passed:
        return ["It fails without the sandbox too: fix the problems above first, then try the sandbox again."]
    text = "\n".join([sandboxed.not_started or ""] + [f"{p.detail}\n{p.stderr}" for p in sandboxed.problems])
    for path in sorted(sandboxed.options.log_dir.glob(f"*.stderr/{_safe(sandboxed.bot)}*.stderr.log")):
        text += "\n" + path.read_text(errors="replace")[-4096:]
    folded = text.casefold()
    reasons = [why for signs, why in _SANDBOX_SIGNS if any(s.casefold() in folded for s in signs)]
    lines = ["It passes without the sandbox: it fails only because of the sandbox."]
    missing = _missing_outside(text, sandboxed.command, sandboxed.options.cwd)
    lines += missing
    if missing:
        pass
    elif reasons:
        lines.append("From what it wrote to stderr, most likely " + ("; or ".join(reasons[:2])) + ".")
    else:
        lines.append("Its stderr does not say why; the sandbox gives a bot no network, a read-only filesystem but /tmp, "
                     "only its own directory, and no other processes (PROTOCOL.md, \"The bot's process\").")
    lines.append(f"Its logs in the sandbox are in {sandboxed.options.log_dir}, without it in {plain.options.log_dir}.")
    return lines


#: How a file that could not be opened is named on stderr: Python, Node, C's perror and most others.
_MISSING = re.compile(r"No such file or directory: '([^'\n]+)'|can't open file '([^'\n]+)'|ENOENT: no such file or directory, "
                      r"\w+ '([^'\n]+)'|([^\s:'\"]+): No such file or directory")


def _missing_outside(text: str, argv: list[str], cwd: Path | None) -> list[str]:
    """The files the bot's stderr says it could not open in the sandbox that exist outside it,
    each named with where a relative name leads from the bot's working directory there (its
    ``cwd``, else its own directory: PROTOCOL.md, "The bot's process"), and what to do."""
    own = bot_files(argv, cwd)
    workdir = Path(cwd).absolute() if cwd is not None else own[0].parent if own else None
    here = Path.cwd()  # without the sandbox and without --cwd, a bot runs in the referee's directory
    shown = [Path(os.path.realpath(p)) for p in [*bot_home(argv, cwd), *named_paths(argv, cwd)]]
    lines: list[str] = []
    for match in _MISSING.finditer(text):
        name = next(g for g in match.groups() if g)
        if any(f"open {name}," in line or f"open {name}:" in line for line in lines):
            continue
        path = Path(name)
        if path.is_absolute():
            there = path
        elif workdir is None:
            continue
        else:
            there = Path(os.path.normpath(workdir / path))
            if not there.exists() and cwd is None and workdir != here and (elsewhere := Path(os.path.normpath(here / path))).exists():
                lines.append(f"It could not open {name}: a relative name is taken from the bot's working directory, which in "
                             f"the sandbox is its own directory, {workdir}, where there is no {name}; without the sandbox it "
                             f"ran in this one, {here}, which has {elsewhere}.  Give --cwd {here} (a league: cwd), or "
                             "have the bot open the file from its own directory.")
                continue
        if not there.exists():
            continue
        where = "" if name == str(there) else f", which from its working directory {workdir} is {there}"
        if ".." in Path(name).parts and any(Path(os.path.realpath(there)).is_relative_to(p) for p in shown):
            lines.append(f"It could not open {name}{where}: the sandbox shows that {'folder' if there.is_dir() else 'file'}, "
                         "but the path goes up (..) from a folder it does not show, which the kernel must pass through.  "
                         f"Name it without .. ({os.path.realpath(there)}).")
            continue
        lines.append(f"It could not open {name}{where}: that {'folder' if there.is_dir() else 'file'} exists, but outside "
                     "what the sandbox shows it (the system, the bot's own directory, its working directory, the paths its "
                     "command line names, and an empty /tmp).  Keep it beside the bot, or name it (or its folder) on the "
                     "bot's command line.")
        if len(lines) == 2:
            break
    return lines


def _ms(seconds: float) -> str:
    if seconds < 0.01:
        return f"{seconds * 1000:.1f} ms"
    return f"{seconds * 1000:.0f} ms" if seconds < 10 else f"{seconds:.1f} s"


#: the problems' kinds counted in a game's line, one and many
_KIND_COUNTED = {
    F.TIMEOUT: ("late answer (timeout)", "late answers (timeouts)"),
    F.ILLEGAL: ("illegal play", "illegal plays"),
    F.BAD_OUTPUT: ("bad output", "bad outputs"),
    F.OUT_OF_TURN: ("output out of turn", "outputs out of turn"),
    F.CRASH: ("crash", "crashes"),
    F.STARTUP: ("start-up failure", "start-up failures"),
    "unsolicited": ("output nobody asked for", "outputs nobody asked for"),
    "start": ("could not start", "could not start"),
}


def _counted(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _times(n: int) -> str:
    return "once" if n == 1 else "twice" if n == 2 else f"{n} times"


def render(report: CheckReport) -> list[str]:
    """The report as lines of plain text, ending with the PASS or FAIL line."""
    opts = report.options
    further = sum(1 for g in report.games if g.setup.again)
    planned = _counted(report.planned, 'game', 'games') + (f" and {_counted(further, 'further match', 'further matches')}" if further else "")
    head = (f"referee check {report.bot}: {planned}, {_counted(opts.deals, 'deal', 'deals')} in each seating, "
            f"move limit {_ms(opts.tc.move)}, start-up limit {_ms(opts.tc.startup)}, seed {seed_text(opts.seed)}")
    lines = [head]
    if report.not_started is not None:
        return [*lines, "", *_not_started(report), "", "FAIL: the bot could not be started"]
    hello = next((g.hello for g in report.games if g.hello), None)
    if hello:
        extra = ", ".join(f"{k} {hello[k]!r}" for k in ("version", "author") if hello[k])
        lines.append(f"hello: name {hello['name']!r}, protocol {hello['protocol']}" + (f", {extra}" if extra else ""))
    lines.append("")
    width = max([28, *(len(g.setup.title) for g in report.games)])
    for g in report.games:
        if g.skipped:
            status = g.skipped
        elif g.problems:
            counts = Counter(p.kind for p in g.problems)
            status = "PROBLEMS: " + ", ".join(_counted(n, *_KIND_COUNTED.get(k, (k, k))) for k, n in counts.items())
            if g.forfeited:
                status += f" (forfeited the rest after {opts.max_faults} faults)"
        else:
            status = "ok"
        if g.cross:
            status += " (" + ", ".join(_counted(g.cross[d.key], d.one, d.many) for d in g.setup.side.decisions if g.cross[d.key]) + ")"
        against = f" against {', '.join(g.opponents)}" if g.opponents else ""
        lines.append(f"  {g.setup.title:<{width}} {g.deals:>3} deal{'' if g.deals == 1 else 's'}{against}: {status}")

    problems = report.problems
    if problems:
        lines.append("")
        lines.append("What went wrong:")
        by_kind: dict[str, list[Problem]] = {}
        for p in problems:
            by_kind.setdefault(p.kind, []).append(p)
        for kind, items in by_kind.items():
            lines.append(f"  {_KIND_TITLES.get(kind, kind)} — {_times(len(items))}")
            shown: set[str] = set()
            for p in items[:_EXAMPLES]:
                lines += ["    " + s for s in _describe(p, p.stderr in shown)]
                shown.add(p.stderr)
            if len(items) > _EXAMPLES:
                games = sorted({p.setup.title for p in items[_EXAMPLES:]})
                lines.append(f"    … and {len(items) - _EXAMPLES} more like these (in: {'; '.join(games)})")
            hints = list(dict.fromkeys(p.hint for p in items if p.hint)) or [KIND_HINTS.get(kind, "")]
            for hint in hints:
                if hint:
                    lines.append(f"    Hint: {hint[0].upper()}{hint[1:]}.")
        every = [g.setup.title for g in report.games if g.deals and len(_faulted_deals(g)) >= g.deals]
        if every:
            lines.append(f"  Every deal of {'; '.join(every)} ended in a fault of the bot's, so what it does later in a deal "
                         "went unchecked there: other faults may hide behind these.  Fix them and check again.")

    notes = _notes(report)
    if notes:
        lines.append("")
        lines.append("Worth knowing (not faults):")
        lines += ["  - " + n for n in notes]
    others = [f for g in report.games for f in g.others_faults]
    if others:
        lines.append("")
        lines.append("A sample bot faulted (not your bot's doing; is the machine overloaded?):")
        lines += ["  - " + s for s in others[:5]]
    lines.append("")
    lines.append(f"logs and stderr of every process: {opts.log_dir}")
    deals = sum(g.deals for g in report.games)
    if report.passed:
        lines.append(f"PASS: {_counted(len(report.games), 'game', 'games')}, {_counted(deals, 'deal', 'deals')}, nothing wrong")
    else:
        skipped = sum(1 for g in report.games if g.skipped)
        bad = sum(1 for g in report.games if g.problems)
        text = f"FAIL: {_counted(len(problems), 'problem', 'problems')} in {bad} of {_counted(len(report.games), 'game', 'games')}"
        if skipped:
            text += f", {_counted(skipped, 'game', 'games')} skipped"
        lines.append(text)
    return lines


def _not_started(report: CheckReport) -> list[str]:
    """Why the bot could not be started, each way once (the processes that failed in the same
    words named together), its processes' labels explained."""
    name = report.bot
    if not report.start_failures:
        return ["The bot could not be started:", *("  " + s for s in (report.not_started or "").splitlines())]
    alike: dict[tuple[str, str], list[str]] = {}
    for label, words, tail in report.start_failures:
        alike.setdefault((words.replace(f"'{label}'", f"'{name}'"), tail), []).append(label)
    processes = len(report.start_failures)
    lines = ["The bot could not be started:" if processes == 1 else
             f"The bot could not be started ({processes} of its processes, "
             f"{'all alike' if len(alike) == 1 else 'in ' + str(len(alike)) + ' ways'}):"]
    for (words, tail), labels in alike.items():
        lines.append(f"  {', '.join(sorted(labels))}: {words}")
        if tail:
            lines += ["  --- its stderr ---", *("  " + s for s in tail.splitlines())]
    if any("@" in label or "#" in label for label, _, _ in report.start_failures):
        lines.append(f"  ({name}@N is its process in seating N + 1, {name}#1 its second seat of a pair: "
                     "every seating has processes of its own)")
    return lines


def _describe(p: Problem, same_stderr: bool = False) -> list[str]:
    head = f"{p.setup.title}, {p.where}:"
    detail = p.detail
    out = [head]
    if p.kind == F.ILLEGAL:
        reason, _, legal = detail.partition(" (legal: ")
        out.append(f"  it played {p.line}")
        out.append(f"  which is illegal: {reason}")
        if legal:
            out.append(f"  the legal plays were: {legal.rstrip(')')}")
        return out
    out.append(f"  {detail}")
    if p.line is not None:
        out.append(f"  the line: {p.line}")
    if p.stderr.strip() and same_stderr:
        out.append("  (the same stderr as above)")
    elif p.stderr.strip():
        out.append("  the last lines of its stderr:")
        out += ["  | " + s for s in p.stderr.splitlines()[-10:]]
    return out


def _faulted_deals(g: GameReport) -> set[tuple[str, str]]:
    """The (seating, deal) of each deal of game ``g`` that a fault of the candidate's cost."""
    return {(m[1], m[2]) for p in g.problems if (m := re.match(r"seating (\d+), deal (\d+)", p.where))}


def _notes(report: CheckReport) -> list[str]:
    opts = report.options
    notes = []
    remarks: Counter[str] = sum((g.remarks for g in report.games), Counter())
    for remark, n in remarks.most_common():
        notes.append(f"it {remark}" + (f", {_times(n)}" if n > 1 else ""))
    answered = [g for g in report.games if g.answers]
    if answered:
        slow = max(answered, key=lambda g: g.slowest)
        text = (f"slowest answer: {_ms(slow.slowest)} of the {_ms(opts.tc.move)} allowed "
                f"({slow.setup.title}, {slow.slowest_where}; {sum(g.answers for g in answered)} answers in all)")
        if slow.slowest > SLOW * opts.tc.move:
            text += " — over half the limit: a slower machine may time out"
        notes.append(text)
    startups = [s for g in report.games for s in g.startups]
    if startups:
        text = f"slowest start-up: {_ms(max(startups))} of the {_ms(opts.tc.startup)} allowed ({len(startups)} starts)"
        if max(startups) > SLOW * opts.tc.startup:
            text += " — over half the limit: slow start-up"
        notes.append(text)
    for g in report.games:
        stage = g.setup.stage
        if stage is None or g.skipped:
            continue
        if g.unexercised:
            note = (f"{g.setup.title}: the staged decision never reached the bot (after its faults the game "
                    f"left the staged line), so its answer to {stage.title} went unchecked")
        elif g.staged_faults:
            n = g.cross[stage.offered]
            faulted = ("" if n == 1 else " each time") if g.staged_faults >= n else f" {g.staged_faults} of the {n} times"
            note = (f"{g.setup.title}: offered {stage.title} {_times(n)}; it answered with a fault{faulted} "
                    f"(under \"What went wrong\"), so {'its choice there' if g.staged_faults >= n else 'those choices'} went unchecked")
        elif stage.made is not None and not g.cross[stage.made]:
            n = g.cross[stage.offered]
            plays = " or ".join(dict.fromkeys(g.staged_answers)) or "?"
            note = (f"{g.setup.title}: offered {stage.title} {_times(n)}; {'each time ' if n > 1 else ''}{stage.never.format(plays=plays)}, "
                    f"a legal choice (a bot that wants the other sends that entry of turn.legal as it is)")
        else:
            continue
        if g.hidden:
            note += _further_note(g, report)
        notes.append(note)
    exits: Counter[str] = Counter(e for g in report.games for e in g.exits)
    for e, n in exits.items():
        notes.append(f"a process {e}" + (f" ({_times(n)})" if n > 1 else ""))
    return notes


def _further_note(g: GameReport, report: CheckReport) -> str:
    """What became of a staged decision the bot's faults kept from it (:attr:`GameReport.hidden`)."""
    seed = seed_text(replace(g.setup, again=1).seed(report.options.seed))
    after = f"its position came in deal {(g.staged_at or 0) + 1}, so a fault of the bot's before it (in an earlier deal or between deals) may be why"
    if g.no_further:
        return f"; {after}, and the first deal of seed {seed} offers no such position, so no further match was played"
    again = next((f for f in report.games if f.setup == replace(g.setup, again=1)), None)
    if again is None:
        return ""
    return f"; {after}: a further match staged it in its first deal (seed {seed}, log {again.setup.slug}.jsonl): \"{again.setup.title}\""


def missing_samples() -> list[str]:
    """The sample bots the check needs that are not where it looks (an install that lost its
    package data)."""
    return [str(SAMPLE_DIR / s) for s in SAMPLES if not (SAMPLE_DIR / s).is_file()]
