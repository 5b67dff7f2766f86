"""bbrlab's store layer: the run directory: atomic writes, provenance."""
