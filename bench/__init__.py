"""Benchmarks: commands that measure, never tests.  See bench/README.md."""
