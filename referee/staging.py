"""Staged openings: positions where a bot must make a given decision, found by a seeded search.

``referee check`` must see a bot answer the rare decisions of some games for certain (sea_kozel's
6-6 led for a hundred and its fish decision; mexican_train's marked trains and hanging doubles;
kolbasa's knife and inserted double), not only when the dealt tiles happen to offer them.  This
module plays games of the engine with random legal moves, drawn from a seeded generator, on the
very deals the match will deal, until a seat is to move in a position that a
:class:`Stage` wants.  The moves up to there are the match's *opening*
(:attr:`referee.match.MatchSpec.opening`): the referee makes them itself, in every orientation,
before any bot is asked, so whichever bot holds that seat gets the decision.  The opening is
written into the log's header and each staged move into the log as a ``play`` with
``"staged": true``, so a staged game replays and verifies like any other.

Pure: the engine and the wire's encoding of moves, no I/O; the same arguments give the same
opening.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from protocol import messages as m
from referee.engine import TERMINAL
from referee.engine.deal import Deal
from referee.engine.game import Variant
from referee.engine.line import Placed
from referee.engine.state import DealState
from referee.engine.trains import TrainDeal
from referee.wire import wire_for

#: games of random moves tried before a search gives up
TRIES = 300
#: games that reach the position, of which the one that gets there in the fewest moves is taken
CANDIDATES = 8
#: a staged position must come within this many deals of the game's start (a short check)
WITHIN_DEALS = 8


@dataclass(frozen=True)
class Stage:
    """A decision to stage: ``wanted(state, legal)`` says whether the position with these legal
    moves (as bots are sent them) is one; ``offered`` is the name ``referee check`` counts the
    offers under (:mod:`referee.check`)."""

    name: str  # short, for file names: "hundred"
    title: str  # in words: "6-6 for a hundred"
    offered: str
    wanted: Callable[[DealState, list[m.PlayOption]], bool]
    #: for a decision that may be declined: what ``referee check`` counts when the bot takes it,
    #: and what it says, as information (declining is legal), of a bot that never did
    made: str | None = None
    never: str = ""


@dataclass(frozen=True)
class Opening:
    """The moves that lead to a staged position, and the deal it comes in (deals played before)."""

    moves: list[tuple[int, m.Play]]
    deal: int


def _declares(what: str) -> Callable[[DealState, list[m.PlayOption]], bool]:
    return lambda state, legal: any(o.declare == what for o in legal)


def _places(*kinds: str) -> Callable[[DealState, list[m.PlayOption]], bool]:
    """kolbasa: a place of one of these kinds is offered (``knife:i``; ``top:j``/``bottom:j``, a
    double inserted into a junction)."""
    return lambda state, legal: any(isinstance(o.place, str) and o.place.partition(":")[0] in kinds and ":" in o.place
                                    for o in legal)


def _marked_train(state: DealState, legal: list[m.PlayOption]) -> bool:
    """mexican_train: the seat may play on another seat's train, open to it by a marker (MT-4, MT-6)."""
    if not isinstance(state, TrainDeal) or state.open_train >= 0:  # an open double's train is open to all
        return False
    own = f"seat{state.to_move()}"
    return any(isinstance(o.train, str) and o.train.startswith("seat") and o.train != own for o in legal)


def _hanging_double(state: DealState, legal: list[m.PlayOption]) -> bool:
    """mexican_train: a double someone else laid and could not cover hangs, and this seat must
    cover it (MT-7, MT-8)."""
    if not isinstance(state, TrainDeal) or state.open_train < 0:
        return False
    laid = next(e for e in reversed(state.history) if type(e) is Placed)
    return laid.seat != state.to_move()


#: The decisions ``referee check`` stages, by game.
STAGES: dict[str, tuple[Stage, ...]] = {
    "sea_kozel": (
        Stage("hundred", "6-6 for a hundred", "hundred offered", _declares("hundred"),
              "hundred made", "it led 6-6 plainly (SK-7)"),
        Stage("fish", "a fish decision", "write-off offered", _declares("write_off"),
              "write_off made", "it declined to write the fish off (SK-12)"),
    ),
    "mexican_train": (
        Stage("markers", "a train with a marker", "marked train offered", _marked_train, "marked train made",
              "it played on its own train or the Mexican (MT-4)"),
        Stage("hanging", "a hanging double", "hanging double offered", _hanging_double),
    ),
    "kolbasa": (
        Stage("knife", "a knife", "knife offered", _places("knife"), "knife made", "it placed the tile elsewhere (KB-3, KB-5)"),
        Stage("double", "a double to insert", "insertion offered", _places("top", "bottom"), "insertion made",
              "it placed the double at a line's end (KB-4, KB-6)"),
    ),
}


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
        wire = wire_for(state)
        while (seat := state.to_move()) != TERMINAL:
            plays = state.legal_plays()
            legal = [wire.play_option(state, p) for p in plays]
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
