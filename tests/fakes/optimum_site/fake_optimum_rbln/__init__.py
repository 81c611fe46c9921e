"""The fake optimum-rbln package behind the fake optimum-rbln-cli console script (tests only)."""
