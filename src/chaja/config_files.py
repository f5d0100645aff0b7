"""Where the command line finds its settings, and how ``chaja config --set`` keeps them.

The first of these that exists is the config file (``Config.load``):

1. ``--config FILE`` (an error if the file is missing);
2. the file ``$CHAJA_CONFIG`` names (an error if it is missing; ``none`` reads no file);
3. ``./chaja.toml`` in the working folder;
4. the user's file: ``$XDG_CONFIG_HOME/chaja/config.toml``, by default
   ``~/.config/chaja/config.toml``.

``--set section.key=value`` then overrides single settings for one command. The
library itself (``chaja.open``, ``Config()``) reads no file: a program gets the
defaults unless it passes a config.

:func:`write_settings` adds settings to a file, keeping the settings it holds and
writing only what was set, each checked the way ``--set`` checks it; the file is
replaced atomically, so a crash leaves the old file or the new one.
"""
from __future__ import annotations

import os
import tomllib
from pathlib import Path

from chaja.config import Config, toml_of

LOCAL_NAME = "chaja.toml"


def user_config_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "chaja" / "config.toml"


def find_config(explicit: str | os.PathLike | None = None) -> Path | None:
    """The config file a command reads (see the module docstring), or None."""
    env = os.environ.get("CHAJA_CONFIG") or None
    if explicit is None and env == "none":
        return None
    for given, what in ((explicit, "--config"), (env, "$CHAJA_CONFIG")):
        if given:
            path = Path(given).expanduser()
            if not path.is_file():
                raise FileNotFoundError(f"config file {path} ({what}) does not exist")
            return path
    for path in (Path(LOCAL_NAME), user_config_path()):
        if path.is_file():
            return path
    return None


def load(explicit: str | os.PathLike | None = None, assignments: list[str] | None = None) -> tuple[Config, Path | None]:
    """The command's config: the file :func:`find_config` finds, then ``--set`` overrides."""
    path = find_config(explicit)
    cfg = Config.load(path) if path is not None else Config()
    return cfg.override(assignments or []), path


def write_settings(path: Path, assignments: list[str]) -> dict:
    """Set ``section.key=value`` settings in the TOML file at ``path`` (created if need be);
    returns the settings the file now holds."""
    data: dict = {}
    if path.is_file():
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"config {path}: {exc}") from None
    cfg = Config.from_dict(data)               # what the file holds must itself be valid
    for a in assignments:
        if "=" not in a:
            raise ValueError(f"--set expects section.key=value, got {a!r}")
        dotted, value = (x.strip() for x in a.split("=", 1))
        cfg.set(dotted, value)
        section, _, key = dotted.partition(".")
        data.setdefault(section, {})[key] = getattr(getattr(cfg, section), key)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(toml_of(data), encoding="utf-8")
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return data
