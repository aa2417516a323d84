"""deploy/: what can be validated without Docker or a cluster."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from levyserver import ROOT, fresh_database, levy_env, start_server

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"
K8S = sorted((DEPLOY / "k8s").glob("*.yaml"))


def _docs(path: Path) -> list[dict]:  # type: ignore[type-arg]
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


@pytest.mark.parametrize("path", K8S, ids=lambda p: p.name)
def test_k8s_manifests_pass_the_schema(path: Path) -> None:
    for doc in _docs(path):
        kubernetes_validate.validate(doc, "1.30", strict=True)


def test_k8s_has_the_pieces_of_a_fleet() -> None:
    kinds = {d["kind"]: d for p in K8S for d in _docs(p)}
    assert {"Deployment", "Service", "HorizontalPodAutoscaler", "Job", "ConfigMap", "Secret"} <= set(kinds)
    c = kinds["Deployment"]["spec"]["template"]["spec"]["containers"][0]
    assert c["readinessProbe"]["grpc"]["port"] == 50051 and c["livenessProbe"]["httpGet"]["path"] == "/healthz"
    jobs = {d["metadata"]["name"]: d for p in K8S for d in _docs(p) if d["kind"] == "Job"}
    assert jobs["levy-migrate"]["spec"]["template"]["spec"]["containers"][0]["args"] == ["migrate"]
    assert {"levy-import-rates", "levy-first-user"} <= set(jobs)


def test_compose_has_two_replicas_postgres_redis_and_envoy() -> None:
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    services = compose["services"]
    assert {"levy-1", "levy-2", "postgres", "redis", "envoy", "migrate"} <= set(services)
    for name in ("levy-1", "levy-2"):
        env = services[name]["environment"]
        assert env["LEVY_DATABASE_URL"].startswith("postgresql+asyncpg://") and env["LEVY_REDIS_URL"].startswith("redis://")
    envoy = yaml.safe_load((DEPLOY / "envoy.yaml").read_text())
    clusters = {c["name"]: c for c in envoy["static_resources"]["clusters"]}
    hosts = {e["endpoint"]["address"]["socket_address"]["address"]
             for e in clusters["levy_grpc"]["load_assignment"]["endpoints"][0]["lb_endpoints"]}
    assert hosts == {"levy-1", "levy-2"}
    assert "grpc_health_check" in clusters["levy_grpc"]["health_checks"][0]


def _healthcheck_command() -> list[str]:
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    line = next(x for x in text.splitlines() if x.startswith("HEALTHCHECK"))
    return json.loads(line[line.index(" CMD ") + len(" CMD "):])  # type: ignore[no-any-return]


def test_dockerfile_healthcheck_runs_the_virtualenv_python_by_path() -> None:
    """Exec form naming the interpreter of the virtualenv the build stage creates
    and the runtime stage copies: no shell and no `python` on PATH needed."""
    text = (ROOT / "Dockerfile").read_text()
    venv = re.search(r"python -m venv (\S+)", text)
    assert venv and f"COPY --from=build {venv.group(1)} {venv.group(1)}" in text
    assert _healthcheck_command()[:2] == [f"{venv.group(1)}/bin/python", "-c"]


def test_dockerfile_healthcheck_passes_on_a_serving_levy_and_fails_on_none(tmp_path: Path) -> None:
    command = [sys.executable, *_healthcheck_command()[1:]]
    srv = start_server(f"sqlite+aiosqlite:///{tmp_path}/levy.db", tmp_path)
    env = {"PATH": "/nonexistent", "LEVY_HTTP_ADDRESS": "0.0.0.0:" + srv.http_url.rsplit(":", 1)[1]}
    try:
        assert subprocess.run(command, env=env, capture_output=True, timeout=10).returncode == 0
    finally:
        assert srv.stop() == 0, srv.log()
    assert subprocess.run(command, env=env, capture_output=True, timeout=10).returncode == 1


# ------------------------------------------------------------------ a numeric user


def dockerfile_user(text: str) -> str:
    """The ``USER`` the final stage runs as (the last ``USER`` after the last ``FROM``)."""
    final = re.split(r"^FROM\s", text, flags=re.MULTILINE)[-1]
    users = re.findall(r"^USER\s+(\S+)", final, flags=re.MULTILINE)
    assert users, "the final stage has no USER: it would run as root"
    return users[-1]  # type: ignore[no-any-return]


def numeric_user_problems(user: str) -> list[str]:
    """Why ``USER`` cannot satisfy Kubernetes' runAsNonRoot: the kubelet can only
    verify a numeric user ("image has non-numeric user"), and uid 0 is root."""
    if not re.fullmatch(r"\d+(:\d+)?", user):
        return [f"USER {user} is not numeric (uid or uid:gid)"]
    if int(user.split(":")[0]) == 0:
        return [f"USER {user} is root"]
    return []


def pod_specs(doc: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The pod specs of a manifest: a Pod's, a workload's template, a CronJob's job template."""
    spec = doc.get("spec") or {}
    if doc.get("kind") == "Pod":
        yield spec
    if "template" in spec:
        yield spec["template"]["spec"]
    if "jobTemplate" in spec:
        yield spec["jobTemplate"]["spec"]["template"]["spec"]


