"""The main window and the parts it is built from: actions, menus, table, detail panel, docks, status."""
