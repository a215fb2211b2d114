"""``nbspark serve``: the checker behind LanguageTool's HTTP API, and predictions as JSON, with no Spark.

``languagetool`` (the protocol, pure) < ``models`` (the models served, swapped on a new version) <
``app`` (the routes and limits) < ``server`` (uvicorn, signals).
"""
