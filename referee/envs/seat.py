"""Gymnasium's environment of one seat: the learner plays seat ``seat``, bots play the others.

``SeatEnv("block", opponents=["sample_bots/random_bot.py"])`` plays the game on
:class:`~referee.envs.episode.EnvTable`.  Each opponent is one of:

* a command line (a string, or an argv list) or a :class:`~referee.bots.bot.Bot`: any bot program in
  any language, started as ``referee match`` starts it (``sandbox=True`` runs it under the
  sandbox, as ``referee match --sandbox`` does) and spoken to through the protocol: ``hello``,
  then every ``deal``, event, ``turn``, ``deal_end`` and ``game_end`` line the referee would send
  it, each ``turn`` with ``time_ms`` to answer, and ``match_end`` when the environment closes;
* a function ``choose(turn, state)`` as :func:`protocol.bot.run` takes (a bot written with the
  Python library, in the environment's process), or :func:`random_bot`, the in-process twin of
  ``sample_bots/random_bot.py``, or :func:`referee.envs.policy.as_bot` of a policy (self-play).

A seeded ``reset`` repeats the deals, and the moves of in-process bots with a ``seed`` method
(:class:`RandomBot`); a bot program's own randomness is its own.

An opponent's play that names no legal move is its fault, as in a match: the deal ends as its
side's loss.  An opponent that crashes, says what is not a ``play``, or does not answer in time
raises :class:`OpponentError` (a broken opponent teaches nothing), and the environment is over.

The observation, the actions and their ``info["action_mask"]``, and the rewards are the AEC
environment's (:mod:`referee.envs.aec`), for the learner's seat; its reward for a step is what it
earned from its move through the opponents' moves up to its next turn.
"""

from __future__ import annotations

import random
import tempfile
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import gymnasium
import msgspec
import numpy as np
import trio

from protocol import messages as m
from protocol.bot import Chooser, State, to_play
from referee.bots.bot import Bot
from referee.bots.spawn import Confinement, resolve_command
from referee.bots.transport import BotTransport, launch_process
from referee.envs.episode import EnvTable

