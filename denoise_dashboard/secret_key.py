"""Which SECRET_KEY the settings use, and the refusal to run production on the development one."""

import os
import secrets
from pathlib import Path

from core.env import BadEnvironment

DEVELOPMENT_SECRET_KEY = "dev-only-insecure-key-change-me"
LOCAL_KEY_FILE = "secret_key"


def secret_key(var_dir: Path, debug: bool) -> str:
    """SECRET_KEY from the environment; else, with DEBUG on, the development key;
    else a key generated once and kept in `var_dir` (the embedded `make run`),
    so sessions survive a restart and no two installations share a key."""
    value = os.environ.get("SECRET_KEY", "").strip()
    if value == DEVELOPMENT_SECRET_KEY and not debug:
        raise BadEnvironment(
            "SECRET_KEY is the development key while DEBUG is off; refusing to start. "
            "Set SECRET_KEY to a long random value (or unset it to use a key generated in var/)."
        )
    if value:
        return value
    if debug:
        return DEVELOPMENT_SECRET_KEY
    return local_key(var_dir / LOCAL_KEY_FILE)


def local_key(path: Path) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        # O_EXCL: two processes starting at once agree on the first one written.
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text().strip()
    key = secrets.token_urlsafe(50)
    with os.fdopen(descriptor, "w") as handle:
        handle.write(key + "\n")
    return key


def uses_local_key(settings) -> bool:
    path = Path(settings.VAR_DIR) / LOCAL_KEY_FILE
    return not os.environ.get("SECRET_KEY") and path.exists() and path.read_text().strip() == settings.SECRET_KEY
