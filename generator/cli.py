"""The `errorkb` command."""

import argparse
import errno
import io
import json
import math
import os
import re
import sys
from pathlib import Path

from errorkb import registry, resources
from errorkb.projects import pyodide

# generator.content (yaml, the schema) is imported by the commands that read content, not
# here: `errorkb match` answers from the cached index without it.


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _report(exc) -> int:
    for problem in exc.problems:
        print(problem, file=sys.stderr)
    _log(f"{len(exc.problems)} problem(s) found; nothing was written")
    return 1


def cmd_check(args) -> int:
    from errorkb.content.load import load_content
    from errorkb.content.model import ContentError

    try:
        content = load_content(args.root)
    except ContentError as exc:
        return _report(exc)
    _log(
        f"ok: {len(content.records)} records, {len(content.guides)} guides, "
        f"{len(content.projects)} projects"
        + "".join(
            f", {said}"
            for w in registry.wings(content.projects.values())
            if (said := w.describe(content.extras.get(w.key)))
        )
    )
    return 0


def cmd_build(args) -> int:
    from errorkb.content.model import ContentError
    from errorkb.progress import Progress
    from errorkb.site.publish import BuildError
    from errorkb.site.quick import build_site

    progress = Progress()
    try:
        result = build_site(
            args.root,
            args.out,
            log=progress.log,
            progress=progress,
            project=args.project,
            checked=args.check,
        )
    except ContentError as exc:
        progress.close()
        return _report(exc)
    except BuildError as exc:
        progress.log(f"error: {exc}")
        return 1
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        where = f" writing {exc.filename}" if exc.filename else ""
        _log(
            f"errorkb build: the disk is full{where}: free some space; "
            "the previous site is unchanged"  # the build writes into the spare, never the site
        )
        return 1
    for problem in result.problems:
        print(f"{result.out.name}/{problem}", file=sys.stderr)
    if result.problems:
        _log(f"{len(result.problems)} problem(s) found in the site built into {result.out}")
        return 1
    return 0


def cmd_export(args) -> int:
    from errorkb import urls
    from errorkb.content.load import load_content
    from errorkb.content.model import ContentError
    from errorkb.export.markdown import ExportError, export

    try:
        urls.section(args.path)  # before the content is loaded: a mistyped path fails at once
    except ValueError as exc:
        _log(f"error: --path {args.path!r} {exc}")
        return 1
    try:
        content = load_content(args.root)
    except ContentError as exc:
        return _report(exc)
    base_url = args.base_url or content.site["base_url"]
    try:
        done = export(
            content, args.docs_dir, base_url, args.path, not args.no_directory_urls, args.api_dir
        )
    except ExportError as exc:
        _log(f"error: {exc}")
        return 1
    api = f" and {done.files} API files into {args.api_dir}" if args.api_dir else ""
    _log(f"exported {done.pages} Markdown pages into {args.docs_dir}{api}")
    return 0


def cmd_serve(args) -> int:
    """Serves as soon as the content is loaded: the pages are rendered on request until the
    build, running meanwhile, has written them."""
    from errorkb.content.model import ContentError
    from errorkb.progress import Progress
    from errorkb.serve import serve
    from errorkb.site.build import load_plan

    out = (args.out or args.root / "site").resolve()
    progress = Progress()
    plan = failure = None
    try:
        plan = load_plan(args.root, progress=progress)
    except ContentError as exc:
        progress.close()
        _report(exc)
        if not out.exists():
            return 1
        _log("serving the last good site; fix the problems above and it rebuilds")
        failure = exc
    serve(args.root.resolve(), out, args.host, args.port, progress.log, failure, plan, progress)
    return 0


def cmd_new(args) -> int:
    from errorkb.sources.scaffold import scaffold

    try:
        path = scaffold(args.root, args.project, args.exception, args.message)
    except FileExistsError as exc:
        _log(f"error: {exc}")
        return 1
    print(path)
    return 0


