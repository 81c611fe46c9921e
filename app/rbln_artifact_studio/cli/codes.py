"""The CLI's program name and exit codes (docs/cli.md): shared by the entry and every command; imports nothing."""

PROG = "rbln-studio-cli"
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_INVALID = 3  # inspect, serving, plan and scan: an artifact read is invalid (docs/cli.md)
