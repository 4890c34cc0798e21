"""The hostile-input campaign (issue 21): generators over every surface a user or an endpoint controls, and
the invariants each input must keep. `campaign.py` runs them at scale outside the test run and prints how
many inputs each surface saw; tests/cli/test_fuzz_*.py run small derandomized slices of the same generators.

- project.py: project-config TOML (tables and text) and result-cache entries, pure;
- launch.py: launch command lines with their `--config` YAML, through parse_launch and preflight;
- s3.py: `check` and `fix` on s3:// through a fault-injecting proxy in front of moto;
- signals.py: SIGINT and SIGTERM, to the process or its group, while check writes JSON or SARIF;
- engines.py: stand-in engine interpreters (hostile answers, floods, hangs, deaths) through the adapter runner,
  `engines` and preflight's engine step;
- gcs.py: `check`, `where`, `verify` and `fix` on gs:// through the fault-injecting proxy in front of the GCS server;
- probe.py: `probe` against a loopback /metrics endpoint that misbehaves one way per input (tests/rawhttp.py);
- common.py: the in-process CLI runner and the invariants every run keeps.
"""
