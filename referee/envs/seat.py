"""Gymnasium's environment of one seat: the learner plays seat ``seat``, bots play the others.

``SeatEnv("block", opponents=["sample_bots/random_bot.py"])`` plays the game on
:class:`~referee.envs.episode.EnvTable`.  Each opponent is one of:

* a command line (a string, or an argv list: ``["node", "bot.js"]`` is one opponent, see
  :func:`opponents_of`) or a :class:`~referee.bots.bot.Bot`: any bot program in
  any language, started as ``referee match`` starts it (``sandbox=True`` runs it under the
  sandbox, as ``referee match --sandbox`` does) and spoken to through the protocol: ``hello``,
  then every ``deal``, event, ``turn``, ``deal_end`` and ``game_end`` line the referee would send
  it, each ``turn`` with ``time_ms`` to answer, and ``match_end`` when the environment closes;
* a function ``choose(turn, state)`` as :func:`protocol.bot.run` takes (a bot written with the
  Python library, in the environment's process), or :func:`random_bot`, the in-process twin of
  ``sample_bots/random_bot.py``, or :func:`referee.envs.policy.as_bot` of a policy (self-play).

A seeded ``reset`` repeats the deals and the opponents' moves: in-process bots with a ``seed``
method (:class:`RandomBot`) are seeded again, and every bot program is started afresh with
``BOT_SEED`` in its environment (as ``referee match --env BOT_SEED=…`` seeds one: the sample
bots read it; a bot given its own ``BOT_SEED`` keeps it).  A reset without a seed goes on with the
processes running.

A bot program is heard exactly as ``referee match`` hears it, through the conversation's own
exchanges (:mod:`referee.conversation.exchange`): the same handshake, the same judgement of each
line (a message of a type it does not know, a ``note``, is ignored within the same caps), the
same clock.  An opponent's play that names no legal move is its fault, as in a match: the deal
ends as its side's loss.  Any other fault (it crashes, says what is not a ``play``, does not
answer in time, gives no hello) raises :class:`OpponentError` with the fault's words (a broken
opponent teaches nothing), and the environment is over.

The observation, the actions and their ``info["action_mask"]``, and the rewards are the AEC
environment's (:mod:`referee.envs.aec`), for the learner's seat; its reward for a step is what it
earned from its move through the opponents' moves up to its next turn.
"""

from __future__ import annotations

import random
import shutil
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import trio

from protocol import messages as m
from protocol.bot import Chooser, State, to_play
from referee.base.clock import TimeControl
from referee.base.errors import BotError
from referee.bots.bot import Bot
from referee.bots.spawn import Confinement, resolve_command
from referee.bots.transport import Launch, launch_process
from referee.conversation import faults as F
from referee.conversation.channel import Terms
from referee.conversation.exchange import At, deliver, handshake, turn
from referee.conversation.log import MatchLog
from referee.conversation.players import Entry, Player
from referee.engine.core.state import DealState
from referee.envs.episode import EnvTable
from referee.records import records as R
from referee.sides.base import GameSide

#: how long a bot process has to answer ``hello``, and each ``turn`` (``referee match``'s defaults)
STARTUP_SECONDS = 10.0
MOVE_SECONDS = 5.0
#: the longest line an opponent may write (``referee match``'s default)
MAX_LINE = 65536
#: the name the environment gives itself in its ``hello``
REFEREE_NAME = "referee envs"

Opponent = str | Sequence[str] | Bot | Chooser


class OpponentError(RuntimeError):
    """An opponent crashed, said something that is not a ``play``, or ran out of time."""


class RandomBot:
    """A ``choose`` that plays a uniformly random legal entry (``sample_bots/random_bot.py`` in
    the environment's own process).  A seeded reset of :class:`SeatEnv` seeds it again, so the
    episode repeats."""

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def seed(self, seed: int) -> None:
        self.rng.seed(seed)

    def __call__(self, turn: m.Turn, state: State) -> m.PlayOption:
        return self.rng.choice(turn.legal)


def random_bot(seed: int | None = None) -> RandomBot:
    """:class:`RandomBot` seeded with ``seed``."""
    return RandomBot(seed)


