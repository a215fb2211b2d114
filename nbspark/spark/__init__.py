"""The one SparkSession builder, and the fault injection of the reliability tests."""
