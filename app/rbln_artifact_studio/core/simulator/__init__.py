"""The built-in compiler simulator: its memory model, its .rbln container and the compile it plans and writes."""
