#!/usr/bin/env python3
"""mpi4py's own test suite (the test/ directory of the mpi4py sdist) on an MPI library.

Issue 17's judge: `python test/main.py` under the launcher at 1, 2 and 3
ranks, with mpi4py's binary wheel from PyPI loading the library under test
(`MPI4PY_LIBMPI`). Prints, per rank count and rank, the tests run, failures,
errors and skips, and the names of the tests that failed or erred.

usage: scripts/mpi4py_suite.py [--mpi oxmpi|mpich] [--ranks 1,2,3]
                               [--timeout SECONDS_PER_MODULE] [--profile debug|release]
                               [--modules test_x,test_y] [--show-errors]
                               [--log-dir DIR] [-- ARGS FOR test/main.py]

Each test module runs as a job of its own, so that one that hangs (cut off
by the timeout and reported as such) does not hide the others' results.

--mpi oxmpi (default) runs OxMPI's libmpi.so.12 under its oxrun, from an
install of the current build (`cargo build --workspace [--release]` first);
--mpi mpich runs Debian's MPICH (mpiexec.mpich, libmpich.so.12) on the same
suite. Downloads (the sdist, the mpi4py and NumPy wheels) are cached under
target/external/.
"""

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
import urllib.request
from pathlib import Path

MPI4PY_VERSION = "4.1.2"
SDIST_URL = (
    "https://files.pythonhosted.org/packages/75/83/"
    "231445bbcf7ef10864746c244ff2d82000011449b79275642c5d4ed8c8f4/"
    f"mpi4py-{MPI4PY_VERSION}.tar.gz"
)
ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "target" / "external"

# unittest's closing lines, one rank's output (after oxrun's/mpiexec's "[r] " label).
RAN = re.compile(r"^\[(\d+)\]\s*Ran (\d+) tests? in")
RESULT = re.compile(r"^\[(\d+)\]\s*(OK|FAILED)\s*(?:\((.*)\))?\s*$")
PROBLEM = re.compile(r"^\[(\d+)\]\s*(ERROR|FAIL): (\S+) \((\S+)\)")


def sdist_tests() -> Path:
    """The sdist's test/ directory, downloaded and unpacked once."""
    tree = CACHE / f"mpi4py-{MPI4PY_VERSION}"
    if (tree / "test" / "main.py").is_file():
        return tree / "test"
    CACHE.mkdir(parents=True, exist_ok=True)
    archive = CACHE / f"mpi4py-{MPI4PY_VERSION}.tar.gz"
    if not archive.is_file():
        print(f"mpi4py_suite: downloading {SDIST_URL}", file=sys.stderr)
        with urllib.request.urlopen(SDIST_URL, timeout=120) as response:
            archive.write_bytes(response.read())
    print(
        f"mpi4py_suite: {archive.name} sha256 "
        f"{hashlib.sha256(archive.read_bytes()).hexdigest()}",
        file=sys.stderr,
    )
    with tarfile.open(archive) as tar:
        tar.extractall(CACHE, filter="data")
    return tree / "test"


def python_packages() -> Path:
    """mpi4py's binary wheel and NumPy, as tests/tests/external_clients.rs installs them."""
    target = CACHE / "python"
    if (target / "mpi4py").is_dir() and (target / "numpy").is_dir():
        return target
    base = [sys.executable, "-m", "pip", "install", "--quiet", "--target", str(target)]
    if subprocess.run(base + ["mpi4py", "numpy"]).returncode != 0:
        subprocess.run(base + ["--break-system-packages", "mpi4py", "numpy"], check=True)
    return target


def oxmpi_prefix(profile: str) -> Path:
    """An install prefix of the current build of OxMPI."""
    built = ROOT / "target" / profile
    if not (built / "libmpi.so").is_file():
        sys.exit(f"mpi4py_suite: {built}/libmpi.so missing: run `cargo build --workspace"
                 f"{' --release' if profile == 'release' else ''}` first")
    prefix = CACHE / f"suite-prefix-{profile}"
    cmd = [str(ROOT / "scripts" / "install.sh"), "--prefix", str(prefix), "--no-build"]
    if profile == "debug":
        cmd.append("--debug")
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return prefix


