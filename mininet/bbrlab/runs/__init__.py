"""bbrlab's runs layer: running experiments: runner, suite, calibration, estimates, shards, merge, labs."""
