"""Inputs before and inside Spark: resolving paths, listing files, parsing lines, the tokenizer,
and the statistics channel of lines read, skipped and malformed."""
