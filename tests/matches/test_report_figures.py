"""The printed figures of a match from chosen boards, with no bot played: an Elo interval that
the pairs cannot bound says so in words, every pair alike gives an exact bound instead of a
point, and a winner beside an undecided SPRT says why both hold (issue 40 §2)."""

from __future__ import annotations

import pytest
from rich.console import Console

from referee.bots.bot import Bot
from referee.conversation.players import Entry
from referee.engine import variant
from referee.matches.match import orientations
from referee.matches.report import figures_text, verdict_line
from referee.matches.results import MatchResult
from referee.matches.spec import MatchSpec
from referee.records.summary import MatchSummary
from referee.stats.sprt import parse_sprt, sprt_state


def summary_of(boards: list[list[list[int]]], sprt: str | None = None, game: str = "kozel") -> MatchSummary:
    """The summary of a two-bot match whose finished boards are ``boards`` (``[board][orientation][bot]`` nets)."""
    v = variant(game)
    opts = v.resolve_options(4, {})
    bots = [Bot(name, [name]) for name in ("greedy_bot", "random_bot")]
    test = parse_sprt([sprt]) if sprt else None
    spec = MatchSpec(v, bots, 4, opts, games=len(boards), sprt=test)
    with MatchResult(spec, orientations(v, 4, opts, 2), [Entry(b, i, spec.tc) for i, b in enumerate(bots)]) as result:
        for unit, board in enumerate(boards):
            for o, net in enumerate(board):
                result._played(unit, o, net)
        if test is not None:
            result.sprt = sprt_state(test, result.tally)
        return result.summary()


def printed(summary: MatchSummary) -> str:
    console = Console(width=400, record=True)
    console.print(figures_text(summary))
    return " ".join(console.export_text().split())


def test_two_bots_level_on_every_pair_get_an_exact_bound_not_a_point() -> None:
    """`0 [0, 0]` after 4 level pairs said the bots are equal to the Elo: the spread of 4 alike
    pairs is 0, not small.  Every pair alike (DD+WL) gives the exact bound instead."""
    row = summary_of([[[20, -20], [-20, 20]]] * 4).ranking.standings[0]
    assert row.classes == [0, 0, 4, 0, 0] and row.elo == 0
    assert row.elo_ci == [-203.7, 203.7]
    text = printed(summary_of([[[20, -20], [-20, 20]]] * 4))
    assert "Elo difference greedy_bot − random_bot: 0 [-204, +204] (95% interval: every pair alike" in text
    # More alike pairs narrow it; a pair of another class brings the t interval back.
    assert summary_of([[[20, -20], [-20, 20]]] * 20).ranking.standings[0].elo_ci == [-48.6, 48.6]
    mixed = summary_of([[[20, -20], [-20, 20]]] * 3 + [[[20, -20], [20, -20]]]).ranking.standings[0]
    assert mixed.elo_ci is not None and mixed.elo_ci[0] < mixed.elo < mixed.elo_ci[1]


def test_an_elo_interval_the_pairs_cannot_bound_says_so_in_words() -> None:
    """A 4-game kozel match: three game pairs won, one split, so the score's interval passes 1 and
    the Elo's upper end is infinite; the report says 4 pairs are too few, never +∞."""
    summary = summary_of([[[100, -100], [50, -50]]] * 3 + [[[100, -100], [-50, 50]]])
    row = summary.ranking.standings[0]
    assert row.elo is not None and row.elo > 0 and row.elo_ci is not None
    assert row.elo_ci[0] is not None and row.elo_ci[1] is None
    text = printed(summary)
    assert "∞" not in text
    assert f"{row.elo:+.0f} [{row.elo_ci[0]:+.0f}, unbounded] (95% interval, from the pairs' scores: 4 pairs are too few to bound it above" in text


def test_a_winner_beside_an_undecided_sprt_says_why_both_hold() -> None:
    """12 game pairs won by 1 or 2 points a pair: the margin's interval is far above 0, but the margin
    test's LLR between 0 and 3 is 0 (the mean is halfway), so the SPRT is undecided."""
    boards = [[[1, -1], [0, 0]] if i % 2 else [[1, -1], [1, -1]] for i in range(12)]
    summary = summary_of(boards, "margin0=0 margin1=3")
    assert summary.winner == "greedy_bot" and summary.sprt is not None and summary.sprt.decision is None
    line = verdict_line(summary)
    assert line.startswith("SPRT undecided after 12 pairs (LLR 0.000, bounds -2.944 and +2.944); Winner: greedy_bot — significant at 95%")
    assert line.endswith("as its margin's interval is above 0; the SPRT asks more, whether greedy_bot's advantage is nearer "
                         "margin0=0 or margin1=3 at its error rates, and has not decided yet")


@pytest.mark.parametrize(("test", "clause"), [
    ("margin0=1 margin1=4", "; the SPRT asks more, and found the advantage nearer margin0=1 than margin1=4"),
    ("margin0=-3 margin1=1", ""),  # H1 accepted: a winner and H1 agree, nothing to explain
])
def test_the_clause_follows_the_decision(test: str, clause: str) -> None:
    """A bot better by 1.5 a pair is significantly better, and nearer margin0=1 than margin1=4:
    H0 accepted beside a winner is explained; H1 beside a winner needs no words."""
    boards = [[[1, -1], [0, 0]] if i % 2 else [[1, -1], [1, -1]] for i in range(40)]
    summary = summary_of(boards, test)
    assert summary.winner == "greedy_bot" and summary.sprt is not None and summary.sprt.decision is not None
    line = verdict_line(summary)
    assert line.endswith(clause) if clause else line.endswith(")")
