"""The NPU catalog, memory_budget, block-count rules and the rbln_config.json and model config.json models."""
