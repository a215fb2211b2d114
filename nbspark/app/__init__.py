"""The command lines: ``nbspark`` (``command``) and the jobs' (``cli``), the top floor."""
