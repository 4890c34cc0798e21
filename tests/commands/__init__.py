"""The command tests. A package, so that its conftest (the Hub-wide runs' fixtures) has a name of its own next to
tests/conftest.py."""
