"""RBLN Artifact Studio: inspect, size and resize compiled Rebellions NPU artifacts."""

__version__ = "0.1.0"
