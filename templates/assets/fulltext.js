// Search tier 2: Pagefind's full-text bundle, and the bundle of the pages changed since it was
// made (a writer's own builds; a cold build lists none). That one sits beside it
// (urls.pagefind_newer), with the list of its pages, whose hits in the older bundle are stale.
// Loaded on the first search; the pages found come back as Pagefind's data of each.

const load = (url) => import(url).then(async (pf) => (await pf.init(), pf));

export async function fullText(mainBundle) {
  const newerList = new URL("../pagefind-newer/pages.json", new URL(mainBundle, location.href));
  const [main, newer] = await Promise.all([load(mainBundle),
    fetch(newerList).then((r) => r.json()).catch(() => ({ pages: [] }))]);
  const stale = new Set(newer.pages);
  const bundles = stale.size ? [main, await load(new URL("pagefind.js", newerList).href)] : [main];
  return async (query) => {
    const found = await Promise.all(bundles.map((pf, i) =>
      pf.search(query).then((f) => f.results.map((r) => ({ r, older: i === 0 })))));
    const ranked = found.flat().sort((a, b) => b.r.score - a.r.score).slice(0, 6 + stale.size);
    const pages = await Promise.all(ranked.map(async ({ r, older }) => {
      const page = await r.data();
      return older && stale.has(new URL(page.url, location.href).pathname) ? null : page;
    }));
    return pages.filter(Boolean).slice(0, 6);
  };
}
