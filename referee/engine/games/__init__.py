"""One module per game.  Each defines a :class:`~referee.engine.game.Variant` and registers it;
:func:`referee.engine.game.variant` imports every module here, so a new game is a new file."""