def cmd_match(args) -> int:
    from errorkb.search import engine as search
    from errorkb.search import index as search_index

    try:
        index = search_index.open_index(args.root, args.site)
    except FileNotFoundError:
        _log(f"error: no search index in {args.site}; run errorkb build first")
        return 1
    except Exception as exc:  # records is loaded only when the index is compiled anew
        from errorkb.content.model import ContentError

        if not isinstance(exc, ContentError):
            raise
        return _report(exc)
    found = index.meta.get("version") if isinstance(index.meta, dict) else None
    if found != search.VERSION:  # a site built by another errorkb: its rules, another format
        _log(
            f"error: {args.site}: an index of format {found}; this errorkb reads format "
            f"{search.VERSION}: run the errorkb release the site was built with"
        )
        return 1
    _tolerant_stdio()
    try:
        if args.batch:
            return _match_batch(search, index, args.engine, _site_of(args))
        text = sys.stdin.read() if args.text == "-" else args.text
        return _match_one(search, index, _readable(text), args)
    except BrokenPipeError:
        # The reader is gone (errorkb match ... | head -1): nothing more to say, no traceback.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def cmd_triage(args) -> int:
    """An issue's body in, the bot's comment out; with --post, the comment on the issue."""
    from errorkb.triage import comment, triage
    from errorkb.triage.github import GitHubError
    from errorkb.triage.site import BadIndex

    if args.repo:
        return _triage_dry_run(args)
    try:
        event, body = _triage_input(args)
        repo = event.repo if event else ""
        title = event.title if event else args.title
        found = triage(body, _triage_site(args), args.min, repo, args.engine, title)
    except BadIndex as exc:  # the wrong site, or one of another errorkb: the setup is wrong
        _log(f"{'::error::' if args.post else ''}errorkb triage: {exc}")
        return 2
    except (OSError, ValueError) as exc:  # a body or site it cannot read: say so, post nothing
        _log(f"{'::warning::' if args.post else ''}errorkb triage: {exc}")
        return 0 if args.post else 1
    text = comment.render(found)
    if args.json:
        print(json.dumps({"comment": text, "errors": [_finding(f) for f in found]}, indent=2))
    elif text and not args.post:
        print(text, end="")
    if args.post:
        try:
            _post(event, text, args.label)
        except GitHubError as exc:  # never fails the workflow: the issue is there still
            _log(f"::warning::errorkb triage: {exc}")
        return 0
    return 0 if text else 1


def _triage_dry_run(args) -> int:
    """What the bot would say on each of a repository's recent issues, posting nothing: a
    maintainer's look before turning it on. Reads GITHUB_API_URL and GITHUB_TOKEN."""
    from errorkb.triage import comment, triage
    from errorkb.triage.github import GitHub, GitHubError
    from errorkb.triage.site import BadIndex

    if args.event or args.post:
        _log("errorkb triage: --repo reads the repository's issues: no --event, no --post")
        return 2
    if not args.since:
        _log("errorkb triage: --repo needs --since DATE (the issues updated since)")
        return 2
    try:
        site = _triage_site(args)
        gh = GitHub.reading(args.repo)
        read = spoken = 0
        out = []
        for issue in gh.issues(args.since):
            title, body = (v if isinstance(v, str) else "" for v in _fields(issue, "title", "body"))
            found = triage(body, site, args.min, args.repo, args.engine, title)
            text = comment.render(found)
            read += 1
            spoken += bool(text)
            number, url = issue.get("number"), issue.get("html_url", "")
            if args.json:
                errors = [_finding(f) for f in found]
                out.append({"number": number, "title": title, "url": url, "comment": text})
                out[-1]["errors"] = errors
                continue
            print(f"#{number} {comment.text(title)[:100]}  {url}".rstrip())
            for f in found:
                print(f"  would name: {comment.line(f)}")
            if not found:
                print("  would say nothing")
    except BadIndex as exc:
        _log(f"errorkb triage: {exc}")
        return 2
    except (OSError, ValueError, GitHubError) as exc:
        _log(f"errorkb triage: {exc}")
        return 1
    if args.json:
        print(json.dumps(out, indent=2))
    _log(
        f"errorkb triage: {read} issue(s) of {args.repo} since {args.since}; would comment on "
        f"{spoken}; posted nothing ({gh.requests} request(s))"
    )
    return 0


def _fields(item: dict, *names: str) -> list[object]:
    return [item.get(name) for name in names]


