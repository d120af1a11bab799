"""Several machines: bundles, record-by-record merge, and remotes over ssh."""
