"""`docker run [options] IMAGE [ARGS]` (or podman): the command the container runs, and what the run says
about the container's file system.

Images: vllm/vllm-openai (latest, nightly: ENTRYPOINT vllm serve; other tags and platform images are read
both as `vllm serve` and as the api_server module, and must agree), lmsysorg/sglang (ARGS are the command),
or any image with `--entrypoint`. `-v`/`--mount` binds map container paths back to host paths
(`host_path`); `-e` gives the container's HF cache (`hub_cache`). An option not in `_DOCKER` is refused:
without its arity the image's place is unknown.
"""

from __future__ import annotations

from dflash_cfg.errors import LaunchError
from dflash_cfg.launch.argv import quote, show
from dflash_cfg.launch.flags import FLAG, VALUE
from dflash_cfg.model import Container, Mount

# docker run's options (docker run --help): FLAG or VALUE.
_DOCKER: dict[str, int] = {
    **dict.fromkeys(
        ("-a", "--attach", "-c", "--cpu-shares", "-e", "--env", "-h", "--hostname", "-l", "--label", "-m", "--memory",
         "-p", "--publish", "-u", "--user", "-v", "--volume", "-w", "--workdir", "--add-host", "--annotation",
         "--blkio-weight", "--blkio-weight-device", "--cap-add", "--cap-drop", "--cgroup-parent", "--cgroupns",
         "--cidfile", "--cpu-period", "--cpu-quota", "--cpu-rt-period", "--cpu-rt-runtime", "--cpus",
         "--cpuset-cpus", "--cpuset-mems", "--detach-keys", "--device", "--device-cgroup-rule", "--device-read-bps",
         "--device-read-iops", "--device-write-bps", "--device-write-iops", "--dns", "--dns-option",
         "--dns-search", "--domainname", "--entrypoint", "--env-file", "--expose", "--gpus", "--group-add",
         "--health-cmd", "--health-interval", "--health-retries", "--health-start-interval",
         "--health-start-period", "--health-timeout", "--ip", "--ip6", "--ipc", "--isolation", "--kernel-memory",
         "--label-file", "--link", "--link-local-ip", "--log-driver", "--log-opt", "--mac-address",
         "--memory-reservation", "--memory-swap", "--memory-swappiness", "--mount", "--name", "--network", "--net",
         "--network-alias", "--oom-score-adj", "--pid", "--pids-limit", "--platform", "--pull", "--restart",
         "--runtime", "--security-opt", "--shm-size", "--stop-signal", "--stop-timeout", "--storage-opt",
         "--sysctl", "--tmpfs", "--ulimit", "--userns", "--uts", "--volume-driver", "--volumes-from"),
        VALUE,
    ),
    **dict.fromkeys(
        ("-d", "--detach", "-i", "--interactive", "-t", "--tty", "-P", "--publish-all", "-q", "--quiet", "--rm",
         "--init", "--privileged", "--read-only", "--no-healthcheck", "--oom-kill-disable", "--sig-proxy",
         "--disable-content-trust", "--use-api-socket"),
        FLAG,
    ),
}  # fmt: skip


