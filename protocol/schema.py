"""Write ``protocol/schema.json`` from the message structs: ``python -m protocol.schema``.

``tests/protocol/test_protocol.py`` fails when the committed file differs from :func:`render`, so run
this after changing :mod:`protocol.messages`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .messages import schema

PATH = Path(__file__).with_name("schema.json")


def render() -> str:
    """The schema as committed: pretty-printed, keys sorted, a trailing newline."""
    return json.dumps(schema(), indent=2, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Rewrite ``protocol/schema.json`` (or the path given as the only argument)."""
    args = sys.argv[1:] if argv is None else argv
    path = Path(args[0]) if args else PATH
    text = render()
    old = path.read_text(encoding="utf-8") if path.exists() else None
    if old == text:
        print(f"{path} is up to date", file=sys.stderr)
        return 0
    path.write_text(text, encoding="utf-8")
    print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