def run_as_problems(doc: dict[str, Any]) -> list[str]:
    """Every container (init ones included) whose effective security context (the
    container's fields over the pod's) sets runAsNonRoot without a numeric,
    non-zero runAsUser: the kubelet refuses it unless the image's USER is numeric,
    and these manifests do not rely on the image for that."""
    problems = []
    for pod in pod_specs(doc):
        pod_ctx = pod.get("securityContext") or {}
        for c in pod.get("initContainers", []) + pod.get("containers", []):
            ctx = {**pod_ctx, **(c.get("securityContext") or {})}
            if not ctx.get("runAsNonRoot"):
                continue
            user, group = ctx.get("runAsUser"), ctx.get("runAsGroup", 1)
            if type(user) is not int or user == 0:
                problems.append(f"{doc['metadata']['name']}/{c['name']}: runAsNonRoot without a numeric runAsUser")
            if type(group) is not int:
                problems.append(f"{doc['metadata']['name']}/{c['name']}: runAsGroup is not numeric")
    return problems


def test_the_image_runs_as_a_numeric_user_that_it_creates() -> None:
    text = (ROOT / "Dockerfile").read_text()
    user = dockerfile_user(text)
    assert numeric_user_problems(user) == []
    uid, _, gid = user.partition(":")
    final = text.replace("\\\n", " ").split("FROM ")[-1]
    assert re.search(rf"groupadd\b[^\n]*--gid {gid or uid}\b", final), "the group is created with that gid"
    assert re.search(rf"useradd\b[^\n]*--uid {uid}\b", final), "the user is created with that uid"
    assert f"chown {uid}:{gid or uid} /data" in final, "the data volume belongs to that user"


def test_the_manifests_run_as_the_image_user_wherever_they_require_a_non_root_one() -> None:
    uid, _, gid = dockerfile_user((ROOT / "Dockerfile").read_text()).partition(":")
    pods = [pod for p in K8S for d in _docs(p) for pod in pod_specs(d)]
    assert len(pods) == 4  # the Deployment and three Jobs
    for pod in pods:
        assert pod["securityContext"] == {"runAsNonRoot": True, "runAsUser": int(uid), "runAsGroup": int(gid)}
    assert [problem for p in K8S for d in _docs(p) for problem in run_as_problems(d)] == []


