"""State-aware memory for LangChain v1 agents (``langchain.agents.create_agent``).

:class:`AtmaMemoryMiddleware` gives any agent built with ``create_agent`` the A-TMA
memory of a user:

* **before the agent runs** it recalls the labelled evidence packet for the
  latest user message (:class:`~langchain_atma.retrievers.AtmaRetriever`: current,
  historical and transition memories, each with its state label) and keeps it in a
  private state key;
* **around every model call** it appends the packet, fenced as data, to the
  system message (the message history itself is not changed);
* **after the agent ran** it writes the user's message through the A-TMA write
  path (:func:`~langchain_atma.bank.write_graph.ingest_events`), so a changed fact
  supersedes the old one, if the write policy keeps it: by default the user's own
  statements about themselves (:func:`langchain_atma.text.about_self`), never
  questions, requests, chit-chat or the assistant's replies.

The namespace of a call (one per user) is, first found: ``runtime.context.user_id``
(a ``context_schema`` dataclass, TypedDict or pydantic model with a ``user_id``),
``config["configurable"]["user_id"]`` or ``["namespace"]``, the middleware's
``namespace``. The message id is the event id, so replaying a thread never writes a
turn twice. Every bank and retrieval call runs off the event loop in the async hooks,
and shows as ``atma.bank.*`` / ``atma.retrieval.*`` runs in a trace.

Needs ``langchain>=1.0`` (``pip install "langchain-atma[agents]"``).

Example:
    >>> from langchain.agents import create_agent
    >>> from langchain_core.embeddings import DeterministicFakeEmbedding
    >>> from langchain_atma.agent import OfflineMemoryEchoModel
    >>> from langchain_atma.bank import StateBank
    >>> bank = StateBank.in_memory(embeddings=DeterministicFakeEmbedding(size=16))
    >>> agent = create_agent(OfflineMemoryEchoModel(),
    ...                      middleware=[AtmaMemoryMiddleware(bank, namespace="ann")])
    >>> _ = agent.invoke({"messages": [("user", "I live in Lisbon.")]})
    >>> agent.invoke({"messages": [("user", "Where do I live?")]})["messages"][-1].content
    'From memory (current memory): I live in Lisbon.'
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Annotated, Any

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest
from langchain.agents.middleware.types import ModelResponse, PrivateStateAttr
from langchain_core.messages import AnyMessage, HumanMessage, SystemMessage
from langgraph.config import get_config
from langgraph.runtime import Runtime
from typing_extensions import NotRequired

from langchain_atma.agent import (
    MEMORY_PROMPT,
    check_write_options,
    fenced_memories,
    recall_packet,
    resolve_namespace,
)
from langchain_atma.bank.bank import StateBank
from langchain_atma.bank.write_graph import MemoryEvent, ingest_events
from langchain_atma.qa.serializer import EMPTY_PACKET_TEXT
from langchain_atma.records import validate_namespace
from langchain_atma.retrieval.packets import DEFAULT_K
from langchain_atma.text import about_self

__all__ = ["AtmaMemoryMiddleware", "AtmaMemoryState"]


class AtmaMemoryState(AgentState[Any]):
    """The agent state plus the middleware's private recall (never in the I/O schema)."""

    atma_memory: NotRequired[Annotated[str, PrivateStateAttr]]
    """The serialized, labelled packet recalled for the latest user message."""
    atma_namespace: NotRequired[Annotated[str, PrivateStateAttr]]
    """The namespace of this run."""


