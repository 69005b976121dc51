"""Printing a match result for people: the :class:`referee.records.summary.MatchSummary` and the deal
and game results it goes with (streams: a long match's are read back from its spools), so what
is printed and what ``--json`` writes are the same facts.

The deal and game tables are printed a block of rows at a time, with every column as wide as its
widest cell over all the rows (found in a first pass), so they read as one table while memory
stays flat in the number of deals.

Bot names come from users and bots: a table cell or caption reads rich markup, so every name
is escaped there (``[perlbot]`` stays visible, ``[/x]`` cannot break the output)."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence, Sized
from itertools import islice
from typing import TypeVar

from rich.cells import cell_len
from rich.console import Console, Group
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from referee.base.seeds import seed_text
from referee.engine import variant
from referee.records.summary import DealResult, GameResult, MatchSummary
from referee.stats.figures import Standing, alike
from referee.stats.means import signed
from referee.stats.sprt import SprtState

#: Rows of a deal or game table printed at once.
BLOCK = 500


def _pairs(result: MatchSummary) -> bool:
    return variant(result.variant).pair_play(result.players, result.options)


def seating_text(result: MatchSummary, o: int) -> str:
    tag = letters(result)
    seating = result.orientations[o]
    return "  ".join(f"seat {s} {tag[b]}" for s, b in enumerate(seating))


def letters(result: MatchSummary) -> list[str]:
    """Short labels for the bots in wide tables: A, B, C…"""
    return [chr(ord("A") + i) for i in range(len(result.bots))]


def deal_row(result: MatchSummary, d: DealResult) -> list[str]:
    """One row of the deal table."""
    tag = letters(result)
    sign = 1 if result.sense > 0 else -1
    seating = result.orientations[d.orientation]
    led = f"{tag[seating[d.leader]]}@{d.leader}" + (f" {d.lead_tile}*" if d.lead_tile else "")
    ended = f"{d.end} {tag[seating[d.by]]}@{d.by}"
    row = [str(d.game + 1)] if result.unit == "game" else []
    row += [str(d.deal + 1), str(d.orientation), led, ended, "/".join(str(x) for x in d.wrote)]
    row += [f"{sign * p:+d}" if p else "0" for p in d.points]
    return row


def deals_table(result: MatchSummary) -> Table:
    """The deal table's title, columns and caption, without rows (see :func:`blocks`)."""
    pairs = _pairs(result)
    tag = letters(result)
    t = Table(title="Deals", title_justify="left", pad_edge=False, box=None, header_style="bold")
    if result.unit == "game":
        t.add_column("game", justify="right")
    t.add_column("deal", justify="right")
    t.add_column("or.", justify="right")
    t.add_column("led by")
    t.add_column("ended")
    t.add_column("wrote by side" if not pairs else "wrote seats 0+2 / 1+3")
    for letter in tag:
        t.add_column(letter, justify="right")
    legend = ", ".join(f"{tag[i]} = {escape(b.name)}" for i, b in enumerate(result.bots))
    t.caption = f"{legend}.  X@s: bot X in seat s; * a forced lead.  Bot columns: what that bot wrote" + (
        " (penalties count against it: shown negative)" if result.sense < 0 else "")
    t.caption_justify = "left"
    return t


def game_row(result: MatchSummary, g: GameResult) -> list[str]:
    """One row of the game table (bot names escaped: the cells read markup)."""
    names = result.names
    res = ", ".join(names[b] for b in g.won_by) + " won" if g.won_by else "drawn"
    if g.dry_bots:
        res += " (dry: " + ", ".join(names[b] for b in g.dry_bots) + ")"
    totals = " / ".join(map(str, g.totals))
    if (counted := counted_points(result, g)) != g.totals:
        totals += " → " + " / ".join(map(str, counted))
    return [str(g.game + 1), str(g.orientation), str(g.deals), totals, escape(f"{res} — {g.reason}")]


def counted_points(result: MatchSummary, g: GameResult) -> list[int]:
    """Per side, the points the game counts for (the margin's and the pairs'): its totals, except
    where a game won outright counts otherwise (sea_kozel: as reaching 125).  Side ``s``'s first
    seat is seat ``s`` (pairs: seats 0+2 and 1+3), whose bot's ``points`` are the side's."""
    seating = result.orientations[g.orientation]
    return [g.points[seating[s]] for s in range(len(g.totals))]


