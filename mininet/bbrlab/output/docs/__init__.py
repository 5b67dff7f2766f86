"""The project's documents written from its code and its measurements: the experiment format's
reference (format-doc) and the measured numbers in README and docs (results-doc)."""
