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
        "profile", "seed", "expand", "rank", "serialize", "answer"}
    assert set(graphs["atma_agent"].graph.get_graph().nodes) >= {
        "remember", "recall", "agent", "tools"}
    assert type(graphs["atma_agent"].model).__name__ == "OfflineMemoryEchoModel"


def test_the_graphs_run_end_to_end_offline(graphs):
    write = graphs["atma_write"].graph
    out = write.invoke({"event": {"text": "I live in Lisbon.", "speaker": "me",
                                  "timestamp": "2023-01-01", "event_id": "g1"}})
    assert out["result"].record.namespace == "studio"
    assert [e["level"] for e in out["trace"]] == ["bank"] * len(out["trace"])
    out2 = write.invoke({"namespace": "studio",
                         "record": {"content": "I moved to Porto in May.",
                                    "time": "2023-05-20"}})
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
        assert attr == "graph"
    validate = pytest.importorskip("langgraph_cli.config").validate_config_file
    validated = validate(config_path)
    assert set(validated["graphs"]) == set(GRAPH_FILES)
