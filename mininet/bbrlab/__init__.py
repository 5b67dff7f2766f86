"""bbrlab: a reproducibility testbed for TCP congestion control on Mininet.

Data flows one way, one module per arrow:
spec (YAML) -> topology -> traffic -> samples -> metrics -> claims -> plots/report.
"""

__version__ = "0.1.0"
