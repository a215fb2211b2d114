"""The one place a SparkSession is built (jobs and tests both call ``get_spark``).

The master is never set here: ``spark-submit --master ...`` (or ``PYSPARK_SUBMIT_ARGS``, or a
test's ``conf``) decides where the job runs. Under plain ``python`` without either, Spark's own
default applies (``local[*]``).
"""

from __future__ import annotations

__all__ = ["get_spark"]


def _import_pyspark():
    try:
        import pyspark  # noqa: F401
    except ImportError:
        # A Spark install without the pip package: findspark puts $SPARK_HOME's python on sys.path.
        import findspark

        findspark.init()


def get_spark(app_name: str, conf: dict[str, str] | None = None, progress: bool = True):
    """Get or create the SparkSession.

    ``progress`` turns Spark's console progress bar on (jobs) or off (tests). ``conf`` is
    applied last; jobs pass nothing, so spark-submit's settings stand.
    """
    _import_pyspark()
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName(app_name)
    builder = builder.config("spark.ui.showConsoleProgress", "true" if progress else "false")
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    return builder.getOrCreate()
