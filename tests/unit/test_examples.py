"""Every example runs offline as its own process and prints its key lines.

The examples run concurrently (3 at a time: each one imports torch and
sentence-transformers, which dominates its run time). A ``sitecustomize``
module put on the subprocess path blocks every non-unix socket
(pytest-socket's guard), so an example that tried to reach the network fails.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # ~10-20 s of CPU per example (torch + sentence-transformers import)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

EXPECTED: dict[str, list[str]] = {
    "agent_middleware.py": [
        "  agent: From memory (current memory): I no longer work as a teacher; "
        "I now work as a pilot.",
        "stored: [superseded] I work as a teacher at a primary school.",
        "stored: [active] I no longer work as a teacher; I now work as a pilot.",
    ],
    "rag_chain.py": [
        "Answer: From memory (current memory): I no longer work as a teacher; "
        "I now work as a pilot.",
        "Answer: From memory (historical memory): I work as a teacher at a primary school.",
    ],
    "agent_with_checkpointer.py": [
        "[monday] agent: From memory (current memory): I no longer work as a teacher; "
        "I now work as a pilot.",
        "[friday] agent: From memory (historical memory): I work as a teacher",
        "checkpointed messages: monday=6, friday=2",
    ],
    "store_in_langgraph.py": [
        "live value: {'city': 'Chicago'}",
        "history: [('Boston', 'superseded'), ('Seattle', 'superseded'), ('Chicago', 'active')]",
        "bank invariants: ok",
    ],
    "ollama_everywhere.py": [
        "ATMA_OLLAMA_BASE_URL is not set: running offline",
        "A: I now work as a pilot.",
    ],
    "why_was_it_missed.py": [
        "home: linked (supersede/temporal); the old record is superseded",
        "diet: judged_otherwise (keep_both/none); the old record is active",
        "sleep: linked (supersede/value); the old record is superseded",
    ],
    "shared_bank_chroma_server.py": [
        "ATMA_CHROMA_URL is not set: using an embedded bank",
        "reader: I now work as a pilot.",
        "(namespaces never cross)",
    ],
}

_GUARD = """\
from pytest_socket import disable_socket

disable_socket(allow_unix_socket=True)
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, tuple[int, str, float]]:
    guard_dir = tmp_path_factory.mktemp("socket_guard")
    (guard_dir / "sitecustomize.py").write_text(_GUARD, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATMA_") and k != "PYTHONPATH"}
    env.update(
        {
            "PYTHONPATH": os.pathsep.join([str(guard_dir), str(ROOT)]),
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "ANONYMIZED_TELEMETRY": "False",
            "OMP_NUM_THREADS": "1",
            "TOKENIZERS_PARALLELISM": "false",
        }
    )

    def run(name: str) -> tuple[int, str, float]:
        start = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, str(EXAMPLES / name)],
            cwd=tmp_path_factory.mktemp(name.removesuffix(".py")),
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        return proc.returncode, proc.stdout + proc.stderr, time.perf_counter() - start

    with ThreadPoolExecutor(max_workers=3) as pool:
        results = dict(zip(EXPECTED, pool.map(run, EXPECTED), strict=True))
    return results


def test_every_example_is_covered():
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted(EXPECTED)


def test_socket_guard_blocks_network(tmp_path):
    guard = tmp_path / "sitecustomize.py"
    guard.write_text(_GUARD, encoding="utf-8")
    code = "import socket; socket.socket(socket.AF_INET, socket.SOCK_STREAM)"
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode != 0 and "SocketBlockedError" in proc.stderr


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_runs_offline(runs, name):
    code, output, seconds = runs[name]
    assert code == 0, f"{name} failed after {seconds:.1f}s:\n{output[-3000:]}"
    for line in EXPECTED[name]:
        assert line in output, f"{name}: missing {line!r} in:\n{output[-3000:]}"
