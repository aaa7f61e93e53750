"""A judge for tests: verdicts from a script, so write-path mechanics never depend on a model."""

from __future__ import annotations

from langchain_atma.bank.judge import BaseJudge, JudgeInput, SuggestedLink, Verdict
from langchain_atma.records import LinkType

_TYPES = {
    "supersede": "temporal",
    "transition": "temporal",
    "coexist": "scope",
    "scoped_exception": "scope",
    "noop": "duplicate",
    "keep_both": "none",
}
_LINKS = {
    "supersede": LinkType.SUPERSEDES,
    "transition": LinkType.EVOLVES_FROM,
    "coexist": LinkType.COEXISTS,
    "scoped_exception": LinkType.SCOPED_EXCEPTION,
}


class ScriptedJudge(BaseJudge):
    """Answers ``script[(old text, new text)]`` or ``script[new text]``; else ``keep_both``.

    A script value is an action, or ``(action, confidence)``, or
    ``(action, confidence, slot)``. ``seen`` lists every judged pair.
    """

    def __init__(self, script: dict[object, object] | None = None) -> None:
        self.script = dict(script or {})
        self.seen: list[tuple[str, str]] = []

    def judge(self, inp: JudgeInput) -> Verdict:
        pair = (inp.old.content, inp.new.content)
        self.seen.append(pair)
        raw = self.script.get(pair, self.script.get(inp.new.content, "keep_both"))
        action, conf, slot = (
            (raw, 0.9, None) if isinstance(raw, str) else ((*raw, None) if len(raw) == 2 else raw)
        )  # type: ignore[arg-type]
        links = (
            []
            if action not in _LINKS
            else [SuggestedLink(type=_LINKS[action], target_id=inp.old.id)]
        )
        return Verdict(
            conflict=action not in ("keep_both", "noop"),
            conflict_type=_TYPES[action],
            action=action,
            confidence=conf,
            slot=slot,
            suggested_links=links,
            reason="scripted",
        )
