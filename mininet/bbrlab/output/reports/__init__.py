"""What is written for a reader in words and tables: a run's verdict and finish (summary.py),
the one-page report, the comparison of two runs and how runs' setups differ."""
