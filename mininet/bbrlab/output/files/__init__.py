"""Runs written for other tools: tidy CSV tables and flent's data files."""
