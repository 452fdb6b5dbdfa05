// The search box of every page, and the values of "Your case" on error pages. Tier 1 (match.js) and
// tier 2 (fulltext.js: Pagefind) load on first use. Query text reaches the page only as text nodes.

let tier1, tier2;

// The index lives beside the search page: /search/index.json (urls.search_index).
function errorIndex(form) {
  tier1 ??= import("./match.js").then((m) => new m.Index(new URL("index.json", form.action).pathname));
  return tier1;
}

// A site with nothing to index full-text has no Pagefind bundle, and a page inside a host's
// docs site names none (the host has search of its own): tier 2 then stays empty. Its code
// loads on the first search, as Pagefind does.
async function pageHits(form, text) {
  if (!form.dataset.pagefind) return [];
  tier2 ??= import("./fulltext.js").then((m) => m.fullText(form.dataset.pagefind)).catch(() => null);
  const search = await tier2;
  return search ? search(text.slice(0, 200)) : [];
}

function el(tag, className, ...children) {
  const node = document.createElement(tag);
  node.className = className;
  node.append(...children);
  return node;
}

function link(url, title, ...rest) {
  const a = el("a", "search-hit", el("span", "hit-title", title), ...rest);
  a.href = url;
  return a;
}

// How a result fits the paste, in plain words (the "how" comes from the index: engine.HOW).
const FITS = { partial: "close match", generic: "loose match", fragment: "close match" };
function label(hit) {
  if (hit.match === "exact") return hit.tied ? "exact match, one of several" : "exact match";
  return hit.match === "similar" ? "similar words" : `${FITS[hit.match] || "match"}: ${hit.how}`;
}

// The engine the visitor chose last on this site (a twin page's switch, or a twin's result),
// by its name: search opens its copy of a message both engines print.
const ENGINE_KEY = "errorkb-engine";
function chosenEngine() {
  try {
    return localStorage.getItem(ENGINE_KEY);
  } catch {
    return null;
  }
}
function remember(a, name) {
  a.dataset.engine = name;
  a.addEventListener("click", () => {
    try {
      localStorage.setItem(ENGINE_KEY, name);
    } catch { /* storage off */ }
  });
}

function errorHit(hit) {
  const values = Object.entries(hit.values).flatMap(([k, v]) => [el("code", "", k), " = ", el("mark", "", v), " "]);
  const a = link(hit.url, hit.title, el("span", "exc", hit.exception), ` · ${hit.project} · ${label(hit)}`,
    ...(hit.wording ? [el("span", "hit-wording", ` · ${hit.wording}`)] : []),
    // An old wording: the check that took over (its page answers on this one), or the release
    // that no longer refuses it.
    ...(hit.today ? [el("span", "hit-wording", " · today: ", el("strong", "", hit.today.title))] : []),
    ...(hit.upgrade ? [el("span", "hit-wording", ` · not printed since ${hit.upgrade}`)] : []),
    el("span", "hit-summary", ...(values.length ? values : [hit.summary])));
  a.dataset.match = hit.match; // Enter opens it unchosen only when it is exact or partial
  if (hit.also?.length) remember(a, hit.project);
  if (hit.followed_by) {
    // The wrapper's line the paste shows after this error: named, not opened
    a.append(el("span", "hit-wording", " · then: ", el("strong", "", hit.followed_by.title), ", which only says this error happened"));
  }
  return a;
}

// One message two projects print: its result, then, set under it, a link to each other
// project's page of the same check.
function alsoHit(other) {
  const a = link(other.url, `Also printed by ${other.project}`, "the same message, from the same code: open it if you run ", other.project);
  a.classList.add("also-hit");
  remember(a, other.project);
  return a;
}

const errorHits = (hit) => [errorHit(hit), ...(hit.also || []).map(alsoHit)];

// Words too common to be worth a highlight in Pagefind's excerpts.
const STOP = new Set(("a an and are as at be but by for from has have if in into is it its of on or " +
  "so than that the their then there these this to was were when which while will with").split(" "));

