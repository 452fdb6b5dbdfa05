"""Rendering HTML pages and the site-level text files through the Jinja templates."""

import hashlib
from collections.abc import Iterator
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup

from generator import markup, template, urls
from generator.linking import Links, modified, resolve
from generator.records import Content, Record

RECENT_COUNT = 20
FEED_COUNT = 50


class Pages:
    def __init__(self, content: Content, links: Links, assets: dict[str, bytes]):
        self.content = content
        self.links = links
        self.env = _environment(content.root / "templates", content, assets)

    def render(self, name: str, **context) -> bytes:
        return self.env.get_template(name).render(**context).encode()

    def page(self, name: str, url: str, title: str, description: str, **context) -> bytes:
        page = {
            "url": url,
            "title": title,
            "description": description,
            "og_type": context.pop("og_type", "website"),
        }
        return self.render(name, page=page, **context)

    def error(self, record: Record, doc: dict) -> bytes:
        site = self.content.site
        report = urls.github_new_issue(
            site["repo"],
            f"[{record.id}] {record.title}",
            f"Page: {doc['html_url']}\nRecord: {record.path}\n\nWhat is wrong or missing:\n",
        )
        description = doc.get("summary") or record.message
        return self.page(
            "error.html",
            urls.error(record.id),
            record.title,
            description,
            og_type="article",
            doc=doc,
            report_url=report,
        )

    def site_pages(self) -> Iterator[tuple[str, bytes]]:
        """Everything that is not an error page."""
        content, links = self.content, self.links
        counts = {
            key: sum(map(len, links.by_file.get(key, {}).values())) for key in content.projects
        }
        yield (
            "/",
            self.page(
                "home.html",
                "/",
                content.site["title"],
                content.site.get("tagline") or content.site["title"],
                records=content.records,
                counts=counts,
                guides=content.guides,
                recent=links.recent[:RECENT_COUNT],
            ),
        )
        for key, project in content.projects.items():
            files = links.by_file.get(key, {})
            yield (
                urls.project(key),
                self.page(
                    "project.html",
                    urls.project(key),
                    f"{project.name} errors",
                    f"All {counts[key]} {project.name} errors, grouped by source file.",
                    project=project,
                    files=files,
                    count=counts[key],
                ),
            )
        if content.guides:
            yield (
                urls.guides(),
                self.page(
                    "guides.html",
                    urls.guides(),
                    "Guides",
                    "Long-form guides to the errors.",
                    guides=content.guides,
                ),
            )
        for guide in content.guides:
            yield urls.guide(guide.slug), self._guide(guide)
        for alias, target in sorted(content.aliases.items()):
            yield urls.error(alias), self.render("redirect.html", target=content.records[target])
        yield (
            "/404.html",
            self.page(
                "404.html", "/404.html", "Page not found", "There is no page at this address."
            ),
        )
        yield "/sitemap.xml", self.render("sitemap.xml", entries=self._sitemap_entries())
        recent = [r for r in links.recent if modified(r)][:FEED_COUNT]
        yield (
            "/feed.xml",
            self.render(
                "feed.xml", records=recent, updated=modified(recent[0]) if recent else "1970-01-01"
            ),
        )
        yield "/robots.txt", self.render("robots.txt")

    def _guide(self, guide) -> bytes:
        site = self.content.site
        covered = [resolve(self.content, ident) for ident in guide.errors]
        return self.page(
            "guide.html",
            urls.guide(guide.slug),
            guide.title,
            guide.summary or guide.title,
            og_type="article",
            guide=guide,
            body=markup.markdown(guide.body),
            toc=markup.headings(guide.body),
            covered=covered,
            edit_url=urls.github_edit(site["repo"], site["branch"], guide.path),
        )

    def _sitemap_entries(self) -> list[tuple[str, str | None]]:
        content = self.content
        entries = [("/", None)] + [(urls.project(k), None) for k in content.projects]
        if content.guides:
            entries.append((urls.guides(), None))
        entries += [(urls.guide(g.slug), g.updated or None) for g in content.guides]
        entries += [
            (urls.error(rid), modified(rec)) for rid, rec in sorted(content.records.items())
        ]
        return entries


def _environment(template_dir: Path, content: Content, assets: dict[str, bytes]) -> Environment:
    env = Environment(
        loader=FileSystemLoader(template_dir),
        autoescape=select_autoescape(["html", "xml"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    base_url = content.site["base_url"]
    # Fingerprinted asset URLs: safe to cache forever, and deterministic.
    fingerprints = {name: hashlib.sha256(body).hexdigest()[:10] for name, body in assets.items()}
    env.globals.update(
        site=content.site,
        projects=content.projects,
        urls=urls,
        modified=modified,
        segments=template.parse,
        absolute=lambda url: urls.absolute(base_url, url),
        asset=lambda name: f"{urls.asset(name)}?v={fingerprints[name]}",
    )
    env.filters["code"] = _code_filter
    env.filters["slug"] = markup.slugify
    return env


def _code_filter(code: str, language: str | None, caption: str = ""):
    return Markup(markup.code_block(code, language, caption))
