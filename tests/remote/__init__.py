"""Tests of the studio against NPU servers reached over SSH (a real sshd on 127.0.0.1)."""
