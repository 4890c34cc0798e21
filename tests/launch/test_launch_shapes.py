"""parse_launch on the shapes around an engine's own command line: wrappers (env, uv run, numactl,
torchrun), `docker run` with its image and bind mounts (a container path mapped to the host), vLLM's and
SGLang's `--config` YAML files (read through an injected reader), and the older speculative flags; and the
errors each shape gives.

The engines' own launch forms: test_launch.py."""

from __future__ import annotations

from typing import Any

import pytest
from launch_fields import SGLANG_8B, SPEC_8B, _fields, _sglang, _vllm

from dflash_cfg.errors import LaunchError
from dflash_cfg.launch import host_path, hub_cache, parse_launch

SPEC_LOCAL = '{"method": "dflash", "model": "/models/drafter", "num_speculative_tokens": 15}'

SHAPES = [
    # vLLM docs, deployment/docker.md: "docker run --runtime nvidia --gpus all -v
    # ~/.cache/huggingface:/root/.cache/huggingface --env HF_TOKEN=... -p 8000:8000 --ipc=host
    # vllm/vllm-openai:latest --model ..." (the image's entrypoint takes the serve arguments).
    pytest.param(
        ["docker", "run", "--runtime", "nvidia", "--gpus", "all", "-v",
         "/home/u/.cache/huggingface:/root/.cache/huggingface", "--env", "HF_TOKEN=x", "-p", "8000:8000",
         "--ipc=host", "vllm/vllm-openai:latest", "--model", "Qwen/Qwen3-8B", "--speculative-config", SPEC_8B],
        _vllm(),
        id="docker-vllm-image-model-option",
    ),
    # The vllm/vllm-openai Dockerfile on main: ENTRYPOINT ["vllm", "serve"], so the model may be positional.
    pytest.param(
        ["docker", "run", "-d", "--rm", "--gpus=all", "-v", "/data/models:/models", "vllm/vllm-openai",
         "/models/Qwen3-8B", "-sc", SPEC_LOCAL],
        _vllm("/models/Qwen3-8B", "/models/drafter"),
        id="docker-vllm-image-positional",
    ),
    # vllm-project/recipes#783: "vllm/vllm-openai-xpu:latest --model Qwen/Qwen3-32B" (that image's
    # entrypoint is the api_server module; both entrypoints read --model alike).
    pytest.param(
        ["docker", "run", "-it", "--privileged", "--ipc=host", "-p", "8000:8000", "--shm-size=16g",
         "vllm/vllm-openai-xpu:latest", "--model", "Qwen/Qwen3-8B", "--speculative-config", SPEC_8B],
        _vllm(),
        id="docker-vllm-platform-image-model-option",
    ),
    # LMCache/LMCache#665 docker/example_run.sh: --entrypoint "/usr/local/bin/vllm" $IMAGE serve MODEL ...
    pytest.param(
        ["docker", "run", "--runtime", "nvidia", "--gpus", "all", "--network", "host", "--entrypoint",
         "/usr/local/bin/vllm", "my-registry/lmcache-vllm:2025", "serve", "Qwen/Qwen3-8B", "--speculative-config",
         SPEC_8B],
        _vllm(),
        id="docker-entrypoint-option",
    ),
    # SGLang docs (get_started/install.md, "Method 3: Using docker"): docker run --gpus all --shm-size 32g
    # -p 30000:30000 -v ~/.cache/huggingface:/root/.cache/huggingface --env "HF_TOKEN=<secret>" --ipc=host
    # lmsysorg/sglang:latest python3 -m sglang.launch_server --model-path ... --host 0.0.0.0 --port 30000
    pytest.param(
        ["docker", "run", "--gpus", "all", "--shm-size", "32g", "-p", "30000:30000", "-v",
         "/home/u/.cache/huggingface:/root/.cache/huggingface", "--env", "HF_TOKEN=x", "--ipc=host",
         "lmsysorg/sglang:latest", "python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B",
         *SGLANG_8B, "--host", "0.0.0.0", "--port", "30000"],
        _sglang(),
        id="docker-sglang-image",
    ),
    # vLLM docs, getting_started/quickstart.md: "uv run --with vllm vllm --help" (a throwaway environment).
    pytest.param(
        ["uv", "run", "--with", "vllm", "--python", "3.12", "vllm", "serve", "Qwen/Qwen3-8B", "--speculative-config",
         SPEC_8B],
        _vllm(),
        id="uv-run",
    ),
    pytest.param(
        ["uv", "run", "--frozen", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B", *SGLANG_8B],
        _sglang(),
        id="uv-run-module",
    ),
    # `nohup vllm serve ... > vllm.log 2>&1 &` (the shell takes the redirections), with a NUMA binding as
    # numactl --help spells it.
    pytest.param(
        ["CUDA_VISIBLE_DEVICES=0,1", "nohup", "numactl", "--cpunodebind=0", "-m", "0", "vllm", "serve",
         "Qwen/Qwen3-8B", "--speculative-config", SPEC_8B, "-tp", "2"],
        _vllm(tensor_parallel_size=2),
        id="nohup-numactl",
    ),
    pytest.param(
        ["numactl", "-N0", "-l", "python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B", *SGLANG_8B],
        _sglang(),
        id="numactl-short-attached",
    ),
    # torch.distributed.run (torchrun --help): `-m` runs the program as a module, `--no-python` runs it as is.
    pytest.param(
        ["torchrun", "--nproc-per-node=2", "--standalone", "-m", "sglang.launch_server", "--model-path",
         "Qwen/Qwen3-8B", *SGLANG_8B],
        _sglang(),
        id="torchrun-module",
    ),
    pytest.param(
        ["python", "-m", "torch.distributed.run", "--nproc_per_node", "2", "--no-python", "vllm", "serve",
         "Qwen/Qwen3-8B", "--speculative-config", SPEC_8B],
        _vllm(),
        id="torch-distributed-run-no-python",
    ),
    # vLLM 0.6-0.7 (vllm/engine/arg_utils.py): --speculative-model, --num-speculative-tokens,
    # --speculative-draft-tensor-parallel-size/-spec-draft-tp.
    pytest.param(
        ["vllm", "serve", "Qwen/Qwen3-8B", "--speculative-model", "z-lab/Qwen3-8B-DFlash-b16",
         "--num-speculative-tokens", "15", "-spec-draft-tp", "2", "-tp", "2"],
        _vllm(method=None, tensor_parallel_size=2),
        id="vllm-old-speculative-flags",
    ),
    # argparse (served-model-name is nargs="+"): names after the model are all names.
    pytest.param(
        ["vllm", "serve", "Qwen/Qwen3-8B", "--served-model-name", "a", "b", "--speculative-config", SPEC_8B],
        _vllm(),
        id="vllm-served-model-names-after-model",
    ),
    pytest.param(
        ["vllm", "serve", "--served-model-name", "a", "b", "--model", "Qwen/Qwen3-8B", "--speculative-config",
         SPEC_8B],
        _vllm(),
        id="vllm-served-model-names-with-model-option",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("argv", "expected"), SHAPES)
def test_launch_shapes(argv: list[str], expected: dict[str, Any]) -> None:
    launch = parse_launch(argv)
    assert _fields(launch) == expected
    # --exec runs the command as given, wrappers and docker included (only leading assignments apart).
    assert launch.argv == tuple(argv)
    assert launch.command == tuple(argv[len(launch.environment) :])


def test_docker_mounts_map_container_paths_to_the_host() -> None:
    launch = parse_launch(
        ["docker", "run", "-v", "/data/models:/models:ro", "--mount", "type=bind,source=/srv/drafters,target=/models/d",
         "-v", "cache:/cache", "vllm/vllm-openai", "/models/Qwen3-8B", "-sc", SPEC_LOCAL]
    )  # fmt: skip
    container = launch.container
    assert container is not None
    assert host_path(container, "/models/Qwen3-8B") == "/data/models/Qwen3-8B"
    assert host_path(container, "/models/d/x/") == "/srv/drafters/x"  # the most specific mount wins
    assert host_path(container, "/models") == "/data/models"
    with pytest.raises(LaunchError, match=r"not under any bind mount .* add -v HOST_DIR:/opt"):
        host_path(container, "/opt/model")
    with pytest.raises(LaunchError, match="in the volume 'cache'"):
        host_path(container, "/cache/x")
    assert hub_cache(container) == "/root/.cache/huggingface/hub"
    env = parse_launch(
        ["docker", "run", "-e", "HF_HOME=/hf", "-v", "/h:/hf", "lmsysorg/sglang", "sglang", "serve", "Q/q"]
    )
    assert env.container is not None and hub_cache(env.container) == "/hf/hub"
    user = parse_launch(["docker", "run", "-u", "1000", "lmsysorg/sglang", "sglang", "serve", "Q/q"])
    assert user.container is not None
    with pytest.raises(LaunchError, match="--user"):
        hub_cache(user.container)


VLLM_YAML = {
    # vLLM docs, configuration/serve_args.md ("model: meta-llama/Llama-3.1-8B-Instruct", "vllm serve --config
    # config.yaml") and load_config_file's nested example (speculative-config as a mapping).
    "model": "Qwen/Qwen3-8B",
    "port": 6379,
    "enable-prefix-caching": True,
    "served-model-name": ["a", "b"],
    "speculative-config": {"method": "dflash", "model": "z-lab/Qwen3-8B-DFlash-b16", "num_speculative_tokens": 15},
    "tensor_parallel_size": 2,
}


def _reader(data: Any) -> Any:
    return lambda path: data


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        pytest.param(["vllm", "serve", "--config", "config.yaml"], _vllm(tensor_parallel_size=2), id="vllm-file-only"),
        # the command line wins over the file, and the positional model over the file's `model`
        pytest.param(
            ["vllm", "serve", "Qwen/Qwen3-4B", "--config", "config.yaml", "-tp", "4"],
            _vllm("Qwen/Qwen3-4B", tensor_parallel_size=4),
            id="vllm-cli-wins",
        ),
        pytest.param(
            ["python", "-m", "vllm.entrypoints.openai.api_server", "--config", "c.yml"],
            _vllm(tensor_parallel_size=2),
            id="vllm-api-server-file",
        ),
    ],
)
def test_vllm_config_file(argv: list[str], expected: dict[str, Any]) -> None:
    launch = parse_launch(argv, _reader(VLLM_YAML))
    assert _fields(launch) == expected
    assert launch.config_file == argv[argv.index("--config") + 1]


