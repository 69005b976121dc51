"""The tests' shared helpers under their old name: they live in :mod:`support` now."""

from support import alive, mask, random_play, read_log, strip_timings, tiles, transcript_block

__all__ = ["alive", "mask", "random_play", "read_log", "strip_timings", "tiles", "transcript_block"]
