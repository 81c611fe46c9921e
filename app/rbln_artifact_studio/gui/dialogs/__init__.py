"""The dialogs and the compile wizard the window opens."""
