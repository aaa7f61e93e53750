"""Failure attribution: which level of the read path lost a question.

The trace T_q makes a wrong answer attributable to one level (paper, sections
4.4 and A.9). :func:`attribute_failure` applies the rules upstream first:

1. the answer is right -> ``"correct"``;
2. the bank holds no record for the target state (``target_id`` is None) ->
   ``"bank"``;
3. the target record is not in the candidate pool C_q -> ``"candidates"``
   (candidate construction: seeds and hops never reached it);
4. it is in the pool but not in the packet E_q -> ``"ranking"``;
5. it is in the packet but labelled with the wrong state role
   (``expected_label`` given and different) -> ``"bank"`` (labels are a
   projection of the bank's status and links, so a wrong role is a bank error);
6. it is in the packet behind the record of the other state
   (``alternate_id``, e.g. the old value for a current question) ->
   ``"ranking"``;
7. otherwise the evidence was there, foregrounded and labelled, and the answer
   model resolved the wrong state -> ``"qa"``.

Example:
    >>> attribute_failure(target_id="new", pool_ids=["old", "new"], packet_ids=["old", "new"],
    ...                   packet_labels=["historical memory", "current memory"],
    ...                   answer_correct=False, alternate_id="old")
    'ranking'
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

from langchain_atma.errors import InvalidQueryError
from langchain_atma.retrieval.packets import EvidenceLabel

__all__ = ["FailureLevel", "attribute_failure"]

FailureLevel = Literal["correct", "bank", "candidates", "ranking", "qa"]


def _label_value(label: object) -> str | None:
    if label is None:
        return None
    if isinstance(label, EvidenceLabel):
        return label.value
    return str(label).strip().lower()


def _labels_by_id(
    packet_ids: Sequence[str],
    packet_labels: Mapping[str, EvidenceLabel | str | None]
    | Sequence[EvidenceLabel | str | None]
    | None,
) -> dict[str, str | None]:
    if packet_labels is None:
        return {}
    if isinstance(packet_labels, Mapping):
        return {str(k): _label_value(v) for k, v in packet_labels.items()}
    if isinstance(packet_labels, str):
        raise InvalidQueryError("packet_labels must be a list or a mapping, not a string")
    labels = list(packet_labels)
    if len(labels) != len(packet_ids):
        raise InvalidQueryError(
            f"packet_labels has {len(labels)} entries for {len(packet_ids)} packet ids"
        )
    return {pid: _label_value(lab) for pid, lab in zip(packet_ids, labels, strict=True)}


def attribute_failure(
    *,
    target_id: str | None,
    pool_ids: Iterable[str],
    packet_ids: Sequence[str],
    packet_labels: Mapping[str, EvidenceLabel | str | None]
    | Sequence[EvidenceLabel | str | None]
    | None,
    answer_correct: bool,
    alternate_id: str | None = None,
    expected_label: EvidenceLabel | str | None = None,
) -> FailureLevel:
    """Attribute one answer to a level: correct, bank, candidates, ranking or qa.

    Args:
        target_id: id of the record holding the requested state, or None when
            the bank has no such record.
        pool_ids: ids of the candidate pool C_q.
        packet_ids: ids of the packet E_q, in packet order.
        packet_labels: labels of the packet rows, aligned with ``packet_ids``
            or as an ``{id: label}`` mapping.
        answer_correct: whether the final answer was judged correct.
        alternate_id: id of the record of the other state (the competing old
            or current value), if known.
        expected_label: the label the target should carry (e.g.
            ``EvidenceLabel.CURRENT`` for a current question), if checked
            (skipped when no label is given for the target).

    Raises:
        InvalidQueryError: when ``packet_labels`` is a list of the wrong length.
    """
    if answer_correct:
        return "correct"
    if not target_id:
        return "bank"
    if target_id not in set(pool_ids):
        return "candidates"
    packet = list(packet_ids)
    if target_id not in packet:
        return "ranking"
    labels = _labels_by_id(packet, packet_labels)
    want = _label_value(expected_label)
    if want is not None and target_id in labels and labels[target_id] != want:
        return "bank"
    if (
        alternate_id
        and alternate_id in packet
        and (packet.index(alternate_id) < packet.index(target_id))
    ):
        return "ranking"
    return "qa"
