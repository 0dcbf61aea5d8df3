"""The ground-floor code a standalone script embeds (repro scripts, the perf driver), read once at import.

Why read once: the embedded code must be the code that computed what the script expects (a signature, a compile
under the release's API), even if the files change on disk during a long campaign.
"""
from __future__ import annotations

import inspect
import re

from gfxhound import compat, llc_text, signature

SOURCES = {"signature": inspect.getsource(signature), "llc_text": inspect.getsource(llc_text),
           # compat imports llc_text's names; embedded, they are already defined above it
           "compat": re.sub(r"^from gfxhound\.llc_text import .*$", "", inspect.getsource(compat), flags=re.M)}
