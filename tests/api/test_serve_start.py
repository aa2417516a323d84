"""``levy serve --workers N`` at start (issue 30, points 13 and 14): it says it is serving only
once its ports answer, says where the console is and that a key is needed, and a second,
independent server on the same ports fails with "address already in use" instead of sharing
them through SO_REUSEPORT. Not about the database: SQLite only."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
from levyserver import ROOT, free_port, levy_env, start_server


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def test_workers_say_serving_only_when_the_ports_answer(tmp_path: Path) -> None:
    http, grpc_ = free_port(), free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "levy", "serve", "--workers", "2", "--database-url",
         f"sqlite+aiosqlite:///{tmp_path}/levy.db", "--grpc-address", f"127.0.0.1:{grpc_}",
         "--http-address", f"127.0.0.1:{http}"],
        env=levy_env(LEVY_WORKERS="2"), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=ROOT)
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + 90
        line = ""
        while "serving" not in line and time.monotonic() < deadline:
            line = proc.stdout.readline()
            assert line or proc.poll() is None, "levy serve ended before saying it serves"
        # Right when the line is printed (not 12-15 s later) both ports answer.
        assert _answers(grpc_), line
        assert httpx.get(f"http://127.0.0.1:{http}/healthz", timeout=2).status_code == 200
        assert line.startswith("levy: 2 workers serving gRPC on"), line
        console, key = proc.stdout.readline(), proc.stdout.readline()
        assert f"http://127.0.0.1:{http}/console/" in console and "levy users create" in console
        assert "API key" in key and "levy keys create" in key
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    assert proc.returncode == 0


def test_a_second_server_on_the_same_ports_fails(tmp_path: Path) -> None:
    first = start_server(f"sqlite+aiosqlite:///{tmp_path}/first.db", tmp_path, args=["--workers", "2"])
    try:
        http, grpc_ = first.http_url.rsplit(":", 1)[1], first.grpc_target.rsplit(":", 1)[1]
        for workers in ("2", "1"):
            second = subprocess.run(
                [sys.executable, "-m", "levy", "serve", "--workers", workers, "--database-url",
                 f"sqlite+aiosqlite:///{tmp_path}/second.db", "--grpc-address", f"127.0.0.1:{grpc_}",
                 "--http-address", f"127.0.0.1:{http}"],
                check=False, env=levy_env(), capture_output=True, text=True, cwd=ROOT, timeout=90)
            out = second.stdout + second.stderr
            assert second.returncode == 1, out
            assert "address already in use" in out.lower(), out
            assert "serving" not in second.stdout, out
        # Only the first server's workers answer on the port.
        pids = {httpx.Client().get(first.http_url + "/healthz").headers["x-levy-worker"] for _ in range(12)}
        assert pids and str(first.proc.pid) not in pids and len(pids) <= 2
    finally:
        assert first.stop() == 0, first.log()


def test_a_server_starts_again_on_the_ports_of_one_stopped(tmp_path: Path) -> None:
    # The check does not mistake a stopped server's connections (TIME_WAIT) for a listener.
    first = start_server(f"sqlite+aiosqlite:///{tmp_path}/levy.db", tmp_path, args=["--workers", "2"])
    for _ in range(5):
        httpx.get(first.http_url + "/healthz")
    ports = (int(first.http_url.rsplit(":", 1)[1]), int(first.grpc_target.rsplit(":", 1)[1]))
    assert first.stop() == 0
    (tmp_path / "again").mkdir()
    again = start_server(f"sqlite+aiosqlite:///{tmp_path}/levy.db", tmp_path / "again", args=["--workers", "2"],
                         ports=ports)
    assert again.stop() == 0, again.log()
