"""The service worker, /sw.js: served from the site's root so that it covers every page."""

import hashlib


def service_worker(pages) -> bytes:
    """templates/sw.js with the current asset URLs and the vendored files it keeps, in a
    cache named after their digests: new third-party files (a new Pyodide) start a new one."""
    vendored = pages.vendored
    joined = "\0".join(f"{url} {digest}" for url, digest in sorted(vendored.items()))
    key = hashlib.sha256(joined.encode()).hexdigest()[:10]
    return pages.render(
        "sw.js", asset_names=pages.asset_names, vendored=sorted(vendored), vendored_key=key
    )
