"""Errors the rules engine raises.  All are ``ValueError``s whose message is one line a bot
author or a league organiser can act on: it quotes what arrived and says what was expected."""

from __future__ import annotations


class RulesError(ValueError):
    """Base of every error raised by the rules engine."""


class IllegalPlay(RulesError):
    """A play the rules do not allow in this position.

    ``reason`` is one of the constants below, so callers can count faults by kind without
    parsing the message.
    """

    NOT_YOUR_TURN = "not_your_turn"
    NOT_YOUR_TILE = "not_your_tile"
    NO_MATCH = "no_match"
    BAD_END = "bad_end"
    DEAL_OVER = "deal_over"
    MUST_LEAD_TILE = "must_lead_tile"
    MUST_PLAY = "must_play"
    CANNOT_STOP = "cannot_stop"  # stop with nothing placed this turn, or where going on is compulsory
    CANNOT_CLOSE = "cannot_close"  # a closed double where the game or the position allows none
    BAD_MOVE = "bad_move"  # a move of a kind this position does not take (a declaration, a non-double extra…)

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


class BadDeal(RulesError):
    """A deal (or a line of a deal file) that cannot be played in the game asked for."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(f"line {line}: {message}" if line is not None else message)
        self.line = line


class UnknownVariant(RulesError):
    """A game identifier that is not in the registry."""


class BadOption(RulesError):
    """A game option that does not exist, has a value out of range, or does not fit the game."""
