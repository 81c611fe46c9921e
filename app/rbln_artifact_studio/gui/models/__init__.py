"""What the views show and the work behind them: item models, the scan process, jobs, operations."""
