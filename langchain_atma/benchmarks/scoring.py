"""Deterministic LTP answer scorer.

An answer to an LTP probe is correct when it gives the probe's ``target`` value
and does not also give its ``alternate`` value. Text is normalized like
LoCoMo's scorer (lowercase, punctuation and the articles a/an/the removed) and
Porter-stemmed; the comparison is on token sets:

* every target token must appear in the answer, and
* NOT every *distinguishing* alternate token may appear, where the
  distinguishing tokens are the alternate's tokens that are not also target
  tokens.

Edge cases:

* an alternate with no distinguishing tokens (it is the target or a part of
  it, e.g. target ``"Sicilian food"``, alternate ``"food"``) cannot be told
  apart from the target, so only the target rule applies;
* a target with no tokens after normalization (e.g. ``"the"``) can never be
  matched: the answer is scored incorrect (the validators flag such values);
* an empty answer is incorrect.

Example:
    >>> ltp_answer_correct("Corisande lives in Seattle now.", "Seattle", "Boston")
    True
    >>> ltp_answer_correct("She moved from Boston to Seattle.", "Seattle", "Boston")
    False
"""

from __future__ import annotations

from langchain_atma.benchmarks.locomo import answer_tokens

__all__ = ["ltp_answer_correct"]


def ltp_answer_correct(answer: str, target: str, alternate: str) -> bool:
    """Whether ``answer`` gives ``target`` and not ``alternate`` (see module doc).

    Args:
        answer: the model's final answer.
        target: the value of the requested state.
        alternate: the value of the other state.
    """
    target_tokens = set(answer_tokens(target))
    if not target_tokens:
        return False
    answer_set = set(answer_tokens(answer))
    if not target_tokens <= answer_set:
        return False
    distinguishing = set(answer_tokens(alternate)) - target_tokens
    if not distinguishing:
        return True
    return not distinguishing <= answer_set
