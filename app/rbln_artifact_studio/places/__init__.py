"""Where artifacts live, as one dispatch: scan, open, read and resize a Location through the module of its kind."""
