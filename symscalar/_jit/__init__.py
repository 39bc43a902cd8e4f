"""The parts of ``symscalar.jit``, one concern per module (``symscalar/jit.py`` is the API).

Imports flow one way: ``params`` (what each parameter is) and ``tree`` (the one pytree walk:
keys, program inputs, outputs) are the base; ``arguments`` and ``outputs`` check and rebuild
values; ``cache`` stores entries; ``symscalar.backend`` chooses what compiles a trace;
``compile`` traces a call into an entry; ``dispatch`` generates the per-call function;
``function`` ties them into a jitted function's state (miss path, explanations, inspection);
``method`` jits a method per instance.
"""
