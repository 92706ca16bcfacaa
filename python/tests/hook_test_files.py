"""Shared by the hook's test files: writing the small programs and packages they run."""
import os
import textwrap


def write_file(root, relpath, text):
    """Writes `text` (dedented) to root/relpath, creating folders; returns the path."""
    path = os.path.join(root, relpath)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(textwrap.dedent(text))
    return path
