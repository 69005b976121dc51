"""The cross page's worked transcript of a cross deal (docs/protocol/cross.md), regenerated from the rules engine and the
wire's own message builders, so the document cannot drift from what the referee sends.

One osel deal (4 players in pairs) seen from seat 0, which answers with the *last* legal move
(so it closes doubles and stops when it may) and echoes each turn's id, while the other seats
take the first legal move: it shows ``up``/``down`` opening at once, a turn of several tiles
(``continuing``), a closed double and ``stop``.  The ``text cross-transcript`` block of that page must equal it line for line.
"""

from __future__ import annotations

import msgspec
from support import transcript_block

from protocol import messages as m
from referee.engine import TERMINAL, deal_from_seed, variant
from referee.sides.base import deal_end, deal_start, engine_play, event_lines, turn_message

SEED, INDEX, SEAT = 1, 1, 0


def cross_transcript(seed: int = SEED, index: int = INDEX, seat: int = SEAT) -> list[str]:
    game = variant("osel").new_game(4)
    deal = deal_from_seed(seed, index, game.shape)
    state = game.start(deal)
    assert state is not None
    out = [f"< {m.encode_line(deal_start(game, deal, state, seat, 0)).decode().strip()}"]
    told = 0
    turn_id = 0

    def events() -> None:
        nonlocal told
        for e in state.history[told:]:
            out.append(f"< {event_lines(e, game.players)[seat].decode().strip()}")
        told = len(state.history)

    while state.to_move() != TERMINAL:
        turn_id += 1
        if state.turn == seat:
            events()
            turn = turn_message(state, 5000, None, turn_id)
            out.append(f"< {m.encode_line(turn).decode().strip()}")
            choice = m.Play(**{**msgspec.structs.asdict(turn.legal[-1]), "turn": turn_id})
            out.append(f"> {m.encode_line(choice).decode().strip()}")
            state.push(engine_play(choice), seat)
        else:
            state.apply(state.legal_plays()[0])
    events()
    out.append(f"< {m.encode_line(deal_end(game.finish(state))).decode().strip()}")
    return out


def test_the_transcript_shows_the_cross_moves():
    lines = "\n".join(cross_transcript())
    for needle in ('"end":"up"', '"continuing":true', '"closed":true', '"stop":true', '"turn":'):
        assert needle in lines, needle


def test_protocol_md_cross_transcript_matches_the_engine():
    documented = transcript_block("cross", "cross-transcript")
    regenerate = "python -c 'import sys; sys.path.insert(0, \"tests\"); from test_protocol_cross import cross_transcript as t; print(*t(), sep=chr(10))'"
    assert documented == cross_transcript(), f"regenerate with: {regenerate}"


def test_the_python_bot_library_plays_the_cross_transcript():
    """protocol.bot answers the transcript's turns the way the transcript's seat 0 does (the last
    legal entry), closed and stop included, and keeps the points written during play."""
    import io

    from protocol import bot

    to_bot = [line[2:] for line in cross_transcript() if line.startswith("< ")]
    hello = m.encode_line(m.Hello(protocol=1, referee="test", limits=m.Limits()))
    src = io.BytesIO(hello + "".join(t + "\n" for t in to_bot).encode() + m.encode_line(m.MatchEnd()))
    out = io.BytesIO()
    bot.run(lambda turn, state: turn.legal[-1], "lib", infile=src, outfile=out)
    sent = [msgspec.json.decode(line) for line in out.getvalue().splitlines()][1:]
    expected = [msgspec.json.decode(line[2:]) for line in cross_transcript() if line.startswith("> ")]
    assert sent == [{k: v for k, v in e.items() if k != "turn"} for e in expected]

    scored = io.BytesIO(hello + m.encode_line(m.DealStart(game="muggins", options={}, players=2, seat=0, side=0, partner=None,
                                                          hand=[(0, 0)], leader=1, scores=[5, 0], bazaar=14))
                        + m.encode_line(m.Scored(seat=1, points=10, count=10)) + m.encode_line(m.MatchEnd()))
    state = bot.run(lambda turn, state: turn.legal[0], "lib", infile=scored, outfile=io.BytesIO())
    assert state.scores == [5, 10]
