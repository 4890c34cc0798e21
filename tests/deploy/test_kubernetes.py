"""deploy/kubernetes/: every manifest validates against the Kubernetes API's own schemas (kubernetes-validate, pinned
in constraints.txt; strict: an unknown field is refused), and the gate's command, run as the pod would run it with
the example's launch on the fixtures, stops the incident's drafter and passes the repaired one.

A container's command is run here with its environment resolved as the kubelet resolves it (a value, or a ConfigMap
key of the same file) and its volume where the pod mounts it: a container path under a volume's mountPath is the
test's directory for that volume. `vllm` is a stand-in engine that records the words it was started with."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from helpers import FIXTURES, ROOT, model_volume

from dflash_cfg.launch.shell import words

KUBERNETES = ROOT / "deploy" / "kubernetes"
VERSIONS = ("1.30", "1.37")  # the oldest Kubernetes release still served by the big providers, and the newest
INCIDENT = FIXTURES / "incident" / "Qwen3.6-27B-DFlash" / "config.json"
REPAIRED = FIXTURES / "upstream" / "z-lab__Qwen3.6-27B-DFlash" / "config.json"
GATE = "dflash-cfg-gate"
INCIDENT_SUMMARY = "1 file, 0 errors, 5 warnings, 2 infos"
REPAIRED_SUMMARY = "1 file, 0 errors, 0 warnings, 2 infos"


def documents(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((KUBERNETES / name).read_text(encoding="utf-8")) if d is not None]


def one(docs: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    (found,) = [d for d in docs if d["kind"] == kind]
    return found


def chart_values() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((KUBERNETES / "production-stack-values.yaml").read_text(encoding="utf-8"))
    return data


def chart_pod(values: dict[str, Any]) -> dict[str, Any]:
    """The pod the production-stack chart renders from a modelSpec (helm/templates/deployment-vllm-multi.yaml): the
    initContainer's fields as it copies them (RELEASE_NAME first in env, the model volume at /data), the engine's
    command built from modelURL, vllmConfig and extraArgs."""
    spec = values["servingEngineSpec"]["modelSpec"][0]
    init = spec["initContainer"]
    vllm_config = spec["vllmConfig"]
    mounts = [{"name": "llmstack-storage", "mountPath": "/data"}] if init.get("mountPvcStorage") else []
    gate = {
        "name": init["name"],
        "image": init["image"],
        "command": init["command"],
        "args": init["args"],
        "env": [{"name": "RELEASE_NAME", "value": "llmstack"}, *init.get("env", [])],
        "resources": init["resources"],
        "volumeMounts": mounts,
    }
    engine = {
        "name": "vllm",
        "image": f"{spec['repository']}:{spec['tag']}",
        "command": [
            "vllm",
            "serve",
            spec["modelURL"],
            "--host",
            "0.0.0.0",
            "--port",
            "8000",
            "--no-enable-prefix-caching",
            "--tensor-parallel-size",
            str(vllm_config["tensorParallelSize"]),
            *vllm_config["extraArgs"],
        ],
        "env": [{"name": "HF_HOME", "value": "/data"}, *spec["env"]],
        "volumeMounts": [{"name": "llmstack-storage", "mountPath": "/data"}, {"name": "shm", "mountPath": "/dev/shm"}],
    }
    volumes = [
        {"name": "llmstack-storage", "persistentVolumeClaim": {"claimName": f"llmstack-{spec['name']}-storage-claim"}},
        {"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "20Gi"}},
    ]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": spec["name"]},
        "spec": {"initContainers": [gate], "containers": [engine], "volumes": volumes},
    }


def kserve_pod(docs: list[dict[str, Any]]) -> dict[str, Any]:
    """The predictor's pod spec (KServe's PredictorSpec inlines a PodSpec beside its own fields)."""
    predictor = one(docs, "InferenceService")["spec"]["predictor"]
    own = {"minReplicas", "maxReplicas", "scaleTarget", "scaleMetric", "canaryTrafficPercent", "timeout"}
    spec = {k: v for k, v in predictor.items() if k not in own}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "predictor"}, "spec": spec}


def objects() -> list[tuple[str, dict[str, Any]]]:
    found = [(f"deployment.yaml {d['kind']}", d) for d in documents("deployment.yaml")]
    kserve = documents("kserve.yaml")
    found.append(("kserve.yaml ConfigMap", one(kserve, "ConfigMap")))
    found.append(("kserve.yaml predictor", kserve_pod(kserve)))
    found.append(("production-stack-values.yaml pod", chart_pod(chart_values())))
    return found


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize(("name", "manifest"), objects(), ids=[name for name, _ in objects()])
def test_every_manifest_validates_against_the_kubernetes_schemas(
    name: str, manifest: dict[str, Any], version: str
) -> None:
    kubernetes_validate.validate(manifest, version, strict=True)


def test_the_validation_refuses_what_kubernetes_would() -> None:
    """Strict: a misspelt field or a command that is not a list fails, as the API server would refuse it."""
    deployment = one(documents("deployment.yaml"), "Deployment")
    for change in ("misspelt", "not-a-list"):
        broken = copy.deepcopy(deployment)
        gate = broken["spec"]["template"]["spec"]["initContainers"][0]
        if change == "misspelt":
            gate["comand"] = gate.pop("command")
        else:
            gate["command"] = " ".join(gate["command"])
        with pytest.raises(kubernetes_validate.ValidationError):
            kubernetes_validate.validate(broken, VERSIONS[-1], strict=True)


def test_the_kserve_manifest_is_an_inference_service_with_its_storage_uri() -> None:
    service = one(documents("kserve.yaml"), "InferenceService")
    assert service["apiVersion"] == "serving.kserve.io/v1beta1"
    (container,) = service["spec"]["predictor"]["containers"]
    assert container["name"] == "kserve-container"  # the name KServe's storage-initializer injection looks for
    env = {e["name"]: e for e in container["env"]}
    assert env["STORAGE_URI"]["value"].startswith("s3://")
    assert "/mnt/models/" in one(documents("kserve.yaml"), "ConfigMap")["data"]["launch"]


def test_the_chart_gate_reads_the_engine_s_own_values() -> None:
    """Written once: the gate's launch is the chart's engine command (the same anchors), less the chart's own
    serving options, which preflight reads and skips."""
    pod = chart_pod(chart_values())
    gate, engine = pod["spec"]["initContainers"][0], pod["spec"]["containers"][0]
    launch = [*gate["command"], *gate["args"]][3:]  # after `dflash-cfg preflight --`
    rest = engine["command"][:3] + engine["command"][8:]  # less --host, --port and the prefix-caching default
    assert launch == rest


# --- the gate, run as the pod runs it ---------------------------------------------------------------------------


def stand_in_engine(tmp_path: Path) -> tuple[Path, Path]:
    """A `vllm` on PATH that records its arguments and exits 0: the engine the container starts."""
    bin_dir, record = tmp_path / "engine-bin", tmp_path / "engine-argv.json"
    bin_dir.mkdir()
    script = bin_dir / "vllm"
    script.write_text(
        f"#!{sys.executable}\nimport json, sys\njson.dump(sys.argv[1:], open({str(record)!r}, 'w'))\n",
        encoding="utf-8",
    )
    script.chmod(0o755)
    return bin_dir, record


def run_container(
    container: dict[str, Any], config_maps: dict[str, dict[str, str]], mount: str, root: Path, engine_bin: Path
) -> subprocess.CompletedProcess[str]:
    def mapped(text: str) -> str:
        return text.replace(f"{mount}/", f"{root}/")

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = os.pathsep.join((str(Path(sys.executable).parent), str(engine_bin), "/usr/bin", "/bin"))
    env["NO_COLOR"] = "1"
    for item in container.get("env", []):
        if "value" in item:
            env[item["name"]] = mapped(item["value"])
        else:
            ref = item["valueFrom"]["configMapKeyRef"]
            env[item["name"]] = mapped(config_maps[ref["name"]][ref["key"]])
    argv = [mapped(a) for a in [*container.get("command", []), *container.get("args", [])]]
    return subprocess.run(
        argv, capture_output=True, text=True, env=env, timeout=300, cwd=root, stdin=subprocess.DEVNULL
    )


def config_maps(docs: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
    return {d["metadata"]["name"]: d["data"] for d in docs if d["kind"] == "ConfigMap"}


def gate_of_deployment() -> tuple[dict[str, Any], dict[str, dict[str, str]], str]:
    docs = documents("deployment.yaml")
    pod = one(docs, "Deployment")["spec"]["template"]["spec"]
    (gate,) = [c for c in pod["initContainers"] if c["name"] == GATE]
    (mount,) = [m["mountPath"] for m in gate["volumeMounts"] if m["name"] == "models"]
    return gate, config_maps(docs), mount


@pytest.mark.slow  # runs the gate's command
@pytest.mark.parametrize(
    ("drafter", "code", "summary"),
    [
        pytest.param(INCIDENT, 1, INCIDENT_SUMMARY, id="incident"),
        pytest.param(REPAIRED, 0, REPAIRED_SUMMARY, id="repaired"),
    ],
)
@pytest.mark.parametrize("example", ["deployment", "production-stack"])
def test_the_init_step_stops_the_incident_and_passes_the_repaired_drafter(
    tmp_path: Path, example: str, drafter: Path, code: int, summary: str
) -> None:
    root = model_volume(tmp_path / "volume", drafter)
    engine_bin, _ = stand_in_engine(tmp_path)
    if example == "deployment":
        gate, maps, mount = gate_of_deployment()
    else:
        pod = chart_pod(chart_values())
        (gate,) = pod["spec"]["initContainers"]
        maps, mount = {}, gate["volumeMounts"][0]["mountPath"]
    done = run_container(gate, maps, mount, root, engine_bin)
    assert done.returncode == code, done.stdout[-3000:] + done.stderr
    assert done.stdout.startswith("preflight vllm: method dflash, num_speculative_tokens 15, tensor-parallel 2\n")
    assert f"\n{summary}" in done.stdout  # then the fixable count, the versions
    assert "Traceback" not in done.stdout + done.stderr
    if code:
        assert "window-without-sliding" in done.stdout and "failed on warnings only" in done.stderr


@pytest.mark.slow  # runs the containers' commands
def test_the_engine_container_starts_exactly_the_launch_the_gate_checked(tmp_path: Path) -> None:
    """The Deployment's engine runs the ConfigMap's text through sh: the words it gets are preflight's."""
    docs = documents("deployment.yaml")
    (engine,) = one(docs, "Deployment")["spec"]["template"]["spec"]["containers"]
    root = model_volume(tmp_path / "volume", REPAIRED)
    engine_bin, record = stand_in_engine(tmp_path)
    done = run_container(engine, config_maps(docs), "/models", root, engine_bin)
    assert done.returncode == 0, done.stderr
    launch = config_maps(docs)["qwen36-dflash-launch"]["launch"].replace("/models/", f"{root}/")
    assert ["vllm", *json.loads(record.read_text())] == list(words(launch, "the ConfigMap"))


@pytest.mark.slow  # runs the container's command
@pytest.mark.parametrize(
    ("drafter", "code"), [pytest.param(INCIDENT, 1, id="incident"), pytest.param(REPAIRED, 0, id="repaired")]
)
def test_the_kserve_container_gates_the_engine_after_the_download(tmp_path: Path, drafter: Path, code: int) -> None:
    """`preflight --exec` in the predictor's container: the incident exits 1 and the engine never starts; the
    repaired drafter passes and the process becomes the engine, started with the launch's words."""
    docs = documents("kserve.yaml")
    (container,) = one(docs, "InferenceService")["spec"]["predictor"]["containers"]
    root = model_volume(tmp_path / "volume", drafter)
    engine_bin, record = stand_in_engine(tmp_path)
    done = run_container(container, config_maps(docs), "/mnt/models", root, engine_bin)
    assert done.returncode == code, done.stdout[-3000:] + done.stderr
    if code:
        assert not record.exists() and "not launching: the check failed" in done.stderr
        return
    launch = config_maps(docs)["qwen36-dflash-launch"]["launch"].replace("/mnt/models/", f"{root}/")
    assert ["vllm", *json.loads(record.read_text())] == list(words(launch, "the ConfigMap"))
