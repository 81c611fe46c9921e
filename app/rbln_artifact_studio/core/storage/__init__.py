"""On-disk reads and crash-safe writes: JSON files, atomic replace and staging, locks, resize."""
