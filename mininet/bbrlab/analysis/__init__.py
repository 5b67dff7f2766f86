"""bbrlab's analysis layer: the tools' output read (*_output.py), metrics, per-class metrics, FCT,
statistics, and the models metrics compute."""
