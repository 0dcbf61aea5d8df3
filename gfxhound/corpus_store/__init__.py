"""The corpus: findings on disk, crash-safe, and the one place that knows its file names (layout.py)."""
from .finding import FINDING_FORMAT, CorpusError, Finding
from .layout import Example, Reduction
from .store import Corpus

# what other packages may import: these names, and the modules fold, layout and migrate
__all__ = ["Corpus", "CorpusError", "Example", "FINDING_FORMAT", "Finding", "Reduction", "fold", "layout", "migrate"]
