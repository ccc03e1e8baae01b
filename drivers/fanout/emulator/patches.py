"""Patches of moto behaviour (filled below)."""

PATCHES = ()


def apply_all() -> None:
    for patch in PATCHES:
        patch()