def _triage_input(args):
    """(event or None, body): the event's issue or comment, else stdin."""
    from errorkb.triage.github import read_event

    if not args.event:
        if args.post:
            raise ValueError("--post needs --event")
        _tolerant_stdio()
        return None, sys.stdin.read()
    payload = json.loads(Path(args.event).read_text(encoding="utf-8", errors="replace"))
    if not isinstance(payload, dict):
        raise ValueError(f"{args.event}: not an event payload")
    event = read_event(payload)
    return event, event.text


def _triage_site(args):
    from errorkb.triage import site

    if args.site:
        return site.from_folder(args.site)
    if args.index:
        return site.from_url(args.index)
    raise ValueError("give --site DIR (a built site) or --index URL (a published site's index)")


def _post(event, text: str | None, label: str) -> None:
    from errorkb.triage import github

    if event.name == "issues" and event.action not in github.ISSUE_ACTIONS:
        return _log(f"errorkb triage: nothing to do on '{event.action}'")
    gh = github.GitHub.from_env()
    done = github.sync(gh, event, text, label)
    _log(f"errorkb triage: issue #{event.issue}: {done} ({gh.requests} request(s))")


def _finding(f) -> dict:
    from errorkb.triage import comment

    return {
        **f.result.to_json(),
        "url": comment.page_url(f),
        "quote": f.quote,
        "final": f.final,
        "releases": comment.printed_by(f),
        "answer": comment.answer_for(f.document or {}, f.result.values),
    }


def _tolerant_stdio() -> None:
    """Pastes may be any bytes: what stdin cannot decode is replaced, and what stdout
    cannot encode (a lone surrogate in an id echoed back) is escaped, as \\udcff, which
    inside a JSON string is JSON still."""
    for stream, errors in ((sys.stdin, "replace"), (sys.stdout, "backslashreplace")):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors=errors)


_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _readable(text: str) -> str:
    """The text with its lone surrogates (from a JSON escape, or bytes of an argument that
    are not UTF-8) replaced: they cannot be encoded, in a report's URL or on stdout."""
    return _SURROGATE.sub("\ufffd", text)


def _answers(site, results) -> list[dict | None]:
    """Each result's answer for its values (site.answer, from the built site's API
    documents): what the page says for them, so that the terminal and tools need not
    recompute it."""
    from errorkb.answer import answer

    def document(record_id: str) -> dict:
        try:
            doc = json.loads((Path(site) / "api" / "errors" / f"{record_id}.json").read_bytes())
        except (OSError, ValueError):
            return {}
        return doc if isinstance(doc, dict) else {}

    out = []
    for r in results:
        doc = document(r.id) if r.values else {}
        today = document(r.today["id"]) if doc and getattr(r, "today", None) else None
        out.append(answer(doc, r.values, today) if doc else None)
    return out


def _match_one(search, index, text: str, args) -> int:
    results = search.search(index, text, engine=args.engine)
    fits = [r for r in results if r.match != "similar"]
    report = None if fits else search.report_url(index, text)
    answers = _answers(_site_of(args), results)
    if args.json:
        found = [{**r.to_json(), "answer": a} for r, a in zip(results, answers, strict=True)]
        print(json.dumps(found, ensure_ascii=False, indent=2))
    for rank, result in enumerate([] if args.json else results, 1):
        kind = f"{result.match}, tied" if result.tied else result.match
        print(f"{rank}. {result.title}  [{kind}]")
        print(f"   {result.exception} · {result.project} · {result.id}")
        if result.match != "exact":
            print(f"   matched: {result.how}")
        if result.wording:
            print(f"   in {result.wording}")
        if result.tied:
            print("   tied: another match fits as well (the same text); source order ranks them")
        for other in result.also:
            print(f"   also printed by {other['project']}: {other['url']}")
        if result.followed_by:
            then = result.followed_by
            print(f"   then: {then['title']} ({then['id']}), which only says this error happened")
        for name, value in result.values.items():
            print(f"   {name} = {value}")
        for line in (answers[rank - 1] or {}).get("lines", []):
            print(f"   → {line}")
        print(f"   {result.url}")
    if not results:
        _log("no matching error")
    if report and not args.json:
        _log(f"not what you got? report it: {report}")
    return 0 if results else 1


