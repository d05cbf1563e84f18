"""readme_jobs.py SECTION OUT REPO: the README's jobs section (SECTION, the lines between its
BEGIN and END lines) with what each command prints written under it, to OUT; run by
scripts/gen-readme-jobs.sh, which says how.

A ```console block holds commands (`$ ` lines), each followed by what it prints (stdout and
stderr as one stream), run by bash in a temporary folder that sees the repository's examples/
and tests/ (so that `-o out.onnx` writes there), with the tool's folder first on PATH and the
package on PYTHONPATH. A command that exits with a status other than 0 and 1 (1: a check found
problems) is an error. A ```pycon block is one Python session: its `>>> ` lines (and `... `
continuations) run in this interpreter, each followed by what the REPL would print. Anything
else is copied as it is."""

import contextlib
import io
import os
import subprocess
import sys
import tempfile
import traceback


def run_console(lines, work, env):
    out = []
    for line in lines:
        if not line.startswith("$ "):
            continue  # what the last run printed: written anew
        out.append(line)
        done = subprocess.run(["bash", "-c", line[2:]], cwd=work, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
        if done.returncode not in (0, 1):
            sys.exit(f"readme_jobs: '{line[2:]}' exited {done.returncode}:\n{done.stdout}")
        out.extend(done.stdout.splitlines())
    return out


def run_pycon(lines, work):
    statements = []
    for line in lines:
        if line.startswith(">>> "):
            statements.append([line])
        elif line.startswith("... ") and statements:
            statements[-1].append(line)
    out = []
    namespace = {"__name__": "__readme__"}
    cwd = os.getcwd()
    os.chdir(work)
    try:
        for statement in statements:
            out.extend(statement)
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                try:
                    source = "\n".join(l[4:] for l in statement) + "\n"
                    exec(compile(source, "<README>", "single"), namespace)
                except Exception as e:  # shown as the REPL's last line would
                    print("".join(traceback.format_exception_only(type(e), e)).rstrip())
            out.extend(printed.getvalue().splitlines())
    finally:
        os.chdir(cwd)
    return out


def main():
    section, target, repo = sys.argv[1:4]
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as work:
        for name in ("examples", "tests"):
            os.symlink(os.path.join(repo, name), os.path.join(work, name))
        lines = open(section, encoding="utf-8").read().splitlines()
        out, block, kind = [], None, None
        for line in lines:
            if block is None:
                out.append(line)
                if line in ("```console", "```pycon"):
                    block, kind = [], line[3:]
            elif line == "```":
                out.extend(run_console(block, work, env) if kind == "console" else run_pycon(block, work))
                out.append(line)
                block = None
            else:
                block.append(line)
        if block is not None:
            sys.exit("readme_jobs: a block is not closed")
    with open(target, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
