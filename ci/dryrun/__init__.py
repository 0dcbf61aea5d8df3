"""The dry run of the GitHub workflows that ci/dry-run.py runs (its docstring says what and why):
  expressions: the workflows' YAML, read as GitHub reads it, and the `${{ }}` expressions they use;
  services:    the cache, artifacts and checkouts simulated, the snapshot of this working tree, the JUnit reports;
  runner:      the jobs in `needs` order, a matrix, each step run or simulated, and the report."""
from .expressions import Expressions, UsageError, load_yaml
from .runner import DryRun, Report
from .services import ROOT, Services

WORKFLOWS = ROOT / ".github" / "workflows"

__all__ = ["ROOT", "WORKFLOWS", "DryRun", "Expressions", "Report", "Services", "UsageError", "load_yaml"]