class AtmaMemoryMiddleware(AgentMiddleware[AtmaMemoryState, Any]):
    """Recall before the model, remember after the turn: A-TMA memory for ``create_agent``.

    Args:
        bank: the state bank (shared by every user; namespaces never cross).
        namespace: the default namespace when the run names none.
        k: memories recalled per turn.
        speaker: the speaker recorded for the user's messages (default: the
            message's ``name``, else ``"user"``).
        remember: the write policy: a function of the message text deciding whether
            it is stored (default :func:`~langchain_atma.text.about_self`); ``None``
            stores nothing.
        write_options: options of ``ingest_events`` (``judge``, ``gate``, ...).
        instructions: the text put before the packet in the system message.

    Raises:
        ConfigError: for an unknown write option.
        NamespaceError: for a malformed default namespace.
    """

    state_schema = AtmaMemoryState

    def __init__(
        self,
        bank: StateBank,
        *,
        namespace: str | None = None,
        k: int = DEFAULT_K,
        speaker: str = "user",
        remember: Callable[[str], bool] | None = about_self,
        write_options: Mapping[str, Any] | None = None,
        instructions: str = MEMORY_PROMPT,
    ) -> None:
        super().__init__()
        if namespace is not None:
            validate_namespace(namespace)
        self.bank = bank
        self.namespace = namespace
        self.k = k
        self.speaker = speaker
        self.remember = remember
        self.write_options = check_write_options(write_options)
        self.instructions = instructions
        self.tools = []

    # ------------------------------------------------------------------ namespace
    def namespace_of(self, runtime: Runtime[Any] | None) -> str:
        """The namespace of the current run (see the module docstring).

        Raises:
            NamespaceError: no namespace anywhere, or a malformed one.
        """
        return resolve_namespace(
            _config(), self.namespace, context=getattr(runtime, "context", None)
        )

    # ------------------------------------------------------------------ hooks
    def before_agent(self, state: AtmaMemoryState, runtime: Runtime[Any]) -> dict[str, Any]:
        """Recall the packet for the latest user message."""
        ns = self.namespace_of(runtime)
        msg = _latest_human(state["messages"])
        text = msg.text.strip() if msg is not None else ""
        if not text:
            return {"atma_memory": EMPTY_PACKET_TEXT, "atma_namespace": ns}
        packet, _ids = recall_packet(self.bank, ns, text, k=self.k, config=_config())
        return {"atma_memory": packet, "atma_namespace": ns}

    async def abefore_agent(self, state: AtmaMemoryState, runtime: Runtime[Any]) -> dict[str, Any]:
        """Async :meth:`before_agent` (bank and model calls in a worker thread)."""
        return await asyncio.to_thread(self.before_agent, state, runtime)

    def wrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]
    ) -> Any:
        """Append the recalled packet to the system message of every model call."""
        return handler(self._with_memories(request))

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> Any:
        """Async :meth:`wrap_model_call`."""
        return await handler(self._with_memories(request))

    def after_agent(self, state: AtmaMemoryState, runtime: Runtime[Any]) -> dict[str, Any]:
        """Write the latest user message if the write policy keeps it."""
        msg = _latest_human(state["messages"])
        if msg is None or self.remember is None:
            return {}
        text = msg.text.strip()
        if not text or not self.remember(text):
            return {}
        ns = state.get("atma_namespace") or self.namespace_of(runtime)
        event = MemoryEvent(
            text=text,
            speaker=msg.name or self.speaker,
            event_id=f"msg:{msg.id}" if msg.id else None,
        )
        ingest_events(self.bank, [event], namespace=ns, config=_config(), **self.write_options)
        return {}

    async def aafter_agent(self, state: AtmaMemoryState, runtime: Runtime[Any]) -> dict[str, Any]:
        """Async :meth:`after_agent` (the write runs in a worker thread)."""
        return await asyncio.to_thread(self.after_agent, state, runtime)

    # ------------------------------------------------------------------ helpers
    def _with_memories(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        packet = str(request.state.get("atma_memory") or EMPTY_PACKET_TEXT)
        base = request.system_message.text if request.system_message is not None else ""
        head = f"{base}\n\n{self.instructions}" if base else self.instructions
        return request.override(
            system_message=SystemMessage(content=f"{head}\n\n{fenced_memories(packet)}")
        )


def _latest_human(messages: Sequence[AnyMessage]) -> HumanMessage | None:
    return next((m for m in reversed(messages) if isinstance(m, HumanMessage)), None)


def _config() -> Any:
    try:
        return get_config()
    except RuntimeError:
        return None
