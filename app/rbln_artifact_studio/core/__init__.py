"""Qt-free domain engine: NPUs, budgets, rbln_config.json, estimation, artifacts, resize, scanning."""
