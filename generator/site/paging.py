"""The project document in pages: /api/projects/<key>.json holds the first page and says how
many there are; /api/projects/<key>/<n>.json the others. No API file grows past the size a
static host or a client should have to swallow in one piece (256 KB at 5,869 records is
about 700 errors)."""

from collections.abc import Iterator

from errorkb import urls

PER_PAGE = 500


def project_pages(doc: dict, key: str, base_url: str) -> Iterator[tuple[str, dict]]:
    """The project document split into pages of PER_PAGE errors, each a whole document."""
    errors = doc["errors"]
    page_urls = project_page_urls(key, len(errors))
    count = len(page_urls)
    for page, url in enumerate(page_urls, 1):
        yield url, {
            **doc,
            "page": page,
            "pages": count,
            "per_page": PER_PAGE,
            "next": urls.absolute(base_url, page_urls[page]) if page < count else None,
            "errors": errors[(page - 1) * PER_PAGE : page * PER_PAGE],
        }


def project_page_urls(key: str, errors: int) -> list[str]:
    """The URLs of the pages of a project document listing this many errors."""
    count = max(1, -(-errors // PER_PAGE))
    return [urls.project_json(key)] + [urls.project_json_page(key, n) for n in range(2, count + 1)]
