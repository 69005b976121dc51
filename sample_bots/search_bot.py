#!/usr/bin/env python3
"""search_bot: a determinized Monte Carlo search, to measure other bots against.

For each decision with more than one legal move it draws deals consistent with everything its
seat was told (``referee.engine.sampling``: its hand, every placement, draw and pass and the
voids they imply, the counts, kolbasa's public rows, mexican_train's trains and markers), plays
every legal move out on each of them with a fast policy, and keeps the move whose playouts the
game's own scoring likes best: the points its side writes against the others' (sense-adjusted:
fewer penalty points in kozel), plus a bonus for a game won.  It never looks at another seat's
hand: what it knows comes from the protocol messages, through ``protocol.bot``'s ``State``.

    python3 sample_bots/search_bot.py [--seed N] [--samples K] [--playouts P] [--budget-ms MS]

* ``--samples`` (default 150) and ``--playouts`` (default 600): each decision draws
  ``min(K, max(16, P // moves))`` deals and plays every legal move out once on each (the same
  deals for every move, so moves are compared on equal luck); a decision with many legal moves
  draws fewer deals, so no decision costs much more than ``P`` playouts.
* ``--budget-ms`` (default 400): a bound on the processor time a decision takes; the search
  stops early when it runs out.  Whatever the budget, a decision never takes more than half the
  turn's ``time_ms`` by the clock, so a loaded machine slows the bot down but never times it out.
* ``--seed`` (default ``BOT_SEED``, else 0): the same seed and the same match give the same
  moves, as long as no bound cuts a search short (a stderr line says when one does).  Each
  decision's generator is seeded from the seed and what the seat knows, not from earlier ones.

It needs ``msgspec`` and the ``referee`` package (installed, or this repository's root next to
``sample_bots``), and plays all thirteen games.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
import traceback
from pathlib import Path

try:
    import protocol.bot  # noqa: F401
    import referee.engine  # noqa: F401
except ImportError:  # run from a checkout that is not installed
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    try:
        import protocol.bot  # noqa: F401
        import referee.engine  # noqa: F401
    except ImportError as exc:
        sys.exit(f"search_bot.py needs the referee package (installed, or this repository around sample_bots): {exc}")

from protocol import messages as m
from protocol.bot import State, log, norm, run
from referee.engine import STOP, TERMINAL, Play, play, variant
from referee.engine.core.game import Special
from referee.engine.core.layout import END_INDEX, parse_place
from referee.engine.core.line import DECLINE, HUNDRED, WRITE_OFF, Cut, Declared, Drew, Event, Passed, Placed, Scored, Tailed, Turned
from referee.engine.core.state import DealState
from referee.engine.core.tiles import PIPS, tile
from referee.engine.core.trains import train_play
from referee.engine.sampling import Knowledge, Sampler, fork_game, table_game

#: A game won (or lost) is worth this many points on top of the deal's own (a deal's write is
#: typically 10–60 points, so a game decided outweighs any single deal's points).
GAME_BONUS = 100.0


# -- what the seat knows, in the engine's terms ----------------------------------------------


def tile_id(t: object) -> int:
    a, b = norm(t)
    return tile(a, b)


def end_index(state: State, msg: m.Placed | m.PlayOption) -> int | None:
    """The engine's end index of a placement or a legal entry: an end, a train or a place."""
    if msg.train is not m.UNSET:
        return state.players if msg.train == "mexican" else int(str(msg.train)[4:])
    if msg.place is not m.UNSET:
        return None if msg.place == "start" else parse_place(str(msg.place))
    end = msg.end
    return None if end is None or end is m.UNSET else END_INDEX[str(end)]


def engine_event(state: State, e: object) -> Event:
    if isinstance(e, m.Placed):
        return Placed(e.seat, tile_id(e.tile), end_index(state, e), e.forced, e.closed is True)
    if isinstance(e, m.Drew):
        return Drew(e.seat, tuple(tile_id(t) for t in e.tiles or ()), e.count)
    if isinstance(e, m.Passed):
        return Passed(e.seat)
    if isinstance(e, m.Scored):
        return Scored(e.seat, e.points, e.count)
    if isinstance(e, m.Declared):
        return Declared(e.seat, e.what)
    if isinstance(e, m.Turned):
        return Turned(e.seat, tile_id(e.tile))
    if isinstance(e, m.Tailed):
        return Tailed(e.seat, tile_id(e.tile))
    assert isinstance(e, m.Cut)
    return Cut(e.seat, e.to, tuple(tile_id(t) for t in e.tiles))


def engine_play(state: State, opt: m.PlayOption) -> Play:
    """A legal entry of the turn as the engine's move."""
    if opt.stop is True:
        return STOP
    if opt.declare is not m.UNSET:
        return {"hundred": HUNDRED, "write_off": WRITE_OFF, "decline": DECLINE}[str(opt.declare)]
    assert opt.tile is not None
    t = tile_id(opt.tile)
    end = end_index(state, opt)
    if opt.train is not m.UNSET:
        assert end is not None
        return train_play(t, end)
    if opt.place is not m.UNSET:
        return Play(t, end)
    return play(t, end, opt.closed is True)


