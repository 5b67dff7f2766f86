"""bbrlab's spec layer: the experiment format: units, checks, traces, workloads, metric names."""
