"""The encodings of a game for learners: a fixed set of numbered actions, and an observation
vector made from what the protocol has told one seat.

Both come from the protocol, not from the engine's state, so that a learner sees exactly what a
bot sees and a trained policy plays as a bot unchanged (:mod:`referee.envs.policy`):

* An **action** is a number for one entry of a ``turn``'s ``legal`` list
  (:class:`~protocol.messages.PlayOption`), worked out from its fields (:meth:`Codec.action_of`):
  a tile on an end (the lead's end is null), laid closed or not (osel), on a train
  (mexican_train), at a place (kolbasa: the tile is the one turned up, so the place alone), or a
  ``stop``, a ``hundred``, a ``write_off`` or a ``decline``.  The set is fixed per game and seat
  count; the mask of a turn marks its legal entries and nothing else.
* An **observation** (:meth:`Codec.observe`) is a ``float32`` vector built from a
  :class:`protocol.bot.State` kept up to date with that seat's messages (``deal``, the events,
  its own ``turn``\\ s, ``deal_end``): its hand, the tiles on the table and who placed them, the
  ends, every seat's tile count, the bazaar, the scores, whose turn it is, and the family's own
  public fields (markers and the open double; kolbasa's rows, lines and the tile turned up;
  sea_kozel's special deal).  Seats are counted from the observer (0 is itself), sides from its
  own.  :attr:`Codec.sections` names the parts; docs/envs.md lists them per game.

What differs by family of games (the ends or trains a tile goes on, the moves after the
placements, which tiles are the observer's own, the family's own parts) is its side's
:class:`~referee.sides.encoding.Encoding`, beside the family's messages in :mod:`referee.sides`:
this module names no family.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from protocol import messages as m
from protocol.bot import State
from referee.engine.core.tiles import N_TILES, tile
from referee.engine.registry import variant
from referee.sides import side_of

#: the largest value a count of points in an observation may reach (its space's bound)
SCORE_BOUND = 1e7
SPECIALS = ("hundred", "write_off", "eggs")


@dataclass(frozen=True)
class Section:
    """A named part of the observation vector: ``size`` numbers from ``start``, each between
    ``low`` and ``high``."""

    name: str
    start: int
    size: int
    low: float
    high: float
    meaning: str


class Codec:
    """The action numbering and the observation of one game, seat count and set of options."""

    def __init__(self, game: str, players: int | None = None, options: dict[str, Any] | None = None) -> None:
        v = variant(game)
        self.variant = v
        self.players = v.default_players if players is None else players
        self.options = v.resolve_options(self.players, options)
        self.side = side_of(v, self.players, self.options)
        self.family = self.side.layout  # the family's name, for people (docs/envs.md's tables); nothing branches on it
        #: what differs by family (its side's, :mod:`referee.sides.encoding`)
        self.encoding = self.side.encoding(self.players)
        self.pairs = v.pair_play(self.players, self.options)
        self.sides = 2 if self.pairs else self.players
        self.end_names = self.encoding.end_names
        self.placements = self.encoding.placements
        self.extras: tuple[str, ...] = self.encoding.extras
        self.actions = self.placements + len(self.extras)
        self.sections = self._layout_sections()
        self.size = self.sections[-1].start + self.sections[-1].size
        self.low = np.concatenate([np.full(s.size, s.low, np.float32) for s in self.sections])
        self.high = np.concatenate([np.full(s.size, s.high, np.float32) for s in self.sections])
        self._at = {s.name: s.start for s in self.sections}

    def __deepcopy__(self, memo: dict[int, Any]) -> Codec:
        return self  # a value: what copies a state (OpenSpiel's clone) shares it

    def __reduce__(self) -> tuple[Any, ...]:
        return (codec, (self.variant.id, self.players, tuple(sorted(self.options.items()))))

    # -- actions ---------------------------------------------------------------------------------

    def action_of(self, o: m.PlayOption | m.Play) -> int:
        """The action of a ``legal`` entry (or of a bot's ``play`` with the same fields).

        Raises:
            ValueError: the entry names an end, train or place this game does not have.
        """
        if o.declare is not m.UNSET and o.declare != "hundred":
            return self.placements + self.extras.index(o.declare)
        if o.declare == "hundred":
            return self.placements + 1
        if o.stop is True:
            return self.placements
        return self.encoding.placement_of(o, self.variant.id)

    def action_name(self, action: int) -> str:
        """An action in words: ``"3-5 left"``, ``"0-6 lead"``, ``"6-6 up closed"``, ``"knife:3"``,
        ``"stop"``."""
        if not 0 <= action < self.actions:
            raise ValueError(f"{action} is not an action of {self.variant.id} (0..{self.actions - 1})")
        if action >= self.placements:
            return self.extras[action - self.placements]
        return self.encoding.placement_name(action)

    def mask(self, legal: Sequence[m.PlayOption]) -> np.ndarray:
        """The action mask of a turn: 1 for each legal entry's action, 0 elsewhere."""
        out = np.zeros(self.actions, np.int8)
        for o in legal:
            out[self.action_of(o)] = 1
        return out

    # -- observations ----------------------------------------------------------------------------

    def _layout_sections(self) -> list[Section]:
        n, sides, ends = self.players, self.sides, len(self.end_names)
        parts: list[tuple[str, int, float, float, str]] = [
            ("hand", N_TILES, 0, 1, "1 for each tile in the observer's hand (kolbasa: in its row and public), by tile id"),
            ("table", N_TILES, 0, 1, "1 for each tile on the table (the layout; the station in mexican_train), by tile id"),
            ("placed_by", n * N_TILES, 0, 1, "for each seat from the observer, 1 for each tile it placed this deal"),
            ("ends", ends * 8, 0, 1, "for each end (" + ", ".join(self.end_names) + "): one-hot of the number it shows, 0..6, or 7 when it is not open"),
            ("counts", n, 0, N_TILES, "tiles each seat holds (kolbasa: its row's length), seats from the observer"),
            ("bazaar", 1, 0, N_TILES, "tiles left in the bazaar"),
            ("passes", n, 0, 1000, "how many times each seat passed (knocked) this deal, seats from the observer"),
            ("scores", sides, -SCORE_BOUND, SCORE_BOUND, "each side's total in the game so far, the observer's side first"),
            ("to_move", n, 0, 1, "one-hot: the seat to move, from the observer (all 0 once the deal is over)"),
            ("continuing", 1, 0, 1, "1 when the observer is going on with a turn it began (osel, sea_kozel's doubles)"),
            ("count", 1, 0, 1000, "telephone, muggins: the sum of the open ends (0 elsewhere)"),
        ]
        parts += self.encoding.parts()
        if self.variant.game.special_kinds:  # sea_kozel
            parts += [("special", len(SPECIALS) + 1, 0, 1, "one-hot: the deal's special state (hundred, write_off, eggs), last: "
                                                           "it is the observer's side's")]
        out, start = [], 0
        for name, size, low, high, meaning in parts:
            out.append(Section(name, start, size, float(low), float(high), meaning))
            start += size
        return out

    def observe(self, state: State, to_move: int | None, continuing: bool = False, count: int | None = None) -> np.ndarray:
        """The observation of the seat whose messages ``state`` holds.  ``to_move``: the seat to
        move (``None`` once the deal is over); ``continuing`` and ``count``: the fields of the
        seat's last ``turn`` (pass them only while that turn is the one being answered)."""
        at = self._at
        n = self.players
        me = state.seat
        obs = np.zeros(self.size, np.float32)
        encoding = self.encoding
        for t in encoding.own_tiles(state):
            obs[at["hand"] + tile(*t)] = 1
        up = self._history(state, obs)
        encoding.observe(state, obs, at, up if to_move is not None else -1)
        ends = at["ends"]
        shown = state.ends
        for i, name in enumerate(self.end_names):
            v = shown.get(name, 7)
            obs[ends + 8 * encoding.end_place(i, me) + (v if 0 <= v <= 6 else 7)] = 1
        for s, c in enumerate(state.counts[:n]):
            obs[at["counts"] + (s - me) % n] = c
        obs[at["bazaar"]] = state.bazaar
        k = self.sides
        for side, points in enumerate(state.scores[:k]):
            obs[at["scores"] + (side - state.side) % k] = max(-SCORE_BOUND, min(SCORE_BOUND, points))
        if to_move is not None:
            obs[at["to_move"] + (to_move - me) % n] = 1
        obs[at["continuing"]] = continuing
        obs[at["count"]] = count or 0
        if "special" in at and state.special is not None:
            obs[at["special"] + SPECIALS.index(state.special.kind)] = 1
            obs[at["special"] + len(SPECIALS)] = state.special.side == state.side
        return obs

    def _history(self, state: State, obs: np.ndarray) -> int:
        """The deal's events into ``obs``: tiles placed and by whom, passes; the tile turned up
        and not yet placed (kolbasa), or -1."""
        at, n, me = self._at, self.players, state.seat
        table, placed_by, passes = at["table"], at["placed_by"], at["passes"]
        on_table = self.encoding.placed_stay  # kolbasa's table is its lines: tiles cut return to the rows
        up = -1
        for e in state.history:
            kind = type(e)
            if kind is m.Placed:
                t = tile(*e.tile)  # type: ignore[union-attr]  # kind is m.Placed: narrowed by type(), which mypy does not follow through a variable
                obs[placed_by + ((e.seat - me) % n) * N_TILES + t] = 1
                up = -1
                if on_table:
                    obs[table + t] = 1
            elif kind is m.Passed:
                obs[passes + (e.seat - me) % n] += 1
            elif kind is m.Turned:
                up = tile(*e.tile)  # type: ignore[union-attr]  # kind is m.Turned, as above
        return up


@cache
def codec(game: str, players: int | None = None, options: tuple[tuple[str, Any], ...] = ()) -> Codec:
    """The codec of a game (cached: options as sorted ``(name, value)`` pairs)."""
    return Codec(game, players, dict(options))


def codec_for(game: str, players: int, options: dict[str, Any]) -> Codec:
    """:func:`codec` for a dict of options, every option resolved first (what a ``deal`` message
    carries), so the same game is one codec however its options were given."""
    v = variant(game)
    return codec(game, players, tuple(sorted(v.resolve_options(players, options).items())))
