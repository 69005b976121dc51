"""The rules engine: pure, deterministic, no I/O, no clocks, randomness only from a given seed.

* :mod:`.tiles` — tiles as ints, tile sets as bitmasks.
* :mod:`.shuffle` — the documented seeded shuffle.
* :mod:`.deal` — deals as values, deal-file lines.
* :mod:`.line` — one deal of a line game (layout, turns, draws, passes, domino, fish).
* :mod:`.game` — games across deals, options, the registry; :mod:`.games` — one module a game.
* :mod:`.scoring` — the rule of 13, eggs and pots.
* :mod:`.view` — what one seat may know.
"""

from .deal import Deal, DealShape, check_deal, deal_from_seed, format_deal_line, parse_deal_line, parse_deal_lines
from .errors import BadDeal, BadOption, IllegalPlay, RulesError, UnknownVariant
from .game import DealRecord, Game, GameOutcome, Option, Variant, variant, variant_names
from .line import DOMINO, END_NAMES, FISH, LEFT, RIGHT, STOP, TERMINAL, DealEnd, Drew, LineDeal, Passed, Placed, Play, play
from .tiles import Tile, TileSet, parse_tile, tile_name, tile_text

__all__ = [
    "BadDeal", "BadOption", "DOMINO", "Deal", "DealEnd", "DealRecord", "DealShape", "Drew", "END_NAMES", "FISH",
    "Game", "GameOutcome", "IllegalPlay", "LEFT", "LineDeal", "Option", "Passed", "Placed", "Play", "RIGHT",
    "RulesError", "STOP", "TERMINAL", "Tile", "TileSet", "UnknownVariant", "Variant", "check_deal",
    "deal_from_seed", "format_deal_line", "parse_deal_line", "parse_deal_lines", "parse_tile", "play",
    "tile_name", "tile_text", "variant", "variant_names",
]