// Pagefind's excerpt is HTML with <mark>: read in an inert document, only text and marks are kept.
function pageHit(hit) {
  const body = new DOMParser().parseFromString(hit.excerpt, "text/html").body;
  const parts = [...body.childNodes].map((n) =>
    n.nodeName === "MARK" && !STOP.has(n.textContent.trim().toLowerCase()) ? el("mark", "", n.textContent) : n.textContent);
  return link(hit.url, hit.meta.title || hit.url, el("span", "hit-summary", ...parts));
}

function group(title, links) {
  const heading = el("span", "search-heading", title);
  heading.setAttribute("aria-hidden", "true"); // the group's label says it
  const node = el("div", "search-group", heading, ...links);
  node.setAttribute("role", "group");
  node.setAttribute("aria-label", title);
  return node;
}

// Tier-1 results as soon as they are ready; Pagefind's (pages === null until then) after
// them, without the pages tier 1 already shows. A listbox holds options only (in labelled
// groups): the report link follows it, and "nothing found" is a status.
function render(box, errors, pages, report) {
  const fits = errors.filter((h) => h.match !== "similar");
  const shown = new Set(errors.map((h) => h.url.split("?")[0]));
  const others = (pages || []).filter((p) => !shown.has(new URL(p.url, location.href).pathname));
  const groups = [["Matching errors", fits.flatMap(errorHits)], ["Pages", others.map(pageHit)],
    ["Similar errors", errors.filter((h) => h.match === "similar").map(errorHit)]]
    .filter(([, links]) => links.length)
    .map(([title, links]) => group(title, links));
  const parts = [];
  if (groups.length) {
    const list = el("div", "search-list", ...groups);
    list.setAttribute("role", "listbox");
    list.setAttribute("aria-label", "Search results");
    parts.push(list);
  }
  if (report && pages !== null) {
    const a = el("a", "search-report", "Not here? Report this error");
    Object.assign(a, { href: report, rel: "noopener" });
    parts.push(el("p", "muted", a));
  }
  if (!parts.length && pages === null) return; // nothing yet: wait for the pages
  const none = el("p", "muted", "No matching error or page.");
  none.setAttribute("role", "status");
  // The hit chosen by arrow keys stays chosen when the pages arrive.
  const chosen = box.active >= 0 ? hits(box)[box.active]?.href : null;
  box.results.replaceChildren(...(parts.length ? parts : [none]));
  const links = hits(box);
  links.forEach((a, i) => {
    Object.assign(a, { id: `${box.input.id}-${i}`, role: "option", tabIndex: -1 });
    a.setAttribute("aria-selected", false);
  });
  box.active = chosen ? links.findIndex((a) => a.href === chosen) : -1;
  if (box.active >= 0) {
    links.forEach((a, i) => a.setAttribute("aria-selected", i === box.active));
    box.input.setAttribute("aria-activedescendant", links[box.active].id);
  }
  show(box, box.dismissed !== box.turn); // Pagefind's answer does not reopen a closed list
}

const hits = (box) => [...box.results.querySelectorAll(".search-hit")];

function show(box, open) {
  box.results.hidden = !open;
  box.combo.setAttribute("aria-expanded", open && Boolean(box.results.querySelector("[role=listbox]")));
  if (!open) box.input.removeAttribute("aria-activedescendant");
}

async function run(box) {
  const text = box.input.value;
  const turn = ++box.turn;
  if (box.inline && text.length <= 2000) history.replaceState(null, "", `?${new URLSearchParams({ [box.input.name]: text })}`);
  if (!text.trim()) return show(box, false);
  // Either tier failing leaves the other's results; a later keystroke wins.
  const pages = pageHits(box.form, text).catch(() => []);
  let errors = [];
  let report = null;
  try {
    const index = await errorIndex(box.form);
    const { meta } = await index.context();
    errors = await index.search(text, meta.programs?.[chosenEngine()]?.key ?? null);
    if (!errors.some((h) => h.match !== "similar")) report = await index.reportUrl(text);
  } catch {
    // tier 1 unavailable: the pages alone
  }
  if (turn !== box.turn) return;
  render(box, errors, null, report);
  const found = await pages;
  if (turn === box.turn) render(box, errors, found, report);
}

