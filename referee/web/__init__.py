"""The web report: ``referee report`` and ``referee league run --report`` write a static site.

HTML, CSS, JavaScript and SVG only; nothing is fetched from the internet, and the folder opens
from disk (``file://``) or from any web server.

* :mod:`referee.web.data` turns a match log (read through :class:`referee.replay.LogWalker`,
  which re-plays it through the engine) or a league database into *documents*: plain JSON,
  one per page.
* :mod:`referee.web.site` renders each document with a Jinja2 template (autoescaped: every name,
  note and fault detail may come from a bot) and writes the page, the document beside it
  (``page.html`` + ``page.json``) and the assets.  The page embeds the same document in a
  ``<script type="application/json">`` element, because a page opened from disk may not
  ``fetch()`` a file beside it.
* ``static/replay.js`` draws a deal's replay from its document; ``static/site.js`` draws tiles
  and makes a league page reload itself when ``version.js`` changes.  A browser loads scripts
  beside a page opened from disk, so the poll (it re-loads ``version.js`` as a script every two
  seconds) works both from a served folder and from ``file://``.

**Layouts.**  A deal document names its ``layout`` (:data:`referee.web.data.LAYOUTS`, by game;
``line`` for every game the engine plays today) and lists its steps: the deal as dealt, then
each engine event (a tile placed on a named end, tiles drawn, a pass, a fault, the end), each
with the hands, bazaar count and scores after it.  The replay draws the table with the
renderer of that name in ``replay.js``'s ``LAYOUTS``: a function from the placements so far
(``{tile, end, seat}``) to positioned tiles.  Adding a layout is adding one renderer and naming
it for its games, nothing else:

* **the cross** (osel, telephone, muggins, issue 11): placements on ``up`` and ``down`` ends
  (names the engine already has in ``END_NAMES``) grow two more arms from the spinner; a
  ``cross`` renderer lays the ``left``/``right`` arms as the line renderer does and the
  ``up``/``down`` arms as columns through the spinner double;
* **trains** (mexican_train) and **kolbasa's two lines**: the placement's ``end`` names the
  train or line; the renderer lays one row per train or line.

**Turns of several tiles** need nothing new here: each tile is its own event and step, and a
``stop`` decision, if the log records one, becomes a step with a caption.  **Points written
during play**: a step may carry ``wrote`` (per side); the replay shows it in the move list and
the scores of that step include it.  When the engine's log gains such an event,
:func:`referee.web.data.read_match` adds it as a step with ``wrote`` and moves the scores on.
"""
