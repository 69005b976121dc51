"""The kolbasa page's worked transcript of a kolbasa deal (docs/protocol/kolbasa.md), regenerated
from the rules engine and the wire's own message builders (:mod:`referee.sides.kolbasa`, through :func:`referee.sides.side_for`),
so the document cannot drift from what the referee sends.

The first deal of a kolbasa game from seed :data:`SEED`, seen from seat :data:`SEAT`: both seats
take a knife when one is offered (the one that cuts the most), otherwise the first legal place;
seat 0 echoes each turn's id.  The ``text kolbasa-transcript`` block of that page must equal it
line for line, and the same deal played through the real :class:`~referee.conversation.table.Table` must send
seat 0 exactly those lines.  The deal has tails, inserted doubles, a knife that cuts the sausage
into the opponent's row and rows whose returned tiles are public.
"""

from __future__ import annotations

import msgspec
from support import transcript_block

from protocol import messages as m
from referee.engine import TERMINAL, deal_from_seed, variant
from referee.engine.core.layout import KNIFE
from referee.engine.core.line import Play
from referee.sides import side_for
from referee.sides.base import deal_end

SEED, SEAT = 305, 0


def pick(legal: list[Play]) -> Play:
    """A knife when there is one (the longest cut), else the first place."""
    return max(legal, key=lambda p: p.end - KNIFE if p.end is not None and p.end >= KNIFE else -1)


def kolbasa_transcript(seed: int = SEED, seat: int = SEAT) -> list[str]:
    game = variant("kolbasa").new_game(2)
    deal = deal_from_seed(seed, 0, game.shape)
    state = game.start(deal)
    assert state is not None
    wire = side_for(state)
    out = [f"< {m.encode_line(wire.deal_start(game, deal, state, seat, 0)).decode().strip()}"]
    told = 0
    turn_id = 0
    while state.to_move() != TERMINAL:
        turn_id += 1
        choice = pick(state.legal_plays())
        if state.turn == seat:
            for e in state.history[told:]:
                out.append(f"< {wire.event_lines(state, e, 2)[seat].decode().strip()}")
            told = len(state.history)
            turn = wire.turn_message(state, 5000, None, turn_id)
            out.append(f"< {m.encode_line(turn).decode().strip()}")
            option = wire.play_option(state, choice)
            answer = m.Play(**{**msgspec.structs.asdict(option), "turn": turn_id})
            out.append(f"> {m.encode_line(answer).decode().strip()}")
            state.push(wire.engine_play(state, answer), seat)
        else:
            state.apply(choice)
    rec = game.finish(state)
    for e in state.history[told:]:
        out.append(f"< {wire.event_lines(state, e, 2)[seat].decode().strip()}")
    out.append(f"< {m.encode_line(deal_end(rec)).decode().strip()}")
    return out


def test_the_transcript_shows_a_knife_a_cut_and_a_tail():
    lines = "\n".join(kolbasa_transcript())
    for needle in ('"place":"knife:', '{"type":"cut","seat":', '{"type":"tailed","seat":', '"place":"start"', '"rows":[[['):
        assert needle in lines, needle


def test_protocol_md_kolbasa_transcript_matches_the_engine():
    documented = transcript_block("kolbasa", "kolbasa-transcript")
    assert documented == kolbasa_transcript(), ("regenerate with: python -c 'import sys; sys.path.insert(0, \"tests\"); "
                                                "from test_protocol_kolbasa import kolbasa_transcript as t; print(*t(), sep=chr(10))'")


class KnifeFirst:
    """The transcript's choice, as a recording bot's generator: a knife (the longest cut), else
    the first place."""

    def choice(self, legal: list[dict]) -> dict:
        knives = [o for o in legal if o["place"].startswith("knife:")]
        return max(knives, key=lambda o: int(o["place"][6:])) if knives else legal[0]


def test_the_table_sends_seat_0_exactly_the_transcripts_lines(monkeypatch, tmp_path):
    """The same deal played through the real Table (its outboxes, batching and turn ids): seat 0
    receives, line for line, what the transcript says the referee sends."""
    from tests.conversation.test_wire_kolbasa import play_kolbasa

    game = variant("kolbasa").new_game(2)
    bots, _ = play_kolbasa(monkeypatch, tmp_path, 0, [deal_from_seed(SEED, 0, game.shape)], KnifeFirst())
    received = {}
    for b in bots:
        lines = [line.decode() for line in bytes(b.received).splitlines()]
        kinds = [m.message_type(line.encode()) for line in lines]
        seat = next(m.to_bot_decoder.decode(line.encode()).seat for line, k in zip(lines, kinds) if k == "deal")
        received[seat] = [line for line, k in zip(lines, kinds) if k not in ("hello", "match_end")]
    assert received[SEAT] == [line[2:] for line in kolbasa_transcript() if line.startswith("< ")]
