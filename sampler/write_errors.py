"""Why a file could not be written, and what to do about it: the advice printed after a failed write names the
cause it fixes (a full disk, a folder in the way, a read-only place), never "free some space" for all of them."""
from __future__ import annotations

import errno
import os
from pathlib import Path

# the OSErrors a write can meet that are the user's machine's state, not a bug: one message, exit status 2
WRITE_ERRNOS = {errno.ENOSPC, errno.EFBIG, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO,
                errno.EISDIR, errno.ENOTDIR}


def remedy(code: int | None, path) -> str:
    """What to do before trying again, for the errno ``code`` met writing ``path``. Without a code (the error
    came from a forked writer as text) the path itself is looked at."""
    path = Path(path) if path is not None else None
    if code == errno.EISDIR or (code is None and path is not None and path.is_dir()):
        return f"remove or rename the folder {path}, which is in the way of that file"
    if code == errno.ENOTDIR:
        return f"a file is in the way of a folder on the path {path}: remove or rename it"
    folder = path.parent if path is not None else None
    if code in (errno.EACCES, errno.EPERM, errno.EROFS) or (
            code is None and folder is not None and folder.is_dir() and not os.access(folder, os.W_OK)):
        return f"make {folder} writable (or write elsewhere with --out)"
    return "free some space"