def test_the_checks_refuse_what_the_kubelet_refuses() -> None:
    """The checks above are not vacuous: a named USER, and runAsNonRoot without a
    numeric runAsUser in the pod or the container context, are each reported."""
    assert dockerfile_user("FROM a AS b\nUSER 1\nFROM c\nUSER levy\n") == "levy"
    assert numeric_user_problems("levy") == ["USER levy is not numeric (uid or uid:gid)"]
    assert numeric_user_problems("levy:10001") and numeric_user_problems("0") and numeric_user_problems("0:0")
    assert numeric_user_problems("10001") == numeric_user_problems("10001:10001") == []
    with pytest.raises(AssertionError):
        dockerfile_user("FROM a\nUSER 10001\nFROM b\nCMD x\n")  # the final stage runs as root

    def job(pod_ctx: dict[str, Any] | None, ctx: dict[str, Any] | None) -> dict[str, Any]:
        container = {"name": "c", "image": "i", **({"securityContext": ctx} if ctx is not None else {})}
        pod = {"containers": [container], **({"securityContext": pod_ctx} if pod_ctx is not None else {})}
        return {"kind": "Job", "metadata": {"name": "j"}, "spec": {"template": {"spec": pod}}}

    refused = "j/c: runAsNonRoot without a numeric runAsUser"
    assert run_as_problems(job({"runAsNonRoot": True}, None)) == [refused]  # the pod's context
    assert run_as_problems(job(None, {"runAsNonRoot": True})) == [refused]  # the container's context
    assert run_as_problems(job({"runAsNonRoot": True}, {"runAsUser": "levy"})) == [refused]
    assert run_as_problems(job({"runAsNonRoot": True}, {"runAsUser": 0})) == [refused]
    assert run_as_problems(job({"runAsNonRoot": True, "runAsUser": 10001}, {"runAsGroup": "levy"})) == \
        ["j/c: runAsGroup is not numeric"]
    assert run_as_problems(job({"runAsNonRoot": True, "runAsUser": 10001}, None)) == []
    assert run_as_problems(job({"runAsNonRoot": True}, {"runAsUser": 10001})) == []  # the container supplies it
    assert run_as_problems(job(None, None)) == []  # nothing required
    cron = {"kind": "CronJob", "metadata": {"name": "j"},
            "spec": {"jobTemplate": job({"runAsNonRoot": True}, None)}}
    init = job({"runAsNonRoot": True, "runAsUser": 10001}, None)
    init["spec"]["template"]["spec"]["initContainers"] = [{"name": "i", "securityContext": {"runAsUser": "x"}}]
    assert run_as_problems(cron) == [refused]
    assert run_as_problems(init) == ["j/i: runAsNonRoot without a numeric runAsUser"]


# ------------------------------------------------------------------ compose: one image


