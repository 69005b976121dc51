"""The match log: its typed records and writer, the replayer, and verify (format 2, and format 1 as
it was).
"""
