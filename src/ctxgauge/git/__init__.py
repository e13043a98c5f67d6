"""Read-only access to a git repository through git plumbing: revisions, trees, blobs, history.

Nothing here checks out, writes to or runs anything from the inspected repository. Every git call runs with
the user's and the system's configuration switched off and the settings that change output pinned
(rename detection, quoting, textconv), so the same repository gives the same answers on every machine.

One idea per module:
- `_policy`: the one git invocation policy (pinned options, environment, failures as one line);
- `_locate`: the one repository locator (git's discovery, without running git; redirections refused);
- `_confine`: refusing a repository whose reading would read something outside it;
- `_log`: commits and name-status changes parsed from git's output;
- `_hunks`: gold lines, the pre-image lines of a commit's or a patch's hunks;
- `_blobs`: blob ids and the long-lived `cat-file --batch` reader;
- `_repo`: `Repo`, the read-only repository the rest of ctxgauge uses;
- `_worktree`: which tracked files of a work tree differ from a commit (hashed, no `git status`).
"""

from ctxgauge.git._blobs import BlobReader, blob_id
from ctxgauge.git._confine import confine
from ctxgauge.git._hunks import commit_pre_image_lines, pre_image, pre_image_lines, unquote_path
from ctxgauge.git._locate import Location, locate
from ctxgauge.git._log import Commit, FileChange
from ctxgauge.git._policy import DIFF_SAFE, PATH_KEYS, RENAME_THRESHOLD, git_command, git_env, run_git
from ctxgauge.git._repo import Repo, TreeEntry
from ctxgauge.git._worktree import changed_in_work_tree

__all__ = [
    "BlobReader", "Commit", "DIFF_SAFE", "FileChange", "Location", "PATH_KEYS", "RENAME_THRESHOLD", "Repo",
    "TreeEntry", "blob_id", "changed_in_work_tree", "commit_pre_image_lines", "confine", "git_command", "git_env", "locate",
    "pre_image", "pre_image_lines", "run_git", "unquote_path",
]
