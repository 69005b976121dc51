"""The match: the runner (deals, orientations), its settings (the job, the spec), its result,
staged openings, the running score, the printed report, and ``check``'s matches of one bot.
"""
