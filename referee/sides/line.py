"""The line games' side: sport, kozel, draw, block, club, and the games of several tiles a turn
and of declarations (sea_kozel, general, blitz), all on one line of play.

Their encoding, replay and report steps are :class:`~referee.sides.base.GameSide`'s own; this
module names the deal states it speaks for and the decisions ``referee check`` stages in them:
sea_kozel's 6-6 led for a hundred and its fish to write off or decline.
"""

from __future__ import annotations

from referee.sides.base import GameSide, Stage, declares


class LineSide(GameSide):
    deals = ("referee.engine.core.line.LineDeal",)
    stages = {
        "sea_kozel": (
            Stage("hundred", "6-6 for a hundred", "hundred offered", declares("hundred"),
                  "hundred made", "it led {plays} without declaring a hundred (SK-7)"),
            Stage("fish", "a fish decision", "write-off offered", declares("write_off"),
                  "write_off made", "it declined to write the fish off (SK-12)"),
        ),
    }


SIDE = LineSide()
