"""bbrlab's analysis layer: parsers, metrics, per-class metrics, FCT, statistics, and the models metrics compute."""
