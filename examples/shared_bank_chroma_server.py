"""One bank shared by several processes through a Chroma server.

Start a server (``chroma run --host 127.0.0.1 --port 8000 --path ./chroma-data``)
and set ``ATMA_CHROMA_URL=http://127.0.0.1:8000``: every process that opens
``StateBank()`` then reads and writes the same collection (the record cache is
off for servers, so each process sees the others' writes).

Without ``ATMA_CHROMA_URL`` the example explains this and uses an embedded bank
in a temporary directory instead (no network). Two ``StateBank`` objects stand
for two processes: a writer (an ingestion worker) and a reader (an agent).

Run: ``python examples/shared_bank_chroma_server.py``
"""

from __future__ import annotations

import os
import tempfile
import uuid

from langchain_atma.bank import StateBank
from langchain_atma.bank.write_graph import ingest_events
from langchain_atma.retrieval.read_graph import ask

EVENTS = [
    {
        "text": "I work as a teacher at a primary school.",
        "timestamp": "2023-01-10",
        "speaker": "Ann",
        "event_id": "e1",
    },
    {
        "text": "I no longer work as a teacher; I now work as a pilot.",
        "timestamp": "2023-08-20",
        "speaker": "Ann",
        "event_id": "e2",
    },
]


def run(writer: StateBank, reader: StateBank) -> None:
    report = ingest_events(writer, EVENTS, namespace="ann")
    print(f"writer: {report.writes} writes, {report.supersessions} supersession(s)")
    res = ask(reader, "ann", "What is my job now?")
    print(f"reader: {res.answer.answer}")
    print(
        f"reader sees {reader.count('ann')} records of 'ann' and "
        f"{reader.count('bob')} of 'bob' (namespaces never cross)"
    )


def main() -> None:
    url = os.environ.get("ATMA_CHROMA_URL")
    if url:
        collection = f"atma_example_{uuid.uuid4().hex[:8]}"
        print(f"using the Chroma server at {url}, collection {collection}")
        writer = StateBank(url=url, collection_name=collection)
        reader = StateBank(url=url, collection_name=collection)
        try:
            run(writer, reader)
        finally:
            writer.host.client.delete_collection(collection)  # type: ignore[attr-defined]
            writer.host.client.delete_collection(f"{collection}__journal")  # type: ignore[attr-defined]
        return
    print(
        "ATMA_CHROMA_URL is not set: using an embedded bank in a temporary directory.\n"
        "To share one bank between processes, run `chroma run --host 127.0.0.1 --port 8000 "
        "--path ./chroma-data` and set ATMA_CHROMA_URL=http://127.0.0.1:8000"
    )
    with tempfile.TemporaryDirectory(prefix="atma-shared-") as bank_dir:
        writer = StateBank(path=bank_dir)
        reader = StateBank(path=bank_dir, record_cache=False)
        run(writer, reader)


if __name__ == "__main__":
    main()