class BotProgram:
    """A bot program heard as a match hears it: started as ``referee match`` starts it, and
    spoken to through the conversation's own exchanges (:mod:`referee.conversation.exchange`: the
    handshake, the turn, the deliveries, one seat's :class:`~referee.conversation.channel.Channel`),
    so a line is judged here exactly as in a match (a ``note`` or any message of an unknown type is
    ignored within the caps, a late line is late by the same clock).  The exchanges run on a trio
    loop on a thread of its own; the environment's calls wait for them.

    Raises:
        OpponentError: it could not be started or gave no hello in time (:meth:`Fault.explain`).
    """

    def __init__(self, bot: Bot, *, seat: int, name: str, stderr_path: Path, tc: TimeControl, max_line: int = MAX_LINE,
                 launch: Launch = launch_process) -> None:
        self.bot = bot
        self.name = name
        self.seat = seat
        self.player = Player(Entry(bot, seat, tc), 0)
        self._launch = launch
        self._limits = m.Limits(startup_ms=round(tc.startup * 1000), move_ms=round(tc.move * 1000), max_line=max_line, max_faults=1)
        self._max_line = max_line
        self._tc = tc
        self.terms: Terms | None = None
        self._token: trio.lowlevel.TrioToken | None = None
        self._ready = threading.Event()
        self._failed: BaseException | None = None
        self._stop: trio.Event | None = None
        self._thread = threading.Thread(target=self._run, args=(stderr_path,), name=f"bot {name}", daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._failed is not None:
            self._thread.join()
            raise OpponentError(f"opponent {name} ({' '.join(bot.argv)}) did not start: {self._failed}") from None

    def _run(self, stderr_path: Path) -> None:
        try:
            trio.run(self._main, stderr_path)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            if not self._ready.is_set():
                self._failed = exc
                self._ready.set()

    async def _main(self, stderr_path: Path) -> None:
        self._stop = trio.Event()
        p = self.player
        self.terms = terms = Terms(MatchLog(None), self._tc, trio.current_time())
        async with trio.open_nursery() as nursery:
            try:
                p.channel.proc = await self._launch(nursery, self.bot, name=self.name, stderr_path=stderr_path, max_line=self._max_line,
                                            hidden=())
            except (BotError, OSError) as exc:
                self._fail(str(exc))
                return
            try:
                hello = m.encode_line(m.Hello(m.PROTOCOL_VERSION, REFEREE_NAME, self._limits))
                fault = await handshake(terms, p, At(self.seat, 0, 0), hello, R.Hello(self.name, 1, self.seat, limits=self._limits))
                if fault is not None:
                    self._fail(fault.explain())
                    return
                self._token = trio.lowlevel.current_trio_token()
                self._ready.set()
                await self._stop.wait()
                with trio.move_on_after(1):  # the match is over: its last lines, then match_end
                    await p.channel.proc.send(b"".join([*p.channel.outbox, m.encode_line(m.MatchEnd())]))
            finally:
                with trio.CancelScope(shield=True):
                    await p.channel.proc.close()

    def _fail(self, why: str) -> None:
        self._failed = OpponentError(why)
        self._ready.set()

    def turn(self, state: DealState, side: GameSide, turn_id: int, lines: list[bytes]) -> F.Fault | None:
        """Put ``lines`` (what the seat is owed) in its outbox and play its turn in ``state``, as
        a match does (:func:`~referee.conversation.exchange.turn`): its play is made on ``state``;
        the fault, if it made none."""
        fault: F.Fault | None = self._call(self._turn, state, side, turn_id, lines)
        return fault

    async def _turn(self, state: DealState, side: GameSide, turn_id: int, lines: list[bytes]) -> F.Fault | None:
        assert self.terms is not None
        self.player.channel.outbox.extend(lines)
        return await turn(self.terms, self.player, At(self.seat, 0, 0), state, side, turn_id)

    def tell(self, lines: list[bytes]) -> F.Fault | None:
        """Write ``lines`` asking nothing (a deal's end), and hear what it said unasked, as a
        match does (:func:`~referee.conversation.exchange.deliver`); a fault, if any."""
        fault: F.Fault | None = self._call(self._tell, lines) if lines else None
        return fault

    async def _tell(self, lines: list[bytes]) -> F.Fault | None:
        assert self.terms is not None
        self.player.channel.outbox.extend(lines)
        return await deliver(self.terms, self.player, At(self.seat, 0, 0))

    def _call(self, fn: Callable[..., Any], *args: Any) -> Any:
        if self._token is None:
            raise OpponentError(f"opponent {self.name} is closed")
        return trio.from_thread.run(fn, *args, trio_token=self._token)

    @property
    def returncode(self) -> int | None:
        """How its process ended, ``None`` while it runs."""
        return None if self.player.channel.proc is None else self.player.channel.proc.returncode

    def close(self) -> None:
        """Tell it the match is over, end it, and wait for its loop to finish."""
        token, self._token = self._token, None
        if token is not None and self._stop is not None:
            try:
                trio.from_thread.run_sync(self._stop.set, trio_token=token)
            except trio.RunFinishedError:
                pass
        self._thread.join(timeout=30)


class SeatEnv(gymnasium.Env):
    """One seat of a game as a Gymnasium environment, the other seats played by ``opponents``
    (one for each other seat, in seat order; a single one plays them all)."""

    metadata = {"render_modes": ["ansi"]}

    def __init__(self, game: str, opponents: Sequence[Opponent] | Opponent = (), *, players: int | None = None,
                 options: dict[str, Any] | None = None, seat: int = 0, reward: str = "points", episode: str = "deal",
                 sandbox: bool = False, move_seconds: float = MOVE_SECONDS, startup_seconds: float = STARTUP_SECONDS,
                 stderr_dir: Path | None = None, render_mode: str | None = None) -> None:
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode={render_mode!r}: choose 'ansi' or None")
        from referee.engine.registry import variant

        n = variant(game).default_players if players is None else players
        if not 0 <= seat < n:
            raise ValueError(f"seat={seat}: {game} with {n} players has seats 0..{n - 1}")
        given = opponents_of(opponents, n)
        if len(given) == 1:
            given = given * (n - 1)
        if len(given) != n - 1:
            raise ValueError(f"{game} with {n} players needs {n - 1} opponents (or one for every other seat), not {len(given)}")
        self.seat = seat
        self.render_mode = render_mode
        others = [s for s in range(n) if s != seat]
        self._stderr_dir = Path(stderr_dir) if stderr_dir is not None else Path(tempfile.mkdtemp(prefix="referee-envs-"))
        self._choosers: dict[int, Chooser] = {}
        self._programs: dict[int, BotProgram] = {}
        self._bots: dict[int, Bot] = {}
        for s, opp in zip(others, given):
            if isinstance(opp, Bot):
                self._bots[s] = opp
            elif isinstance(opp, (str, list, tuple)):
                argv = resolve_command(opp if isinstance(opp, str) else list(opp))
                self._bots[s] = Bot(Path(argv[-1]).name, argv, Confinement(sandbox=sandbox))
            elif callable(opp):
                self._choosers[s] = opp
            else:
                raise TypeError(f"opponent {opp!r} is neither a command line, a Bot nor a choose(turn, state) function")
        self.table = EnvTable(game, players, options, reward=reward, episode=episode, outbox=tuple(self._bots))
        codec = self.table.codec
        self.action_space = gymnasium.spaces.Discrete(codec.actions)
        self.observation_space = gymnasium.spaces.Box(codec.low, codec.high, dtype=np.float32)
        self._turn_id = 0
        self._over = True
        self.tc = TimeControl(startup=startup_seconds, move=move_seconds)
        self._start_programs(None)

    def _start_programs(self, seed: int | None) -> None:
        """Start every bot program afresh (ending those running): with ``seed``, each gets
        ``BOT_SEED`` (unless its own environment sets one), so a seeded reset repeats its moves
        as it repeats the deals."""
        self._close_programs()
        try:
            for s, bot in self._bots.items():
                self._programs[s] = BotProgram(seeded(bot, seed, s), seat=s, name=f"seat {s} ({bot.name})",
                                               stderr_path=self._stderr_dir / f"seat{s}.stderr", tc=self.tc)
        except BaseException:
            self.close()
            raise

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self.table.reset(seed)
        if seed is not None:  # the opponents repeat themselves too: bot programs start afresh, seeded
            self._start_programs(seed)
            self._turn_id = 0
            for s, chooser in self._choosers.items():
                reseed = getattr(chooser, "seed", None)
                if callable(reseed):
                    reseed(opponent_seed(seed, s))
        self._over = False
        # An episode begins at the learner's first move: a deal the others finish before it (a
        # fish of forced passes, an opponent's fault) is skipped for the next.
        for _ in range(1000):
            _, over = self._opponents_move()
            if not over:
                return self._obs(), self._info()
            self.table.reset()
        raise RuntimeError("a thousand deals in a row ended before the learner's first move")

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self._over:
            raise RuntimeError("the episode is over: call reset()")
        rewards, over = self.table.play(int(action))
        reward = rewards[self.seat]
        if not over:
            more, over = self._opponents_move()
            reward += more
        self._over = over
        return self._obs(), float(reward), over, False, self._info()

    def _obs(self) -> np.ndarray:
        return self.table.observe(self.seat)

    def _info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"action_mask": self.table.mask(self.seat)}
        if self.table.faulted is not None:
            info["fault"] = self.table.faulted
        return info

    def action_mask(self) -> np.ndarray:
        """The learner's legal actions now (``info["action_mask"]`` of the last step)."""
        return self.table.mask(self.seat)

    def action_masks(self) -> np.ndarray:
        """:meth:`action_mask` by the name sb3-contrib's ``MaskablePPO`` asks for (no wrapper needed)."""
        return self.action_mask()

    def _opponents_move(self) -> tuple[float, bool]:
        """Let the opponents play until the learner is to move or the episode is over; what the
        learner earned meanwhile."""
        table = self.table
        earned = 0.0
        while True:
            seat = table.to_move
            if seat is None:
                self._flush()
                return earned, True
            if seat == self.seat:
                self._flush()
                return earned, False
            rewards, over = self._move(seat)
            earned += rewards[self.seat]
            if over:
                self._flush()
                return earned, True

    def _move(self, seat: int) -> tuple[list[float], bool]:
        """The opponent in ``seat`` moves: the rewards of its move, and whether the episode is over."""
        table = self.table
        program = self._programs.get(seat)
        if program is None:
            turn = table.turn
            assert turn is not None
            play = to_play(self._choosers[seat](turn, table.views[seat]), trains=table.views[seat].family.trains)
            try:
                action = table.codec.action_of(play)
            except (ValueError, KeyError, TypeError):
                action = -1  # names no move of this game: a fault, as the referee judges it
            return table.play(action)
        assert table.state is not None
        self._turn_id += 1
        box = table.outbox[seat]
        lines, box[:] = box[:], []
        fault = program.turn(table.state, table.codec.side, self._turn_id, lines)
        if fault is None:
            return table.moved()
        if fault.kind == F.ILLEGAL:  # as in a match: the deal is its side's loss
            return table.forfeit()
        raise OpponentError(f"opponent {program.name}: {fault.kind}: {fault.explain()}")

    def _flush(self) -> None:
        for seat, program in self._programs.items():
            box = self.table.outbox[seat]
            lines, box[:] = box[:], []
            fault = program.tell(lines)
            if fault is not None:
                raise OpponentError(f"opponent {program.name}: {fault.kind}: {fault.explain()}")

    def render(self) -> str | None:
        return self.table.text() if self.render_mode == "ansi" else None

    def close(self) -> None:
        """End every bot program (``match_end``, then its process) and wait for them."""
        self._close_programs()

    def _close_programs(self) -> None:
        programs, self._programs = self._programs, {}
        for program in programs.values():
            program.close()


