"""Density estimation by counting: the joint and the naive estimators of a table's rows
(``model``), counted in one pass (``count``), trained by the spine's skeleton (``jobs``) and read
without Spark (``predictor``)."""
