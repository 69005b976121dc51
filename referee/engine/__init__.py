"""The rules engine: pure, deterministic, no I/O, no clocks, randomness only from a given seed.

* :mod:`.core.tiles` — tiles as ints, tile sets as bitmasks.
* :mod:`.core.shuffle` — the documented seeded shuffle.
* :mod:`.core.deal` — deals as values, deal-file lines.
* :mod:`.core.state` — the deal-state interface everything above the engine uses.
* :mod:`.core.layout` — layouts: the line, the cross, the trains, kolbasa's two lines.
* :mod:`.core.line` — one deal of a line game (turns, draws, passes, domino, fish), moves and events.
* :mod:`.core.cross` — one deal on a cross: multi-tile turns, closed doubles, points during play.
* :mod:`.core.trains` — one round of mexican_train: trains, markers, open and hanging doubles.
* :mod:`.core.kolbasa` — one deal of kolbasa: rows turned up, two lines, knives, tails, what a seat sees.
* :mod:`.core.game` — games across deals, options, the registry; :mod:`.games` — one module a game;
  :mod:`.registry` — a game found by its id (every game module loaded first).
* :mod:`.sampling` — hidden tiles sampled consistently with what a seat saw.
* :mod:`.core.scoring` — the rule of 13, eggs and pots.
* :mod:`.core.view` — what one seat may know.
"""

from .core.deal import Deal, DealShape, check_deal, deal_from_seed, format_deal_line, parse_deal_line, parse_deal_lines
from .core.errors import BadDeal, BadOption, IllegalPlay, RulesError, UnknownVariant
from .core.game import DealRecord, Game, GameOutcome, Option, Variant
from .core.line import DOMINO, END_NAMES, FISH, LEFT, RIGHT, STOP, TERMINAL, DealEnd, Drew, LineDeal, Passed, Placed, Play, Scored, play
from .core.state import DealState
from .core.tiles import Tile, TileSet, parse_tile, tile_name, tile_text
from .registry import refereed_variant, variant, variant_names

__all__ = [
    "DOMINO",
    "END_NAMES",
    "FISH",
    "LEFT",
    "RIGHT",
    "STOP",
    "TERMINAL",
    "BadDeal",
    "BadOption",
    "Deal",
    "DealEnd",
    "DealRecord",
    "DealShape",
    "DealState",
    "Drew",
    "Game",
    "GameOutcome",
    "IllegalPlay",
    "LineDeal",
    "Option",
    "Passed",
    "Placed",
    "Play",
    "RulesError",
    "Scored",
    "Tile",
    "TileSet",
    "UnknownVariant",
    "Variant",
    "check_deal",
    "deal_from_seed",
    "format_deal_line",
    "parse_deal_line",
    "parse_deal_lines",
    "parse_tile",
    "play",
    "refereed_variant",
    "tile_name",
    "tile_text",
    "variant",
    "variant_names",
]