def test_sglang_config_file() -> None:
    # SGLang docs, advanced_features/server_arguments.md: "model-path: ...", "tensor-parallel-size: 2",
    # "python -m sglang.launch_server --config config.yaml"; command-line flags win.
    data = {"model-path": "Qwen/Qwen3-8B", "tensor-parallel-size": 2, "enable-metrics": True,
            "speculative-algorithm": "DFLASH", "speculative-draft-model-path": "z-lab/Qwen3-8B-DFlash-b16",
            "speculative-num-draft-tokens": 16}  # fmt: skip
    launch = parse_launch(["python", "-m", "sglang.launch_server", "--config", "config.yaml"], _reader(data))
    assert _fields(launch) == _sglang(tensor_parallel_size=2)
    wins = parse_launch(["sglang", "serve", "Qwen/Qwen3-4B", "--config", "c.yaml", "--tp", "4"], _reader(data))
    assert (wins.target, wins.tensor_parallel_size) == ("Qwen/Qwen3-4B", 4)


def test_config_in_a_container_is_read_through_the_mount() -> None:
    seen: list[str] = []

    def read(path: str) -> Any:
        seen.append(path)
        return VLLM_YAML

    parse_launch(["docker", "run", "-v", "/srv/conf:/conf", "vllm/vllm-openai", "--config", "/conf/serve.yaml"], read)
    assert seen == ["/srv/conf/serve.yaml"]