def knowledge(turn: m.Turn, state: State) -> Knowledge:
    """What this seat knows, from the messages ``protocol.bot`` kept for it."""
    history = [engine_event(state, e) for e in state.history]
    me = state.seat
    if state.station is not None:  # mexican_train: the station is placed by nobody, and not told as an event
        history.insert(0, Placed(state.leader, tile(*state.station), None, True))
    hand: list[int] = []
    if not variant(state.game).game.face_down_rows:  # the hand as dealt: held now, plus placed, less drawn
        held = {tile_id(t) for t in turn.hand}
        held |= {e.tile for e in history if type(e) is Placed and e.seat == me and not (state.station and e.end is None)}
        for e in history:
            if type(e) is Drew and e.seat == me:
                held -= set(e.tiles)
        hand = sorted(held)
    scores = list(state.scores)
    for e in history:  # protocol.bot adds points written during play; the game began without them
        if type(e) is Scored:
            side = e.seat % 2 if state.partner is not None else e.seat
            scores[side] -= e.points
    sp = state.special
    special = None if sp is None else Special(sp.kind, sp.side, sp.deal, sp.of, sp.total)
    return Knowledge(
        variant=state.game, players=state.players, seat=me, leader=state.leader, hand=tuple(hand), history=tuple(history),
        options=dict(state.options), legal=tuple(engine_play(state, o) for o in turn.legal), scores=tuple(scores),
        deal_number=state.deal_number, special=special,
    )


# -- the search ------------------------------------------------------------------------------


def weight(p: Play) -> float:
    """The playout policy's liking for a move: heavy tiles first (a tile left in hand is what
    the other side writes, or what one writes on oneself), a placement before a stop, a hundred
    before a plain lead, and in kolbasa the knife that cuts the most."""
    if p.tile < 0:
        return 0.5 if p.declare == "write_off" else 0.0  # stop, decline
    if p.declare is not None:
        return 30.0
    if p.end is not None and p.end >= 300:
        return 20.0 + p.end - 300  # a kolbasa knife
    return 1.0 + PIPS[p.tile]


def playout(state: DealState, rng: random.Random) -> None:
    """Play ``state`` to the end: mostly the heaviest move, now and then a random one."""
    rand = rng.random
    while state.to_move() != TERMINAL:
        plays = state.legal_plays()
        if len(plays) == 1 or rand() < 0.15:
            state.apply(plays[0] if len(plays) == 1 else plays[int(rand() * len(plays))])
            continue
        best, top = plays[0], -1.0
        for p in plays:
            w = weight(p) + rand() * 0.5
            if w > top:
                best, top = p, w
        state.apply(best)


def value(game: object, state: DealState, side: int, sense: int) -> float:
    """What a finished deal is worth to ``side``: the game's own scoring of it."""
    g = fork_game(game)
    rec = g.finish(state)
    wrote = rec.wrote
    others = [w for s, w in enumerate(wrote) if s != side]
    u = sense * (wrote[side] - sum(others) / len(others))
    out = g.outcome()
    if out is not None:
        if side in out.winners:
            u += GAME_BONUS
        elif side in out.losers:
            u -= GAME_BONUS
    return u


class Searcher:
    def __init__(self, seed: int, samples: int, budget_ms: int, playouts: int = 600) -> None:
        self.seed = seed
        self.samples = samples
        self.playouts = playouts
        self.budget_ms = budget_ms
        self.decisions = 0

    def choose(self, turn: m.Turn, state: State) -> m.PlayOption:
        legal = turn.legal
        if len(legal) == 1:
            return legal[0]
        try:
            return self.search(turn, state)
        except Exception:  # a bug here should cost a good move, not the match: say so, play on
            log("search_bot: the search failed; playing the heaviest move\n" + traceback.format_exc())
            return max(zip(legal, (engine_play(state, o) for o in legal)), key=lambda x: weight(x[1]))[0]

    def search(self, turn: m.Turn, state: State) -> m.PlayOption:
        """The legal entry whose playouts scored best on the deals drawn (see the module)."""
        legal = turn.legal
        cpu = time.process_time() + self.budget_ms / 1000
        wall = time.monotonic() + (turn.time_ms / 2000 if turn.time_ms else 3600.0)
        k = knowledge(turn, state)
        rng = random.Random(f"{self.seed}/{state.game_number}/{state.deal_number}/{len(state.history)}/{k.legal}")
        game = table_game(k)
        side = state.side
        sense = variant(k.variant).sense
        totals = [0.0] * len(legal)
        done = 0
        samples = min(self.samples, max(16, self.playouts // len(legal)))
        sampler = Sampler(k, game)  # reads the events once for every deal it draws
        for _ in range(samples):
            sampled = sampler.state(rng, tries=50)
            if sampled is None:
                break  # fifty deals in a row that do not replay: the rest would not either
            for j, p in enumerate(k.legal):
                s = sampled.copy()
                s.apply(p)
                playout(s, rng)
                totals[j] += value(game, s, side, sense)
            done += 1
            if done < samples and (time.process_time() > cpu or time.monotonic() > wall):
                log(f"search_bot: the time bound stopped the search after {done} of {samples} deals")
                break
        self.decisions += 1
        if not done:
            log("search_bot: no deal agrees with what I was told; playing the heaviest move")
            return max(zip(legal, k.legal), key=lambda x: weight(x[1]))[0]
        best = max(range(len(legal)), key=lambda j: totals[j])
        return legal[best]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="search_bot.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=int(os.environ.get("BOT_SEED") or 0))
    ap.add_argument("--samples", type=int, default=150, help="deals drawn per decision (default 150)")
    ap.add_argument("--playouts", type=int, default=600, help="playouts per decision, fewer deals when there are many moves (default 600)")
    ap.add_argument("--budget-ms", type=int, default=400, help="the most processor time a decision may take, in ms (default 400)")
    args = ap.parse_args(argv)
    searcher = Searcher(args.seed, max(1, args.samples), max(1, args.budget_ms), max(1, args.playouts))
    run(searcher.choose, name="search_bot.py", version="1.0", author="referee sample bots")


if __name__ == "__main__":
    main()