def outright_note(result: MatchSummary, games: Iterable[GameResult]) -> Text | None:
    """Under the totals, when some game counts otherwise than its totals read (a game won
    outright: sea_kozel's bald, hundred, 6-6 or svoyak): what it counts as, and how many."""
    played = changed = 0
    worth = set()
    for g in games:
        played += 1
        if (counted := counted_points(result, g)) != g.totals:
            changed += 1
            worth.add(max(counted))
    if not changed:
        return None
    as_what = f"as reaching {worth.pop()}" if len(worth) == 1 else "as reaching the target"
    return Text(f"Note: {changed} of the {played} games were won outright (by a deal that wins the match at once); a game "
                f"won outright counts {as_what} for its winner, whatever its totals read (Games: totals → counted).  "
                f"The margin and the pairs use the counted points; the totals above add up what was written deal by deal.",
                style="dim")


def games_table(result: MatchSummary) -> Table:
    """The game table's title and columns, without rows (see :func:`blocks`)."""
    t = Table(title="Games", title_justify="left", pad_edge=False, box=None, header_style="bold")
    t.add_column("game", justify="right")
    t.add_column("orient.", justify="right")
    t.add_column("deals", justify="right")
    t.add_column("totals")
    t.add_column("result")
    return t


def blocks(console: Console, make: Callable[[], Table], rows: Callable[[], Iterable[list[str]]],
           block: int = BLOCK) -> Iterator[Table]:
    """The table ``make()`` with the rows of ``rows()`` (called twice: once to measure, once to
    print), as tables of at most ``block`` rows: the first with the title and header, the last
    with the caption, and every column as wide as rich makes it in the whole table on
    ``console``, so that they print as the whole table would.

    Rich sizes a column from two measures of its cells: the longest line and the longest word.
    A probe table holding, per column, the cell with each is measured by rich's own sizing
    (a private method, pinned by a test that prints both ways)."""
    probe = make()
    longest: list[tuple[int, str]] = [(0, "")] * len(probe.columns)  # per column: (longest line, cell)
    widest_word: list[tuple[int, str]] = [(0, "")] * len(probe.columns)
    count = 0
    for row in rows():
        count += 1
        for i, cell in enumerate(row):
            plain = Text.from_markup(cell).plain
            if (line := cell_len(plain)) > longest[i][0]:
                longest[i] = (line, cell)
            if (word := max(map(cell_len, plain.split()), default=0)) > widest_word[i][0]:
                widest_word[i] = (word, cell)
    if count:
        probe.add_row(*(cell for _, cell in longest))
        probe.add_row(*(cell for _, cell in widest_word))
    options = console.options
    widths = probe._calculate_column_widths(console, options.update_width(options.max_width - probe._extra_width))
    it = iter(rows())
    done = 0
    while True:
        chunk = list(islice(it, block))
        t = make()
        for i, (column, width) in enumerate(zip(t.columns, widths)):
            column.width = width - t._get_padding_width(i)  # rich's widths include the padding
        if done:
            t.title = None
            t.show_header = False
        done += len(chunk)
        if done < count:
            t.caption = None
        for row in chunk:
            t.add_row(*row)
        yield t
        if done >= count:
            return


def detached(table: Table) -> Table | Group:
    """``table`` with its caption printed under it as a paragraph of its own: rich wraps a caption
    to the table's width, which off a terminal (where nothing wraps) would break it mid-phrase."""
    if not table.caption:
        return table
    caption = table.caption
    table.caption = None
    text = Text.from_markup(caption) if isinstance(caption, str) else Text(str(caption))
    text.stylize("table.caption")
    return Group(table, text)


