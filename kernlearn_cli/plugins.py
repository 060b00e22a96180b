"""Plugins: components registered by modules of installed packages (docs/extending.md, section 6)."""

from __future__ import annotations

from .errors import ConfigError

#: The entry-point group in which an installed package names the modules that register its
#: components (plugins; docs/extending.md, section 6).
PLUGIN_GROUP = "kernlearn.components"
_plugins: list[str] | None = None


def load_plugins(where: str = "") -> list[str]:
    """Import every module that installed packages name under :data:`PLUGIN_GROUP`, once per
    process; importing one registers its components.  Returns the entry points loaded
    (``name = module``).

    Raises
    ------
    ConfigError
        A plugin module that fails to import, naming the entry point, its package and the error.
    """
    global _plugins
    if _plugins is not None:
        return _plugins
    from importlib.metadata import entry_points

    _plugins = []
    for ep in sorted(entry_points(group=PLUGIN_GROUP), key=lambda e: e.name):
        package = ep.dist.name if ep.dist is not None else "unknown package"
        try:
            ep.load()
        except Exception as exc:  # noqa: BLE001 - any failure of third-party code, reported once
            raise ConfigError(f"{where + ': ' if where else ''}kernlearn plugin '{ep.name} = {ep.value}' (entry point "
                              f"group {PLUGIN_GROUP}, package '{package}') failed to import: "
                              f"{type(exc).__name__}: {exc}. Fix the plugin, or uninstall it "
                              f"(pip uninstall {package}).") from None
        _plugins.append(f"{ep.name} = {ep.value} ({package})")
    return _plugins
