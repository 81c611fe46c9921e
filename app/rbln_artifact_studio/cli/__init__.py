"""The headless front end, rbln-studio-cli: its start-up path (main, parser, get) and its commands (commands/)."""
