from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest
from langgraph.graph.state import CompiledStateGraph

ROOT = Path(__file__).resolve().parents[2]
GRAPH_FILES = {
    "atma_write": ROOT / "graphs" / "write_graph.py",
    "atma_read": ROOT / "graphs" / "read_graph.py",
    "atma_agent": ROOT / "graphs" / "agent.py",
}


@pytest.fixture(scope="module")
def graphs(tmp_path_factory, minilm) -> dict[str, ModuleType]:
    """Import every graphs/ module offline, on a bank under a temporary directory."""
    bank_dir = tmp_path_factory.mktemp("graphs_bank")
    mp = pytest.MonkeyPatch()
    mp.chdir(bank_dir)  # no ./atma.toml is picked up
    mp.setenv("ATMA_PATH", str(bank_dir / "bank"))
    mp.setenv("ATMA_NAMESPACE", "studio")
    for var in ("ATMA_CHROMA_URL", "ATMA_OLLAMA_BASE_URL", "ATMA_CONFIG", "ATMA_COLLECTION"):
        mp.delenv(var, raising=False)
    mods = {}
    try:
        for name, path in GRAPH_FILES.items():
            spec = importlib.util.spec_from_file_location(f"_atma_graphs_{name}", path)
            assert spec is not None and spec.loader is not None
            mod = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = mod
            spec.loader.exec_module(mod)
            mods[name] = mod
        yield mods
    finally:
        mp.undo()


def test_each_module_exposes_a_compiled_graph(graphs):
    for mod in graphs.values():
        assert isinstance(mod.graph, CompiledStateGraph)
    assert set(graphs["atma_read"].graph.get_graph().nodes) >= {
        "profile",
        "seed",
        "expand",
        "rank",
        "serialize",
        "answer",
    }
    assert set(graphs["atma_agent"].graph.get_graph().nodes) >= {
        "remember",
        "recall",
        "agent",
        "tools",
    }
    assert type(graphs["atma_agent"].model).__name__ == "OfflineMemoryEchoModel"


def test_the_graphs_run_end_to_end_offline(graphs):
    write = graphs["atma_write"].graph
    out = write.invoke(
        {
            "event": {
                "text": "I live in Lisbon.",
                "speaker": "me",
                "timestamp": "2023-01-01",
                "event_id": "g1",
            }
        }
    )
    assert out["result"].record.namespace == "studio"
    assert [e["level"] for e in out["trace"]] == ["bank"] * len(out["trace"])
    out2 = write.invoke(
        {
            "namespace": "studio",
            "record": {"content": "I moved to Porto in May.", "time": "2023-05-20"},
        }
    )
    assert out2["result"].record.content == "I moved to Porto in May."

    read = graphs["atma_read"].graph.invoke({"question": "Where do I live now?"})
    assert read["namespace"] == "studio"
    assert read["answer"].status == "answered"
    assert "current memory" in read["serialized"]

    agent = graphs["atma_agent"].graph.invoke({"messages": [("user", "Where do I live?")]})
    assert agent["messages"][-1].content.startswith("From memory (")


def test_write_graph_rejects_an_empty_input(graphs):
    from langchain_atma.errors import InvalidRecordError

    with pytest.raises(InvalidRecordError, match="event"):
        graphs["atma_write"].graph.invoke({"namespace": "studio"})


def test_langgraph_json_is_valid():
    config_path = ROOT / "langgraph.json"
    raw = json.loads(config_path.read_text(encoding="utf-8"))
    assert raw["dependencies"] == ["."]
    for name, spec in raw["graphs"].items():
        file, _, attr = spec.partition(":")
        assert (ROOT / file).resolve() == GRAPH_FILES[name].resolve()
        assert attr == "make_graph"
    validate = pytest.importorskip("langgraph_cli.config").validate_config_file
    validated = validate(config_path)
    assert set(validated["graphs"]) == set(GRAPH_FILES)