def _site_of(args) -> Path:
    """The built site whose API documents hold the records' answers: --site, else root/site."""
    return args.site or Path(args.root) / "site"


def _match_batch(search, index, engine: str | None = None, site: Path | None = None) -> int:
    """JSON lines in ({"text": ..., "id": ...} or a string), JSON lines out, one per line,
    each written as soon as it is answered. A line that holds no query is answered with
    why and its number, and the lines after it are answered still."""
    for number, line in enumerate(sys.stdin, 1):
        if line.strip():
            print(_batch_answer(search, index, number, line, engine, site), flush=True)
    return 0


class _BadQuery(ValueError):
    """A line of a batch that holds no query; the message says why."""


QUERY_SHAPE = 'expected a JSON string or {"text": "..."}'


def _batch_answer(
    search, index, number: int, line: str, engine: str | None = None, site: Path | None = None
) -> str:
    try:
        query = _batch_query(line)
    except _BadQuery as exc:
        return json.dumps({"line": number, "error": str(exc)})
    text = _readable(query["text"])
    runs = query.get("engine") if isinstance(query.get("engine"), str) else engine
    results = search.search(index, text, engine=runs)
    fits = any(r.match != "similar" for r in results)
    answers = _answers(site, results) if site else [None] * len(results)
    answer = {
        **({"id": query["id"]} if "id" in query else {}),
        "results": [{**r.to_json(), "answer": a} for r, a in zip(results, answers, strict=True)],
        "report": None if fits else search.report_url(index, text),
    }
    return json.dumps(answer, ensure_ascii=False)


def _batch_query(line: str) -> dict:
    """The query a line holds, as {"text": ..., maybe "id": ...}; only what strict JSON
    allows, so that an id echoed back is JSON too."""
    try:
        query = json.loads(line, parse_constant=_not_finite, parse_float=_finite)
    except RecursionError:
        raise _BadQuery("nested too deep") from None
    except _BadQuery:
        raise
    except ValueError:
        raise _BadQuery(QUERY_SHAPE) from None
    query = {"text": query} if isinstance(query, str) else query
    if not isinstance(query, dict) or not isinstance(query.get("text"), str):
        raise _BadQuery(QUERY_SHAPE)
    return query


def _not_finite(name: str) -> float:
    raise _BadQuery("a number that is not finite")


def _finite(number: str) -> float:
    value = float(number)
    return value if math.isfinite(value) else _not_finite(number)  # 1e999 is inf


def _scan_options(args) -> dict:
    """How extract and verify-sources read a source tree (options both take)."""
    names = ("include_vendored", "asserts", "printed", "exclude", "prefix", "jobs")
    return {name: getattr(args, name) for name in names}


def cmd_extract(args) -> int:
    from errorkb.content.model import ContentError
    from errorkb.sources.extract import ExtractError, extract

    try:
        summary = extract(
            args.root,
            args.source,
            args.project,
            args.ref,
            snippets=args.snippets,
            dry_run=args.dry_run,
            **_scan_options(args),
        )
    except ContentError as exc:
        return _report(exc)
    except ExtractError as exc:
        _log(f"error: {exc}")
        return 1
    for line in summary.lines():
        _log(line)
    if args.dry_run:
        _log("dry run: nothing was written")
    return 0


def cmd_tidy(args) -> int:
    from errorkb.content.load import load_content
    from errorkb.content.model import ContentError
    from errorkb.sources import chronicle, history

    try:
        content = load_content(args.root)
        if args.project not in content.projects:
            _log(f"error: no project {args.project!r} in content/projects/")
            return 1
        project = content.projects[args.project]
        package = project.package or project.key
        where = (project.source_prefix, project.source_exclude)

        def scanned(version: str) -> list | None:  # the scan cache only: never a download
            found = history.load_scan(package, version)
            return history.in_repository(found.sites, *where) if found is not None else None

        done = chronicle.tidy(args.root, content, args.project, dry_run=args.dry_run, scans=scanned)
    except ContentError as exc:
        return _report(exc)
    for line in done.warnings:
        _log(f"warning: {line}")
    _log(
        f"{len(done.merged)} removed records merged into the active record printing their words"
        f" (their ids now aliases), {done.variants_dropped} variants dropped (another record"
        f" prints them), superseded_by: {done.superseded} kept, {done.unlinked} taken out,"
        f" {done.confirmed} written as content/lineage/ says;"
        f" {len(set(done.updated))} records updated"
        + ("; dry run: nothing was written" if args.dry_run else "")
    )
    return 0


