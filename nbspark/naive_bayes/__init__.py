"""The naive Bayes family: documents and table rows counted by class, every textbook variant
built from one count table, and its scorers."""
