"""The property-based tests' seed: fixed under CI (the same inputs every run), random
elsewhere, and always printed in pytest's header, so a failure found anywhere is replayed
with BBRLAB_SEED=N."""

import os
import random

CI_SEED = 20261127

SEED = int(os.environ.get("BBRLAB_SEED") or (CI_SEED if os.environ.get("CI") else random.randrange(1 << 32)))


def seeded(examples: int):
    """A decorator for a Hypothesis @given test: its inputs drawn from SEED, EXAMPLES of them
    (each test bounds its own time), no deadline per example (a loaded host is slow, not
    wrong), no example database (a run's inputs are the seed's alone)."""
    import hypothesis

    def decorate(test):
        settings = hypothesis.settings(max_examples=examples, deadline=None, database=None,
                                       suppress_health_check=list(hypothesis.HealthCheck))
        return hypothesis.seed(SEED)(settings(test))

    return decorate
