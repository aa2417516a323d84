"""The TypeScript webhook receiver example (clients/typescript/src/webhook-receiver.ts, issue 35)
receiving real deliveries from a real Levy server on SQLite and PostgreSQL: the endpoint is
created through the API, the receiver (Node, compiled with tsc --strict) verifies each
delivery's signature with the `standardwebhooks` npm package and reports it on stdout.

A customer created is delivered and reported verified with its id; a request signed with
another secret is answered 400 and reported unverified; a replay through the API arrives with
the same event id and is reported as a duplicate; Levy's delivery log shows what the receiver
answered. The npm project is installed and built by tests/test_typescript_client.py's fixture
(skipped only without node/npm or the npm registry, failing instead in CI)."""

from __future__ import annotations

import base64
import json
import os
import queue
import subprocess
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from levyserver import LevyServer, create_tenant, free_port, own_server
from standardwebhooks import Webhook
from test_typescript_client import node_client  # noqa: F401 (the fixture that installs and builds)
from webhook_receiver import FAST


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def hooks_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LevyServer]:
    with own_server(request.param, tmp_path_factory.mktemp("tswebhook"), FAST, timeout=180) as srv:
        yield srv


class NodeReceiver:
    """The example running under Node; its stdout lines as parsed JSON, in order."""

    def __init__(self, script: Path, secret: str, port: int) -> None:
        self.proc = subprocess.Popen(["node", str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     env={**os.environ, "LEVY_WEBHOOK_SECRET": secret, "PORT": str(port)})
        self.lines: queue.Queue[dict[str, Any]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(json.loads(line))

    def next(self, timeout: float = 30) -> dict[str, Any]:
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            self.proc.kill()
            raise AssertionError(f"the receiver reported nothing in {timeout}s: {self.proc.stderr.read()}") from None

    def stop(self) -> None:
        self.proc.terminate()
        assert self.proc.wait(timeout=10) == 0, self.proc.stderr.read() if self.proc.stderr else ""


def test_the_node_receiver_verifies_a_real_delivery(node_client: Path, hooks_server: LevyServer) -> None:  # noqa: F811
    tenant = create_tenant(hooks_server.database_url)
    port = free_port()
    url = f"http://127.0.0.1:{port}/levy-events"
    with httpx.Client(base_url=hooks_server.http_url, headers={"X-API-Key": tenant.admin_key}, timeout=30) as api:
        r = api.post("/webhook-endpoints", json={"url": url, "enabled_events": ["customer.created"]})
        assert r.status_code == 201, r.text
        endpoint = r.json()
        rx = NodeReceiver(node_client.parent / "webhook-receiver.js", endpoint["secret"], port)
        try:
            assert rx.next() == {"listening": port}
            r = api.post("/customers", json={"source_id": "ts-hook", "name": "Ada from Levy"})
            assert r.status_code == 201, r.text
            made = r.json()
            got = rx.next()
            assert got["verified"] is True and got["duplicate"] is False
            assert (got["type"], got["object_id"]) == ("customer.created", made["id"])
            assert got["id"].startswith("evt_")

            # Signed with another secret: refused with 400, reported as not verified.
            forged = Webhook("whsec_" + base64.b64encode(b"k" * 32).decode())
            body = json.dumps({"id": got["id"], "type": "customer.created"})
            headers = {"webhook-id": got["id"], "webhook-timestamp": str(int(time.time())),
                       "webhook-signature": forged.sign(got["id"], datetime.now(UTC), body),
                       "content-type": "application/json"}
            assert httpx.post(url, content=body, headers=headers).status_code == 400
            assert rx.next() == {"verified": False, "error": "No matching signature found"}

            # Levy logged the receiver's answer; a replay sends the same event again, seen as a duplicate.
            deadline = time.monotonic() + 30
            while True:
                (delivery,) = api.get(f"/webhook-endpoints/{endpoint['id']}/deliveries").json()["data"]
                if delivery["status"] == "succeeded" or time.monotonic() > deadline:
                    break
                time.sleep(0.1)
            assert (delivery["status"], delivery["event_id"]) == ("succeeded", got["id"])
            assert [(a["status_code"], a["response_excerpt"]) for a in delivery["attempts"]] == [(200, "ok")]
            r = api.post(f"/webhook-endpoints/{endpoint['id']}/deliveries/{delivery['id']}/replay")
            assert r.status_code == 200, r.text
            again = rx.next()
            assert (again["verified"], again["id"], again["duplicate"]) == (True, got["id"], True)
        finally:
            rx.stop()