def cmd_history(args) -> int:
    import functools
    import time
    from collections import Counter

    from errorkb.content.load import load_content
    from errorkb.content.model import ContentError
    from errorkb.sources import chronicle, explain, history, lineage
    from errorkb.sources.extract import ExtractError, project_ref, write_text

    start = time.monotonic()
    try:
        content = load_content(args.root)
        project_ref(content, args.project)
        project = content.projects[args.project]
        package = project.package or project.key
        known = registry.wing(project.wing_key)

        def knowledge(files):
            return known.knowledge(files) or explain.Knowledge()

        where = (project.source_prefix, project.source_exclude)
        if args.backfill_derived:
            return _backfill_derived(args, content, package, knowledge, where)
        versions = history.select(history.available_versions(package), args.releases, args.every)
        _log(f"{package}: {len(versions)} releases, {versions[0]} to {versions[-1]}")
        scanner = functools.partial(history.scan_release, sources=args.sources)
        scans = history.scan_releases(
            package, versions, jobs=args.jobs, report=_log, knowledge=knowledge, scanner=scanner
        )
        versions = [scan.version for scan in scans]  # those skipped are tried again next time
        found = lineage.build((s.version, history.in_repository(s.sites, *where)) for s in scans)
        done = chronicle.write(args.root, content, args.project, found, dry_run=args.dry_run)
        if not args.dry_run:
            path = args.root / "content" / "projects" / f"{args.project}.yaml"
            write_text(path, history.set_releases_scanned(path, versions))
    except ContentError as exc:
        return _report(exc)
    except ExtractError as exc:
        _log(f"error: {exc}")
        return 1
    newest, every = history.kind_counts(scans)
    kinds = ("raise", "assert", "log", "http")
    for label, counts in ((f"messages in {versions[-1]}", newest), ("messages in all", every)):
        _log(f"{label}: " + ", ".join(f"{counts[k]} {k}" for k in kinds))
    decisions = Counter(row["decision"] for row in found.log)
    _log(
        f"checks: {len(found.live())} ({done.reworded} reworded, {done.removed} removed, "
        f"{done.superseded} of them superseded); identity decisions: "
        + ", ".join(f"{n} {d}" for d, n in sorted(decisions.items()))
        + f" (log: {history.write_log(package, found.log)})"
    )
    _log(
        f"records: {len(done.created)} created, {len(done.updated)} updated, "
        f"{len(done.unchanged)} unchanged; done in {time.monotonic() - start:.1f} s"
        + ("; dry run: nothing was written" if args.dry_run else "")
    )
    return 0


def _backfill_derived(args, content, package: str, knowledge, where) -> int:
    """`errorkb history --backfill-derived`: scan again (one at a time, from the cache when
    scanned already) only the releases that last printed a removed record's message or a
    variant, and write what each said of that wording as its `derived`."""
    import functools
    import time

    from errorkb.sources import chronicle, history

    start = time.monotonic()
    project = content.projects[args.project]
    latest = project.releases_scanned[-1] if project.releases_scanned else project.version
    versions = chronicle.backfill_releases(content, args.project)
    if not versions:
        _log(f"{package}: no removed record or variant with releases: nothing to backfill")
        return 0
    _log(f"{package}: {len(versions)} releases last printed a wording no longer printed")
    scanner = functools.partial(history.scan_release, sources=args.sources)
    scans = history.scan_releases(
        package, versions, jobs=args.jobs, report=_log, knowledge=knowledge, scanner=scanner
    )
    releases = {scan.version: history.in_repository(scan.sites, *where) for scan in scans}

    def refs(version: str) -> str:
        return chronicle.release_ref(version, latest, project.ref)

    done = chronicle.backfill(
        args.root, content, args.project, releases, refs, dry_run=args.dry_run
    )
    for line in done.missing[:10]:
        _log(f"not in its last release: {line}")
    _log(
        f"derived written: {done.derived} removed records, {done.variants} variants "
        f"({len(done.records)} records); {len(done.missing)} wordings their last release "
        f"lacks; done in {time.monotonic() - start:.1f} s"
        + ("; dry run: nothing was written" if args.dry_run else "")
    )
    return 0


