"""referee: a command-line referee and tournament runner for domino bots.

Folders, each on one floor, with arrows pointing one way (tournaments → match → table →
engine; ``protocol`` is shared by the referee and bots; no two folders import each other;
README.md, "Layout", says what each module owns):

* :mod:`referee.engine` — the pure rules engine (no I/O, no clocks, no unseeded randomness): its
  mechanics in :mod:`referee.engine.core`, the games in :mod:`referee.engine.games`.
* :mod:`referee.base` — the ground: errors, exit codes, seeds, signals, consoles, the clock's values.
* :mod:`referee.records` — what a match writes down: the log's records, summaries, statistics.
* :mod:`referee.bots` — a bot and its process: spawned, sandboxed, its pipes and lines, and the
  transport seam (a process, or a scripted bot in tests).
* :mod:`referee.sides` — what bots and people see of each game family.
* :mod:`referee.conversation` — the referee at the table: exchanges, seats, faults, the
  judgement of a bot's line, and the log writer.
* :mod:`referee.matches` — the match runner: deals, orientations, settings, the typed results
  (spooled, so a match's memory is flat in its deals), the printed report, and ``check``'s matches.
* :mod:`referee.audit` — a log read again: replay and verify.
* :mod:`referee.web`, :mod:`referee.play` — the web report and playing in the browser.
* :mod:`referee.envs` — the learning environments.
* :mod:`referee.commands` — the ``referee`` command, a module a command.  ``tournaments`` adds
  ``league`` (and the report of a league file) through the ``referee.commands`` entry point: the
  referee never imports it.
"""

__version__ = "0.1.0"
