"""The ladder's matchmaking: deterministic, no starvation (the stated bound, in a simulated run),
the floor, newcomer placement, refresh and tables of N."""

from __future__ import annotations

import random
from collections.abc import Callable
from fractions import Fraction

import pytest

from tournaments.ladder.matchmaking import Matchmaker
from tournaments.ladder.rating import Outcome, Ratings

LAG = 8


def run(mm: Matchmaker, strengths: dict[str, float], tables: int, seed: int = 1, joins: dict[int, list[str]] | None = None,
        deals: int = 8, noise: float = 20.0, check: Callable[[int, tuple[str, ...], dict[str, int], list[str]], None] | None = None
        ) -> tuple[list[tuple[str, ...]], Ratings]:
    """A simulated ladder as the host runs one: table n is chosen from the outcomes of tables
    before n − LAG; ``joins`` adds bots at given tables (the others are there from table 0)."""
    rng = random.Random(seed)
    joins = joins or {}
    late = {b for bs in joins.values() for b in bs}
    active = [b for b in strengths if b not in late]
    ratings = Ratings(2.0)
    for b in active:
        ratings.add_bot(b)
    played = dict.fromkeys(active, 0)
    waited = dict.fromkeys(active, 0)
    chosen: list[tuple[str, ...]] = []
    pending: list[Outcome] = []
    for n in range(tables):
        for b in joins.get(n, []):
            active.append(b)
            ratings.add_bot(b)
            played[b] = waited[b] = 0
        while pending and pending[0].table < n - LAG:
            ratings.add(pending.pop(0))
        seated = mm.choose(n, active, ratings, played, waited)
        if check:
            check(n, seated, dict(waited), list(active))
        chosen.append(seated)
        for b in active:
            waited[b] = 0 if b in seated else waited[b] + 1
        for b in seated:
            played[b] += 1
        nets = [sum(strengths[b] + rng.gauss(0, noise) for _ in range(deals)) / deals for b in seated]
        whole = [Fraction(round(x * 8), 8) for x in nets]
        total = sum(whole, Fraction(0))
        k = len(seated)
        margins = tuple(w - (total - w) / (k - 1) for w in whole)
        pending.append(Outcome(n, n, seated, margins, deals))
    return chosen, ratings


FIELD = {f"b{i:02d}": 10.0 * random.Random(i).gauss(0, 1) for i in range(12)}


def test_choose_is_a_pure_function_of_its_arguments() -> None:
    mm = Matchmaker(2, floor=3, seed=b"ladder")
    chosen, ratings = run(mm, FIELD, 200)
    played = {b: sum(b in t for t in chosen) for b in FIELD}
    waited = dict.fromkeys(FIELD, 3)
    first = mm.choose(200, list(FIELD), ratings, played, waited)
    # the same arguments, another matchmaker of the same settings, after other calls: the same table
    other = Matchmaker(2, floor=3, seed=b"ladder")
    other.choose(5, list(FIELD), ratings, dict.fromkeys(FIELD, 0), dict.fromkeys(FIELD, 0))
    assert other.choose(200, list(FIELD), ratings, played, waited) == first
    assert mm.choose(200, list(FIELD), ratings, played, waited) == first
    # and a whole run twice gives the same tables
    assert run(mm, FIELD, 120)[0] == run(Matchmaker(2, floor=3, seed=b"ladder"), FIELD, 120)[0]


@pytest.mark.parametrize("seats", [2, 3])
def test_no_entry_waits_more_than_the_bound(seats: int) -> None:
    mm = Matchmaker(seats, floor=2, seed=1, patience=2)
    longest: dict[str, int] = {}

    def check(n: int, seated: tuple[str, ...], waited: dict[str, int], active: list[str]) -> None:
        assert len(set(seated)) == seats and set(seated) <= set(active)
        for b in active:
            if b not in seated:
                longest[b] = max(longest.get(b, 0), waited[b] + 1)
                assert waited[b] + 1 <= mm.bound(len(active)), (n, b, waited[b])

    run(mm, FIELD, 600, check=check)
    # the bound is not slack: the rule of the uncertain pairs would leave some entry waiting longer
    assert max(longest.values()) >= mm.wait(len(FIELD))
    assert mm.bound(12) == 2 * 6 + 5 if seats == 2 else mm.bound(12) == 2 * 4 + 3


def test_without_the_overdue_rule_a_settled_entry_would_starve() -> None:
    """The same run with patience so long it never applies: the far-off entries wait far longer
    than the bound (so the bound above is the rule's doing)."""
    mm = Matchmaker(2, floor=2, seed=1, patience=10_000)
    longest: dict[str, int] = {}

    def check(n: int, seated: tuple[str, ...], waited: dict[str, int], active: list[str]) -> None:
        for b in active:
            longest[b] = max(longest.get(b, 0), waited[b])

    run(mm, FIELD, 600, check=check)
    assert max(longest.values()) > Matchmaker(2, floor=2, seed=1, patience=2).bound(12)


