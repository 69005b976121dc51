"""The engine's mechanics: tiles, deals, layouts, turns, scoring and the base class of every
game.  The games (:mod:`referee.engine.games`) are built on it; the registry
(:mod:`referee.engine.registry`) and the sampler stand above both."""
