"""PettingZoo's AEC environments of every game: one agent a seat, ``player_0`` … ``player_{n-1}``.

``aec_env("sport", players=4, options={...})`` plays the game on :class:`~referee.envs.episode.EnvTable`:

* ``action_space(agent)``: ``Discrete(codec.actions)``, the same for every seat
  (:mod:`referee.envs.codec` numbers the moves);
* ``observation_space(agent)``: a ``float32`` ``Box`` of ``codec.size`` numbers, what the
  protocol has told that seat (:meth:`~referee.envs.codec.Codec.observe`);
* ``infos[agent]["action_mask"]``: an ``int8`` array, 1 for each legal action of the agent to
  move (all 0 for the others), as Shimmy's OpenSpiel environments give it;
* the agent to move moves; a turn of several tiles (osel, sea_kozel's doubles) is the same agent
  selected again, with ``continuing`` set in its observation;
* rewards: at the end of each deal, as :mod:`referee.envs.episode` says (``reward="points"``,
  ``"margin"``, or ``"games"``: +1, 0, -1 for the game won, drawn, lost); ``episode="deal"`` ends the episode with the deal, ``"game"`` plays the whole
  game (to its target, or its fixed number of deals); ``max_cycles`` truncates every agent after
  that many moves;
* ``reset(seed=s)`` starts a game from deal 0 of the stream ``referee match --seed s`` plays; a
  reset without a seed goes on with the game's next deal (``episode="deal"``) or the next game;
* ``render()``: ``"ansi"`` returns the table in words (every hand shown), ``"human"`` prints it.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from pettingzoo import AECEnv

from referee.envs.episode import EnvTable


class DominoEnv(AECEnv):
    """A game of :mod:`referee.engine.games` as a PettingZoo AEC environment."""

    RENDER_MODES = ("human", "ansi")
    metadata = {"render_modes": list(RENDER_MODES), "name": "referee_v0", "is_parallelizable": False}

    def __init__(self, game: str, players: int | None = None, options: dict[str, Any] | None = None, render_mode: str | None = None, *,
                 reward: str = "points", episode: str = "deal", max_cycles: int | None = None) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in self.RENDER_MODES:
            raise ValueError(f"render_mode={render_mode!r}: choose one of {', '.join(self.RENDER_MODES)} or None")
        if max_cycles is not None and max_cycles < 1:
            raise ValueError(f"max_cycles={max_cycles}: give a positive number of moves, or None")
        self.table = EnvTable(game, players, options, reward=reward, episode=episode)
        self.metadata = {**self.metadata, "name": f"referee_{game}_v0"}
        self.render_mode = render_mode
        self.max_cycles = max_cycles
        codec = self.table.codec
        n = self.table.players
        self.possible_agents = [f"player_{s}" for s in range(n)]
        self.agent_name_mapping = {a: s for s, a in enumerate(self.possible_agents)}
        self.action_spaces = {a: gymnasium.spaces.Discrete(codec.actions) for a in self.possible_agents}
        self.observation_spaces = {a: gymnasium.spaces.Box(codec.low, codec.high, dtype=np.float32) for a in self.possible_agents}
        self.agents: list[str] = []
        self.moves = 0

    def observation_space(self, agent: str) -> gymnasium.spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Space:
        return self.action_spaces[agent]

    # -- the episode -------------------------------------------------------------------------

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """A new episode.  ``options`` is accepted for the API and unused: house rules are given
        when the environment is made."""
        self.table.reset(seed)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.moves = 0
        self._select()

    def _select(self) -> None:
        table = self.table
        seat = table.to_move
        if seat is not None:
            self.agent_selection = self.possible_agents[seat]
        self.infos = {a: {"action_mask": table.mask(s)} for s, a in enumerate(self.possible_agents) if a in self.agents}

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise ValueError(f"{agent} is to move: give an action (None is only for an agent whose episode is over)")
        table = self.table
        self._cumulative_rewards[agent] = 0.0
        rewards, over = table.play(int(action))
        self.moves += 1
        for s, a in enumerate(self.possible_agents):
            self.rewards[a] = rewards[s]
        if over:
            self.terminations = dict.fromkeys(self.agents, True)
        elif self.max_cycles is not None and self.moves >= self.max_cycles:
            self.truncations = dict.fromkeys(self.agents, True)
        self._select()
        if over or self.truncations[agent]:
            self.agent_selection = self.agents[0]
            for a in self.agents:
                self.infos[a] = {"action_mask": np.zeros(table.codec.actions, np.int8)}
            if table.faulted is not None:
                self.infos[self.possible_agents[table.faulted]]["fault"] = "illegal action"
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def observe(self, agent: str) -> np.ndarray:
        return self.table.observe(self.agent_name_mapping[agent])

    def action_mask(self, agent: str) -> np.ndarray:
        """The legal actions of ``agent`` now (all 0 unless it is to move)."""
        return self.table.mask(self.agent_name_mapping[agent])

    def render(self) -> str | None:
        if self.render_mode is None:
            gymnasium.logger.warn("render() was called without a render_mode: give render_mode='ansi' or 'human'")
            return None
        text = self.table.text()
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        """Nothing to release: the environment holds no process or file."""


def aec_env(game: str, players: int | None = None, options: dict[str, Any] | None = None, render_mode: str | None = None, **kwargs: Any) -> DominoEnv:
    """The AEC environment of ``game`` for ``players`` seats (its default count if ``None``) with
    house-rule ``options`` (the names and values ``referee match --option`` takes).

    Raises:
        UnknownVariant: no such game.
        BadOption: an option the game does not have, a bad value, or a seat count it is not played by.
    """
    return DominoEnv(game, players, options, render_mode, **kwargs)
