"""``referee play``: a person plays against bots at a web page served on 127.0.0.1.

* :mod:`referee.play.seat`: the person's seat as one more transport behind the table, and
  :class:`~referee.play.seat.Person`, what their page is asked and answers;
* :mod:`referee.play.view`: the match as the person may see it, as the web report's documents;
* :mod:`referee.play.server`: the page, its assets and its websocket (Hypercorn's trio worker);
* :mod:`referee.play.run`: all of it around :func:`referee.matches.match.run_match`.

The page is ``referee/web/templates/play.html`` with ``static/play.js``, which draws with the
report's renderers (``static/replay.js``).
"""
