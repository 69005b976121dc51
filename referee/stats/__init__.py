"""The statistics of a duplicate match, pure (no I/O, no clock, no randomness):

* :mod:`.means` — Student's t, means with intervals, the likelihood of superiority, numbers as
  people and JSON read them;
* :mod:`.elo` — Elo from scores and margins, the bound of a bot that won every play;
* :mod:`.figures` — the boards' tally and the match's figures: margins, LOS, pair classes, Elo,
  the ranking with its places and rank ranges;
* :mod:`.sprt` — the sequential probability ratio test.
"""
