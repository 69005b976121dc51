"""A bot's process: the command spawned (in the sandbox, under its cgroup), its pipes and the lines
it writes, and the transport the table talks to it through.
"""
