"""The referee at the table: the exchanges with each bot, who sits where, the faults, the one
judgement of a bot's line, and the log writer that writes down what was said.
"""
