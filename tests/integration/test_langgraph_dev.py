"""The graphs of langgraph.json through `langgraph dev`'s HTTP API, on a fresh server.

The in-memory API server (langgraph-cli[inmem]) runs them as LangGraph Studio does:
the graph factories are called on its event loop and blockbuster turns any blocking
call into an error. Nothing leaves 127.0.0.1; no LLM is used.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration
pytest.importorskip("langgraph_api")
sdk = pytest.importorskip("langgraph_sdk")

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    work = tmp_path_factory.mktemp("lgdev")
    shutil.copy(ROOT / "langgraph.json", work / "langgraph.json")
    shutil.copytree(ROOT / "graphs", work / "graphs")
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ATMA_", "LANGSMITH_"))}
    env.update(
        {
            "ATMA_PATH": str(work / "bank"),
            "ATMA_NAMESPACE": "studio",
            "LANGSMITH_TRACING": "false",
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "OMP_NUM_THREADS": "1",
        }
    )
    cli = Path(sys.executable).with_name("langgraph")
    log = (work / "server.log").open("w")
    proc = subprocess.Popen(
        [str(cli), "dev", "--no-browser", "--no-reload", "--port", str(port)],
        cwd=work,
        env=env,
        stdout=log,
        stderr=log,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(240):
            try:
                urllib.request.urlopen(f"{url}/ok", timeout=1)
                break
            except OSError:
                if proc.poll() is not None:
                    pytest.fail((work / "server.log").read_text()[-3000:])
                time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()
        assert "BlockingError" not in (work / "server.log").read_text()


def test_write_then_read_and_the_agent_on_a_fresh_server(server: str) -> None:
    client = sdk.get_sync_client(url=server)
    out = client.runs.wait(
        None,
        "atma_write",
        input={
            "event": {
                "text": "I keep bees on my roof terrace.",
                "speaker": "me",
                "timestamp": "2023-01-01",
            }
        },
    )
    assert out["record"]["content"] == "I keep bees on my roof terrace."
    assert "embedding" not in out and [e["level"] for e in out["trace"]][0] == "bank"
    read = client.runs.wait(None, "atma_read", input={"question": "Do I keep bees?"})
    assert read["answer"]["status"] == "answered"
    assert "bees" in read["answer"]["answer"]
    agent = client.runs.wait(
        None,
        "atma_agent",
        input={"messages": [{"role": "user", "content": "What do I keep on the roof?"}]},
    )
    assert agent["messages"][-1]["content"].startswith("From memory (current memory)")


def test_studio_gets_an_input_schema_for_every_graph(server: str) -> None:
    client = sdk.get_sync_client(url=server)
    for graph_id, field in (
        ("atma_write", "event"),
        ("atma_read", "question"),
        ("atma_agent", "messages"),
    ):
        assistant = client.assistants.search(graph_id=graph_id)[0]
        schemas = client.assistants.get_schemas(assistant["assistant_id"])
        assert field in (schemas["input_schema"] or {}).get("properties", {}), graph_id