def test_every_langgraph_json_graph_has_input_and_output_json_schemas(graphs):
    """Studio builds its input form from these; TypedDicts from typing fail on 3.11."""
    config = json.loads((ROOT / "langgraph.json").read_text(encoding="utf-8"))
    assert set(config["graphs"]) == set(GRAPH_FILES)
    expected_inputs = {
        "atma_write": {"namespace", "event", "record"},
        "atma_read": {"question", "namespace"},
        "atma_agent": {"messages"},
    }
    for name, mod in graphs.items():
        schema_in = mod.graph.get_input_jsonschema()
        schema_out = mod.graph.get_output_jsonschema()
        assert expected_inputs[name] <= set(schema_in["properties"]), name
        assert schema_out["properties"], name
        json.dumps(schema_in)
        json.dumps(schema_out)


_UNDER_BLOCKBUSTER = """
import asyncio, importlib.util, sys
from blockbuster import blockbuster_ctx

mods = {}
for name in ("write_graph", "read_graph", "agent"):
    spec = importlib.util.spec_from_file_location(name, f"graphs/{name}.py")
    mods[name] = sys.modules[name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mods[name])

async def load():  # as the server does, on its event loop, under blockbuster
    with blockbuster_ctx():
        return {name: await mod.make_graph() for name, mod in mods.items()}

graphs = asyncio.run(load())

async def main():
    # as `langgraph dev` runs them: any blocking call on the event loop raises
    with blockbuster_ctx():
        for i, text in enumerate(["I keep bees on the roof.", "Sold the hives in spring."]):
            out = await graphs["write_graph"].ainvoke(
                {"event": {"text": text, "speaker": "me", "timestamp": f"2023-0{i + 1}-01"}})
            assert out["result"].record.content == text
        read = await graphs["read_graph"].ainvoke({"question": "Do I keep bees now?"})
        assert read["answer"].status == "answered", read["answer"]
        agent = await graphs["agent"].ainvoke({"messages": [("user", "Any bees?")]})
        assert agent["messages"][-1].content
    print("NO BLOCKING CALL")

asyncio.run(main())
# What is checked is the event loop, not interpreter teardown: after blockbuster has
# patched and restored the io functions, CPython 3.11 can crash while finalizing them
# (a TextIOWrapper freed from a function's closure; seen only without
# PYTHONUNBUFFERED), so the process ends here, its output flushed.
sys.stdout.flush()
import os
os._exit(0)
"""


def test_async_graphs_never_block_the_event_loop_on_a_fresh_process(tmp_path):
    """A fresh `langgraph dev` server: nothing loaded yet, blockbuster on (issue 25, bug 1)."""
    import os
    import subprocess

    env = {k: v for k, v in os.environ.items() if not k.startswith("ATMA_")}
    env.update(
        {
            "ATMA_PATH": str(tmp_path / "bank"),
            "ATMA_NAMESPACE": "studio",
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "OMP_NUM_THREADS": "1",
            "PYTHONPATH": str(ROOT),
        }
    )
    proc = subprocess.run(
        [sys.executable, "-c", _UNDER_BLOCKBUSTER],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "NO BLOCKING CALL" in proc.stdout


def test_graph_outputs_carry_no_vectors(graphs):
    out = graphs["atma_write"].graph.invoke(
        {"event": {"text": "Rowing on Sundays.", "speaker": "me", "timestamp": "2023-02-01"}}
    )
    assert "embedding" not in out and out["result"] is not None
    assert "embedding" not in graphs["atma_write"].graph.get_output_jsonschema()["properties"]


@pytest.mark.filterwarnings("ignore:A test tried to use socket")
def test_importing_the_server_graphs_builds_nothing(tmp_path, monkeypatch):
    """A bank is opened when the server asks for the graph: an import never fails on it."""
    import asyncio

    from langchain_atma.errors import HostUnavailableError

    monkeypatch.setenv("ATMA_CHROMA_URL", "http://127.0.0.1:9")  # nothing listens (no sockets)
    monkeypatch.chdir(tmp_path)
    config = json.loads((ROOT / "langgraph.json").read_text(encoding="utf-8"))
    for name, target in config["graphs"].items():
        path, attr = target.split(":")
        spec = importlib.util.spec_from_file_location(f"_lazy_{name}", ROOT / path)
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod
        spec.loader.exec_module(mod)  # no bank, no model, no connection
        assert attr == "make_graph" and callable(mod.make_graph)
        with pytest.raises(HostUnavailableError):
            asyncio.run(mod.make_graph())
    assert not list(tmp_path.iterdir())
