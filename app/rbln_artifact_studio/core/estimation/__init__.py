"""KV block estimation per node and chiplet, and the budget explorer built on it."""
