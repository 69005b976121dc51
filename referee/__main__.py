"""``python -m referee`` is the ``referee`` command."""

from referee.commands import main

main()
