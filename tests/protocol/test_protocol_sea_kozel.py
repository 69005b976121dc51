"""The sea_kozel page's worked transcript of a sea_kozel deal with a declaration, regenerated from the
rules engine and the wire's own message builders, so the document cannot drift from what the
referee sends.

A two-player sea_kozel game from seed 18: the first deal is played with everyone taking the
first legal move; in the second, seat 0 (whose side has points) leads and is offered 6-6 *for a
hundred* beside the plain 6-6 lead, declares it, and wins the deal and so the match.  Seat 0
takes a declaration whenever one is offered, otherwise the first legal move, and echoes each
turn's id.  The ``text sea-kozel-transcript`` block of docs/protocol/sea_kozel.md must equal it line for line.
"""

from __future__ import annotations

import msgspec
from support import transcript_block

from protocol import messages as m
from referee.engine import TERMINAL, deal_from_seed, variant
from referee.sides.base import deal_end, deal_start, engine_play, event_lines, turn_message

SEED, SEAT, SHOWN = 18, 0, 1


def sea_kozel_transcript(seed: int = SEED, seat: int = SEAT, shown: int = SHOWN) -> list[str]:
    """Deal ``shown`` of a 2-player game from ``seed`` as ``seat`` sees it."""
    game = variant("sea_kozel").new_game(2)
    out: list[str] = []
    turn_id = 0
    for index in range(shown + 1):
        deal = deal_from_seed(seed, index, game.shape)
        state = game.start(deal)
        assert state is not None
        mine = index == shown
        if mine:
            out.append(f"< {m.encode_line(deal_start(game, deal, state, seat, 0)).decode().strip()}")
        told = 0
        while state.to_move() != TERMINAL:
            turn_id += 1
            if mine and state.turn == seat:
                told = _events(out, state, told, seat)
                turn = turn_message(state, 5000, None, turn_id)
                out.append(f"< {m.encode_line(turn).decode().strip()}")
                pick = next((o for o in turn.legal if o.declare is not m.UNSET), turn.legal[0])
                choice = m.Play(**{**msgspec.structs.asdict(pick), "turn": turn_id})
                out.append(f"> {m.encode_line(choice).decode().strip()}")
                state.push(engine_play(choice), seat)
            else:
                state.apply(state.legal_plays()[0])
        rec = game.finish(state)
        if mine:
            _events(out, state, told, seat)
            out.append(f"< {m.encode_line(deal_end(rec)).decode().strip()}")
    return out


def _events(out: list[str], state, told: int, seat: int) -> int:
    """Add the events ``seat`` has not been told yet; the new count told."""
    for e in state.history[told:]:
        out.append(f"< {event_lines(e, state.n)[seat].decode().strip()}")
    return len(state.history)


def test_the_transcript_shows_the_declaration():
    lines = "\n".join(sea_kozel_transcript())
    for needle in ('"declare":"hundred"', '{"type":"declared","seat":0,"what":"hundred"}', '"rule":"hundred"', '"turn":'):
        assert needle in lines, needle


def test_protocol_md_sea_kozel_transcript_matches_the_engine():
    documented = transcript_block("sea_kozel", "sea-kozel-transcript")
    assert documented == sea_kozel_transcript(), ("regenerate with: python -c 'import sys; sys.path.insert(0, \"tests\"); "
                                                  "from test_protocol_sea_kozel import sea_kozel_transcript as t; print(*t(), sep=chr(10))'")


