"""Repro scripts: the standalone reproducers a finding carries (exit 0 absent, 1 present, 125 cannot test)."""
from .choose import kind_of, write_repro

__all__ = ["kind_of", "write_repro"]
