"""What an agent is handed: briefings, search and recall answers, constraints for a
file, what a compaction dropped, quoted as data; and the harness that scores it."""
