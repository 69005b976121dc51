"""The bot protocol: JSON lines over stdin/stdout, shared by the referee and bots.

:mod:`protocol.messages` holds every message; :mod:`protocol.bot` is a small optional library for
Python bot authors.  PROTOCOL.md at the repository root is the document for everyone else.
"""

from .messages import PROTOCOL_VERSION

__all__ = ["PROTOCOL_VERSION"]