def cmd_rederive(args) -> int:
    import shutil
    import tempfile

    from errorkb.content.load import load_content
    from errorkb.content.model import ContentError
    from errorkb.sources import history
    from errorkb.sources.extract import ExtractError, project_ref, rederive

    folder = None
    try:
        content = load_content(args.root)
        project_ref(content, args.project)
        project = content.projects[args.project]
        wheel = args.wheel
        if wheel is None:
            if not project.version:
                _log(f"error: content/projects/{args.project}.yaml has no version to download")
                return 1
            package = project.package or project.key
            work = resources.user_cache() / package / "wheels"
            work.mkdir(parents=True, exist_ok=True)
            folder = Path(tempfile.mkdtemp(prefix=f"{project.version}-", dir=work))
            _log(f"downloading {package}=={project.version}")
            wheel = history.download(package, project.version, folder)
        summary = rederive(
            args.root, content, wheel, args.project, jobs=args.jobs, dry_run=args.dry_run
        )
    except ContentError as exc:
        return _report(exc)
    except ExtractError as exc:
        _log(f"error: {exc}")
        return 1
    finally:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
    for line in summary.lines():
        _log(line)
    if args.dry_run:
        _log("dry run: nothing was written")
    return 0


def cmd_update(args) -> int:
    from errorkb.content.model import ContentError
    from errorkb.sources import update
    from errorkb.sources.extract import ExtractError

    def run_history(project: str, releases: list[str]) -> int:
        argv = ["--root", str(args.root), "history", "--project", project]
        argv += ["--releases", ",".join(releases)]
        return main(argv + (["--jobs", str(args.jobs)] if args.jobs else []))

    try:
        with update.index_url(args.index_url):
            done = update.update(
                args.root,
                args.project or None,
                run_history,
                every=args.every,
                dry_run=args.dry_run,
                jobs=args.jobs,
                report=_log,
            )
    except ContentError as exc:
        return _report(exc)
    except ExtractError as exc:
        _log(f"error: {exc}")
        return 1
    body = update.markdown(done, dry_run=args.dry_run)
    if args.report:
        args.report.write_text(body, encoding="utf-8")
    else:
        print(body, end="")
    new = any(u.new for u in done) and not args.dry_run
    outputs = os.environ.get("GITHUB_OUTPUT")
    if outputs:  # what the workflow's next steps read: steps.<id>.outputs.<name>
        with open(outputs, "a", encoding="utf-8") as handle:
            handle.write(f"new={str(new).lower()}\n")
            handle.write(f"title={update.title(done)}\n")
            handle.write(f"branch={update.branch(done)}\n")
    quiet = new or args.dry_run
    _log(update.title(done) + ("" if quiet else ": nothing to open a pull request for"))
    return 0


def cmd_verify_sources(args) -> int:
    import json

    from errorkb.content.model import ContentError
    from errorkb.sources.extract import ExtractError
    from errorkb.sources.verify import verify_sources

    if args.accept_variants and not args.update:
        _log("error: --accept-variants goes with --update")
        return 2
    try:
        report = verify_sources(
            args.root,
            args.source,
            args.project,
            args.ref,
            update=args.update,
            accept_variants=args.accept_variants,
            **_scan_options(args),
        )
    except ContentError as exc:
        return _report(exc)
    except ExtractError as exc:
        _log(f"error: {exc}")
        return 1
    if args.json:
        print(json.dumps(report.to_json(), ensure_ascii=False, indent=1))
    else:
        print(report.text(verbose=args.verbose))
    return 1 if report.unresolved() else 0


