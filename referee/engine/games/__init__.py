"""One module per game.  Each defines a :class:`~referee.engine.core.game.Variant` and registers it;
:func:`referee.engine.registry.variant` imports every module here, so a new game is a new file."""
