"""The examples in the engine's docstrings run."""

import doctest

import meeplecam.engine


def test_engine_docstring_examples_run():
    failures, tried = doctest.testmod(meeplecam.engine)
    assert tried > 0
    assert failures == 0
