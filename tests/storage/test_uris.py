"""``storage.uris.decoded_uri``: Spark's file-source log holds each file as Hadoop's encoded URI;
nbspark names a file as Hadoop's ``Path.toString()`` does."""

import pytest

from nbspark.storage.uris import decoded_uri

NAMES = ["a b.txt", "in[1].txt", "100%.txt", "ü.txt", "x#y.txt", "q?.txt", "{c}.txt", "plain.txt"]


def test_an_encoded_uri_is_decoded_in_its_path_only():
    assert decoded_uri("file:///tmp/in%5B1%5D/a%20b.txt") == "file:/tmp/in[1]/a b.txt"
    assert decoded_uri("file:/tmp/100%25.txt") == "file:/tmp/100%.txt"
    assert decoded_uri("hdfs://nn:8020/x/%C3%BC.txt") == "hdfs://nn:8020/x/ü.txt"
    assert decoded_uri("viewfs://cluster/data/f.txt") == "viewfs://cluster/data/f.txt"


@pytest.mark.spark
@pytest.mark.parametrize("name", NAMES)
def test_hadoops_encoded_uri_decodes_to_its_path_string(spark, tmp_path, name):
    """Hadoop itself is the oracle: ``Path.toUri().toString()`` (what Spark logs), decoded, is the
    same path's ``toString()``."""
    jvm = spark.sparkContext._jvm
    path = jvm.org.apache.hadoop.fs.Path(f"file:{tmp_path}/dir {name}/{name}")
    assert decoded_uri(path.toUri().toString()) == path.toString()
