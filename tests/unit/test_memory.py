from __future__ import annotations

import re

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.fake import FakeListLLM
from langchain_core.messages import SystemMessage

from langchain_atma.bank import StateBank
from langchain_atma.errors import ConfigError, InvalidQueryError, NamespaceError
from langchain_atma.memory import AtmaMemory
from langchain_atma.records import RecordStatus

WRITE = {"use_gate": False}  # judge every live candidate: independent of the gate cap


@pytest.fixture(scope="module")
def bank(minilm):
    return StateBank.in_memory(embeddings=minilm)


def _label_of(text: str, needle: str) -> str | None:
    for line in text.splitlines():
        if needle in line:
            m = re.match(r"\[\d+\] ([a-z ]+) \| ", line)
            return m.group(1) if m else None
    return None


def test_save_context_writes_both_turns_through_the_write_path(bank):
    mem = AtmaMemory(bank=bank, namespace="m-turns", write_options=WRITE)
    mem.save_context({"input": "I adopted a cat named Tom."}, {"output": "Lovely name!"})
    recs = bank.records("m-turns")
    assert [(r.content, r.provenance.speaker) for r in recs] == [
        ("I adopted a cat named Tom.", "Human"),
        ("Lovely name!", "AI"),
    ]
    assert mem.last_report is not None and mem.last_report.writes == 2
    assert mem.memory_variables == ["history"]


def test_changed_fact_is_labelled_current_and_historical(bank):
    mem = AtmaMemory(bank=bank, namespace="m-change", write_options=WRITE, save_ai_turns=False)
    mem.save_context({"input": "I live in Boston."}, {"output": "Nice."})
    mem.save_context({"input": "I moved to Seattle last month."}, {"output": "Exciting!"})
    statuses = {r.content: r.status for r in bank.records("m-change")}
    assert statuses["I live in Boston."] is RecordStatus.SUPERSEDED
    assert statuses["I moved to Seattle last month."] is RecordStatus.ACTIVE
    text = mem.load_memory_variables({"input": "Where do I live now?"})["history"]
    assert _label_of(text, "Seattle") == "current memory"
    assert _label_of(text, "Boston") == "historical memory"
    assert text.index("Seattle") < text.index("Boston")  # the live state comes first


def test_return_messages_gives_one_system_message(bank):
    mem = AtmaMemory(
        bank=bank,
        namespace="m-msgs",
        return_messages=True,
        memory_key="memories",
        write_options=WRITE,
    )
    mem.save_context({"question": "My sister is called Ada."}, {"answer": "Noted."})
    out = mem.load_memory_variables({"question": "What is my sister called?"})
    assert list(out) == ["memories"]
    msgs = out["memories"]
    assert len(msgs) == 1 and isinstance(msgs[0], SystemMessage)
    assert "current memory" in msgs[0].content and "Ada" in msgs[0].content


def test_input_and_output_keys(bank):
    mem = AtmaMemory(
        bank=bank, namespace="m-keys", input_key="q", output_key="a", write_options=WRITE
    )
    mem.save_context({"q": "I play the cello.", "lang": "en"}, {"a": "Great.", "x": "y"})
    assert [r.content for r in bank.records("m-keys")] == ["I play the cello.", "Great."]
    ambiguous = AtmaMemory(bank=bank, namespace="m-keys")
    with pytest.raises(InvalidQueryError, match="input_key"):
        ambiguous.load_memory_variables({"q": "x", "lang": "en"})
    with pytest.raises(InvalidQueryError, match="not found"):
        mem.load_memory_variables({"question": "x"})
    assert mem.load_memory_variables({"q": "   "})["history"] == "(no memories retrieved)"


def test_clear_deletes_every_record_including_history(bank):
    mem = AtmaMemory(bank=bank, namespace="m-clear", write_options=WRITE, save_ai_turns=False)
    other = AtmaMemory(bank=bank, namespace="m-other", write_options=WRITE)
    mem.save_context({"input": "I work at a bakery."}, {"output": "ok"})
    mem.save_context({"input": "I quit the bakery and now work at a bank."}, {"output": "ok"})
    other.save_context({"input": "I like tea."}, {"output": "ok"})
    assert bank.count("m-clear") == 2
    mem.clear()
    assert bank.count("m-clear") == 0
    assert bank.count("m-other") == 2


def test_bad_configuration_raises_library_errors(bank):
    with pytest.raises(NamespaceError):
        AtmaMemory(bank=bank, namespace="not valid!")
    with pytest.raises(InvalidQueryError):
        AtmaMemory(bank=bank, namespace="ok", k=0)
    with pytest.raises(ConfigError, match="write option"):
        AtmaMemory(bank=bank, namespace="ok", write_options={"speed": "fast"})
    with pytest.raises(ConfigError, match="StateBank"):
        AtmaMemory(bank=object(), namespace="ok")


class _Prompts(BaseCallbackHandler):
    def __init__(self) -> None:
        self.prompts: list[str] = []

    def on_llm_start(self, serialized, prompts, **kwargs) -> None:
        self.prompts.extend(prompts)


def test_works_as_the_memory_of_a_classic_chain(bank):
    from langchain_classic.chains import ConversationChain

    mem = AtmaMemory(bank=bank, namespace="m-chain", write_options=WRITE)
    chain = ConversationChain(llm=FakeListLLM(responses=["Hi!", "You have a dog."]), memory=mem)
    seen = _Prompts()
    chain.invoke({"input": "I have a dog named Rex."}, {"callbacks": [seen]})
    out = chain.invoke({"input": "What pet do I have?"}, {"callbacks": [seen]})
    assert out["response"] == "You have a dog."
    assert "current memory" in seen.prompts[1] and "Rex" in seen.prompts[1]
    assert [r.content for r in bank.records("m-chain")][:2] == ["I have a dog named Rex.", "Hi!"]
