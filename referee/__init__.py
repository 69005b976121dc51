"""referee: a command-line referee and tournament runner for domino bots.

Packages and modules, with arrows pointing one way (tournaments → match → referee → engine;
``protocol`` is shared by the referee and bots):

* :mod:`referee.engine` — the pure rules engine (no I/O, no clocks, no unseeded randomness).
* :mod:`referee.transport`, :mod:`referee.process`, :mod:`referee.clock`, :mod:`referee.faults`,
  :mod:`referee.table` — the referee proper: the seam to a bot (a process, or a scripted bot in
  tests), clocks, faults, and the conversation at the table.
* :mod:`referee.match`, :mod:`referee.results`, :mod:`referee.signals`, :mod:`referee.log`,
  :mod:`referee.replay`, :mod:`referee.report` — the match runner: deals, orientations, the
  typed results (spooled, so a match's memory is flat in its deals), the signal policy, logs
  that replay and verify.
* :mod:`referee.cli` — the ``referee`` command.  ``tournaments`` adds ``league`` (and the report
  of a league file) through the ``referee.commands`` entry point: the referee never imports it.
"""

__version__ = "0.1.0"