SHAPE_ERRORS = [
    pytest.param(
        ["docker", "run", "ubuntu:22.04", "vllm", "serve", "Q/q"], "entrypoint is not known", id="docker-image"
    ),
    pytest.param(["docker", "run", "--frobnicate", "vllm/vllm-openai"], "docker run --frobnicate", id="docker-option"),
    pytest.param(["docker", "run", "-v", "/a:/b"], "no image", id="docker-no-image"),
    pytest.param(
        ["docker", "run", "--volumes-from", "data", "vllm/vllm-openai", "Q/q"], "--volumes-from", id="volumes-from"
    ),
    pytest.param(
        ["docker", "run", "vllm/vllm-openai:v0.9.0", "Qwen/Qwen3-8B", "-sc", SPEC_8B], "pass the model with --model",
        id="docker-versioned-image-positional",
    ),
    pytest.param(
        ["docker", "run", "lmsysorg/sglang:latest", "bash", "-c", "python3 -m sglang.launch_server"],
        "not a vLLM or SGLang launch command", id="docker-shell-string",
    ),
    pytest.param(["uv", "run", "--bogus", "vllm", "serve", "Q/q"], "uv run --bogus", id="uv-unknown-option"),
    pytest.param(["numactl", "--hardware"], "numactl --hardware", id="numactl-unknown-option"),
    pytest.param(["torchrun", "--nproc-per-node", "2", "serve.py"], "a script", id="torchrun-script"),
    pytest.param(
        ["vllm", "serve", "--served-model-name", "a", "Qwen/Qwen3-8B"], "the model must come first",
        id="vllm-served-model-name-before-model",
    ),
    pytest.param(
        ["vllm", "serve", "--port", "8000", "--served-model-name=a", "Qwen/Qwen3-8B"], "the model must come first",
        id="vllm-served-model-name-equals-before-model",
    ),
    pytest.param(
        ["vllm", "serve", "Q/q", "--config", "a.yaml", "--config", "b.yaml"], "more than once", id="config-twice"
    ),
    pytest.param(["vllm", "serve", "Q/q", "--config=a.yaml"], "two words", id="config-equals"),
    pytest.param(["vllm", "serve", "Q/q", "--config", "a.json"], ".yaml or .yml", id="config-not-yaml"),
    pytest.param(
        ["vllm", "serve", "Q/q", "--speculative-model", "z/x", "--speculative-config", SPEC_8B], "before 0.8 mixed",
        id="old-and-new-flags",
    ),
    pytest.param(
        ["vllm", "serve", "Q/q", "--speculative-model", "z/x", "--speculative-draft-tensor-parallel-size", "2",
         "-tp", "4"],
        "accepts only 1 or the tensor-parallel size 4", id="draft-tp-differs",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("argv", "message"), SHAPE_ERRORS)
def test_launch_shape_errors(argv: list[str], message: str) -> None:
    with pytest.raises(LaunchError) as info:
        parse_launch(argv, _reader({"model": "Q/q"}))
    assert message in str(info.value) and "\n" not in str(info.value)


def test_config_file_problems() -> None:
    with pytest.raises(LaunchError, match="neither as the positional nor in"):
        parse_launch(["vllm", "serve", "--config", "c.yaml"], _reader({"port": 1}))
    with pytest.raises(LaunchError, match="expected a mapping"):
        parse_launch(["vllm", "serve", "Q/q", "--config", "c.yaml"], _reader(["a"]))
    with pytest.raises(LaunchError, match="write model-path"):
        parse_launch(["sglang", "serve", "--config", "c.yaml"], _reader({"model_path": "Q/q"}))
