"""One bounded model call for the three LLM parts (judge, controller, answerer).

A sync call runs in a worker thread of one shared pool so that it can be abandoned
after its timeout. The pool is a ``ContextThreadPoolExecutor``: the worker carries the
caller's context, so the model's run nests under the calling node's run in a trace
(``atma.bank.judge``, ``atma.retrieval.rank``, ``atma.qa.answer``) exactly as the
async path does.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from typing import Any

from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import ContextThreadPoolExecutor

_POOL_LOCK = threading.Lock()
_POOL: ContextThreadPoolExecutor | None = None


def _pool() -> ContextThreadPoolExecutor:
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ContextThreadPoolExecutor(max_workers=8, thread_name_prefix="atma-llm")
        return _POOL


def invoke_bounded(
    runnable: Runnable[Any, Any],
    value: Any,
    *,
    timeout_s: float,
    config: RunnableConfig | None = None,
) -> Any:
    """``runnable.invoke(value, config)`` abandoned after ``timeout_s`` seconds.

    Raises:
        TimeoutError: no result within ``timeout_s`` (the worker is left to finish
            on its own; its result is dropped).
        Exception: whatever the runnable raised.
    """
    future = _pool().submit(runnable.invoke, value, config)
    try:
        return future.result(timeout=timeout_s)
    except concurrent.futures.TimeoutError as exc:  # an alias of TimeoutError on 3.11+
        future.cancel()
        raise TimeoutError(f"no model output within {timeout_s:g} s") from exc


async def ainvoke_bounded(
    runnable: Runnable[Any, Any],
    value: Any,
    *,
    timeout_s: float,
    config: RunnableConfig | None = None,
) -> Any:
    """``await runnable.ainvoke(value, config)``, cancelled after ``timeout_s`` seconds.

    Raises:
        TimeoutError: no result within ``timeout_s``.
        Exception: whatever the runnable raised.
    """
    try:
        return await asyncio.wait_for(runnable.ainvoke(value, config), timeout=timeout_s)
    except asyncio.TimeoutError as exc:  # not TimeoutError itself before 3.11
        raise TimeoutError(f"no model output within {timeout_s:g} s") from exc