def totals_table(result: MatchSummary) -> Table:
    t = Table(title="Totals", title_justify="left", pad_edge=False, box=None, header_style="bold")
    t.add_column("bot")
    t.add_column("written" if result.sense > 0 else "penalties", justify="right")
    t.add_column("net", justify="right")
    t.add_column("deals won", justify="right")
    if result.unit == "game":
        t.add_column("games W/D/L", justify="right")
    t.add_column("faults")
    for row in result.totals:
        faults = ", ".join(f"{k} {v}" for k, v in row.faults.items()) or "none"
        cells = [escape(row.bot), str(row.points), net_text(row.net), str(row.deals_won)]
        if result.unit == "game":
            cells.append(f"{row.games_won}/{row.games_drawn}/{row.games_lost}")
        cells.append(faults)
        t.add_row(*cells)
    return t


def net_text(net: float) -> str:
    """A total net with its sign: "+2131", "-40", and "0" (never "-0")."""
    return signed(net, 0) if net == int(net) else signed(net, 2)


def pct(confidence: float) -> str:
    return f"{100 * confidence:g}%"


def margin_text(result: MatchSummary) -> Text:
    names = result.names
    unit = result.unit
    level = pct(result.confidence)
    lines = Text()
    for name, m in result.margin.items():
        paired, unpaired = m.paired, m.unpaired
        ci, uci = paired.ci, unpaired.ci
        against = names[1] if len(names) == 2 else "the field"
        lines.append(f"Margin per {unit}, {name} − {against}: ", style="bold")
        if ci is None:
            lines.append(f"{signed(paired.mean, 2)} (one {unit}: no interval)\n")
            continue
        half = (ci[1] - ci[0]) / 2
        lines.append(f"{signed(paired.mean, 2)} ± {half:.2f}")
        lines.append(f"  ({level} interval over {paired.n} paired {unit}s: [{signed(ci[0], 2)}, {signed(ci[1], 2)}])\n")
        if uci is not None:
            uhalf = (uci[1] - uci[0]) / 2
            lines.append(f"  pairing the orientations: ± {half:.2f}; the same {unpaired.n} plays read unpaired: ± {uhalf:.2f}\n", style="dim")
    return lines


def elo_bound_of(row: Standing) -> str | None:
    """"> +183" when the row's Elo is a one-sided bound (two bots, every play won; "< −183",
    every play lost: :func:`referee.stats.elo.elo_bound`), else ``None``."""
    if row.elo is not None or row.elo_ci is None:
        return None
    lo, hi = row.elo_ci
    if lo is not None and hi is None:
        return f"> {signed(lo)}"
    if lo is None and hi is not None:
        return f"< {signed(hi)}"
    return None


def _elo_interval(row: Standing) -> str:
    if row.elo_ci is None:
        return "no interval"
    lo, hi = row.elo_ci
    return f"[{'−∞' if lo is None else signed(lo)}, {'+∞' if hi is None else signed(hi)}]"


def _elo_point(row: Standing, field: bool = False) -> str:
    """The Elo of a row; null is infinite (``field``, three or more bots: a margin beyond the
    floats' reach), a bound (two bots: every play won or lost) or, with no spread or no pairs,
    unknown."""
    if row.elo is None:
        if field:
            return "—" if row.elo_ci is None else ("+∞" if row.margin.mean > 0 else "−∞")
        return elo_bound_of(row) or "—"
    return signed(row.elo)


def _elo_line(row: Standing, level: str) -> str:
    """A two-bot match's Elo with its interval, or its bound when one bot won every play; an
    interval the pairs cannot bound says so in words, not as ∞."""
    score = "—" if row.score is None else format(row.score, ".3f")
    n = row.margin.n
    pairs = f"{n} pair{'' if n == 1 else 's'}"
    if (bound := elo_bound_of(row)) is not None:
        return f"{bound} ({level} one-sided bound: {'every play won' if bound[0] == '>' else 'every play lost'}, {pairs}; score {score})"
    if row.elo is not None and row.elo_ci is not None and alike(row.classes):
        return (f"{_elo_point(row)} {_elo_interval(row)} ({level} interval: every pair alike, so no spread to take a t "
                f"interval from; the exact bound of {pairs} alike; score {score})")
    if row.elo is not None and row.elo_ci is not None and None in row.elo_ci:
        lo, hi = row.elo_ci
        side = "either way" if lo is None and hi is None else "above" if hi is None else "below"
        shown = f"[{'unbounded' if lo is None else signed(lo)}, {'unbounded' if hi is None else signed(hi)}]"
        return (f"{_elo_point(row)} {shown} ({level} interval, from the pairs' scores: {pairs} {'is' if n == 1 else 'are'} "
                f"too few to bound it {side}; score {score})")
    return f"{_elo_point(row)} {_elo_interval(row)} ({level} interval, from the pairs' scores; score {score})"


