"""Built-in plugins of ireebench, each registered like a third-party plugin."""
