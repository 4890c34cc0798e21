"""The installed command, run the way a user runs it: a non-editable install (tests/installed.py), from the
checkout root or a directory of the user's own, with what it prints, its exit code and the bytes it leaves
on disk as the answer."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import FIXTURES, ROOT, mutated, write_config
from installed import Installed

INCIDENT = FIXTURES / "incident" / "Qwen3.6-27B-DFlash"
INCIDENT_BYTES = (INCIDENT / "config.json").read_bytes()
TARGET = "fixtures/targets/Qwen__Qwen3.6-27B"  # as typed at the checkout root
HF_CACHE = "fixtures/hf-cache/hub"


def one_line_error(err: str) -> None:
    assert err.count("\n") == 1 and err.startswith("dflash-cfg: error: "), err
    assert "Traceback" not in err and "internal error" not in err, err


# --- package data, however the package is imported (issue 32, item 1) ----------------------------------------


def test_python_m_from_the_checkout_root_reads_the_packaged_schemas(installed: Installed, tmp_path: Path) -> None:
    # From the root, `-m` puts the checkout's dflash_cfg/ first on sys.path, ahead of the install: its schemas are
    # the checkout's top-level schemas/, and a violation is still found.
    ok = installed.run("python", "-m", "dflash_cfg", "check", "fixtures/incident/Qwen3.6-27B-DFlash")
    assert ok.returncode == 0 and "internal error" not in ok.stderr, ok.stderr
    assert "\n1 file, 0 errors, 2 warnings, 2 infos  (transformers " in ok.stdout
    bad = write_config(tmp_path / "m", mutated(lambda d: d.__setitem__("hidden_size", "2560")))
    proc = installed.run("python", "-m", "dflash_cfg", "check", bad, "--select", "DF010", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    (f,) = json.loads(proc.stdout)["files"]
    assert [x["pointer"] for x in f["findings"] if x["rule"] == "DF010"] == ["/hidden_size"]


def test_python_api_in_a_script_run_from_the_checkout_root(installed: Installed, tmp_path: Path) -> None:
    bad = write_config(tmp_path / "m", mutated(lambda d: d.__setitem__("hidden_size", "2560")))
    script = (
        f"import dflash_cfg; report = dflash_cfg.check([{str(bad)!r}], select='DF010'); "
        "print(dflash_cfg.__file__); print([(f.rule, f.pointer) for f in report.files[0].findings])"
    )
    proc = installed.run("python", "-c", script)
    assert proc.returncode == 0, proc.stderr
    where, findings = proc.stdout.splitlines()
    assert Path(where).is_relative_to(ROOT)  # the checkout's package, as a script at the root imports it
    assert findings == "[('DF010', '/hidden_size')]"


def test_console_script_away_from_the_checkout_is_the_installed_package(installed: Installed, tmp_path: Path) -> None:
    proc = installed.run("python", "-c", "import dflash_cfg; print(dflash_cfg.__file__)", cwd=tmp_path)
    package = Path(proc.stdout.strip()).parent
    assert package.is_relative_to(installed.venv), proc.stdout
    assert (package / "py.typed").is_file()  # PEP 561, as the classifier "Typing :: Typed" promises
    assert (package / "schemas" / "dflash.schema.json").is_file()
