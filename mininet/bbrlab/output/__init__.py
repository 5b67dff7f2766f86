"""bbrlab's output layer: plots, reports, export, comparison, summaries."""
