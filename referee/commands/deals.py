"""``referee deals generate | show``: files of fixed deals.
"""

from __future__ import annotations

import io
import os
import stat
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from referee.base.seeds import seed_text
from referee.commands.app import deals_app
from referee.commands.options import load_deal_file, parse_options, seed_option
from referee.commands.shared import err, fail, out, progress_bar
from referee.engine import variant
from referee.engine.core.deal import format_deal_line
from referee.engine.core.errors import RulesError


@deals_app.command("generate")
def deals_generate(
    variant_id: Annotated[str, typer.Option("--variant", "-v", help="The game the deals are for.")],
    seed: Annotated[Optional[str], typer.Option(help="Seed of the deal stream: decimal, or hexadecimal with 0x.  Default: a fresh secret seed, printed.", show_default=False)] = None,
    count: Annotated[int, typer.Option(help="How many deals.")] = 12,
    players: Annotated[Optional[int], typer.Option(help="Seats (default: the game's usual count).")] = None,
    option: Annotated[Optional[list[str]], typer.Option("--option", "-o", help="Game options that change the deal (name=value).")] = None,
    output: Annotated[Optional[Path], typer.Option("--output", "-O", help="Write here instead of stdout.")] = None,
) -> None:
    """Write deals from a seed: one JSON object per line, every hand in seat order, then the bazaar or sleeping tiles."""
    from referee.engine.core.deal import deal_from_seed
    from referee.engine.core.shuffle import BLAKE2B

    try:
        v = variant(variant_id)
        shape = v.shape(players, parse_options(option))
    except RulesError as exc:
        raise fail(str(exc)) from None
    seed_value = seed_option(seed)
    if count < 1:
        raise fail("--count must be at least 1")
    if count > STREAM_DEALS:
        raise fail(f"--count {count}: the deal stream of a seed holds 2**64 deals")
    if output is not None and output.is_dir():
        raise fail(f"--output {output} is a folder; give a file name")
    # Every line is as long as the first, but for the digits of its index.
    need = count * (len(format_deal_line(deal_from_seed(seed_value, 0, shape, BLAKE2B), shape, 0)) + len(str(count - 1)))
    free = _free_bytes(output)
    if free is not None and need > free:
        raise fail(f"--count {count}: the deals need about {_size(need)}, and {output or 'standard output'} "
                   f"has {_size(free)} free")
    try:
        sink = sys.stdout if output is None else open(output, "w", encoding="utf-8")  # noqa: SIM115
    except OSError as exc:
        raise fail(f"cannot write {output}: {exc.strerror or exc}") from None
    bar = progress_bar(count, False)
    written = 0
    try:
        with sink if output is not None else _nothing(), bar or _nothing():
            task = bar.add_task(f"{v.id} deals", total=count) if bar is not None else None
            # Streamed a block at a time: nothing grows with the count, and a reader sees deals at once.
            while written < count:
                block = range(written, min(count, written + DEALS_PER_WRITE))
                sink.write("".join(format_deal_line(deal_from_seed(seed_value, i, shape, BLAKE2B), shape, i) + "\n" for i in block))
                written += len(block)
                if bar is not None and task is not None:
                    bar.update(task, completed=written)
    except BrokenPipeError:  # the reader stopped reading (`| head`): as quiet as a shell tool
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - so that the exit flush cannot fail
        return
    except OSError as exc:
        raise fail(f"cannot write {output or 'standard output'}: {exc.strerror or exc} (after {written} deals)") from None
    if output is not None or seed is None:
        err.print(f"wrote {count} {v.id} deals (seed {seed_text(seed_value)}) to {output or 'standard output'}", markup=False, highlight=False)


#: Deals a seed's stream holds (referee.engine.core.shuffle).
STREAM_DEALS = 1 << 64
#: Deals formatted and written at once by ``deals generate``.
DEALS_PER_WRITE = 1000


class _nothing:
    """A context manager that does nothing (``contextlib.nullcontext`` without the import)."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def _free_bytes(output: Path | None) -> int | None:
    """Free bytes where ``output`` goes (standard output when ``None``, if it is a file); ``None``
    when that cannot be known (a pipe, a terminal)."""
    try:
        if output is None:
            fd = sys.stdout.fileno()
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            st = os.fstatvfs(fd)
        else:
            st = os.statvfs(output.parent if str(output.parent) else Path("."))
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        return None
    return st.f_bavail * st.f_frsize


def _size(n: float) -> str:
    for unit in ("bytes", "KB", "MB", "GB", "TB", "PB"):
        if n < 1000 or unit == "PB":
            return f"{n:,.0f} {unit}" if unit == "bytes" else f"{n:,.1f} {unit}"
        n /= 1000
    return ""


@deals_app.command("show")
def deals_show(
    path: Annotated[Path, typer.Argument(help="A deal file.")],
    variant_id: Annotated[str, typer.Option("--variant", "-v", help="Check the deals against this game.")] = "sport",
    players: Annotated[Optional[int], typer.Option(help="Seats (default: the game's usual count).")] = None,
) -> None:
    """Print a deal file for people, checking every line."""
    from referee.engine.core.tiles import PIPS, tile_text

    try:
        v = variant(variant_id)
        shape = v.shape(players)
    except RulesError as exc:
        raise fail(str(exc)) from None
    for i, deal in enumerate(load_deal_file(path, shape)):
        out.print(f"deal {i + 1}", style="bold")
        for s, hand in enumerate(deal.hands):
            out.print(f"  seat {s}: " + " ".join(tile_text(t) for t in hand) + f"   ({sum(PIPS[t] for t in hand)} pips)", highlight=False)
        if deal.undealt:
            out.print(f"  {shape.undealt}: " + " ".join(tile_text(t) for t in deal.undealt), highlight=False)
