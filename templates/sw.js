// The site's service worker: a second visit starts warm, and pages once seen work offline.
// It fetches nothing ahead of the visitor: only what a page asked for is kept.
// - Fingerprinted assets (?v=) and the vendored third-party files (a wing's, as Pyodide),
//   which never change under one URL: from the cache first. The vendored files' cache is
//   named after their digests, so new ones start a new cache; assets no longer in the site
//   are dropped when this worker starts.
// - Everything else of the site (pages, search shards, the API): the network first, the
//   cache when offline.
const ASSETS = "errorkb-assets";
const VENDORED = "errorkb-vendored-{{ vendored_key }}";
const PAGES = "errorkb-pages";
const CURRENT = new Set([
{% for name in asset_names %}  "{{ asset(name) }}",
{% endfor %}]);
const VENDORED_URLS = new Set([
{% for url in vendored %}  "{{ url }}",
{% endfor %}]);

self.addEventListener("install", () => self.skipWaiting());

self.addEventListener("activate", (event) => {
  event.waitUntil((async () => {
    for (const name of await caches.keys()) {
      if (name.startsWith("errorkb-vendored-") && name !== VENDORED) await caches.delete(name);
    }
    const assets = await caches.open(ASSETS);
    for (const request of await assets.keys()) {
      const url = new URL(request.url);
      if (!CURRENT.has(url.pathname + url.search)) await assets.delete(request);
    }
    await self.clients.claim();
  })());
});

async function cacheFirst(event, name, key) {
  const cache = await caches.open(name);
  const hit = await cache.match(key);
  if (hit) return hit;
  const response = await fetch(event.request);
  if (response.ok) event.waitUntil(cache.put(key, response.clone()));
  return response;
}

// A page is kept under its address without the query: an error page opened with values
// offline is the same page.
async function networkFirst(event, name, key) {
  const cache = await caches.open(name);
  try {
    const response = await fetch(event.request);
    if (response.ok) event.waitUntil(cache.put(key, response.clone()));
    return response;
  } catch (error) {
    const hit = await cache.match(key);
    if (hit) return hit;
    throw error;
  }
}

// Where a request of the site is kept: [cache, strategy, key], or null for none.
function place(url, navigate) {
  if (url.origin !== location.origin || url.pathname === "{{ urls.service_worker() }}") return null;
  if (VENDORED_URLS.has(url.pathname)) return [VENDORED, cacheFirst, url.href];
  if (url.pathname.startsWith("/assets/") && url.searchParams.has("v")) {
    return [ASSETS, cacheFirst, url.href];
  }
  return [PAGES, networkFirst, navigate ? url.origin + url.pathname : url.href];
}

self.addEventListener("fetch", (event) => {
  const { request } = event;
  const where = place(new URL(request.url), request.mode === "navigate");
  if (request.method !== "GET" || request.headers.has("range") || !where) return;
  const [name, strategy, key] = where;
  event.respondWith(strategy(event, name, key));
});

// A page asks to keep what it fetched before this worker took over (the first page of a
// first visit; Python's files): copies from the HTTP cache, never a new download of a
// file the page did not ask for.
self.addEventListener("message", (event) => {
  if (Array.isArray(event.data?.keep)) event.waitUntil(keep(event.data.keep));
});

async function keep(urls) {
  for (const href of urls) {
    const where = place(new URL(href, location.origin), href === urls[0]);
    if (!where) continue;
    const [name, , key] = where;
    const cache = await caches.open(name);
    if (await cache.match(key)) continue;
    try {
      const response = await fetch(href, { cache: "force-cache" });
      if (response.ok) await cache.put(key, response);
    } catch {
      // gone or offline: kept next time it is fetched
    }
  }
}
