"""What a match writes down: the log's typed records, the deal and game summaries and the
statistics over them.  Read from the table up to the reports."""
