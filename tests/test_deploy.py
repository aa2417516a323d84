"""deploy/: what can be validated without Docker or a cluster."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from levyserver import ROOT, start_server

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
    assert kinds["Job"]["spec"]["template"]["spec"]["containers"][0]["args"] == ["migrate"]


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
