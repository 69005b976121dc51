"""Every game as a learning environment: a front door like the command line, above the engine and
the games' sides (``pip install 'referee[rl]'``; docs/envs.md has the encodings in full).

* :func:`aec_env` — PettingZoo's AEC environment of a game, one agent a seat (:mod:`.aec`);
* :class:`SeatEnv` — Gymnasium's environment of one seat, the others played by any bot
  (:mod:`.seat`);
* :func:`as_bot` — a policy (observation and mask to action) as a protocol bot (:mod:`.policy`);
* :mod:`referee.envs.openspiel` — imported, registers every game with OpenSpiel as
  ``referee_<game>``.

:mod:`.codec` numbers the actions and builds the observations from what the protocol tells a
seat; :mod:`.episode` plays the game move by move on the engine.  No game's rules are written here.
"""

from __future__ import annotations

from typing import Any

__all__ = ["SeatEnv", "aec_env", "as_bot"]


def __getattr__(name: str) -> Any:
    # Imported when first asked for, so that importing the package (or the codec alone) needs
    # neither PettingZoo nor Gymnasium.
    if name == "aec_env":
        from referee.envs.aec import aec_env

        return aec_env
    if name == "SeatEnv":
        from referee.envs.seat import SeatEnv

        return SeatEnv
    if name == "as_bot":
        from referee.envs.policy import as_bot

        return as_bot
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
