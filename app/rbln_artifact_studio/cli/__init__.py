"""The headless front end, rbln-studio-cli: its parser and commands (main), fleet and server commands."""
