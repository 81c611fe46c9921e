"""RBLN Artifact Studio: inspect, size and resize compiled Rebellions NPU artifacts."""

__version__ = "0.1.0"

import logging

# Quiet until a front end sets up the log (core/logs.py): a library's records are not the user's business.
logging.getLogger(__name__).addHandler(logging.NullHandler())
