"""The referee at the table: the exchanges with each bot, who sits where, the clocks, the faults
and the one judgement of a bot's line.
"""
