"""Real-fleet layouts (issue 16): links, shared files, damaged graphs, a 70B model over 16 NPUs."""
