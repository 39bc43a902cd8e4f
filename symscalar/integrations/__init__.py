"""Support for other libraries' objects that need more than torch's pytree: each module here
registers one library's classes with the jit (without importing the library itself, so that
``import symscalar`` stays light), or offers helpers that use the library."""
