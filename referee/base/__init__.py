"""The ground every floor of the referee stands on: its errors and exit codes, seeds, signals, the
console, the clock's value types and the cluster address.  It imports nothing of the referee."""
