"""Printing a match result for people.  The input is the JSON object of
:meth:`referee.match.MatchResult.to_json`, so what is printed and what ``--json`` writes are the
same facts."""

from __future__ import annotations

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text


def _pairs(result: dict) -> bool:
    return result["variant"] == "sport" or (result["variant"] == "kozel" and result["players"] == 4 and result["options"].get("teams") == "pairs")


def seating_text(result: dict, o: int) -> str:
    tag = letters(result)
    seating = result["orientations"][o]
    return "  ".join(f"seat {s} {tag[b]}" for s, b in enumerate(seating))


def letters(result: dict) -> list[str]:
    """Short labels for the bots in wide tables: A, B, C…"""
    return [chr(ord("A") + i) for i in range(len(result["bots"]))]


def deals_table(result: dict) -> Table:
    pairs = _pairs(result)
    tag = letters(result)
    t = Table(title="Deals", title_justify="left", pad_edge=False, box=None, header_style="bold")
    if result["unit"] == "game":
        t.add_column("game", justify="right")
    t.add_column("deal", justify="right")
    t.add_column("or.", justify="right")
    t.add_column("led by")
    t.add_column("ended")
    t.add_column("wrote by side" if not pairs else "wrote seats 0+2 / 1+3")
    for letter in tag:
        t.add_column(letter, justify="right")
    sign = 1 if result["sense"] > 0 else -1
    for d in result["deals"]:
        seating = result["orientations"][d["orientation"]]
        led = f"{tag[seating[d['leader']]]}@{d['leader']}" + (f" {d['lead_tile']}*" if d["lead_tile"] else "")
        ended = f"{d['end']} {tag[seating[d['by']]]}@{d['by']}"
        row = [str(d["game"] + 1)] if result["unit"] == "game" else []
        row += [str(d["deal"] + 1), str(d["orientation"]), led, ended, "/".join(str(x) for x in d["wrote"])]
        row += [f"{sign * p:+d}" if p else "0" for p in d["points"]]
        t.add_row(*row)
    legend = ", ".join(f"{tag[i]} = {b['name']}" for i, b in enumerate(result["bots"]))
    t.caption = f"{legend}.  X@s: bot X in seat s; * a forced lead.  Bot columns: what that bot wrote" + (
        " (penalties count against it: shown negative)" if result["sense"] < 0 else "")
    t.caption_justify = "left"
    return t


def games_table(result: dict) -> Table:
    names = [b["name"] for b in result["bots"]]
    t = Table(title="Games", title_justify="left", pad_edge=False, box=None, header_style="bold")
    t.add_column("game", justify="right")
    t.add_column("orient.", justify="right")
    t.add_column("deals", justify="right")
    t.add_column("totals")
    t.add_column("result")
    for g in result["game_results"]:
        if g["won_by"]:
            res = ", ".join(names[b] for b in g["won_by"]) + " won"
        else:
            res = "drawn"
        if g["dry_bots"]:
            res += " (dry: " + ", ".join(names[b] for b in g["dry_bots"]) + ")"
        t.add_row(str(g["game"] + 1), str(g["orientation"]), str(g["deals"]), " / ".join(map(str, g["totals"])), f"{res} — {g['reason']}")
    return t


def totals_table(result: dict) -> Table:
    t = Table(title="Totals", title_justify="left", pad_edge=False, box=None, header_style="bold")
    t.add_column("bot")
    t.add_column("written" if result["sense"] > 0 else "penalties", justify="right")
    t.add_column("net", justify="right")
    t.add_column("deals won", justify="right")
    if result["unit"] == "game":
        t.add_column("games W/D/L", justify="right")
    t.add_column("faults")
    for row in result["totals"]:
        faults = ", ".join(f"{k} {v}" for k, v in row["faults"].items()) or "none"
        cells = [row["bot"], str(row["points"]), f"{row['net']:+g}", str(row["deals_won"])]
        if result["unit"] == "game":
            cells.append(f"{row['games_won']}/{row['games_drawn']}/{row['games_lost']}")
        cells.append(faults)
        t.add_row(*cells)
    return t


def margin_text(result: dict) -> Text:
    names = [b["name"] for b in result["bots"]]
    unit = result["unit"]
    lines = Text()
    for name, m in result["margin"].items():
        paired, unpaired = m["paired"], m["unpaired"]
        against = names[1] if len(names) == 2 else "the field"
        lines.append(f"Margin per {unit}, {name} − {against}: ", style="bold")
        if paired["ci95"] is None:
            lines.append(f"{paired['mean']:+.2f} (one {unit}: no interval)\n")
            continue
        half = (paired["ci95"][1] - paired["ci95"][0]) / 2
        lines.append(f"{paired['mean']:+.2f} ± {half:.2f}")
        lines.append(f"  (95% interval over {paired['n']} paired {unit}s: [{paired['ci95'][0]:+.2f}, {paired['ci95'][1]:+.2f}])\n")
        if unpaired["ci95"] is not None:
            uhalf = (unpaired["ci95"][1] - unpaired["ci95"][0]) / 2
            lines.append(f"  pairing the orientations: ± {half:.2f}; the same {unpaired['n']} plays read unpaired: ± {uhalf:.2f}\n", style="dim")
    return lines


def verdict_text(result: dict) -> Text:
    if result["interrupted"]:
        return Text("Match interrupted: the figures above cover the finished deals only.", style="bold yellow")
    if result["winner"] is None:
        return Text("Result: a draw.", style="bold")
    return Text(f"Winner: {result['winner']}", style="bold green")


def render(result: dict, console: Console) -> None:
    legend = ", ".join(f"{letter} = {b['name']}" for letter, b in zip(letters(result), result["bots"]))
    parts = [Text(f"{result['variant']} — {legend}; {result['players']} seats, "
                  + (f"seed {result['seed']}" if result["seed"] is not None else f"deals from {result['deals_file']}"))]
    for o in range(len(result["orientations"])):
        parts.append(Text(f"  orientation {o}: {seating_text(result, o)}", style="dim"))
    parts.append(deals_table(result))
    if result["unit"] == "game":
        parts.append(games_table(result))
    parts.append(totals_table(result))
    parts.append(margin_text(result))
    if result["faults"]:
        ft = Text("Faults:\n", style="bold red")
        for f in result["faults"]:
            ft.append(f"  {f['bot']} game {f['game'] + 1} deal {f['deal'] + 1} seat {f['seat']}: {f['kind']}: {f['detail']}\n")
        parts.append(ft)
    parts.append(verdict_text(result))
    console.print(Group(*parts))
