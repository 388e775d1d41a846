"""Run the spec fuzzer of the unit suite (tests/spec/fuzz.py) for N minutes and count what happened.

    python scripts/fuzz_specs.py --minutes 10 [--seed 1] [--failures DIR]

Prints the examples tried, their exit codes per verb, and the crashes found: exceptions that are not
sqlanon's own errors, exit codes other than 0, 1 and 2, and multi-line error messages. Each crash's
spec, verb and traceback are written to ``--failures`` (default: a fresh temporary folder). Exits 1
when it found any.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tests.spec import fuzz  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=None, help="hypothesis seed (default: random)")
    parser.add_argument("--failures", type=Path, default=None, help="folder for crash reports")
    args = parser.parse_args(argv)
    report = os.fdopen(os.dup(1), "w", buffering=1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # the reports the CLI prints on success

    def say(line: str) -> None:
        print(line, file=report)

    work = Path(tempfile.mkdtemp(prefix="sqlanon-fuzz-"))
    failures = args.failures or work / "failures"
    failures.mkdir(parents=True, exist_ok=True)
    fixture = fuzz.make_fixture(work / "base")
    codes: collections.Counter[tuple[str, str]] = collections.Counter()
    crashes: collections.Counter[str] = collections.Counter()
    deadline = time.monotonic() + args.minutes * 60
    tried = 0

    @settings(max_examples=25, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(data=st.data(), verb=st.sampled_from(fuzz.VERBS))
    def one(data: st.DataObject, verb: str) -> None:
        nonlocal tried
        text = fuzz.spec_text(data)  # drawn before the clock is read: hypothesis replays draws exactly
        if time.monotonic() > deadline:
            return  # the batch ends without running more examples
        tried += 1
        try:
            outcome = fuzz.run_example(fixture, verb, text)
        except Exception as e:  # a crash: recorded, and the run goes on
            cause = e.__cause__ if isinstance(e, fuzz.UnexpectedError) and e.__cause__ else e
            frame = traceback.extract_tb(cause.__traceback__)[-1] if cause.__traceback__ else None
            key = f"{type(cause).__name__} at {Path(frame.filename).name}:{frame.lineno}" if frame \
                else f"{type(cause).__name__}: {cause}"
            crashes[key] += 1
            codes[(verb, "crash")] += 1
            if crashes[key] <= 3:
                n = sum(crashes.values())
                (failures / f"crash-{n:04d}.yml").write_text(text, encoding="utf-8")
                (failures / f"crash-{n:04d}.txt").write_text(
                    f"sqlanon {verb} crash-{n:04d}.yml\n\n" + "".join(traceback.format_exception(e)),
                    encoding="utf-8")
            return
        codes[(verb, str(outcome.code))] += 1

    started = time.monotonic()
    batch = 0
    while time.monotonic() < deadline:  # batches of fresh examples: no replay, no shrinking
        (seed(args.seed + batch)(one) if args.seed is not None else one)()
        batch += 1
    minutes = (time.monotonic() - started) / 60
    say(f"examples tried: {tried} in {minutes:.1f} min")
    for verb in fuzz.VERBS:
        row = {c: codes[(verb, c)] for c in ("0", "1", "2", "crash")}
        say(f"  {verb:10} exit 0: {row['0']:5}  exit 1: {row['1']:5}  exit 2: {row['2']:5}  "
              f"crashes: {row['crash']}")
    total = collections.Counter()
    for (_, c), n in codes.items():
        total[c] += n
    say(f"  {'all':10} exit 0: {total['0']:5}  exit 1: {total['1']:5}  exit 2: {total['2']:5}  "
          f"crashes: {total['crash']}")
    say(f"tracebacks found: {sum(crashes.values())} ({len(crashes)} distinct)")
    for key, n in crashes.most_common():
        say(f"  {n:5}  {key}")
    if crashes:
        say(f"specs and tracebacks: {failures}")
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())
