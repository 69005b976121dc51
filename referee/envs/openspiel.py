"""Every game as an OpenSpiel Python game, registered as ``referee_<game>`` when this module is
imported (``pip install 'referee[rl]'``)::

    import pyspiel
    import referee.envs.openspiel  # registers them

    game = pyspiel.load_game("referee_kozel", {"players": 4, "rule13": "hang"})

One OpenSpiel game is one deal: the first deal of a fresh game of the variant (mexican_train:
round 0, the 6-6 on the station).

* **Chance nodes** deal the tiles one at a time, uniformly among the tiles left: the hands in
  seat order, then the undealt tiles in the order they lie (the bazaar's order, which decides
  what every draw brings, or the sleeping tiles).  A deal the rules void (kozel's redeal, RULES.md
  §2.9), or one the engine plays to its end before anyone has a decision to take (block: the
  forced lead, then every seat blocked), is dealt again by as many chance nodes, so every episode
  has a move; after 64 such deals in a row the game ends with every return 0 (never met: one
  deal in twenty or so is void).
* **Players' actions** are :mod:`referee.envs.codec`'s numbers, the same as the PettingZoo and
  Gymnasium environments'; ``legal_actions()`` is ascending.  The engine's forced moves (the
  lead in games that force it, draws, passes) are not decisions and take no node.
* **Observations** (``observation_tensor``, ``observation_string``) are the codec's, made from
  the protocol's messages to that player; there is no information-state (perfect recall) view.
* **Returns** are the deal's margins: what the player's side wrote, times the game's sense, less
  the mean of the other sides' (zero-sum), at the end.
* **Parameters**: ``players`` and every house-rule option of the game, by the names and values
  ``referee match --option`` takes (``referee_kozel``'s ``rule13="hang"``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyspiel

from protocol import messages as m
from referee.engine.core.deal import Deal
from referee.engine.core.game import Variant
from referee.engine.core.tiles import DOUBLE, N_TILES, tile_name
from referee.engine.registry import variant, variant_names
from referee.envs.codec import codec_for
from referee.envs.episode import EnvTable

#: void deals in a row after which a game ends with no result
MAX_REDEALS = 64
#: a bound on a deal's margin (the most a deal writes, sea_kozel's hundred and goats included)
MAX_UTILITY = 1000.0


def _param(value: Any) -> Any:
    return value if isinstance(value, (bool, int, float, str)) else str(value)


def game_type(v: Variant) -> pyspiel.GameType:
    params = {"players": v.default_players, **{o.name: _param(o.default) for o in v.options}}
    return pyspiel.GameType(
        short_name=f"referee_{v.id}",
        long_name=f"referee: {v.title}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=max(v.players),
        min_num_players=min(v.players),
        provides_information_state_string=False,
        provides_information_state_tensor=False,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=params,
    )


class RefereeGame(pyspiel.Game):
    """One deal of a variant, for OpenSpiel."""

    variant: Variant

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        params = dict(params or {})
        v = self.variant
        players = int(params.pop("players", v.default_players))
        options = v.resolve_options(players, params)
        self.players = players
        self.options = options
        self.codec = codec_for(v.id, players, options)
        shape = v.shape(players, options)
        self.shape = shape
        #: the tiles a deal hands out (mexican_train's round 0: all but the station, 6-6)
        self.tiles = [t for t in range(N_TILES) if not (shape.station and t == DOUBLE[6])]
        moves = self.codec.encoding.max_moves
        info = pyspiel.GameInfo(
            num_distinct_actions=self.codec.actions,
            max_chance_outcomes=N_TILES,
            num_players=players,
            min_utility=-MAX_UTILITY,
            max_utility=MAX_UTILITY,
            utility_sum=0.0,
            max_game_length=len(self.tiles) * MAX_REDEALS + moves,
        )
        super().__init__(game_type(v), info, {"players": players, **{k: _param(val) for k, val in options.items()}})

    def new_initial_state(self) -> RefereeState:
        return RefereeState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> Observer:
        if params:
            raise ValueError(f"observation parameters are not supported; got {params}")
        if iig_obs_type is not None and iig_obs_type.perfect_recall:
            raise ValueError("referee games offer no perfect-recall (information state) observation")
        return Observer(self)


class RefereeState(pyspiel.State):
    """A deal being dealt by chance, then played on the engine."""

    def __init__(self, game: RefereeGame) -> None:
        super().__init__(game)
        self._game = game
        self.order: list[int] = []  # tiles dealt so far, in order
        self.voids = 0
        self.table = EnvTable(game.variant.id, game.players, game.options, reward="margin", episode="deal")
        self.dealt = False
        self._returns = [0.0] * game.players
        self._over = False

    # -- chance ------------------------------------------------------------------------------

    def current_player(self) -> int:
        if self._over:
            return int(pyspiel.PlayerId.TERMINAL)
        if not self.dealt:
            return int(pyspiel.PlayerId.CHANCE)
        seat = self.table.to_move
        return int(pyspiel.PlayerId.TERMINAL) if seat is None else seat

    def chance_outcomes(self) -> list[tuple[int, float]]:
        left = [t for t in self._game.tiles if t not in self.order]
        return [(t, 1.0 / len(left)) for t in left]

    def _legal_actions(self, player: int) -> list[int]:
        return sorted(self.table.legal_actions())

    def _apply_action(self, action: int) -> None:
        if not self.dealt:
            self._deal(action)
            return
        rewards, over = self.table.play(action)
        if over:
            self._returns = rewards
            self._over = True

    def _deal(self, t: int) -> None:
        assert t not in self.order, f"{tile_name(t)} is dealt already"
        self.order.append(t)
        game = self._game
        if len(self.order) < len(game.tiles):
            return
        shape, order = game.shape, self.order
        k = shape.hand_size
        deal = Deal(tuple(tuple(order[s * k:(s + 1) * k]) for s in range(shape.players)), tuple(order[shape.players * k:]))
        self.order = []
        # A deal the rules void, or one the engine plays to its end with no decision to take (the
        # forced lead, then every seat blocked), is dealt again: a learner is never handed an
        # episode without a move, which OpenSpiel's players (Shimmy's reset) cannot take.
        if self.table.play_deal(deal) and self.table.to_move is not None:
            self.dealt = True
            return
        self.voids += 1
        if self.voids >= MAX_REDEALS:
            self._over = True

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"deal {tile_name(action)}"
        return self._game.codec.action_name(action)

    def is_terminal(self) -> bool:
        return self._over

    def returns(self) -> list[float]:
        return list(self._returns) if self._over else [0.0] * self._game.players

    def __str__(self) -> str:
        if not self.dealt:
            return f"dealing: {' '.join(tile_name(t) for t in self.order)}" + (f" (redeal {self.voids})" if self.voids else "")
        return self.table.text()


class Observer:
    """What one player sees (:meth:`~referee.envs.codec.Codec.observe`), for OpenSpiel."""

    def __init__(self, game: RefereeGame) -> None:
        self.codec = game.codec
        self.tensor = np.zeros(self.codec.size, np.float32)
        self.dict = {s.name: self.tensor[s.start:s.start + s.size] for s in self.codec.sections}

    def set_from(self, state: RefereeState, player: int) -> None:
        if state.dealt:
            self.tensor[:] = state.table.observe(player)
        else:
            self.tensor.fill(0)  # nothing is told before the deal is whole

    def string_from(self, state: RefereeState, player: int) -> str:
        if not state.dealt:
            return f"seat {player}: the tiles are being dealt"
        return observation_text(state, player)


def observation_text(state: RefereeState, player: int) -> str:
    """The player's view in words, from its messages only (its observation tensor as text)."""
    view = state.table.views[player]
    hand = " ".join(f"{a}-{b}" for a, b in (view.hand or [t for t in (view.rows[player] if view.rows else []) if t is not None]))
    ends = " ".join(f"{name}={value}" for name, value in view.ends.items())
    placed = " ".join(f"{e.seat}:{e.tile[0]}-{e.tile[1]}" for e in view.history if isinstance(e, m.Placed))
    mover = state.table.to_move
    return (f"seat {player}; to move: {'-' if mover is None else mover}; hand: {hand or '-'}; ends: {ends or '-'}; "
            f"counts: {view.counts}; bazaar: {view.bazaar}; scores: {view.scores}; placed: {placed or '-'}")


def _register(v: Variant) -> None:
    name = f"Referee_{v.id}"
    cls = type(name, (RefereeGame,), {"variant": v, "__module__": __name__, "__qualname__": name})
    globals()[name] = cls  # pickled by name, as OpenSpiel copies games and states
    pyspiel.register_game(game_type(v), cls)


for _name in variant_names():
    _register(variant(_name))