def _source_options(p: argparse.ArgumentParser) -> None:
    """Options of the commands that read a source tree."""
    p.add_argument("source", type=Path, help="a source folder, a wheel or an sdist")
    p.add_argument("--ref", help="tag or commit the source is at (default: the project's ref)")
    p.add_argument(
        "--asserts", action="store_true", help="also errors raised by `assert cond, message`"
    )
    p.add_argument(
        "--printed",
        action="store_true",
        help="also log lines (logger calls) and the API server's error responses",
    )
    p.add_argument(
        "--include-vendored",
        action="store_true",
        help="also read vendor/, third_party/, _vendor/ and thirdparty/ folders",
    )
    p.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="GLOB",
        help="skip these paths (repeatable)",
    )
    p.add_argument("--prefix", default="", help="put before every path, e.g. src/")
    p.add_argument("--jobs", type=int, help="parser processes (default: one per CPU)")


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="errorkb", description="Error knowledge base generator.")
    top.add_argument(
        "--root",
        type=Path,
        default=Path("."),
        help="project folder holding content/ and templates/ (default: .)",
    )
    sub = top.add_subparsers(dest="command", required=True)

    p = sub.add_parser("check", help="validate content/ and report every problem")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("build", help="validate and build the site")
    p.add_argument("--out", type=Path, help="output folder (default: site/)")
    p.add_argument("--project", help="build one project's site alone (with the shared pages)")
    p.add_argument(
        "--check",
        action="store_true",
        help="then check the site: links, anchors, other hosts, page budget, document schema",
    )
    p.set_defaults(func=cmd_build)

    p = sub.add_parser("export", help="the knowledge base as Markdown pages for a docs tool")
    p.add_argument("docs_dir", type=Path, metavar="DOCS_DIR", help="the docs tool's docs folder")
    p.add_argument("--format", choices=["markdown"], default="markdown")
    p.add_argument("--path", default="errors", help="the folder of the pages (default: errors)")
    p.add_argument("--base-url", help="the docs site's address (default: site.yaml's base_url)")
    p.add_argument(
        "--no-directory-urls",
        action="store_true",
        help="the docs site serves pages as <name>.html (MkDocs' use_directory_urls: false)",
    )
    p.add_argument(
        "--api-dir",
        type=Path,
        help="also write the JSON API here, to be served at the site's /api/ "
        "(default: not written; keep it out of DOCS_DIR, whose every file a docs tool reads)",
    )
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("serve", help="build, serve on 127.0.0.1 and rebuild on change")
    p.add_argument("--out", type=Path, help="output folder (default: site/)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("new", help="scaffold a record with its computed id")
    p.add_argument("--project", required=True)
    p.add_argument("--exception", required=True)
    p.add_argument("--message", required=True, help="the message template, {placeholders} named")
    p.set_defaults(func=cmd_new)

    p = sub.add_parser("match", help="find the records a pasted error message matches")
    p.add_argument(
        "text", nargs="?", default="-", help="the error as pasted, log noise and all; - reads stdin"
    )
    p.add_argument("--site", type=Path, help="read the index of this built site, not content/")
    p.add_argument(
        "--engine",
        help="the key of the engine you run (vllm, sglang): a message both print opens its copy",
    )
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument(
        "--batch",
        action="store_true",
        help='JSON lines on stdin ({"text": ..., "id": ..., "engine": ...}), one JSON line of'
        " results each",
    )
    p.set_defaults(func=cmd_match)

    p = sub.add_parser("triage", help="an issue's errors, as the bot's comment (only when sure)")
    p.add_argument("--event", help="a GitHub issues or issue_comment event payload (else stdin)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--site", type=Path, help="answer from this built site")
    where.add_argument("--index", help="answer from a published site: its search/index.json URL")
    p.add_argument("--min", choices=["exact", "partial"], default="partial", help="least match")
    p.add_argument(
        "--engine",
        help="the key of the engine the issue is about (else the repository it is filed in)",
    )
    p.add_argument("--title", default="", help="without --event: the issue's title")
    p.add_argument("--json", action="store_true", help="the comment and the errors as JSON")
    p.add_argument("--post", action="store_true", help="post, update or delete the comment")
    p.add_argument(
        "--repo",
        help="dry run: read OWNER/NAME's issues through the GitHub API (GITHUB_API_URL, "
        "GITHUB_TOKEN) and print what the bot would say on each, posting nothing",
    )
    p.add_argument("--since", help="with --repo: the issues updated since this date")
    p.add_argument("--label", default="", help="with --post: a label for matched issues")
    p.set_defaults(func=cmd_triage)

    for key in registry.available():  # what the projects' wings add (a calculator, say)
        registry.wing(key).add_commands(sub)
    pyodide.add_command(sub)  # what the wings' calculators run in, for an install from PyPI

    p = sub.add_parser("extract", help="a record for every raise with a literal message")
    _source_options(p)
    p.add_argument("--project", required=True, help="the project the source is of, e.g. vllm")
    p.add_argument("--snippets", action="store_true", help="keep the raise's lines in records")
    p.add_argument("--dry-run", action="store_true", help="report what would change, write nothing")
    p.set_defaults(func=cmd_extract)

    p = sub.add_parser("history", help="scan every release on PyPI; one record per check")
    p.add_argument("--project", required=True, help="the project, e.g. vllm")
    p.add_argument(
        "--releases",
        default="..",
        help='a range "0.2.0..0.33.0" (either end may be left out) or a list "0.6.3,0.33.0"',
    )
    p.add_argument(
        "--every", action="store_true", help="every release of a range, not only the last patch"
    )
    p.add_argument("--dry-run", action="store_true", help="report what would change, write nothing")
    p.add_argument("--jobs", type=int, help="parser processes (default: one per CPU)")
    p.add_argument(
        "--sources",
        type=Path,
        help="a folder of releases unpacked as <package>-<version>/ (their .py files): a "
        "release found there is scanned from it instead of downloaded",
    )
    p.add_argument(
        "--backfill-derived",
        action="store_true",
        help="scan again only the last release of each removed wording (record or variant) "
        "and write what it derived of it; nothing else is touched",
    )
    p.set_defaults(func=cmd_history)

    p = sub.add_parser(
        "rederive", help="rewrite records' derived blocks from the project's pinned release"
    )
    p.add_argument("--project", required=True, help="the project, e.g. vllm")
    p.add_argument(
        "--wheel",
        type=Path,
        help="the release's wheel (or source folder); default: pip downloads the version of "
        "content/projects/<project>.yaml into the cache, deleted afterwards",
    )
    p.add_argument("--dry-run", action="store_true", help="report what would change, write nothing")
    p.add_argument("--jobs", type=int, help="parser processes (default: one per CPU)")
    p.set_defaults(func=cmd_rederive)

    p = sub.add_parser(
        "update", help="scan the releases the knowledge base does not hold yet; what changed"
    )
    p.add_argument(
        "--project",
        action="append",
        default=[],
        help="a project to update (repeatable; default: each with releases_scanned)",
    )
    p.add_argument("--report", type=Path, help="write the pull request's body here (else stdout)")
    p.add_argument(
        "--every", action="store_true", help="every new release, not only the last patch of each"
    )
    p.add_argument("--index-url", help="the package index pip asks (default: pip's own)")
    p.add_argument("--dry-run", action="store_true", help="say which releases are new; scan none")
    p.add_argument("--jobs", type=int, help="parser processes (default: one per CPU)")
    p.set_defaults(func=cmd_update)

    p = sub.add_parser("tidy", help="the history's identity rules applied to the records alone")
    p.add_argument("--project", required=True, help="the project, e.g. vllm")
    p.add_argument("--dry-run", action="store_true", help="report what would change, write nothing")
    p.set_defaults(func=cmd_tidy)

    p = sub.add_parser("verify-sources", help="check records' locations against a source tree")
    _source_options(p)
    p.add_argument("--project", help="the project to check (default: the only one)")
    p.add_argument("--update", action="store_true", help="rewrite the locations of moved records")
    p.add_argument(
        "--accept-variants",
        action="store_true",
        help="with --update: add reworded messages to variants and follow them",
    )
    p.add_argument("--json", action="store_true", help="machine-readable report")
    p.add_argument("-v", "--verbose", action="store_true", help="list ok records too")
    p.set_defaults(func=cmd_verify_sources)
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    return args.func(args)


def run() -> None:
    """The command's entry point: main, then exit without tearing down the interpreter,
    whose freeing a build's objects one by one is a tenth of a rebuild."""
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
