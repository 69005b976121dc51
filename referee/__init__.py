"""referee: a command-line referee and tournament runner for domino bots.

Packages, with arrows pointing one way (tournaments → match → table → engine; ``protocol`` is
shared by the referee and bots; README.md, "Layout", says what each module owns):

* :mod:`referee.engine` — the pure rules engine (no I/O, no clocks, no unseeded randomness).
* :mod:`referee.bots` — a bot and its process: spawned, sandboxed, its pipes and lines, and the
  transport seam (a process, or a scripted bot in tests).
* :mod:`referee.conversation` — the referee at the table: exchanges, seats, clocks, faults, the
  judgement of a bot's line.
* :mod:`referee.sides` — what bots and people see of each game family.
* :mod:`referee.audit` — the log's records, replay and verify.
* :mod:`referee.matches` — the match runner: deals, orientations, settings, the typed results
  (spooled, so a match's memory is flat in its deals), statistics and the printed report.
* :mod:`referee.web`, :mod:`referee.play` — the web report and playing in the browser.
* :mod:`referee.commands` — the ``referee`` command.  ``tournaments`` adds ``league`` (and the report
  of a league file) through the ``referee.commands`` entry point: the referee never imports it.
"""

__version__ = "0.1.0"
