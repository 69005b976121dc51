"""Staged openings: positions where a bot must make a given decision, found by a seeded search.

``referee check`` must see a bot answer the rare decisions of some games for certain (sea_kozel's
6-6 led for a hundred and its fish decision; mexican_train's marked trains and hanging doubles;
kolbasa's knife and inserted double), not only when the dealt tiles happen to offer them.  This
module plays games of the engine with random legal moves, drawn from a seeded generator, on the
very deals the match will deal, until a seat is to move in a position that a
:class:`Stage` wants.  The moves up to there are the match's *opening*
(:attr:`referee.matches.match.MatchSpec.opening`): the referee makes them itself, in every orientation,
before any bot is asked, so whichever bot holds that seat gets the decision.  The opening is
written into the log's header and each staged move into the log as a ``play`` with
``"staged": true``, so a staged game replays and verifies like any other.

Which decisions a game stages, and how a position that offers one is recognised, is its side's
(:attr:`referee.sides.base.GameSide.stages`).  Pure: the engine and the sides' encoding of moves,
no I/O; the same arguments give the same opening.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from protocol import messages as m
from referee.engine import TERMINAL
from referee.engine.core.deal import Deal
from referee.engine.core.game import Variant
from referee.sides import every_side, side_for
from referee.sides.base import Stage

#: games of random moves tried before a search gives up
TRIES = 300
#: games that reach the position, of which the one that gets there in the fewest moves is taken
CANDIDATES = 8
#: a staged position must come within this many deals of the game's start (a short check)
WITHIN_DEALS = 8


@dataclass(frozen=True)
class Opening:
    """The moves that lead to a staged position, and the deal it comes in (deals played before)."""

    moves: list[tuple[int, m.Play]]
    deal: int


#: The decisions ``referee check`` stages, by game: each side's (:attr:`~referee.sides.base.GameSide.stages`).
STAGES: dict[str, tuple[Stage, ...]] = {vid: stages for side in every_side() for vid, stages in side.stages.items()}


def find_opening(v: Variant, players: int, options: dict, deals: int | None, deal_at: Callable[[int], Deal],
                 stage: Stage, seed: int, tries: int = TRIES, within: int = WITHIN_DEALS) -> Opening | None:
    """The shortest opening found from a game's start to a position ``stage`` wants, on the deals
    ``deal_at(0)``, ``deal_at(1)``… taken in order as the match driver takes them (a void deal
    takes the next), playing random legal moves from ``seed``: the best of the first
    :data:`CANDIDATES` games that reach one, of ``tries`` games at most, each searched for
    ``within`` deals.  ``None`` when none does.  ``deals`` is the game's (fixed-deal games)."""
    rng = random.Random(seed)
    best: Opening | None = None
    found = 0
    for _ in range(tries):
        opening = _playout(v, players, options, deals, deal_at, stage, rng, within)
        if opening is None:
            continue
        if best is None or len(opening.moves) < len(best.moves):
            best = opening
        found += 1
        if found >= CANDIDATES:
            break
    return best


def _playout(v: Variant, players: int, options: dict, deals: int | None, deal_at: Callable[[int], Deal],
             stage: Stage, rng: random.Random, within: int) -> Opening | None:
    """One game of random moves, up to the first position ``stage`` wants."""
    game = v.new_game(players, options, deals)
    moves: list[tuple[int, m.Play]] = []
    index = 0
    while game.outcome() is None and game.played < within:
        state = game.start(deal_at(index))
        index += 1
        if state is None:
            continue
        side = side_for(state)
        while (seat := state.to_move()) != TERMINAL:
            plays = state.legal_plays()
            legal = [side.play_option(state, p) for p in plays]
            if stage.wanted(state, legal):
                return Opening(moves, game.played)
            k = rng.randrange(len(plays))
            moves.append((seat, _as_play(legal[k])))
            state.push(plays[k], seat)
        game.finish(state)
    return None


def _as_play(option: m.PlayOption) -> m.Play:
    """The play a bot sends to make the legal move ``option``: its fields as they are."""
    msg = m.decode_from_bot(b'{"type":"play",' + m.encoder.encode(option)[1:])
    assert isinstance(msg, m.Play)
    return msg