def los_text(x: float | None) -> str:
    """A likelihood of superiority as the report prints it: "97.3%", "—" when there is none."""
    return "—" if x is None else f"{100 * x:.1f}%"


def elo_text(row: Standing, field: bool = False) -> str:
    """A row's Elo with its interval as the report prints them ("+35 [−12, +83]"), or its bound
    ("> +183") when one bot of two won or lost every play; ``field``: three or more bots."""
    bound = None if field else elo_bound_of(row)
    return bound or f"{_elo_point(row, field)} {_elo_interval(row)}"


def board_word(result: MatchSummary) -> str:
    """What one board (the issue's "pair") is in this match, in words."""
    n = len(result.orientations)
    unit = "deal" if result.unit == "deal" else "game"
    if n == 2:
        return f"a {unit} in both orientations"  # one parenthesis only: it is printed inside "Pairs (…)"
    return f"a {unit} in all {n} rotations"


#: The Elo column of a ranking of three or more bots, in words (printed under the table).
FIELD_ELO = ("Elo: the margin on the Elo scale, 400·log10(p/(1−p)) with p = Φ(margin ÷ the field's pooled spread of "
             "pair margins), the chance of winning a pair against the field were pair margins normal; 0 is the field's "
             "mean, and it orders the bots as their margins do.")


def figures_text(result: MatchSummary) -> Text | Table | Group:
    """LOS, pair classes and Elo (two bots), or the ranking with its rule (three or more)."""
    rank = result.ranking
    rows = rank.standings
    level = pct(result.confidence)
    if len(result.bots) == 2:
        first = next(r for r in rows if r.bot == result.bots[0].name)
        other = result.bots[1].name
        t = Text()
        t.append(f"LOS ({first.bot} better than {other}): ", style="bold")
        t.append(f"{los_text(first.los)}\n")
        t.append(f"Pairs ({board_word(result)}), {first.bot}'s side: ", style="bold")
        t.append("  ".join(f"{label} {c}" for label, c in zip(rank.class_labels, first.classes)) + "\n")
        t.append(f"Elo difference {first.bot} − {other}: ", style="bold")
        t.append(_elo_line(first, level) + "\n")
        return t
    table = Table(title="Ranking", title_justify="left", pad_edge=False, box=None, header_style="bold")
    halves = 2 * len(result.orientations)
    for h in ("place", "bot", f"margin/{result.unit}", "LOS", f"Elo [{level}]", f"pairs 0…{halves}"):
        table.add_column(h, justify="left" if h == "bot" else "right", no_wrap=h != "bot", min_width=10 if h == "bot" else None)
    for r in rows:
        lo, hi = r.places
        ci = r.margin.ci
        margin = signed(r.margin.mean, 1) + ("" if ci is None else f" ± {(ci[1] - ci[0]) / 2:.1f}")
        table.add_row(f"{r.place}" + (f" ({lo}–{hi})" if lo != hi else ""), escape(r.bot), margin, los_text(r.los),
                      f"{_elo_point(r, field=True)} {_elo_interval(r)}", " ".join(map(str, r.classes)))
    table.caption = (f"Rule: {rank.rule}.  A pair is {board_word(result)}; pairs 0…{halves}: how many pairs the bot "
                     f"won 0, ½, 1 … {halves // 2} plays of against the field's mean (a level play is half a win).  "
                     f"place (a–b): the places its {level} intervals allow; LOS: P(margin > 0).  {FIELD_ELO}")
    table.caption_justify = "left"
    return detached(table)


def sprt_text(state: SprtState) -> str:
    test = state.test
    verdict = {"H0": "H0 accepted", "H1": "H1 accepted", None: "undecided"}[state.decision]
    if state.decision is None and state.pairs < test.min_pairs:
        verdict += f" (no decision before {test.min_pairs} pairs)"
    return (f"SPRT {test.words} alpha={test.alpha:g} beta={test.beta:g} min_pairs={test.min_pairs}: "
            f"LLR {signed(state.llr, 3)} ({signed(state.lower, 3)}, {signed(state.upper, 3)}) after {state.pairs} pairs: {verdict}")


