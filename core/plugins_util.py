"""Small helpers about the loaded plugins, for reports and listings."""

from __future__ import annotations


def loaded_plugin_names(pm) -> list[str]:
    return [name for name, plugin in pm.list_name_plugin() if name and plugin is not None]