def test_the_python_bot_library_answers_with_the_declaration():
    """protocol.bot sends a legal entry with its declaration as it is, and keeps the deal's
    special state."""
    import io

    from protocol import bot

    to_bot = [line[2:] for line in sea_kozel_transcript() if line.startswith("< ")]
    hello = m.encode_line(m.Hello(protocol=1, referee="test", limits=m.Limits()))
    src = io.BytesIO(hello + "".join(t + "\n" for t in to_bot).encode() + m.encode_line(m.MatchEnd()))
    out = io.BytesIO()
    bot.run(lambda turn, state: next((o for o in turn.legal if o.declare is not m.UNSET), turn.legal[0]), "lib",
            infile=src, outfile=out)
    sent = [msgspec.json.decode(line) for line in out.getvalue().splitlines()][1:]
    expected = [msgspec.json.decode(line[2:]) for line in sea_kozel_transcript() if line.startswith("> ")]
    assert sent == [{k: v for k, v in e.items() if k != "turn"} for e in expected]

    special = m.Special("eggs", deal=2, of=3, total=24)
    start = m.DealStart(game="sea_kozel", options={}, players=2, seat=0, side=0, partner=None, hand=[(0, 0)], leader=1,
                        scores=[0, 0], bazaar=14, special=special)
    state = bot.run(lambda turn, state: turn.legal[0], "lib", infile=io.BytesIO(hello + m.encode_line(start) + m.encode_line(m.MatchEnd())),
                    outfile=io.BytesIO())
    assert state.special == special


# -- the write-off decision carries the sides' totals (SK-2, SK-12) ------------------------------


def _lone_double_reading(hand: int) -> int:
    """A hand's value read straight from SK-2: only 0-0 is 25, only 6-6 50, both 75, else pips."""
    from referee.engine.core.tiles import DOUBLE, PIPS, bits

    tiles = set(bits(hand))
    lone = {frozenset({DOUBLE[0]}): 25, frozenset({DOUBLE[6]}): 50, frozenset({DOUBLE[0], DOUBLE[6]}): 75}
    return lone.get(frozenset(tiles), sum(PIPS[t] for t in tiles))


def write_off_decisions(players: int, seeds: range):
    """Every write-off decision of sea_kozel games played with seeded random moves: the seed,
    the deal's state, the game and the turn the fisherman is sent."""
    import random

    for seed in seeds:
        game = variant("sea_kozel").new_game(players)
        rng = random.Random(seed)
        index = 0
        while game.outcome() is None and index < 40:
            state = game.start(deal_from_seed(seed, index, game.shape))
            index += 1
            if state is None:
                continue
            while state.to_move() != TERMINAL:
                legal = state.legal_plays()
                turn = turn_message(state, 5000, None, 1)
                if legal[0].declare == "write_off":
                    yield seed, state, game, turn
                else:
                    assert turn.held is m.UNSET  # only the write-off decision carries it
                state.apply(rng.choice(legal))
            game.finish(state)


def test_the_write_off_offer_carries_each_sides_total_as_the_rules_count_it():
    """A lone 0-0 counts 25 (a bot that counted its pips saw 0 and thought it had no fish to write
    off): ``turn.held`` gives each side's total as SK-2 counts it, and the offer comes exactly when
    the fisherman's side holds the more and 25 or more (SK-12)."""
    lone_zero = 0
    seen = 0
    for players in (2, 4):
        for _, state, game, turn in write_off_decisions(players, range(1, 60)):
            seen += 1
            reading = [sum(_lone_double_reading(state.hands[s]) for s in seats) for seats in game.sides]
            assert turn.held == reading
            mine = game.side_of[state.turn]
            assert reading[mine] > reading[1 - mine] and reading[mine] >= 25
            assert [o.declare for o in turn.legal] == ["write_off", "decline"]
            if players == 2 and turn.hand == [(0, 0)]:
                lone_zero += 1
                assert reading[mine] == 25  # its pips are 0
    assert seen > 20 and lone_zero >= 1


def test_protocol_md_write_off_turn_matches_the_wire():
    """The sea_kozel page's example of the write-off turn: the first seed whose fisherman holds only 0-0."""
    found = next(((seed, state, turn) for seed, state, _, turn in write_off_decisions(2, range(1, 200)) if turn.hand == [(0, 0)]), None)
    assert found is not None, "no fisherman holding only 0-0"
    seed, state, turn = found
    line = m.encode_line(turn).decode().strip()
    assert turn.held is not m.UNSET and turn.held[state.turn] == 25  # the pips of its hand: 0
    assert transcript_block("sea_kozel", "sea-kozel-write-off") == [f"< {line}"], f"seed {seed}: < {line}"
