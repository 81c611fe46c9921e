"""Fleets of artifacts: opening one, scanning folders for them, caching, rescans, status and reports."""
