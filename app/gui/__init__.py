"""The Qt desktop front end: windows, models, dialogs and background jobs over app.core."""