def test_compose_builds_the_levy_image_once_and_every_levy_service_runs_it() -> None:
    services = yaml.safe_load((DEPLOY / "compose.yaml").read_text())["services"]
    builders = [name for name, s in services.items() if "build" in s]
    assert builders == ["migrate"]
    image = services["migrate"]["image"]
    levy = {name for name, s in services.items() if s.get("image") == image}
    assert levy == {"migrate", "levy-1", "levy-2", "import-rates", "first-user"}
    for name in levy - {"migrate"}:
        # never pulled (there is no such image in a registry): the one migrate built
        assert services[name]["pull_policy"] == "never"
        assert services[name]["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}
    assert {services[n]["profiles"][0] for n in ("import-rates", "first-user")} == {"setup"}


# ------------------------------------------------------------------ the set-up steps, run


def _k8s_job(name: str) -> dict[str, Any]:
    return next(d for p in K8S for d in _docs(p) if d["kind"] == "Job" and d["metadata"]["name"] == name)


def _k8s_argv(container: dict[str, Any], env: dict[str, str]) -> list[str]:
    """What the container runs: its command, or the image's ENTRYPOINT (levy) and its
    args, with Kubernetes' $(VAR) references replaced from ``env``."""
    argv = container.get("command") or ["levy", *container["args"]]
    return [re.sub(r"\$\((\w+)\)", lambda m: env[m.group(1)], a) for a in argv]


def _compose_argv(service: dict[str, Any]) -> list[str]:
    """The service's entrypoint and command after compose's interpolation ($$ is $)."""
    return [a.replace("$$", "$") for a in service.get("entrypoint", ["levy"]) + service["command"]]


def _run(argv: list[str], database_url: str, rates: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """One container step on this machine: the image's PATH (levy first), its
    database, /rates mounted from ``rates``."""
    argv = [a.replace("/rates", str(rates)) for a in argv]
    bin_dir = str(Path(sys.executable).parent)
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False,
                          env=levy_env(LEVY_DATABASE_URL=database_url, PATH=bin_dir + os.pathsep + os.environ["PATH"],
                                       **env))


ZIP5 = ROOT.parent / "shared" / "data" / "rates" / "zip5-2026-03"
RATE_FILES = (ZIP5 / "TAXRATES_ZIP5_WY202603.csv", ZIP5 / "TAXRATES_ZIP5_DC202603.csv")


# The commands do not depend on the database: each manifest set on one, both databases covered.
@pytest.mark.parametrize(("where", "kind"), [("k8s", "sqlite"), ("compose", "postgres")])
def test_the_set_up_steps_import_rates_and_create_the_first_user(where: str, kind: str, tmp_path: Path) -> None:
    """The commands of the migration, rate import and first-user steps, as the
    manifests write them, run in order against a new database: the rates land and
    the first console user is an admin with a one-time password."""
    if not all(f.exists() for f in RATE_FILES):
        pytest.skip(f"{ZIP5} (shared data) is not there")
    rates = tmp_path / "rates"
    (rates / "zip5").mkdir(parents=True)  # a file and a directory of files: both imported
    shutil.copy(RATE_FILES[0], rates)
    shutil.copy(RATE_FILES[1], rates / "zip5")
    email = "owner@example.com"
    with fresh_database(kind, tmp_path) as url:
        if where == "k8s":
            migrate = _k8s_argv(_k8s_job("levy-migrate")["spec"]["template"]["spec"]["containers"][0], {})
            import_rates = _k8s_argv(_k8s_job("levy-import-rates")["spec"]["template"]["spec"]["containers"][0], {})
            pod = _k8s_job("levy-first-user")["spec"]["template"]["spec"]
            env = {e["name"]: e["value"] for e in pod["containers"][0]["env"]} | {"LEVY_FIRST_USER_EMAIL": email}
            first_user = [_k8s_argv(c, env) for c in pod["initContainers"] + pod["containers"]]
        else:
            services = yaml.safe_load((DEPLOY / "compose.yaml").read_text())["services"]
            migrate, import_rates = _compose_argv(services["migrate"]), _compose_argv(services["import-rates"])
            first_user = [_compose_argv(services["first-user"])]
        assert _run(migrate, url, rates).returncode == 0
        imported = _run(import_rates, url, rates)
        assert imported.returncode == 0, imported.stderr
        assert "2 file(s) imported" in imported.stdout  # the file, and the one in the directory
        again = _run(import_rates, url, rates)  # a job run again skips what it imported
        assert again.returncode == 0 and "0 file(s) imported (0 records), 2 already imported" in again.stdout
        outputs = [_run(argv, url, rates, LEVY_FIRST_USER_EMAIL=email) for argv in first_user]
        assert [o.returncode for o in outputs] == [0] * len(outputs), [o.stderr for o in outputs]
        lines = "".join(o.stdout for o in outputs).split()
        assert len(lines) == 2 and lines[0].startswith("levy_sk_")  # the admin key, the one-time password
        listed = _run(["levy", "users", "list"], url, rates)
        assert listed.stdout.split("\t")[1:] == [email, "admin\n"]
        listed = _run(["levy", "rates", "list"], url, rates)
        assert "states WY" in listed.stdout and "states DC" in listed.stdout
