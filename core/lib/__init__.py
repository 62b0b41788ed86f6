"""Libraries the built-in plugins share, public for third-party plugins."""
