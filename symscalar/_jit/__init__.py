"""The parts of ``symscalar.jit``, one concern per module (``symscalar/jit.py`` is the API).

Imports flow one way: ``params`` (what each parameter is) and ``tree`` (the one pytree walk:
keys, program inputs, outputs) are the base; ``cache`` stores entries; ``backends`` chooses
what compiles a trace; ``compile`` traces a call into an entry; ``dispatch`` generates the
per-call function; ``function`` ties them into a jitted function's state (miss path,
explanations, inspection).
"""
