"""Independent readings of docs/RULES.md, written without the engine, for property tests."""
