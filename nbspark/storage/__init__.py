"""Where nbspark reads and writes: locations on any Hadoop file system, whole-or-absent outputs,
manifests and count-table readers."""
