"""Compile and resize backends: the built-in simulator and the real optimum-rbln toolchain."""
