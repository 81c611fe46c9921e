"""The application's frame: start-up checks, Qt options, settings, theme and colours, error dialogs, signals."""
