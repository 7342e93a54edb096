"""The stages every trainer shares: prepare a corpus, count units, own the run's work tables, time it."""
