"""``inputs.stats.run_failfast``: the action whose task fails by design, and the one that does not."""

import pytest

from nbspark.errors import InputError
from nbspark.inputs.stats import failfast_error, run_failfast


@pytest.mark.spark
def test_failfast_quiets_sparks_task_loggers_and_logs_any_other_failure_itself(spark, caplog):
    """A failfast error becomes one InputError; any other failure is raised as it came and its text
    logged by nbspark, since Spark's loggers of failed tasks were quiet meanwhile (and have their
    levels back after)."""

    def bad(_):
        raise failfast_error("/data/x.tsv", 0, "fields", "no tabs")

    executor = spark.sparkContext._jvm.org.apache.logging.log4j.LogManager.getLogger(
        "org.apache.spark.executor.Executor"
    )
    before = executor.getLevel().toString()
    with pytest.raises(InputError, match=r"^/data/x.tsv at byte 0: malformed line \(fields\): 'no tabs'$"):
        run_failfast(lambda: spark.sparkContext.parallelize([1], 1).map(bad).collect(), "failfast")
    with caplog.at_level("ERROR", logger="nbspark"), pytest.raises(Exception, match="ZeroDivisionError"):
        run_failfast(
            lambda: spark.sparkContext.parallelize([1], 1).map(lambda x: x / 0).collect(), "failfast"
        )
    assert [r.name for r in caplog.records if "ZeroDivisionError" in r.getMessage()] == [
        "nbspark.inputs.stats"
    ]
    assert executor.getLevel().toString() == before
    # permissive: nothing quieted, so nothing of nbspark's own
    caplog.clear()
    with caplog.at_level("ERROR", logger="nbspark"), pytest.raises(Exception, match="ZeroDivisionError"):
        run_failfast(
            lambda: spark.sparkContext.parallelize([1], 1).map(lambda x: x / 0).collect(), "permissive"
        )
    assert caplog.records == []
