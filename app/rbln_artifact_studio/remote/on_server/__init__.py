"""Programs that run in the server's python3, sent over the SSH connection: standard library only, read-only."""
