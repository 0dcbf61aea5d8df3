"""The report stage: issue drafts, scrubbing, triage of known upstream issues, verification of fixes, compile-time
and resource comparison, and the nightly run with its summary."""
