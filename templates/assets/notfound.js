// The 404 page: an error id in capitals, cut to its short form or mistyped still finds its
// page. One id list is fetched: the one of the id's first two digits (/api/ids/<xx>.json).

const box = document.querySelector("[data-nearest]");
const errorUrl = (id) => box.dataset.errorUrl.replace("{}", id);

// The id in an error page's or short link's address (urls.error, urls.short), any case,
// the closing slash optional.
function idIn(path) {
  for (const url of [box.dataset.errorUrl, box.dataset.shortUrl]) {
    const [head, tail] = url.split("{}");
    if (!path.startsWith(head)) continue;
    const rest = path.slice(head.length);
    const id = tail && rest.endsWith(tail) ? rest.slice(0, -tail.length) : rest;
    if (/^[0-9a-f]{4,16}$/i.test(id)) return id.toLowerCase();
  }
  return null;
}

// Hex digits in common at the start, then in place: how near an id is to what was typed.
function nearness(id, want) {
  let prefix = 0;
  while (prefix < want.length && id[prefix] === want[prefix]) prefix += 1;
  const same = [...want].filter((c, i) => id[i] === c).length;
  return prefix * 100 + same;
}

function go(id) {
  location.replace(`${errorUrl(id)}${location.search}${location.hash}`);
}

function list(rows) {
  const items = rows.map(([id, title]) => {
    const link = Object.assign(document.createElement("a"), { href: errorUrl(id), textContent: title });
    const code = Object.assign(document.createElement("code"), { textContent: id });
    const item = document.createElement("li");
    item.append(link, " ", code);
    return item;
  });
  box.querySelector("ul").replaceChildren(...items);
  box.hidden = false;
}

async function find(want) {
  const response = await fetch(box.dataset.nearest.replace("{}", want.slice(0, 2)));
  const rows = response.ok ? await response.json() : [];
  const exact = rows.find(([id]) => id === want);
  const starting = rows.filter(([id]) => id.startsWith(want));
  if (exact) return go(exact[2]);
  if (starting.length === 1) return go(starting[0][2]);
  const near = rows.map((row) => [nearness(row[0], want), row]).sort((a, b) => b[0] - a[0]);
  if (near.length) list(near.slice(0, 5).map(([, row]) => row));
}

const asked = box && idIn(location.pathname);
if (asked) find(asked).catch(() => {});