#: how long a bot process has to answer ``hello``, and each ``turn`` (``referee match``'s defaults)
STARTUP_SECONDS = 10.0
MOVE_SECONDS = 5.0

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
    """A bot program behind the protocol, run by a trio loop on a thread of its own; the
    environment's calls wait for it (``hello`` at start, then lines and turns)."""

    def __init__(self, bot: Bot, *, name: str, stderr_path: Path, startup: float, move: float, max_line: int = 65536) -> None:
        self.bot = bot
        self.name = name
        self.move = move
        self._token: trio.lowlevel.TrioToken | None = None
        self._transport: BotTransport | None = None
        self._ready = threading.Event()
        self._failed: BaseException | None = None
        self._stop: trio.Event | None = None
        self._thread = threading.Thread(target=self._run, args=(stderr_path, startup, max_line), name=f"bot {name}", daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._failed is not None:
            self._thread.join()
            raise OpponentError(f"opponent {name} ({' '.join(bot.argv)}) did not start: {self._failed}") from self._failed

    def _run(self, stderr_path: Path, startup: float, max_line: int) -> None:
        try:
            trio.run(self._main, stderr_path, startup, max_line)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            if not self._ready.is_set():
                self._failed = exc
                self._ready.set()

    async def _main(self, stderr_path: Path, startup: float, max_line: int) -> None:
        self._stop = trio.Event()
        async with trio.open_nursery() as nursery:
            transport = await launch_process(nursery, self.bot, name=self.name, stderr_path=stderr_path, max_line=max_line, hidden=())
            try:
                await transport.send(m.encode_line(m.Hello(m.PROTOCOL_VERSION, "referee envs", m.Limits(
                    startup_ms=int(startup * 1000), move_ms=int(self.move * 1000), max_line=max_line))))
                line = None
                with trio.move_on_after(startup):
                    line = await transport.read_line()
                if line is None:
                    raise OpponentError(f"no hello within {startup:g} s")
                if not isinstance(m.decode_from_bot(line), m.BotHello):
                    raise OpponentError(f"its first line is not a hello: {line[:200]!r}")
                self._transport = transport
                self._token = trio.lowlevel.current_trio_token()
                self._ready.set()
                await self._stop.wait()
                with trio.move_on_after(1):
                    await transport.send(m.encode_line(m.MatchEnd()))
            finally:
                with trio.CancelScope(shield=True):
                    await transport.close()

    def tell(self, lines: list[bytes]) -> None:
        """Send lines (each ends with its newline)."""
        if lines:
            self._call(self._send, b"".join(lines))

    async def _send(self, data: bytes) -> None:
        assert self._transport is not None
        await self._transport.send(data)

    def ask(self, lines: list[bytes]) -> bytes:
        """Send lines, the turn last, and read the answer.

        Raises:
            OpponentError: it exited, or gave no line within its time.
        """
        line = self._call(self._ask, b"".join(lines))
        if line is None:
            raise OpponentError(f"opponent {self.name} did not answer within {self.move:g} s")
        return line  # type: ignore[no-any-return]

    async def _ask(self, data: bytes) -> bytes | None:
        assert self._transport is not None
        for stale in self._transport.ready_lines():  # what it said unasked is not an answer
            del stale
        await self._transport.send(data)
        with trio.move_on_after(self.move):
            return await self._transport.read_line()
        return None

    def _call(self, fn: Callable[[bytes], Any], data: bytes) -> Any:
        if self._token is None:
            raise OpponentError(f"opponent {self.name} is closed")
        try:
            return trio.from_thread.run(fn, data, trio_token=self._token)
        except OpponentError:
            raise
        except Exception as exc:
            raise OpponentError(f"opponent {self.name}: {exc}") from exc

    def close(self) -> None:
        """Tell it the match is over, end it, and wait for its loop to finish."""
        token, self._token = self._token, None
        if token is not None and self._stop is not None:
            try:
                trio.from_thread.run_sync(self._stop.set, trio_token=token)
            except trio.RunFinishedError:
                pass
        self._thread.join(timeout=30)


class SeatEnv(gymnasium.Env):  # type: ignore[misc]
    """One seat of a game as a Gymnasium environment, the other seats played by ``opponents``
    (one for each other seat, in seat order; a single one plays them all)."""

    metadata = {"render_modes": ["ansi"]}

    def __init__(self, game: str, opponents: Sequence[Opponent] | Opponent = (), *, players: int | None = None,
                 options: dict[str, Any] | None = None, seat: int = 0, reward: str = "points", episode: str = "deal",
                 sandbox: bool = False, move_seconds: float = MOVE_SECONDS, startup_seconds: float = STARTUP_SECONDS,
                 stderr_dir: Path | None = None, render_mode: str | None = None) -> None:
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode={render_mode!r}: choose 'ansi' or None")
        given = [opponents] if isinstance(opponents, (str, Bot)) or callable(opponents) else list(opponents)
        from referee.engine.registry import variant

        n = variant(game).default_players if players is None else players
        if not 0 <= seat < n:
            raise ValueError(f"seat={seat}: {game} with {n} players has seats 0..{n - 1}")
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
        bots: dict[int, Bot] = {}
        for s, opp in zip(others, given):
            if isinstance(opp, Bot):
                bots[s] = opp
            elif isinstance(opp, (str, list, tuple)):
                argv = resolve_command(opp if isinstance(opp, str) else list(opp))
                bots[s] = Bot(Path(argv[-1]).name, argv, Confinement(sandbox=sandbox))
            elif callable(opp):
                self._choosers[s] = opp
            else:
                raise TypeError(f"opponent {opp!r} is neither a command line, a Bot nor a choose(turn, state) function")
        self.table = EnvTable(game, players, options, reward=reward, episode=episode, outbox=tuple(bots))
        codec = self.table.codec
        self.action_space = gymnasium.spaces.Discrete(codec.actions)
        self.observation_space = gymnasium.spaces.Box(codec.low, codec.high, dtype=np.float32)
        self._turn_id = 0
        self._over = True
        try:
            for s, bot in bots.items():
                self._programs[s] = BotProgram(bot, name=f"seat {s} ({bot.name})", stderr_path=self._stderr_dir / f"seat{s}.stderr",
                                               startup=startup_seconds, move=move_seconds)
        except BaseException:
            self.close()
            raise
        self.move_ms = int(move_seconds * 1000)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self.table.reset(seed)
        if seed is not None:  # in-process bots that can be seeded repeat themselves too
            for s, chooser in self._choosers.items():
                reseed = getattr(chooser, "seed", None)
                if callable(reseed):
                    reseed(seed * 8 + s)
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
        return self.table.observe(self.seat)  # type: ignore[no-any-return]

    def _info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"action_mask": self.table.mask(self.seat)}
        if self.table.faulted is not None:
            info["fault"] = self.table.faulted
        return info

    def action_mask(self) -> np.ndarray:
        return self.table.mask(self.seat)  # type: ignore[no-any-return]

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
            rewards, over = table.play(self._answer(seat))
            earned += rewards[self.seat]
            if over:
                self._flush()
                return earned, True

    def _answer(self, seat: int) -> int:
        table = self.table
        turn = table.turn
        assert turn is not None
        chooser = self._choosers.get(seat)
        if chooser is not None:
            play = to_play(chooser(turn, table.views[seat]), trains=table.codec.family == "trains")
        else:
            program = self._programs[seat]
            self._turn_id += 1
            box = table.outbox[seat]
            lines = [*box, table.turn_line(self._turn_id, self.move_ms)]
            box.clear()
            line = program.ask(lines)
            try:
                msg = m.decode_from_bot(line)
            except msgspec.DecodeError as exc:
                raise OpponentError(f"opponent {program.name} answered a turn with a line that is not a play ({exc}): {line[:200]!r}") from None
            if not isinstance(msg, m.Play):
                raise OpponentError(f"opponent {program.name} answered a turn with a {type(msg).__name__}, not a play")
            play = msg
        try:
            return table.codec.action_of(play)  # type: ignore[arg-type]
        except (ValueError, KeyError, TypeError):
            return -1  # names no move of this game: a fault, as the referee judges it

    def _flush(self) -> None:
        for seat, program in self._programs.items():
            box = self.table.outbox[seat]
            if box:
                program.tell(box[:])
                box.clear()

    def render(self) -> str | None:
        return self.table.text() if self.render_mode == "ansi" else None

    def close(self) -> None:
        """End every bot program (``match_end``, then its process) and wait for them."""
        programs, self._programs = self._programs, {}
        for program in programs.values():
            program.close()
