"""The git side of commit bisection: the commits between two ends, what a commit is (title, date, link), and a
separate worktree to build in, so the user's checkout (its HEAD, index and files) is never touched.

GitPython does the talking to git; this module only says what the bisection needs from it.
"""
from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

import git


class GitError(Exception):
    """A one-line problem with the repository or the commit range."""


class GitRepo:
    def __init__(self, path):
        try:
            self.repo = git.Repo(Path(path).expanduser(), search_parent_directories=False)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError):
            raise GitError(f"{path}: not a git repository (point at a clone of the project)") from None
        self.path = Path(self.repo.working_tree_dir or self.repo.git_dir).resolve()

    def resolve(self, rev: str) -> str:
        try:
            return self.repo.commit(rev).hexsha
        except (git.BadName, ValueError, git.GitCommandError):
            raise GitError(f"{self.path}: no commit {rev!r} (fetch it, or give a hash, tag or branch)") from None

    def commits_between(self, old: str, new: str) -> list:
        """The first-parent chain from `old` to `new`, oldest first, both ends included: the candidates."""
        old_sha, new_sha = self.resolve(old), self.resolve(new)
        if old_sha == new_sha:
            raise GitError(f"{old}..{new}: both ends are the same commit")
        if not self.repo.is_ancestor(old_sha, new_sha):
            raise GitError(f"{old}..{new}: {old} is not an ancestor of {new} (give OLD..NEW, oldest first)")
        chain = self.repo.git.rev_list("--first-parent", "--reverse", f"{old_sha}..{new_sha}").split()
        if old_sha not in {c.hexsha for c in self.repo.commit(chain[0]).parents}:
            # old sits on a side branch merged later: take every commit after it instead
            chain = self.repo.git.rev_list("--reverse", "--topo-order", "--ancestry-path",
                                           f"{old_sha}..{new_sha}").split()
        return [old_sha] + chain

    def info(self, sha: str) -> dict:
        commit = self.repo.commit(sha)
        return {"hash": commit.hexsha, "title": commit.summary if isinstance(commit.summary, str)
                else commit.summary.decode(errors="replace"), "date": commit.committed_datetime.isoformat(),
                "author": commit.author.name, "link": self.link(commit.hexsha)}

    def link(self, sha: str) -> str | None:
        """https://github.com/<owner>/<repo>/commit/<sha> when origin is on GitHub (Triton, llvm-project)."""
        try:
            url = self.repo.remotes.origin.url
        except (AttributeError, IndexError, ValueError):
            return None
        found = re.search(r"github\.com[:/]([^/]+/[^/]+?)(\.git)?/?$", url)
        return f"https://github.com/{found.group(1)}/commit/{sha}" if found else None

    def parent(self, sha: str) -> str | None:
        parents = self.repo.commit(sha).parents
        return parents[0].hexsha if parents else None

    def changed_files(self, sha: str) -> list:
        parent = self.parent(sha)
        if parent is None:
            return sorted(self.repo.git.ls_tree("-r", "--name-only", sha).split("\n"))
        return sorted(f for f in self.repo.git.diff("--name-only", parent, sha).split("\n") if f)

    def file_at(self, sha: str, path: str) -> str | None:
        try:
            return self.repo.git.show(f"{sha}:{path}")
        except git.GitCommandError:
            return None

    def files_at(self, sha: str, pattern: str) -> list:
        """Paths at `sha` matching a glob (pin files such as cmake/*llvm*hash*.txt)."""
        from fnmatch import fnmatch
        return [p for p in self.repo.git.ls_tree("-r", "--name-only", sha).split("\n") if fnmatch(p, pattern)]

    def worktree(self, root: Path) -> "Worktree":
        key = hashlib.sha256(str(self.path).encode()).hexdigest()[:10]
        return Worktree(self, Path(root) / f"{self.path.name}-{key}")


class Worktree:
    """A detached `git worktree` of the user's repository, kept in the cache between bisections (an incremental
    LLVM build needs unchanged files to keep their timestamps). Only this directory is ever checked out."""

    def __init__(self, owner: GitRepo, path: Path):
        self.owner, self.path = owner, Path(path)

    def lock(self):
        """An exclusive lock on this worktree for a checkout and the build that follows (two recipes may build
        from the same clone: llvm for the hand-off, llvm-mlir for Triton)."""
        import contextlib
        import fcntl

        @contextlib.contextmanager
        def held():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path.parent / f".{self.path.name}.lock", "w") as handle:
                fcntl.flock(handle, fcntl.LOCK_EX)
                yield
        return held()

    def checkout(self, sha: str) -> Path:
        if not (self.path / ".git").exists():
            shutil.rmtree(self.path, ignore_errors=True)
            self.owner.repo.git.worktree("prune")
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.owner.repo.git.worktree("add", "--detach", "--force", str(self.path), sha)
            return self.path
        tree = git.Repo(self.path)
        tree.git.checkout("--detach", "--force", sha)
        tree.git.clean("-fdxq")  # nothing of the last commit's build may leak into this one
        return self.path

    def remove(self):
        if self.path.exists():
            try:
                self.owner.repo.git.worktree("remove", "--force", str(self.path))
            except git.GitCommandError:
                shutil.rmtree(self.path, ignore_errors=True)
        self.owner.repo.git.worktree("prune")
