"""Security: every Spark listener on loopback, models never pickled."""

import os
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.spark
ROOT = Path(__file__).parents[2]


def listening_addresses(pid: int) -> list[str]:
    """Local addresses of the TCP sockets that process ``pid`` listens on (from /proc)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                found.append(fields[1].split(":")[0])
    return found


def test_spark_listens_on_loopback_only(spark):
    pid = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()
    addresses = listening_addresses(pid)
    assert addresses, "the driver JVM should listen on something (block manager, RPC)"
    loopback = {"0100007F", "00000000000000000000000001000000", "0000000000000000FFFF00000100007F"}
    assert set(addresses) <= loopback, addresses


def test_no_pickle_in_the_package():
    for path in (ROOT / "nbspark").glob("*.py"):
        text = path.read_text()
        assert not re.search(r"\bpickle\.load|saveAsPickleFile|pickleFile\(", text), path
