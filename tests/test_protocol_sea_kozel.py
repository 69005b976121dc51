"""PROTOCOL.md's worked transcript of a sea_kozel deal with a declaration, regenerated from the
rules engine and the wire's own message builders, so the document cannot drift from what the
referee sends.

A two-player sea_kozel game from seed 18: the first deal is played with everyone taking the
first legal move; in the second, seat 0 (whose side has points) leads and is offered 6-6 *for a
hundred* beside the plain 6-6 lead, declares it, and wins the deal and so the match.  Seat 0
takes a declaration whenever one is offered, otherwise the first legal move, and echoes each
turn's id.  The ``text sea-kozel-transcript`` block of PROTOCOL.md must equal it line for line.
"""

from __future__ import annotations

import msgspec
from helpers import transcript_block

from protocol import messages as m
from referee.engine import TERMINAL, deal_from_seed, variant
from referee.wire import deal_end, deal_start, engine_play, event_lines, turn_message

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
    documented = transcript_block("sea-kozel-transcript")
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
