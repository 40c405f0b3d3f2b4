"""The policy document of the contract (the README's "Fuse policy, the degrade
ladder and the escalation inbox"; `PUT /api/v1/policy` in the OpenAPI
schema): its validation and the difference between two versions. Its
built-in default is the vocabulary's (provenance.vocabulary.DEFAULT_PROFILE).

A profile is `{"accept", "block", "by_agent_type": {type: {"accept", "block"}},
"by_step": {step: {"accept", "block"}}, "max_rounds", "max_retries",
"escalate_after"}`. A key left out of a profile takes the built-in default; an
override that names only one of accept/block takes the other from its profile,
so what is stored (and answered) is always complete.
"""

import copy

from core.errors import ApiError
from core.field_checks import FieldErrors, count_problem, number_problem
from provenance.vocabulary import DEFAULT_PROFILE

DEFAULT_PROFILES = {"default": DEFAULT_PROFILE}
THRESHOLDS = ("accept", "block")
COUNTS = ("max_rounds", "max_retries", "escalate_after")
OVERRIDES = ("by_agent_type", "by_step")
PROFILE_KEYS = (*THRESHOLDS, *OVERRIDES, *COUNTS)
DOCUMENT_KEYS = ("profiles", "note")
# What GET answers besides those: set by the server, ignored in a PUT, so a
# document read, edited and sent back is accepted.
SERVER_KEYS = ("version", "updated_at")
MAX_NAME = 200
MAX_NOTE = 2000
MAX_PROFILES = 50
MAX_OVERRIDES = 500
MAX_COUNT = 1000


class PolicyError(ApiError):
    """Field paths and what is wrong with each, in the contract's spelling
    (collect-all: every field at fault is named at once)."""

    def __init__(self, fields: dict[str, str]):
        super().__init__(first_error(fields), fields=fields)


def first_error(fields: dict[str, str]) -> str:
    path, message = next(iter(fields.items()))
    more = f" (and {len(fields) - 1} more)" if len(fields) > 1 else ""
    return f"{path}: {message}{more}"


def default_profiles() -> dict:
    return copy.deepcopy(DEFAULT_PROFILES)


def parse_document(data) -> tuple[dict, str]:
    """(profiles, note) from a PUT body; PolicyError naming every bad field."""
    if not isinstance(data, dict):
        raise PolicyError({"body": "must be a JSON object with profiles and note"})
    errors = FieldErrors()
    errors.unknown_keys(data, (*DOCUMENT_KEYS, *SERVER_KEYS), f"unknown key; expected one of: {', '.join(DOCUMENT_KEYS)}")
    note = data.get("note", "")
    if note is None:
        note = ""
    if not isinstance(note, str):
        errors["note"] = "must be a string"
    elif len(note) > MAX_NOTE:
        errors["note"] = f"must be at most {MAX_NOTE} characters"
    profiles = parse_profiles(data.get("profiles"), errors)
    errors.refuse(PolicyError)
    return profiles, note.strip()


def parse_profiles(value, errors: FieldErrors) -> dict:
    if value is None:
        errors["profiles"] = "required: an object of profiles, with at least `default`"
        return {}
    if not isinstance(value, dict):
        errors["profiles"] = "must be an object of profiles"
        return {}
    if "default" not in value:
        errors["profiles.default"] = "required: every policy has a default profile"
    if len(value) > MAX_PROFILES:
        errors["profiles"] = f"at most {MAX_PROFILES} profiles"
    profiles = {}
    for name, profile in value.items():
        path = f"profiles.{name}"
        if not valid_name(name):
            errors[path] = f"a profile name is 1–{MAX_NAME} characters"
            continue
        profiles[name] = parse_profile(profile, path, errors)
    return profiles


def parse_profile(value, path: str, errors: FieldErrors) -> dict:
    if not isinstance(value, dict):
        errors[path] = "must be an object"
        return {}
    errors.unknown_keys(value, PROFILE_KEYS, f"unknown key; expected one of: {', '.join(PROFILE_KEYS)}",
                        lambda key: f"{path}.{key}")
    profile = {}
    thresholds = parse_thresholds(value, path, DEFAULT_PROFILE, errors)
    profile.update(thresholds)
    for key in OVERRIDES:
        profile[key] = parse_overrides(value.get(key, {}), f"{path}.{key}", thresholds, errors)
    for key in COUNTS:
        profile[key] = parse_count(value.get(key, DEFAULT_PROFILE[key]), f"{path}.{key}", errors)
    return profile


def parse_overrides(value, path: str, inherited: dict, errors: FieldErrors) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        errors[path] = "must be an object of name → {accept, block}"
        return {}
    if len(value) > MAX_OVERRIDES:
        errors[path] = f"at most {MAX_OVERRIDES} entries"
        return {}
    found = {}
    for name, entry in value.items():
        entry_path = f"{path}.{name}"
        if not valid_name(name):
            errors[entry_path] = f"a name is 1–{MAX_NAME} characters"
            continue
        if not isinstance(entry, dict):
            errors[entry_path] = "must be an object with accept and/or block"
            continue
        errors.unknown_keys(entry, THRESHOLDS, "unknown key; expected one of: accept, block",
                            lambda key, entry_path=entry_path: f"{entry_path}.{key}")
        found[name] = parse_thresholds(entry, entry_path, inherited, errors)
    return found


def parse_thresholds(value: dict, path: str, inherited: dict, errors: FieldErrors) -> dict:
    """accept and block, each in [0, 1], with block ≤ accept."""
    found = {}
    for key in THRESHOLDS:
        given = value.get(key, inherited.get(key, DEFAULT_PROFILE[key]))
        if errors.check(f"{path}.{key}", number_problem(given, 0.0, 1.0, not_a_number="must be a number between 0 and 1",
                                                        below="must be between 0 and 1, not {value}")):
            found[key] = float(given)
    if len(found) == 2 and found["block"] > found["accept"]:
        errors[f"{path}.block"] = f"must be at most accept ({found['accept']:g}): 0 ≤ block ≤ accept ≤ 1"
    return {key: found.get(key, inherited.get(key, DEFAULT_PROFILE[key])) for key in THRESHOLDS}


def parse_count(value, path: str, errors: FieldErrors) -> int:
    if errors.check(path, count_problem(value, 0, MAX_COUNT, not_an_integer="must be an integer ≥ 0",
                                        below="must be an integer ≥ 0, not {value}", above=f"must be at most {MAX_COUNT}")):
        return value
    return 0


def valid_name(name) -> bool:
    return isinstance(name, str) and 0 < len(name.strip()) <= MAX_NAME and name == name.strip()


def flatten(profiles: dict) -> dict[str, object]:
    """Every leaf by its dotted path: `default.by_agent_type.retrieval.block` → 0.4."""
    found = {}

    def walk(prefix: str, value):
        if isinstance(value, dict) and value:
            for key in value:
                walk(f"{prefix}.{key}" if prefix else key, value[key])
        elif not isinstance(value, dict):
            found[prefix] = value

    walk("", profiles)
    return found


def diff(before: dict, after: dict) -> list[dict]:
    """What changed from one set of profiles to another, path by path."""
    old, new = flatten(before), flatten(after)
    changes = []
    for path in sorted(old.keys() | new.keys()):
        if old.get(path) != new.get(path) or (path in old) != (path in new):
            kind = "added" if path not in old else "removed" if path not in new else "changed"
            changes.append({"path": path, "before": old.get(path), "after": new.get(path), "change": kind})
    return changes
