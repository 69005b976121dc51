"""The ladder: a host that keeps running while bots join and leave (`referee ladder`).

It owns the ladder's field, its matchmaking, its ratings and certified order, and the long-running
host that plays tables of the league's kind; storage is the league's SQLite store, extended.
"""
