"""``settings.capabilities.driver_writes``: which count tables Spark counted the driver collects
and writes (plain Python, no JVM)."""

from nbspark.settings.capabilities import DRIVER_ROW_BYTES, DRIVER_WRITE_ROWS, driver_writes


def test_one_files_rows_within_the_bound_and_the_result_limit_are_written_by_the_driver():
    gigabyte = 1 << 30
    assert driver_writes(67_358, 1_000_000, gigabyte)  # the Books model at Spark's default limit
    assert driver_writes(DRIVER_WRITE_ROWS, 10**9, 0)  # 0: no limit
    assert not driver_writes(DRIVER_WRITE_ROWS + 1, 10**9, 0)
    assert not driver_writes(101, 100, gigabyte)  # two files' rows: Spark's writer
    assert driver_writes(100, 100, gigabyte)


def test_a_low_result_limit_leaves_the_write_to_spark():
    assert not driver_writes(67_358, 1_000_000, 1 << 20)  # 1m: 1,024 rows at most
    assert driver_writes(1024, 1_000_000, 1024 * DRIVER_ROW_BYTES)
    assert not driver_writes(1025, 1_000_000, 1024 * DRIVER_ROW_BYTES)
