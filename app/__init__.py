"""app/ is the source root, not a package: the code is rbln_artifact_studio, below it."""

raise ImportError("app/ is the source root, not a package: put app/ on sys.path and import rbln_artifact_studio")
