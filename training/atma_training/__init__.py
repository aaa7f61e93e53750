"""Corpus, checks and training code for langchain-atma's learned models.

Lives beside the library (``training/``), never in its wheel.
"""