def opponent_seed(seed: int, seat: int) -> int:
    """The seed an opponent in ``seat`` is given at a reset with ``seed`` (below 2**31: a C
    bot reads it with ``strtoul`` into an ``unsigned``)."""
    return (seed * 8 + seat) % 2**31


def seeded(bot: Bot, seed: int | None, seat: int) -> Bot:
    """``bot`` with ``BOT_SEED`` in its environment (sample_bots/README.md: how the sample bots,
    and ``referee match --env BOT_SEED=…``, seed a bot), unless it sets its own or no seed is given."""
    confinement = bot.confinement or Confinement()
    env = confinement.env or {}
    if seed is None or "BOT_SEED" in env:
        return bot
    return replace(bot, confinement=replace(confinement, env={**env, "BOT_SEED": str(opponent_seed(seed, seat))}))


def opponents_of(opponents: Sequence[Opponent] | Opponent, players: int) -> list[Opponent]:
    """The opponents given, one per entry: a string, a Bot or a function alone is one; a list
    of strings is one opponent's argv unless every string is a command line of its own (it has
    a space, or names a file), and a list of anything else lists the opponents.

    Raises:
        ValueError: a list of strings that reads both ways (as many of them as there are
            opponents, each a program on ``PATH``): say which.
    """
    if isinstance(opponents, (str, Bot)) or callable(opponents):
        return [opponents]
    given = list(opponents)
    words = [o for o in given if isinstance(o, str)]
    if len(given) > 1 and len(words) == len(given):
        alone = [w for w in words if " " in w.strip() or "/" in w or Path(w).is_file()]
        if len(alone) < len(words):
            if len(words) == players - 1 and all(shutil.which(w) for w in words):
                raise ValueError(f"opponents={words!r} reads as {len(words)} programs or as one argv: give one argv as "
                                 f"[{words!r}], or each command line as a list of its own")
            return [words]
    return given

