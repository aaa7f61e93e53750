"""AtmaRetriever inside an LCEL RAG chain, fully offline.

The retriever returns state-labelled documents (``metadata["label"]`` is
``current memory`` / ``historical memory`` / ...). The chain formats them as
labelled lines inside a ``<memories>`` fence and hands them to a chat model.

Offline, the "model" is ``OfflineMemoryEchoModel`` (no LLM: it echoes the best
labelled line). To use a real model, swap one line::

    from langchain_ollama import ChatOllama
    llm = ChatOllama(model="qwen2.5:3b", base_url="http://127.0.0.1:11434", temperature=0)

Run: ``python examples/rag_chain.py``
"""

from __future__ import annotations

import tempfile

from langchain_core.documents import Document
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnablePassthrough

from langchain_atma.agent import OfflineMemoryEchoModel
from langchain_atma.bank import StateBank
from langchain_atma.bank.write_graph import ingest_events
from langchain_atma.retrievers import AtmaRetriever

EVENTS = [
    {
        "text": "I work as a teacher at a primary school.",
        "timestamp": "2023-01-10",
        "speaker": "Ann",
        "event_id": "e1",
    },
    {
        "text": "I have a dog named Rex.",
        "timestamp": "2023-03-05",
        "speaker": "Ann",
        "event_id": "e2",
    },
    {
        "text": "I no longer work as a teacher; I now work as a pilot.",
        "timestamp": "2023-08-20",
        "speaker": "Ann",
        "event_id": "e3",
    },
]

PROMPT = ChatPromptTemplate.from_messages(
    [
        (
            "system",
            "Answer from the memories. Labels: current memory = true now; historical "
            "memory = no longer true.\n<memories>\n{context}\n</memories>",
        ),
        ("human", "{question}"),
    ]
)


def format_docs(docs: list[Document]) -> str:
    """One labelled line per document, like the A-TMA serializer."""
    return "\n".join(
        f"[{i}] {d.metadata['label']} | {d.metadata['time'][:10]} | {d.page_content}"
        for i, d in enumerate(docs, start=1)
    )


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="atma-rag-") as bank_dir:
        bank = StateBank(path=bank_dir)
        report = ingest_events(bank, EVENTS, namespace="ann")
        print(f"ingested {report.writes} memories, {report.supersessions} supersession(s)")

        retriever = AtmaRetriever(bank=bank, namespace="ann", k=3)
        llm = OfflineMemoryEchoModel()  # swap for ChatOllama(...) to use a real model
        chain = (
            {"context": retriever | format_docs, "question": RunnablePassthrough()}
            | PROMPT
            | llm
            | StrOutputParser()
        )
        for question in ("What is my job now?", "What job did I have before?"):
            docs = retriever.invoke(question)
            print(f"\nQ: {question}")
            for line in format_docs(docs).splitlines():
                print("   ", line)
            print(f"Answer: {chain.invoke(question)}")


if __name__ == "__main__":
    main()
