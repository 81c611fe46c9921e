"""The Qt desktop front end: windows, models, dialogs and background jobs over rbln_artifact_studio.core."""