def verdict_text(result: MatchSummary) -> Text:
    t = Text()
    if result.interrupted:
        pairs = next(iter(result.margin.values())).paired.n if result.margin else 0
        if not pairs:
            t.append("Match interrupted before a pair was finished: no result.", style="bold yellow")
            return t
        t.append(f"Match interrupted after {pairs} pair{'' if pairs == 1 else 's'}: the figures above cover "
                 f"{'that pair' if pairs == 1 else 'those pairs'} only.\n", style="bold yellow")
    if result.sprt is not None:
        state = result.sprt
        t.append(sprt_text(state) + "\n", style="bold")
        if result.stopped_by == "sprt":
            t.append(f"Stopped by the SPRT after {state.pairs} pairs.\n", style="bold")
        elif not result.interrupted:
            t.append("The deal budget ran out before the SPRT decided.\n", style="bold yellow")
    level = pct(result.confidence)
    top = result.ranking.standings[0] if result.ranking.standings else None
    # One form whatever the pairs: with one pair there is no spread, so no LOS, and it says so.
    los = "" if top is None or len(result.ranking.standings) < 2 else (
        f" (LOS {los_text(top.los_next)})" if top.los_next is not None else " (LOS —, one pair)")
    if result.winner is not None:
        t.append(f"Winner: {result.winner}", style="bold green")
        t.append(f" — significant at {level}{los}{sprt_beside(result)}")
    elif result.ahead is not None:
        t.append(f"No winner: {result.ahead} is ahead, but not significant at {level}{los}{sprt_beside(result)}", style="bold")
    else:
        t.append("Result: a draw.", style="bold")
    return t


def sprt_beside(result: MatchSummary) -> str:
    """Why the verdict and the SPRT's decision can seem to disagree, as a clause after the verdict
    (docs/sprt.md, "A winner and an undecided SPRT"), or "" when they agree: the winner is named
    when the leader's margin has an interval above 0, while the SPRT asks whether the first
    bot's advantage is nearer H0's or H1's, at its error rates, which can take more pairs (or
    fewer, for a test of the pairs' classes)."""
    state = result.sprt
    if state is None or not result.bots:
        return ""
    test = state.test
    what = "margin" if test.kind == "margin" else "elo"
    h0, h1 = f"{what}0={test.h0 + 0.0:g}", f"{what}1={test.h1 + 0.0:g}"
    subject = result.bots[0].name
    if result.winner is not None and state.decision is None:
        return (f", as its margin's interval is above 0; the SPRT asks more, whether {subject}'s advantage is nearer "
                f"{h0} or {h1} at its error rates, and has not decided yet")
    if result.winner is not None and result.winner == subject and state.decision == "H0":
        return f", as its margin's interval is above 0; the SPRT asks more, and found the advantage nearer {h0} than {h1}"
    if result.winner is None and state.decision == "H1":
        of = "of the margins" if what == "margin" else "of the pairs' classes"
        return f": its margin's interval reaches 0; the SPRT accepted {h1} on its own test ({of}, at its error rates)"
    return ""


def verdict_line(result: MatchSummary) -> str:
    """The verdict in one line (``referee match -q``): the winner line of :func:`verdict_text`,
    after what stopped the match (an interruption, the SPRT's decision or its budget) when
    something did."""
    lines = verdict_text(result).plain.splitlines()
    last = lines[-1] if lines else ""
    before: list[str] = []
    if result.interrupted and len(lines) > 1:
        before.append(lines[0].rstrip("."))
    if result.sprt is not None:
        state = result.sprt
        decided = {"H0": "H0 accepted", "H1": "H1 accepted", None: "undecided"}[state.decision]
        before.append(f"SPRT {decided} after {state.pairs} pairs (LLR {signed(state.llr, 3)}, bounds "
                      f"{signed(state.lower, 3)} and {signed(state.upper, 3)})")
    return "; ".join([*before, last])


T = TypeVar("T")


