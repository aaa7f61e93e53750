"""AtmaStore as the LangGraph store: updates supersede, history is kept.

A node receives the store (``store`` keyword) and saves the user's profile
under one key. Each new value supersedes the previous one in the bank, so
``get`` returns the live value while ``history`` and
``search(..., filter={"atma_include_history": True})`` still show old ones.

Run: ``python examples/store_in_langgraph.py``
"""

from __future__ import annotations

import tempfile
from typing import Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore

from langchain_atma.bank import StateBank
from langchain_atma.store import HISTORY_FILTER_KEY, AtmaStore


class State(TypedDict, total=False):
    user: str
    city: str
    previous: str | None


def save_city(state: State, *, store: BaseStore) -> dict[str, Any]:
    ns = ("profiles", state["user"])
    old = store.get(ns, "home")
    store.put(ns, "home", {"city": state["city"]})
    return {"previous": old.value["city"] if old else None}


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="atma-store-") as bank_dir:
        bank = StateBank(path=bank_dir)
        store = AtmaStore(bank)
        builder = StateGraph(State)
        builder.add_node("save_city", save_city)
        builder.add_edge(START, "save_city")
        builder.add_edge("save_city", END)
        graph = builder.compile(store=store)

        for city in ("Boston", "Seattle", "Chicago"):
            out = graph.invoke({"user": "ann", "city": city})
            print(f"saved {city} (previous: {out['previous']})")

        live = store.get(("profiles", "ann"), "home")
        print(f"live value: {live.value if live else None}")
        print(
            "history:",
            [(h.value["city"], h.status) for h in store.history(("profiles", "ann"), "home")],
        )
        hits = store.search(("profiles",), query="which city", filter={HISTORY_FILTER_KEY: True})
        # AtmaStore returns AtmaSearchItem objects: a SearchItem plus status / record_id
        print(
            "search with history:",
            [(h.value["city"], getattr(h, "status", "?"), round(h.score or 0.0, 3)) for h in hits],
        )
        print("namespaces:", store.list_namespaces())
        problems = bank.verify(store.bank_namespace(("profiles", "ann")))
        print(f"bank invariants: {'ok' if not problems else problems}")


if __name__ == "__main__":
    main()
