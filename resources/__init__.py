"""Bundled data: model configs for the offline presets and the application icons."""