def docker_run(args: tuple[str, ...]) -> tuple[tuple[str, ...], Container]:
    """`docker run [options] IMAGE [ARGS]`: the command the container runs, and its mounts and environment."""
    i = 2 if args[1] == "run" else 3
    if args[1] == "container" and args[2:3] != ("run",):
        raise LaunchError(f"{show(args[:3])}: not 'docker run'")
    mounts: list[Mount] = []
    environment: dict[str, str | None] = {}
    entrypoint: str | None = None
    workdir: str | None = None
    user = env_file = False
    env_files: list[str] = []
    while i < len(args):
        token = args[i]
        if token == "--":
            i += 1
            break
        if not token.startswith("-") or token == "-":
            break
        name, eq, inline = token.partition("=")
        if name.startswith("--"):
            arity = _DOCKER.get(name)
            if arity is None:
                raise LaunchError(f"docker run {name}: option not understood; cannot tell where the image is")
            if arity == FLAG:
                i += 1
                continue
            if eq:
                value, i = inline, i + 1
            elif i + 1 < len(args):
                value, i = args[i + 1], i + 2
            else:
                raise LaunchError(f"docker run {name}: expects a value")
        else:
            value = None
            for k, letter in enumerate(token[1:], start=1):
                arity = _DOCKER.get("-" + letter)
                if arity is None:
                    raise LaunchError(f"docker run -{letter}: option not understood; cannot tell where the image is")
                if arity == VALUE:
                    name = "-" + letter
                    if k + 1 < len(token):
                        value, i = token[k + 1 :].removeprefix("="), i + 1
                    elif i + 1 < len(args):
                        value, i = args[i + 1], i + 2
                    else:
                        raise LaunchError(f"docker run {name}: expects a value")
                    break
            else:
                i += 1
                continue
        assert value is not None
        if name in ("-v", "--volume"):
            mounts.append(_volume(value))
        elif name == "--mount":
            mounts.append(_mount(value))
        elif name in ("-e", "--env"):
            key, eq_, val = value.partition("=")
            environment[key] = val if eq_ else None
        elif name == "--env-file":
            env_file = True
            env_files.append(value)
        elif name == "--entrypoint":
            entrypoint = value
        elif name in ("-w", "--workdir"):
            workdir = value
        elif name in ("-u", "--user"):
            user = True
        elif name == "--volumes-from":
            raise LaunchError("docker run --volumes-from: the mounts it brings are not on the command line")
    if i >= len(args):
        raise LaunchError("docker run: no image given")
    image, rest = args[i], args[i + 1 :]
    repository = _image_repository(image)
    known: bool | None = True
    if entrypoint is not None:
        if not entrypoint:
            raise LaunchError("docker run --entrypoint '': the image's command is not on the command line")
        command: tuple[str, ...] = (entrypoint, *rest)
    elif repository == "vllm/vllm-openai" and _image_tag(image) in (None, "latest", "nightly"):
        command = ("vllm", "serve", *rest)  # docker/Dockerfile of vLLM main: ENTRYPOINT ["vllm", "serve"]
    elif repository.startswith("vllm/vllm-openai"):
        command, known = rest, False  # a versioned or platform image: the entrypoint depends on it
    elif repository.startswith("lmsysorg/sglang"):
        command = rest
        if not command:
            raise LaunchError(f"{image}: no command after the image (the SGLang images take the whole command)")
    else:
        raise LaunchError(
            f"docker image {quote(image)}: its entrypoint is not known here (the vllm/vllm-openai and"
            " lmsysorg/sglang images are); pass --entrypoint with the program"
        )
    container = Container(
        image=image,
        mounts=tuple(mounts),
        environment=tuple(environment.items()),
        workdir=workdir,
        user=user,
        env_file=env_file,
        entrypoint_known=known,
        env_files=tuple(env_files),
    )
    return command, container


def _volume(value: str) -> Mount:
    """`-v HOST:CONTAINER[:OPTIONS]`, `-v NAME:CONTAINER` (a named volume), `-v CONTAINER` (anonymous)."""
    parts = value.split(":")
    if len(parts) == 1:
        return Mount(None, _container_dir("-v", parts[0]))
    if len(parts) > 3:
        raise LaunchError(f"-v {quote(value)}: not HOST:CONTAINER[:OPTIONS]")
    source, target = parts[0], parts[1]
    is_path = source.startswith(("/", ".", "~"))
    return Mount(source if is_path else None, _container_dir("-v", target), None if is_path else source)


def _mount(value: str) -> Mount:
    """`--mount type=bind,source=HOST,target=CONTAINER[,readonly]` (volume and tmpfs mounts have no host dir)."""
    if '"' in value:
        raise LaunchError(f"--mount {quote(value)}: quoted fields are not read here")
    fields: dict[str, str] = {}
    for part in value.split(","):
        key, _, val = part.partition("=")
        fields[key.strip()] = val
    kind = fields.get("type", "volume")
    source = fields.get("source", fields.get("src"))
    target = fields.get("target", fields.get("destination", fields.get("dst")))
    if target is None:
        raise LaunchError(f"--mount {quote(value)}: no target")
    if kind == "bind":
        if not source:
            raise LaunchError(f"--mount {quote(value)}: a bind mount without source")
        return Mount(source, _container_dir("--mount", target))
    return Mount(None, _container_dir("--mount", target), source or kind)


def _container_dir(option: str, path: str) -> str:
    if not path.startswith("/"):
        raise LaunchError(f"{option}: container path {quote(path)} is not absolute")
    return "/" + path.strip("/") if path.strip("/") else "/"


