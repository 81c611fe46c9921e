"""Fakes of the real toolchain (optimum-rbln-cli, rebel) and the helpers that install them for tests."""
