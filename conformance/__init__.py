"""Development support shared by the tests and the scripts (not part of the library).

``opinfo_support`` holds sample calls of every torch spelling symscalar implements; the
conformance tests and ``scripts/gen_op_table.py`` both read them, so they live here rather
than in ``tests/`` (a script must not import the test suite).
"""
