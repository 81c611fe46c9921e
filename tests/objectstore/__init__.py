"""Tests of the studio against S3-compatible object storage (a real SeaweedFS on 127.0.0.1)."""
