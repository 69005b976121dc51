"""``python -m referee`` is the ``referee`` command."""

from referee.cli import main

main()
