"""The ``referee`` command: the typer app (:mod:`.app`) and one module a command, in the order
the help lists them; :mod:`.shared` holds the helpers every command line shares (``tournaments``
too), :mod:`.options` the options several commands read the same way.

Typed errors are caught here, at the edge, and printed as one line on stderr followed by the
exit code of :mod:`referee.base.exitcodes`; nothing a user can cause ends in a traceback.
"""

# The modules add their commands to the app as they are imported, and the help lists them in
# that order: not sorted.
# isort: off
from referee.commands import match, play, check, replay, verify, report, deals, variants, schema  # noqa: F401
# isort: on
from referee.commands.app import add_commands, app, main

__all__ = ["app", "main"]

add_commands()
