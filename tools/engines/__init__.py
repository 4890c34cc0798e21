"""The engine release tooling: `./dev engines --upgrade`, `--cite` and `--keys` (CONTRIBUTING.md, "The engines
as the oracle"). It runs the engine suite's drafters and launches (tests/engines/cases.py, launches.py) in
the venvs tests/engines/build.py builds; the tests of its pure parts are in tests/engines/."""
