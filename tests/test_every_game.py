"""Every registered game at every seat count it allows, found through the engine's registry: a
new game module is tested here with no edit to this file (OpenSpiel's ``random_sim_test``, for
the referee).

* Seeded random playouts of whole games keep the invariants at every step: the 28 tiles are all
  accounted for, once each, in the hands, the layout, the bazaar and the sleeping tiles; the
  turn passes in the legal order (clockwise, over the seats that passed, or back to the same seat
  only when the deal says its turn goes on); every move made is one the deal listed, and a move
  it did not list is refused without changing anything; what each side wrote adds up to the
  totals each deal's ``deal_end`` says, and to the game's.
* What a seat is told — the protocol lines its game's side makes for it (every event of the deal
  so far, and its turn) — stays byte-identical when the tiles it cannot see (the other hands,
  the bazaar, the sleeping tiles, the face-down tiles of kolbasa's rows) are dealt again among
  the places they lie in.
* A match of scripted in-process bots choosing seeded random legal moves, on trio's mock clock,
  writes a log that ``referee verify`` plays again and accepts.

Fast on purpose: a few seeds and short games a case (the slow tier has the long sweeps).
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Sequence
from pathlib import Path

import pytest
import trio
import trio.testing

from protocol import messages as m
from referee.audit.verify import verify
from referee.base.clock import TimeControl
from referee.bots.bot import Bot
from referee.bots.transport import HELLO, BotTransport, ScriptedBot, play_line
from referee.conversation.house import BotSource
from referee.engine import TERMINAL, IllegalPlay, Play, deal_from_seed, variant, variant_names
from referee.engine.core.line import Cut, Drew, Passed, Placed, Tailed
from referee.engine.core.tiles import DOUBLES, N_TILES
from referee.matches.match import run_match
from referee.matches.spec import MatchSpec
from referee.matches.watch import Watch
from referee.sides import side_for
from referee.sides.base import TILE_JSON, deal_end

GAMES = [(name, players) for name in variant_names() for players in variant(name).players]
REFEREED = [(name, players) for name, players in GAMES if variant(name).refereed]
SEEDS = range(3)
DEALS = 12  # a game played past this many deals is stopped (drawn): enough of a game, quickly
ALL = (1 << N_TILES) - 1


def test_the_registry_is_read_whole():
    """Every game is here, with every seat count it allows (the list above is not written by hand)."""
    assert {name for name, _ in GAMES} == set(variant_names()) and len(variant_names()) >= 13
    assert all(sorted(n for g, n in GAMES if g == name) == sorted(variant(name).players) for name in variant_names())


# -- playouts -----------------------------------------------------------------------------------


def places(state) -> list[int]:
    """The tile sets of every place a tile can be: each hand (kolbasa's rows), the bazaar left
    to draw, the sleeping tiles, the layout (placements less the tiles a knife cut away)."""
    layout = 0
    for e in state.history:
        if type(e) is Placed:
            assert not layout >> e.tile & 1, f"{e} placed a tile already on the table"
            layout |= 1 << e.tile
        elif type(e) is Cut:
            for t in e.tiles:
                layout &= ~(1 << t)
    bazaar = 0
    for t in state.bazaar[getattr(state, "drawn", 0):]:
        bazaar |= 1 << t
    return [*state.hands, bazaar, getattr(state, "sleeping", 0), layout]


def assert_28_tiles(state) -> None:
    sets = places(state)
    assert sum(s.bit_count() for s in sets) == N_TILES, f"{sum(s.bit_count() for s in sets)} tiles in hands, bazaar, sleeping and layout"
    union = 0
    for s in sets:
        union |= s
    assert union == ALL, "a tile is missing and another counted twice"


def assert_turn_order(state, seat: int, p: Play, new: list) -> None:
    """After ``seat`` made ``p`` (with ``new`` the events it caused), the seat to move is the one
    after the last that passed (a knocked turn, a tile tailed to its row), or after ``seat`` when
    none did; or ``seat`` again when its turn goes on: a multi-tile turn (``continuing``), a
    double it must cover itself (every move on that end), or a declaration only it may make."""
    n = state.n
    nxt = state.to_move()
    if nxt == TERMINAL:
        assert state.end is not None, "no seat to move but the deal has no end"
        return
    assert state.end is None
    passers = [e.seat for e in new if type(e) in (Passed, Tailed)]
    after = ((passers[-1] if passers else seat) + 1) % n
    if nxt == after:
        return
    legal = state.legal_plays()
    assert nxt == seat, f"seat {nxt} moves after seat {seat}'s {p}; the turn should be seat {after}'s"
    covering = p.tile >= 0 and DOUBLES >> p.tile & 1 and p.end is not None and all(q.end == p.end for q in legal)
    declaring = all(q.declare is not None for q in legal)
    assert state.continuing or covering or declaring, f"seat {seat} moves again after {p} with nothing to go on with"


def not_listed(state, legal: list[Play], rnd: random.Random) -> Play | None:
    """A move the deal did not list: a tile no legal move names (one the mover does not hold,
    or holds but may not place now), on any end."""
    named = {q.tile for q in legal}
    ends = [*range(len(state.ends)), None]
    candidates = [Play(t, e) for t in range(N_TILES) if t not in named for e in ends]
    return rnd.choice(candidates) if candidates else None


def playout(name: str, players: int, seed: int) -> int:
    """One game played with seeded random legal moves, every invariant checked at every step;
    how many moves were made."""
    rnd = random.Random(seed)
    game = variant(name).new_game(players)
    game.deal_limit = min(game.deal_limit or DEALS, DEALS)
    moves = index = 0
    written = [0] * len(game.sides)
    while game.outcome() is None:
        state = game.start(deal_from_seed(seed, index, game.shape))
        index += 1
        if state is None:
            continue  # a void deal (redeal)
        assert_28_tiles(state)
        while state.to_move() != TERMINAL:
            seat = state.to_move()
            legal = state.legal_plays()
            assert legal, f"seat {seat} is to move with no legal move"
            wrong = not_listed(state, legal, rnd)
            if wrong is not None:
                before = (list(state.hands), len(state.history), state.turn)
                with pytest.raises(IllegalPlay):
                    state.push(wrong)
                assert (list(state.hands), len(state.history), state.turn) == before, f"refusing {wrong} changed the deal"
            p = rnd.choice(legal)
            start = len(state.history)
            state.push(p)
            moves += 1
            new = state.history[start:]
            if p.tile >= 0:
                assert any(type(e) is Placed and e.seat == seat and e.tile == p.tile for e in new), f"{p} was not placed"
                assert not state.hands[seat] >> p.tile & 1
            assert_28_tiles(state)
            assert_turn_order(state, seat, p, new)
        before = list(game.totals)
        said = deal_end(game.finish(state))
        assert [b + w for b, w in zip(before, said.wrote)] == said.totals, f"{before} + {said.wrote} is not {said.totals}"
        assert len(said.wrote) == len(game.sides) and said.totals == game.totals
        assert said.hands == [[TILE_JSON[t] for t in range(N_TILES) if h >> t & 1] for h in state.hands]
        for side in range(len(game.sides)):
            written[side] += said.wrote[side]
    outcome = game.outcome()
    assert outcome is not None and list(outcome.totals) == game.totals == written
    assert set(outcome.winners).isdisjoint(outcome.losers)
    return moves


def test_the_playout_checks_find_a_tile_counted_twice_and_a_turn_out_of_order():
    game = variant("block").new_game(3)
    state = game.start(deal_from_seed(2, 0, game.shape))
    assert state is not None
    twice = state.copy()
    twice.hands[0] |= twice.hands[1] & -twice.hands[1]  # seat 1's first tile in seat 0's hand too
    with pytest.raises(AssertionError, match="tiles in hands"):
        assert_28_tiles(twice)
    seat, p = state.to_move(), state.legal_plays()[0]
    start = len(state.history)
    state.push(p)
    assert_turn_order(state, seat, p, state.history[start:])
    skipped = state.copy()
    skipped.turn = (state.to_move() + 1) % 3
    with pytest.raises(AssertionError, match="the turn should be seat"):
        assert_turn_order(skipped, seat, p, state.history[start:])


@pytest.mark.parametrize(("name", "players"), GAMES)
def test_random_playouts_keep_the_invariants(name, players):
    assert sum(playout(name, players, seed) for seed in SEEDS) > 0


# -- what a seat is told ------------------------------------------------------------------------


def told(state, seat: int) -> list[bytes]:
    """Every line the seat's game side makes for ``seat`` of the deal so far: each event's, and
    its turn when it is to move."""
    side = side_for(state)
    lines = [each[seat] for e in state.history if (each := side.event_lines(state, e, state.n))]  # none: told no one
    if state.to_move() == seat:
        lines.append(side.turn_line(state, 1000, 5000, 7))
    return lines


def dealt_again(state, seat: int, rnd: random.Random):
    """A copy of ``state`` with the tiles ``seat`` cannot see dealt again among the places they
    lie in, each keeping its size: the other hands, the bazaar left, the sleeping tiles; in
    kolbasa, the tiles of both rows still face down as dealt (KB-15: even their owner's).  Tiles
    another seat drew are renamed in its ``drew`` events too.  Whether anything moved, too."""
    alt = state.copy()
    if hasattr(state, "unseen"):  # rows of face-down tiles: a slot is (seat, index in its row)
        slots = []
        for s, (row, k) in enumerate(zip(state.rows, state.unseen)):
            right = len(row) - (s == state.turn)
            slots += [(s, i) for i in range(right - k, right)]
        pool = [state.rows[s][i] for s, i in slots]
        rnd.shuffle(pool)
        alt.rows = [list(r) for r in state.rows]
        for (s, i), t in zip(slots, pool):
            alt.rows[s][i] = t
        alt.hands = [sum(1 << t for t in r) for r in alt.rows]
        return alt, alt.rows != state.rows
    others = [s for s in range(state.n) if s != seat]
    drawn = getattr(state, "drawn", 0)
    hidden = [t for s in others for t in range(N_TILES) if state.hands[s] >> t & 1]
    hidden += list(state.bazaar[drawn:])
    hidden += [t for t in range(N_TILES) if getattr(state, "sleeping", 0) >> t & 1]
    image = list(hidden)
    rnd.shuffle(image)
    new = dict(zip(hidden, image))

    def moved(mask: int) -> int:
        return sum(1 << new.get(t, t) for t in range(N_TILES) if mask >> t & 1)

    alt.hands = [h if s == seat else moved(h) for s, h in enumerate(state.hands)]
    alt.bazaar = (*state.bazaar[:drawn], *(new[t] for t in state.bazaar[drawn:]))
    if hasattr(state, "sleeping"):
        alt.sleeping = moved(state.sleeping)
    alt.history = [Drew(e.seat, tuple(new.get(t, t) for t in e.tiles), e.count) if type(e) is Drew and e.seat != seat else e
                   for e in state.history]
    assert_28_tiles(alt)
    return alt, alt.hands != state.hands or alt.bazaar != state.bazaar


def part_played(name: str, players: int, seed: int):
    """States part-way through the deals of a seeded random game (a few from every deal)."""
    rnd = random.Random(seed)
    game = variant(name).new_game(players)
    game.deal_limit = min(game.deal_limit or 4, 4)
    index = 0
    while game.outcome() is None:
        state = game.start(deal_from_seed(seed, index, game.shape))
        index += 1
        if state is None:
            continue
        while state.to_move() != TERMINAL:
            if rnd.random() < 0.15:
                yield state
            state.apply(rnd.choice(state.legal_plays()))
        game.finish(state)


@pytest.mark.parametrize(("name", "players"), GAMES)
def test_what_a_seat_is_told_does_not_depend_on_the_tiles_it_cannot_see(name, players):
    rnd = random.Random(11)
    moved = 0
    for seed in SEEDS:
        for state in part_played(name, players, seed):
            for seat in range(players):
                alt, changed = dealt_again(state, seat, rnd)
                moved += changed
                assert told(alt, seat) == told(state, seat), f"seat {seat} is told something of a tile it cannot see"
    assert moved > 0, "no hidden tile was ever moved: the property above would hold of anything"


def own_tile_swapped(state, seat: int, rnd: random.Random):
    """A copy of ``state`` in which a tile ``seat`` sees in its hand (kolbasa: the one turned up
    and waiting for its place) changed places with a tile it cannot see."""
    alt = state.copy()
    if hasattr(state, "unseen"):
        other = 1 - seat
        row, k = state.rows[other], state.unseen[other]
        if not k:
            return None
        i = rnd.randrange(len(row) - k, len(row))
        alt.rows = [list(r) for r in state.rows]
        alt.rows[seat][-1], alt.rows[other][i] = state.rows[other][i], state.rows[seat][-1]
        alt.hands = [sum(1 << t for t in r) for r in alt.rows]
        return alt
    other = next((s for s in range(state.n) if s != seat and state.hands[s]), None)
    if other is None or not state.hands[seat]:
        return None
    mine = rnd.choice([t for t in range(N_TILES) if state.hands[seat] >> t & 1])
    theirs = rnd.choice([t for t in range(N_TILES) if state.hands[other] >> t & 1])
    alt.hands = list(state.hands)
    alt.hands[seat] ^= 1 << mine | 1 << theirs
    alt.hands[other] ^= 1 << mine | 1 << theirs
    return alt


@pytest.mark.parametrize("name", variant_names())
def test_a_tile_the_seat_sees_changed_changes_what_it_is_told(name):
    """The property above has teeth: the same comparison finds a tile of the mover's own hand
    put in another's place, in every family."""
    rnd = random.Random(5)
    for state in part_played(name, variant(name).default_players, 1):
        alt = own_tile_swapped(state, state.to_move(), rnd)
        if alt is not None and told(alt, state.to_move()) != told(state, state.to_move()):
            return
    pytest.fail(f"{name}: a seat's own tile swapped for a hidden one never changed what it is told")


# -- a match on trio's mock clock whose log verifies ----------------------------------------------


def random_legal(label: str):
    """A bot's script: greet, answer every turn with a legal move chosen by a random generator
    seeded by the bot's label (so what it plays never depends on the order trio runs tasks in),
    after thinking a little on the clock."""
    rnd = random.Random(zlib.crc32(label.encode()))

    def script(msg: m.ToBotMessage) -> Sequence[tuple[float, bytes | None]]:
        if type(msg) is m.Hello:
            return [(0.0, HELLO)]
        if type(msg) is m.Turn:
            return [(rnd.choice((0.0, 0.01, 0.2)), play_line(rnd.choice(msg.legal)))]
        return []

    return script


@pytest.mark.parametrize(("name", "players"), REFEREED)
def test_a_match_of_scripted_bots_on_a_mock_clock_writes_a_log_that_verifies(name, players, tmp_path):
    v = variant(name)
    started: list[ScriptedBot] = []

    async def launch(nursery: trio.Nursery, bot: Bot, *, name: str, stderr_path: Path, max_line: int,
                     hidden: Sequence[Path]) -> BotTransport:
        sb = ScriptedBot(random_legal(name), name)
        started.append(sb)
        return sb

    bots = [Bot(label, [label]) for label in "ABCD"[: 2 if players % 2 == 0 else players]]
    log = tmp_path / f"{name}-{players}.jsonl"
    spec = MatchSpec(v, bots, players, v.resolve_options(players), games=None if not v.to_target else 1,
                     deals=None if v.to_target else v.game.default_deals, seed=17, tc=TimeControl(startup=5, move=1, bank=10),
                     deal_limit=3, log_path=log, stderr_dir=tmp_path / "stderr")
    asked: list[m.Turn] = []

    class Asked(Watch):
        def asked(self, seat, state, turn) -> None:
            assert state.to_move() == seat
            asked.append(turn)

    result = trio.run(lambda: run_match(spec, BotSource(launch), Asked(), block=0, handle_signals=False),
                      clock=trio.testing.MockClock(autojump_threshold=0))
    result.close()
    counts = verify(log)
    turns = [msg for sb in started for msg in sb.received if type(msg) is m.Turn]
    assert counts.faults == 0 and counts.deals >= 1 and counts.plays == len(turns) > 0
    assert all(sb.closed for sb in started), "a bot of the match was left running"
    # the watch is told every turn as the value whose encoding the bot was sent
    assert sorted(m.encode_line(t) for t in asked) == sorted(m.encode_line(t) for t in turns)
