"""From training to a league: a policy, a function from an observation and a mask to an action,
as a protocol bot.

::

    from protocol.bot import run
    from referee.envs.policy import as_bot

    def policy(obs, mask):               # numpy arrays, as the environments give them
        return int(mask.nonzero()[0][0])

    run(as_bot(policy, games=("block",)), name="learned", version="1")

:func:`as_bot` returns a ``choose(turn, state)`` for :func:`protocol.bot.run`: it builds the
observation from the bot's :class:`~protocol.bot.State` with the same codec the environments use
(:mod:`referee.envs.codec`: the environments' observations are made from the very same messages,
so the policy sees at a match exactly what it saw in training), the mask from ``turn.legal``,
and answers with the legal entry of the action the policy chose.  A game the policy was not
trained for (not in ``games``) is played with the first legal entry, so the bot passes
``referee check`` of every game; a policy's action that the turn does not offer is an error (the
bot stops: a fault the referee reports).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from protocol import messages as m
from protocol.bot import Chooser, State, log
from referee.envs.codec import codec_for

Policy = Callable[[np.ndarray, np.ndarray], Any]


def as_bot(policy: Policy, games: Iterable[str] | None = None, players: Iterable[int] | None = None) -> Chooser:
    """A protocol bot's ``choose`` that asks ``policy(observation, mask)`` for its action.

    Args:
        policy: returns an action number (an int, or a numpy integer).
        games, players: the games and seat counts the policy was trained for (``None``: any);
            in others the bot plays each turn's first legal entry.
    """
    known = None if games is None else frozenset(games)
    counts = None if players is None else frozenset(players)
    told: set[tuple[str, int]] = set()

    def choose(turn: m.Turn, state: State) -> m.PlayOption:
        if (known is not None and state.game not in known) or (counts is not None and state.players not in counts):
            if (state.game, state.players) not in told:
                told.add((state.game, state.players))
                log(f"the policy was not trained for {state.game} with {state.players} players: playing the first legal move")
            return turn.legal[0]
        codec = codec_for(state.game, state.players, state.options)
        actions = [codec.action_of(o) for o in turn.legal]
        mask = np.zeros(codec.actions, np.int8)
        mask[actions] = 1
        count = None if turn.count is m.UNSET else turn.count
        obs = codec.observe(state, state.seat, continuing=turn.continuing is True, count=count)
        action = int(policy(obs, mask))
        if action not in actions:
            name = codec.action_name(action) if 0 <= action < codec.actions else "no action of this game"
            raise ValueError(f"the policy chose action {action} ({name}), which this turn does not offer")
        return turn.legal[actions.index(action)]

    return choose


class LinearPolicy:
    """A linear softmax policy over the observation: ``logits = weights @ [obs / scale, 1]``,
    the actions outside the mask left out (``scale`` keeps every input near 0..1: a section's
    bound, at most 100).  :meth:`__call__` takes the likeliest action (a bot at a match);
    :meth:`sample` draws one (training)."""

    def __init__(self, weights: np.ndarray, scale: np.ndarray) -> None:
        self.weights = weights
        self.scale = scale

    @classmethod
    def zeros(cls, game: str, players: int | None = None, options: dict[str, Any] | None = None) -> LinearPolicy:
        from referee.envs.codec import Codec

        codec = Codec(game, players, options)
        scale = np.clip(np.maximum(np.abs(codec.low), np.abs(codec.high)), 1, 100)
        return cls(np.zeros((codec.actions, codec.size + 1), np.float64), scale.astype(np.float64))

    @classmethod
    def load(cls, path: Any) -> LinearPolicy:
        with np.load(path) as data:
            return cls(np.asarray(data["weights"], np.float64), np.asarray(data["scale"], np.float64))

    def save(self, path: Any, **meta: Any) -> None:
        np.savez_compressed(path, weights=self.weights.astype(np.float32), scale=self.scale.astype(np.float32), **meta)

    def features(self, obs: np.ndarray) -> np.ndarray:
        return np.append(obs / self.scale, 1.0)

    def probabilities(self, obs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The legal actions, their probabilities, and the features they were computed from."""
        x = self.features(obs)
        legal = np.flatnonzero(mask)
        logits = self.weights[legal] @ x
        logits -= logits.max()
        p = np.exp(logits)
        return legal, p / p.sum(), x

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> int:
        legal = np.flatnonzero(mask)
        return int(legal[np.argmax(self.weights[legal] @ self.features(obs))])

    def sample(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
        legal, p, _ = self.probabilities(obs, mask)
        return int(rng.choice(legal, p=p))
