"""`python -m denoiseflow.eval --dataset NAME --task module:function`: an
evaluation run from a shell or a CI pipeline.

Exits 0 when the run's accuracy is at least `--min-accuracy` and not below the
previous finished run of the dataset (and, with `--max-cost-increase SHARE`,
its cost per passed case rose no more than that share over the previous
run's: 0.2 allows 20% more); 1 when it falls short of any; 2 when the run
could not be made (bad task, unknown dataset, dashboard unreachable).
The dashboard is `--url`/`--api-key`, else DENOISE_URL/DENOISE_API_KEY.
"""

import argparse
import importlib
import os
import sys

from denoiseflow.evaluation import EvaluationError, evaluate, previous_run
from denoiseflow.recorder import Recorder


def load_task(spec: str):
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise ValueError(f"--task must be module:function, got {spec!r}")
    sys.path.insert(0, os.getcwd())
    task = importlib.import_module(module_name)
    for part in attribute.split("."):
        task = getattr(task, part)
    if not callable(task):
        raise ValueError(f"{spec} is not callable")
    return task


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m denoiseflow.eval", description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", required=True, help="the truth set's name")
    parser.add_argument("--task", required=True, help="module:function called with each item's input")
    parser.add_argument("--name", default="", help="the run's name, e.g. the prompt version")
    parser.add_argument("--dataset-version", type=int, default=None, help="default: the newest")
    parser.add_argument("--min-accuracy", type=float, default=None, help="fail below this accuracy (0–1)")
    parser.add_argument("--max-cost-increase", type=float, default=None, metavar="SHARE",
                        help="fail when the cost per passed case rose more than this share over the previous run "
                             "(0.2: 20%%)")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--only", action="append", default=None, metavar="ITEM_ID",
                        help="run only this item (repeatable): a single-case debug run")
    parser.add_argument("--url", default=None, help="default: $DENOISE_URL or http://127.0.0.1:8000")
    parser.add_argument("--api-key", default=None, help="default: $DENOISE_API_KEY")
    args = parser.parse_args(argv)

    recorder = Recorder(args.url, args.api_key)
    try:
        task = load_task(args.task)
        summary = evaluate(args.dataset, task, args.name, concurrency=args.concurrency, only=args.only,
                           dataset_version=args.dataset_version, recorder=recorder)
        previous = previous_run(args.dataset, summary["id"], recorder) if args.only is None else None
    except (EvaluationError, ImportError, AttributeError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    finally:
        recorder.close(timeout=10)

    accuracy = summary["accuracy"] or 0.0
    print(f"run {summary['id']} of {args.dataset} v{summary['dataset_version']}: accuracy {accuracy:.1%} "
          f"({summary['passed']}/{summary['total']} passed, {summary['missing']} missing), "
          f"intervention rate {(summary['intervention_rate'] or 0):.1%}")
    failing = []
    if args.min_accuracy is not None and accuracy < args.min_accuracy:
        failing.append(f"below --min-accuracy {args.min_accuracy:.1%}")
    if previous is not None and previous["accuracy"] is not None and accuracy < previous["accuracy"]:
        failing.append(f"below the previous run {previous['id']} ({previous['accuracy']:.1%})")
    for reason in failing:
        print(f"FAIL: accuracy {accuracy:.1%} is {reason}", file=sys.stderr)
    cost_failure = cost_increase(summary, previous, args.max_cost_increase)
    if cost_failure:
        print(f"FAIL: {cost_failure}", file=sys.stderr)
    return 1 if failing or cost_failure else 0


def cost_increase(summary: dict, previous: dict | None, allowed: float | None) -> str | None:
    """Why the run's cost per passed case rose too much over `previous`'s, or None.
    A run without a cost per passed case (nothing passed, nothing priced) on
    either side cannot be compared and passes."""
    print(f"cost per passed case {format_usd(summary.get('cost_per_passed'))}"
          + (f" (previous run {previous['id']}: {format_usd(previous.get('cost_per_passed'))})" if previous else ""))
    if allowed is None or previous is None:
        return None
    now, before = summary.get("cost_per_passed"), previous.get("cost_per_passed")
    if now is None or before is None or before <= 0:
        return None
    if now > before * (1 + allowed):
        return (f"cost per passed case {format_usd(now)} rose {now / before - 1:.1%} over the previous run "
                f"{previous['id']} ({format_usd(before)}), more than --max-cost-increase {allowed:.0%}")
    return None


def format_usd(value) -> str:
    return "—" if value is None else f"${value:.6g}"


if __name__ == "__main__":
    sys.exit(main())