function onKey(box, event) {
  const links = box.results.hidden ? [] : hits(box);
  const step = { ArrowDown: 1, ArrowUp: -1 }[event.key];
  if (step && links.length) {
    event.preventDefault();
    box.active = (Math.max(box.active, step > 0 ? -1 : 0) + step + links.length) % links.length;
    links.forEach((a, i) => a.setAttribute("aria-selected", i === box.active));
    box.input.setAttribute("aria-activedescendant", links[box.active].id);
    links[box.active].scrollIntoView({ block: "nearest" });
  } else if (event.key === "Enter" && !event.shiftKey) {
    event.preventDefault(); // Shift+Enter adds a line; Enter opens the chosen hit, or the
    // first when it is an exact or partial match (never a guess), else the search page
    const sure = ["exact", "partial"].includes(links[0]?.dataset.match);
    if (box.active >= 0 || sure) location.href = links[Math.max(box.active, 0)].href;
    else box.form.requestSubmit();
  } else if (event.key === "Escape" && !box.inline) {
    box.dismissed = box.turn; // closed until the text changes
    box.active = -1;
    show(box, false);
  }
}

function initBox(form) {
  const input = form.querySelector("textarea");
  form.insertAdjacentHTML("beforeend", '<div class="search-results" data-search-results hidden></div>'); // empty without JavaScript
  const results = form.querySelector("[data-search-results]");
  const box = { form, input, results, active: -1, turn: 0, inline: form.hasAttribute("data-search-inline") };
  results.id = `${input.id}-results`;
  // A textarea (a paste keeps its line breaks) cannot be a combobox: it sits in one (ARIA
  // 1.1's pattern), a text box pointing at the option chosen.
  const focused = document.activeElement === input;
  box.combo = el("div", "search-combo");
  input.replaceWith(box.combo);
  box.combo.append(input);
  if (focused) input.focus();
  const set = (node, attrs) => Object.entries(attrs).forEach(([k, v]) => node.setAttribute(k, v));
  set(box.combo, { role: "combobox", "aria-label": "Search", "aria-haspopup": "listbox", "aria-controls": results.id });
  set(input, { "aria-autocomplete": "list", "aria-controls": results.id });
  // "/" focuses the big box: said where there is a keyboard.
  if (form.hasAttribute("data-search-primary") && matchMedia("(pointer: fine)").matches) input.placeholder += " (press /)";
  show(box, false);
  let timer;
  input.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(run, 50, box);
  });
  input.addEventListener("keydown", (event) => onKey(box, event));
  input.addEventListener("focus", () => results.childElementCount && show(box, true));
  form.addEventListener("focusout", (event) => box.inline || form.contains(event.relatedTarget) || show(box, false));
  if (box.inline) {
    input.value = new URLSearchParams(location.search).get(input.name) || "";
    if (input.value) run(box);
  }
}

// "/" focuses the page's main search box, unless one is typing somewhere.
document.addEventListener("keydown", (event) => {
  if (event.key !== "/" || event.ctrlKey || event.metaKey || event.altKey) return;
  if (event.target.closest("input, textarea, select, [contenteditable]")) return;
  event.preventDefault();
  // The page's own big box (home, search) before the header's: a selector list would
  // return whichever comes first in the document, the header's.
  const box = document.querySelector("[data-search-primary] textarea") || document.querySelector("[data-search] textarea");
  box?.focus();
});

document.querySelectorAll("[data-search]").forEach(initBox);
// An error page with values in its address (a search result's link): case.js fills them in.
if (location.search && document.querySelector("#message")) import("./case.js");