def test_every_entry_reaches_the_floor_first() -> None:
    mm = Matchmaker(2, floor=4, seed=1)
    chosen, _ = run(mm, FIELD, 60)
    counts = dict.fromkeys(FIELD, 0)
    for n, seated in enumerate(chosen):
        below = [b for b in FIELD if counts[b] < 4]
        if below:
            assert any(b in seated for b in below), n
        for b in seated:
            counts[b] += 1
    assert min(counts.values()) >= 4


def test_a_newcomer_is_placed_against_entries_near_its_estimate() -> None:
    strengths = dict(FIELD)
    strengths["late"] = 30.0  # far above the field
    mm = Matchmaker(2, floor=6, seed=1)
    chosen, ratings = run(mm, strengths, 900, joins={600: ["late"]})
    late = [t for t in chosen[600:] if "late" in t]
    assert len(late) >= 6
    # its first table is against the middle of the field (no estimate yet) ...
    ranked = [s.name for s in ratings.standings() if s.name != "late"]
    first_opponent = next(b for b in late[0] if b != "late")
    assert ranked.index(first_opponent) in range(3, 9)
    # ... and once its results count (LAG tables later), against the best of the field
    later = [next(b for b in t if b != "late") for t in chosen[600 + LAG + 2: 700] if "late" in t]
    assert later and all(ranked.index(b) < 3 for b in later)


def test_refresh_tables_seat_the_neighbours_that_met_longest_ago() -> None:
    mm = Matchmaker(2, floor=1, seed=1, refresh=5)
    _, ratings = run(mm, FIELD, 300)
    played = dict.fromkeys(FIELD, 50)
    waited = dict.fromkeys(FIELD, 0)
    ranked = [s.name for s in ratings.standings()]
    ages = {(a, b): ratings.last_met(a, b) for a, b in zip(ranked, ranked[1:])}
    oldest = min(ages, key=lambda p: -1 if ages[p] is None else ages[p])
    assert mm.choose(304, list(FIELD), ratings, played, waited) == oldest
    # any other table number: the rule of the uncertain pairs, not this one
    assert mm.choose(303, list(FIELD), ratings, played, waited) != oldest


def test_tables_in_play_are_counted_so_choices_do_not_stack_on_one_pair() -> None:
    mm = Matchmaker(2, floor=1, seed=1)
    _, ratings = run(mm, FIELD, 200)
    played = dict.fromkeys(FIELD, 20)
    waited = dict.fromkeys(FIELD, 0)
    first = mm.choose(201, list(FIELD), ratings, played, waited)
    # with that pair already at eight tables in play, the next table goes elsewhere
    assert mm.choose(201, list(FIELD), ratings, played, waited, in_play=[first] * 8) != first
    # a table in play with an entry no longer active is left out, not an error
    assert mm.choose(201, list(FIELD), ratings, played, waited, in_play=[("gone", first[0])]) == first


def test_tables_of_three_seat_entries_near_each_other() -> None:
    mm = Matchmaker(3, floor=2, seed=1)
    chosen, ratings = run(mm, FIELD, 300)
    assert all(len(set(t)) == 3 for t in chosen)
    ranked = [s.name for s in ratings.standings()]
    spans = [max(ranked.index(b) for b in t) - min(ranked.index(b) for b in t) for t in chosen[-50:]]
    assert sum(spans) / len(spans) < 6


def test_bad_calls_are_refused() -> None:
    ratings = Ratings(2.0)
    ratings.add_bot("a")
    with pytest.raises(ValueError, match="cannot fill"):
        Matchmaker(2).choose(0, ["a"], ratings, {}, {})
    with pytest.raises(ValueError, match="'b' has no rating"):
        Matchmaker(2).choose(0, ["a", "b"], ratings, {}, {})
    with pytest.raises(ValueError, match="two entries or more"):
        Matchmaker(1)


def test_rule_names_the_rule_that_seats_the_table() -> None:
    """``rule`` says which rule seats a table, as ``choose`` applies it (the bench counts them): an
    overdue entry first, then a newcomer below the floor, then the refresh table, else rule 4."""
    mm = Matchmaker(2, floor=3, seed=1, patience=2, refresh=5)
    _, ratings = run(mm, FIELD, 200)
    names = list(FIELD)
    played = dict.fromkeys(names, 30)
    waited = dict.fromkeys(names, 0)
    assert mm.rule(201, names, ratings, played, waited) == 4
    assert mm.rule(204, names, ratings, played, waited) == 3  # table % refresh == refresh − 1
    # a newcomer (below the floor, its tables counted) takes the table, whatever its number
    newcomer = {**played, "b07": 1}
    assert mm.rule(204, names, ratings, newcomer, waited) == 2
    assert "b07" in mm.choose(204, names, ratings, newcomer, waited)
    # an overdue entry comes before both
    overdue = {**waited, "b03": mm.wait(len(names))}
    assert mm.rule(204, names, ratings, newcomer, overdue) == 1
    assert "b03" in mm.choose(204, names, ratings, newcomer, overdue)
    # the same arguments, the same answer
    assert [mm.rule(t, names, ratings, played, waited) for t in range(200, 210)] == [
        Matchmaker(2, floor=3, seed=1, patience=2, refresh=5).rule(t, names, ratings, played, waited) for t in range(200, 210)
    ]
