"""The backoff family: n-gram windows counted over context subsets, Cohen's backoff chain,
the confusion-word checker, and the joint-distribution query."""
