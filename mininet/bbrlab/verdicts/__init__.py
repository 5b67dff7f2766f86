"""bbrlab's verdicts layer: claims and the references they compare with."""