def launch_command(mpi: str, ranks: int, timeout: int, profile: str) -> tuple[list, dict]:
    """The launcher command line and environment for one run."""
    env = dict(os.environ)
    env.pop("MPI4PY_MPIABI", None)
    if mpi == "oxmpi":
        prefix = oxmpi_prefix(profile)
        env["MPI4PY_LIBMPI"] = str(prefix / "lib" / "libmpi.so.12")
        cmd = [str(prefix / "bin" / "oxrun"), "--label", "--timeout", str(timeout), "-n", str(ranks)]
    elif mpi == "mpich":
        # The wheel's MPICH module links "libmpi.so.12"; Debian names MPICH's
        # library libmpich.so.12, so a directory with that link comes first.
        system = Path("/usr/lib/x86_64-linux-gnu/libmpich.so.12")
        libdir = CACHE / "mpich-libdir"
        libdir.mkdir(parents=True, exist_ok=True)
        link = libdir / "libmpi.so.12"
        if not link.is_symlink():
            link.symlink_to(system)
        env["MPI4PY_LIBMPI"] = str(link)
        env["LD_LIBRARY_PATH"] = os.pathsep.join(
            filter(None, [str(libdir), env.get("LD_LIBRARY_PATH")]))
        launcher = shutil.which("mpiexec.mpich") or sys.exit("mpi4py_suite: mpiexec.mpich not found")
        cmd = ["timeout", "-k", "5", str(timeout), launcher, "-l", "-n", str(ranks)]
    else:
        sys.exit(f"mpi4py_suite: --mpi {mpi!r}: expected oxmpi or mpich")
    return cmd, env


def summarize(text: str, ranks: int) -> dict:
    """Per rank: ran, failures, errors, skipped, and the problem tests."""
    per_rank = {r: {"ran": None, "failures": 0, "errors": 0, "skipped": 0, "problems": []}
                for r in range(ranks)}
    for line in text.splitlines():
        # MPICH's -l label is "[r] ", oxrun's "[r] " too; tolerate "[r]" directly.
        if m := RAN.match(line):
            per_rank.setdefault(int(m[1]), {})["ran"] = int(m[2])
        elif m := RESULT.match(line):
            counts = per_rank[int(m[1])]
            for part in (m[3] or "").split(","):
                if "=" in part:
                    key, value = part.strip().split("=")
                    counts[key] = int(value)
        elif m := PROBLEM.match(line):
            per_rank[int(m[1])]["problems"].append(f"{m[2]} {m[4]}.{m[3]}")
    return per_rank


def run_module(args, ranks: int, tests: Path, packages: Path, module: str) -> dict:
    """One test module under the launcher; its per-rank summary and exit status."""
    cmd, env = launch_command(args.mpi, ranks, args.timeout, args.profile)
    env["PYTHONPATH"] = str(packages)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    pattern = rf"(^|/){re.escape(module)}\.py$"
    full = cmd + [sys.executable, str(tests / "main.py"), "-i", pattern] + args.suite_args
    run = subprocess.run(full, env=env, cwd=tests, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, errors="replace")
    if args.log_dir:
        args.log_dir.mkdir(parents=True, exist_ok=True)
        (args.log_dir / f"{args.mpi}-{ranks}-{module}.log").write_text(run.stdout)
    return {"exit": run.returncode, "ranks": summarize(run.stdout, ranks),
            "tail": run.stdout.splitlines()[-12:]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mpi", default="oxmpi")
    parser.add_argument("--ranks", default="1,2,3")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per test module")
    parser.add_argument("--profile", default="release", choices=["debug", "release"])
    parser.add_argument("--modules", help="comma-separated test modules (default: all)")
    parser.add_argument("--show-errors", action="store_true",
                        help="print every failing or erring test's name")
    parser.add_argument("--log-dir", type=Path, help="keep each run's full output here")
    parser.add_argument("suite_args", nargs="*")
    args = parser.parse_args()

    tests = sdist_tests()
    packages = python_packages()
    modules = (args.modules.split(",") if args.modules
               else sorted(p.stem for p in tests.glob("test_*.py")))
    failed_any = False
    for ranks in [int(r) for r in args.ranks.split(",")]:
        totals = {r: {"ran": 0, "failures": 0, "errors": 0, "skipped": 0} for r in range(ranks)}
        broken = []
        problems = []
        for module in modules:
            result = run_module(args, ranks, tests, packages, module)
            cut_off = [r for r, c in result["ranks"].items() if c.get("ran") is None]
            if cut_off:
                why = "timed out" if result["exit"] in (124, 137) or "timed out" in \
                    "\n".join(result["tail"]) else f"exit {result['exit']}, no summary"
                broken.append(f"{module} ({why}; ranks {cut_off})")
                if args.show_errors:
                    problems.append(f"{module}: " + "\n      ".join(result["tail"]))
            for rank, c in result["ranks"].items():
                for key in totals[rank]:
                    totals[rank][key] += c.get(key) or 0
                problems.extend(f"rank {rank}: {p}" for p in c["problems"])
        print(f"{args.mpi} {ranks} rank(s), {len(modules)} modules")
        for rank, c in sorted(totals.items()):
            print(f"  rank {rank}: ran {c['ran']}, failures {c['failures']}, "
                  f"errors {c['errors']}, skipped {c['skipped']}")
            failed_any |= bool(c["failures"] or c["errors"])
        for module in broken:
            print(f"  no result: {module}")
        failed_any |= bool(broken)
        if args.show_errors:
            for problem in sorted(set(problems)):
                print(f"    {problem}")
    return 1 if failed_any else 0


if __name__ == "__main__":
    sys.exit(main())
