"""Experiment settings: the config, what can serve it (``settings.capabilities``), the naive Bayes
variants and the checker's rules, validated before Spark starts."""