def shown(items: Iterable[T], limit: int | None, group: int = 1) -> tuple[Callable[[], Iterator[T | None]], int, int]:
    """The entries of a table to print, as a function giving them afresh each call: all of
    ``items``, or past ``limit`` of them about the first and last ``limit // 2`` (whole groups of
    ``group`` rows, a pair's orientations) with ``None`` (a row of "…") between; and how many
    entries there are and how many are left out.  ``items`` is read again on every call (a
    spool), never held: only the last rows wait in a queue."""
    count = len(items) if isinstance(items, Sized) else sum(1 for _ in items)
    if limit is None or count <= limit:
        return lambda: iter(items), count, 0
    head = max(limit // 2 // group * group, 1)
    tail = head

    def picked() -> Iterator[T | None]:
        last: deque[T] = deque(maxlen=tail)
        for i, item in enumerate(items):
            if i < head:
                yield item
            else:
                last.append(item)
        yield None
        yield from last

    return picked, count, count - head - tail


def print_table(console: Console, make: Callable[[], Table], row: Callable[[T], list[str]], items: Iterable[T],
                limit: int | None, what: str, group: int = 1) -> None:
    """A deal or game table (:func:`blocks`), summarised past ``limit`` rows (:func:`shown`) with
    a line that says so and how to see every row."""
    entries, count, left_out = shown(items, limit, group)
    columns = len(make().columns)
    for t in blocks(console, make, lambda: (["…"] * columns if e is None else row(e) for e in entries())):
        console.print(detached(t))
    if left_out:
        head = (count - left_out) // 2
        console.print(Text(f"{count} {what} in all: the first {head} and the last {count - left_out - head} are shown, "
                           f"{left_out} between them are not; --full prints every row (--json has every {what[:-1]})",
                           style="dim"), soft_wrap=True)


def render(result: MatchSummary, deals: Iterable[DealResult], games: Iterable[GameResult], console: Console,
           limit: int | None = None, hints: Sequence[str | None] | None = None, event: str | None = None) -> None:
    """Print the whole result; past ``limit`` rows a deal or game table shows its first and last
    rows only; ``hints`` go with the faults, in their order; ``event``: the event the match
    belongs to (``--event``), named first.  ``deals`` and ``games`` are each read a few times
    (see :func:`blocks`)."""
    legend = ", ".join(f"{letter} = {b.name}" for letter, b in zip(letters(result), result.bots))
    head: list[Text | Table] = [Text(f"{result.variant} — {legend}; {result.players} seats, "
                                     + (f"seed {seed_text(result.seed)}" if result.seed is not None else f"deals from {result.deals_file}"))]
    if event is not None:
        head.insert(0, Text(f"Event: {event}", style="bold"))
    for o in range(len(result.orientations)):
        head.append(Text(f"  orientation {o}: {seating_text(result, o)}", style="dim"))
    console.print(Group(*head))
    n = len(result.orientations)
    print_table(console, lambda: deals_table(result), lambda d: deal_row(result, d), deals, limit, "deals",
                n if result.unit == "deal" else 1)
    if result.unit == "game":
        print_table(console, lambda: games_table(result), lambda g: game_row(result, g), games, limit, "games", n)
    note = outright_note(result, games) if result.unit == "game" else None
    console.print(Group(totals_table(result), *([note] if note else []), margin_text(result), figures_text(result)))
    # One line per fault and the verdict are read by scripts too: never wrapped.  Under a fault
    # line, indented: the line the bot wrote, and the hint (once each), as `referee check` gives them.
    if result.faults:
        ft = Text("Faults:\n", style="bold red")
        given: set[str] = set()
        for i, f in enumerate(result.faults):
            ft.append(f"  {f.bot} game {f.game + 1} deal {f.deal + 1} seat {f.seat}: {f.kind}: {f.detail}\n")
            if f.line is not None:
                ft.append(f"      the line: {f.line}\n", style="dim")
            hint = hints[i] if hints is not None and i < len(hints) else None
            if hint and hint not in given:
                given.add(hint)
                ft.append(f"      hint: {hint[0].upper()}{hint[1:]}.\n", style="dim")
        console.print(ft, soft_wrap=True)
    console.print(verdict_text(result), soft_wrap=True)
