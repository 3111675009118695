"""What ``afr reproduce`` checks before its first unit runs, so that a reproduction either
refuses in one line with nothing written or runs to the end.

A paper folder's data file is parsed strictly on load (``afr_cli.catalogue.knowledge``: types,
keys, encoding, every path under the results root). Here follows what the parse alone cannot
see: the results root given (non-empty, a directory or creatable, not a file), the folder's
``published.csv`` (there, UTF-8, with the columns and numbers every table reader needs), each
table a report sets beside our stores, each claim (its test, its report, and its columns tried
on the paper's own table: the half of the verdict that needs no store), and each study's
function. Before this, a defect in any of these was found by the report build, after every
unit had run.
"""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path

from afr_cli.catalogue.knowledge import PAPERS_DIR, Paper, reports
from afr_cli.core.path_rules import directory_error
from afr_cli.errors import AfrInputError

PUBLISHED_COLUMNS = ("paper", "table", "base", "dataset", "model", "metric", "value")


def check_root(value: str, writing: bool = True) -> Path:
    """``--root`` as a path, or a one-line error: empty (an unset shell variable), a file, below a
    file, or (``writing``) in a directory this user cannot write. Creates nothing."""
    problem = directory_error("--root", value)
    if problem:
        raise AfrInputError(problem)
    root = Path(value)
    existing = root
    while not existing.exists() and existing != existing.parent:  # the nearest existing ancestor
        existing = existing.parent
    if not existing.is_dir():
        raise AfrInputError(
            f"--root: {value}: {existing} is a file, so the directory cannot be made; "
            "allowed: a directory, or a path afr can create"
        )
    if writing and not os.access(existing, os.W_OK | os.X_OK):
        raise AfrInputError(f"--root: {value}: {existing} is not writable; allowed: a directory you can write")
    return root


def published_file(paper: Paper) -> Path:
    """The paper's published CSV, as its data file names it (in its folder)."""
    return (paper.folder if paper.folder else PAPERS_DIR) / paper.published


def check_published(paper: Paper) -> None:
    """The published CSV is there, UTF-8, has the columns every table reader needs (the paper's
    unit axes too) and a number in every ``value``; a one-line error naming the file otherwise."""
    path = published_file(paper)
    where = str(path)
    if not path.is_file():
        raise AfrInputError(
            f"{paper.data_file}: published: {paper.published!r}: no such file in the paper's "
            f"folder; allowed: a CSV of the published cells ({','.join(PUBLISHED_COLUMNS)})"
        )
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as err:
        raise AfrInputError(
            f"{where}: not a UTF-8 text file (byte {err.start}: {err.reason}); allowed: UTF-8 CSV"
        ) from None
    except OSError as err:
        raise AfrInputError(f"{where}: cannot read the published cells ({err.strerror})") from None
    rows = [row for row in csv.reader(io.StringIO(text)) if row]  # blank lines are no rows
    header = [c.strip() for c in rows[0]] if rows else []
    needed = (*PUBLISHED_COLUMNS, *paper.axes)
    lacking = [c for c in needed if c not in header]
    if lacking:
        raise AfrInputError(f"{where}: column {lacking[0]!r} missing; allowed: a header with {', '.join(needed)}")
    numeric = [header.index(c) for c in ("value", *paper.axes)]
    for line, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            raise AfrInputError(f"{where}: line {line}: {len(row)} fields, the header has {len(header)}")
        for i in numeric:
            try:
                float(row[i])
            except ValueError:
                raise AfrInputError(
                    f"{where}: line {line}: {header[i]}: {row[i]!r} is not a number; "
                    "allowed: the number as printed (e.g. 0.600)"
                ) from None


def check_reports(paper: Paper) -> None:
    """Each table a report of the paper sets beside our stores is a published table."""
    from afr_cli.catalogue.published import published_table

    for report in paper.reports:
        for spec in report.papers:
            try:
                published_table(spec)
            except AfrInputError as err:
                raise AfrInputError(f"{paper.data_file}: reports: {report.name}: tables: {err}") from None


def check_claims(paper: Paper) -> None:
    """Each claim names a known test and report, and its test runs on the paper's own table (the
    half of the verdict that needs no store of ours): a bad column is found now, not after the run."""
    from afr_cli.publish.claims.judge import TESTS, judge

    known = {r.name for r in reports()}
    for claim in paper.claims:
        where = f"{paper.data_file}: claims: {claim.get('id')}"
        if claim.get("test") not in TESTS:
            raise AfrInputError(f"{where}: test: {claim.get('test')!r} is not allowed; allowed: {', '.join(TESTS)}")
        if "report" in claim and claim["report"] not in known:
            raise AfrInputError(
                f"{where}: report: {claim['report']!r} is not a report; allowed: {', '.join(sorted(known))}"
            )
        try:
            judge(paper.id, claim, None, paper.reps)
        except AfrInputError as err:  # judge names the package's path; name the folder's file instead
            raise AfrInputError(str(err).replace(f"afr_cli/papers/{paper.id}/paper.yaml", paper.data_file)) from None
        except (KeyError, TypeError, ValueError, IndexError) as err:
            raise AfrInputError(
                f"{where}: {type(err).__name__}: {err}; the claim's keys do not fit its test "
                f"{claim.get('test')!r} (afr_cli/papers/README.md)"
            ) from None


def check_studies(paper: Paper) -> None:
    """Each declared study (and its ``show``) is a function of the folder's studies.py (the file
    is loaded once for all of them)."""
    from afr_cli.publish.studies import load_studies, study_function

    if not paper.studies:
        return
    module = load_studies(paper)
    for study in paper.studies:
        study_function(paper, study, module=module)
        if study.show:
            study_function(paper, study, study.show, module=module)


def check_paper(paper: Paper) -> None:
    """Everything a paper's report build reads from its folder, checked before anything runs."""
    check_published(paper)
    check_reports(paper)
    check_claims(paper)
    check_studies(paper)
