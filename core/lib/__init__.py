"""Libraries several built-in plugins share (and third-party plugins may use).

Each module says what it is a library for. A built-in plugin never imports
another plugin's modules: what two of them need lives here (or reaches the
other through a hook or a documented stash key).
"""
