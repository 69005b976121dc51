"""Reading a match log again: replay (a log back to boards), verify (the match played again
from its log) and the frozen verifier of format 1."""
