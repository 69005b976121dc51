"""The rules engine: pure, deterministic, no I/O, no clocks, randomness only from a given seed.

* :mod:`.tiles` — tiles as ints, tile sets as bitmasks.
* :mod:`.shuffle` — the documented seeded shuffle.
* :mod:`.deal` — deals as values, deal-file lines.
* :mod:`.state` — the deal-state interface everything above the engine uses.
* :mod:`.layout` — layouts: the line, the cross, the trains, kolbasa's two lines.
* :mod:`.line` — one deal of a line game (turns, draws, passes, domino, fish), moves and events.
* :mod:`.cross` — one deal on a cross: multi-tile turns, closed doubles, points during play.
* :mod:`.trains` — one round of mexican_train: trains, markers, open and hanging doubles.
* :mod:`.kolbasa` — one deal of kolbasa: rows turned up, two lines, knives, tails, what a seat sees.
* :mod:`.game` — games across deals, options, the registry; :mod:`.games` — one module a game.
* :mod:`.scoring` — the rule of 13, eggs and pots.
* :mod:`.view` — what one seat may know.
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
