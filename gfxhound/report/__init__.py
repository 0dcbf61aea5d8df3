"""The report stage: issue drafts, scrubbing, triage of known upstream issues, verification of fixes, compile-time
and resource comparison, and the nightly run with its summary."""

# the modules other packages may import (tests/ground/test_layering.py checks it)
__all__ = ["draft_wrongcode", "drafts", "nightly", "perf", "sandbox", "triage", "verify"]
