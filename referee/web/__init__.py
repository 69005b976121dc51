"""The web report: ``referee report`` and ``referee league run --report`` write a static site.

HTML, CSS, JavaScript and SVG only; nothing is fetched from the internet, and the folder opens
from disk (``file://``) or from any web server.

* :mod:`referee.web.data` turns a match log (read through :class:`referee.audit.replay.Replayer`,
  which re-plays it through the engine) into *documents*: plain JSON, one per page;
  :mod:`tournaments.report` builds the league page's document from the league's database
  (the referee imports nothing from ``tournaments``).
* :mod:`referee.web.site` renders each document with a Jinja2 template (autoescaped: every name,
  note and fault detail may come from a bot) and writes the page, the document beside it
  (``page.html`` + ``page.json``) and the assets.  The page embeds the same document in a
  ``<script type="application/json">`` element, because a page opened from disk may not
  ``fetch()`` a file beside it.
* ``static/replay.js`` draws a deal's replay from its document (its renderers and its board,
  ``Referee.table``, also draw ``referee play``'s live table: :mod:`referee.play`); ``static/site.js`` draws tiles
  and makes a league page reload itself when ``version.js`` changes.  A browser loads scripts
  beside a page opened from disk, so the poll (it re-loads ``version.js`` as a script every two
  seconds) works both from a served folder and from ``file://``.

**Layouts.**  A deal document names its ``layout`` (its game's side's,
:attr:`referee.sides.base.GameSide.layout`: ``line`` unless the side says otherwise) and lists
its steps, which the side makes (:meth:`~referee.sides.base.GameSide.web_event`): the deal as dealt, then
each engine event (a tile placed on a named end, tiles drawn, a pass, a fault, the end), each
with the hands, bazaar count and scores after it.  The replay draws the table with the
renderer of that name in ``replay.js``'s ``LAYOUTS``: a function from the placements so far
(``{tile, end, seat}``) and the step's ``table`` (below) to positioned tiles and their marks.  Adding a layout is adding one renderer and naming
it in the games' side, nothing else:

* **the cross** (osel, telephone, muggins, issue 11): ``cross`` in ``replay.js``
  lays ``left``/``right`` as the line does and ``up``/``down`` (names the engine has in
  ``END_NAMES``) as columns through the first open double, and the cross games' side
  (:mod:`referee.sides.cross`) names it;
* **trains** (mexican_train): the placement's ``end`` names the train (``seat0`` …
  ``mexican``) and the station double is a ``station`` step with no end; ``trains`` lays a
  labelled row per train from the station.  What the placements do not say, each step's
  ``table`` does: the markers and the open double with whether it hangs, as the text replay
  reads them (:func:`referee.sides.trains.trains_at`).
* **kolbasa's sausage**: a knife cuts tiles off the table, so the placements alone are not the
  table; each step's ``table`` is the sausage as the engine's own :class:`~referee.engine.core.layout.Sausage`
  lays it (the start, each line outward, and a knife being laid), ``sausage`` draws it, and the
  hands are the rows in order (``rows``), drawn face down but for the tile turned up (``up``).

**Turns of several tiles** need nothing new here: each tile is its own engine event, so its own
step.  **Points written during play**: the engine's ``Scored`` event (telephone, muggins)
becomes a ``score`` step with ``wrote`` (per side) and the scores moved
on; the replay shows it in the move list and the scoreboard.
"""