def _image_tag(image: str) -> str | None:
    last = image.split("@", 1)[0].rsplit("/", 1)[-1]
    return last.split(":", 1)[1] if ":" in last else None


def _image_repository(image: str) -> str:
    """`registry/org/name:tag@digest` -> `org/name` for Docker Hub images, else the reference sans tag."""
    name = image.split("@", 1)[0]
    last = name.rsplit("/", 1)
    if ":" in last[-1]:
        name = name[: len(name) - len(last[-1])] + last[-1].split(":", 1)[0]
    for prefix in ("docker.io/", "index.docker.io/", "registry-1.docker.io/"):
        name = name.removeprefix(prefix)
    return name.removeprefix("library/")


def host_path(container: Container, path: str) -> str:
    """The host path of a container path (through the most specific bind mount covering it, as in the
    container); LaunchError when none does."""
    if not path.startswith("/") and container.workdir:
        path = container.workdir.rstrip("/") + "/" + path  # docker run -w: the engine's working directory
    if not path.startswith("/"):
        raise LaunchError(
            f"container path {quote(path)} is relative to the image's working directory, which is not on the"
            " command line; use an absolute path or -w"
        )
    normal = "/" + "/".join(p for p in path.split("/") if p not in ("", "."))
    if any(p == ".." for p in normal.split("/")):
        raise LaunchError(f"container path {quote(path)}: '..' is not followed here")
    best: Mount | None = None
    for mount in container.mounts:
        inside = mount.container == "/" or normal == mount.container or normal.startswith(mount.container + "/")
        if inside and (best is None or len(mount.container) >= len(best.container)):
            best = mount
    if best is None:
        shown = ", ".join(f"{m.host or m.volume or '(anonymous)'}:{m.container}" for m in container.mounts) or "none"
        raise LaunchError(
            f"container path {quote(path)} is not under any bind mount of the docker run (mounts: {shown});"
            f" add -v HOST_DIR:{_parent(normal)} so the host copy can be checked"
        )
    if best.host is None:
        raise LaunchError(
            f"container path {quote(path)} is in the volume {quote(best.volume or '(anonymous)')} at"
            f" {best.container}, not in a host directory that can be checked; bind-mount a host dir"
        )
    rest = normal[len(best.container) :].lstrip("/") if best.container != "/" else normal.lstrip("/")
    return best.host.rstrip("/") + "/" + rest if rest else best.host


def hub_cache(container: Container, environment: dict[str, str] | None = None) -> str:
    """The container's Hugging Face hub cache (where it resolves a Hub id), as a container path.
    `environment`: the container's variables as resolved by the caller (its --env-file files read and
    `-e NAME` taken from the docker client's environment); without it those are refused as unknown."""
    if environment is None:
        env = dict(container.environment)
        for name in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME"):
            if name in env and env[name] is None:
                raise LaunchError(f"-e {name}: its value comes from the host environment; give it as {name}=...")
        if container.env_file and not any(env.get(n) for n in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE")):
            raise LaunchError("docker run --env-file: the Hugging Face cache location may be set there; use -e")
        resolved = {k: v for k, v in env.items() if v is not None}
    else:
        resolved = environment
    for name in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if resolved.get(name):
            return _absolute(container, name, resolved[name])
    if resolved.get("HF_HOME"):
        return _absolute(container, "HF_HOME", resolved["HF_HOME"]).rstrip("/") + "/hub"
    if resolved.get("XDG_CACHE_HOME"):
        return _absolute(container, "XDG_CACHE_HOME", resolved["XDG_CACHE_HOME"]).rstrip("/") + "/huggingface/hub"
    if container.user or "HOME" in resolved:
        home = resolved.get("HOME")
        if home:
            return _absolute(container, "HOME", home).rstrip("/") + "/.cache/huggingface/hub"
        raise LaunchError(
            "docker run --user: the container's home (its default Hugging Face cache) is not known;"
            " set -e HF_HOME=... or pass a mounted model path"
        )
    return "/root/.cache/huggingface/hub"


def _absolute(container: Container, name: str, value: str) -> str:
    if value.startswith("/"):
        return value
    if container.workdir:
        return container.workdir.rstrip("/") + "/" + value
    raise LaunchError(f"-e {name}={value}: relative to the image's working directory, which is not known; use -w")


def _parent(path: str) -> str:
    return path.rsplit("/", 1)[0] or "/"
