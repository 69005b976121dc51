"""The match: the runner (deals, orientations), its settings (the job, the spec), its result and
statistics, staged openings, the running score and the printed report.
"""
