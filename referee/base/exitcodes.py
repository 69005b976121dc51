"""Exit codes of the ``referee`` command, in one place (listed in every command's epilog)."""

OK = 0  # done; a forfeit or a fault is a result, not an error
BUG = 1  # an unexpected error inside the referee
USAGE = 2  # usage or bad input: unknown variant, bad deal or league file, bad option, a log that cannot be written
BOT_START = 3  # a bot could not be started (the tail of its stderr is shown)
INCONSISTENT = 4  # `referee verify`: the log disagrees with the engine
CHECK_FAILED = 5  # `referee check`: the bot got something wrong (the report says what)
INTERRUPTED = 130  # interrupted (Ctrl-C) after cleaning up
