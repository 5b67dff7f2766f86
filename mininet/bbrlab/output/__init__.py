"""bbrlab's output layer, by what a reader looks for: figures/, reports/, docs/ (the project's
documents written from code and measurements) and files/ (runs written for other tools)."""
