// Site-wide behaviour: theme toggle, copy-link buttons, engines and twins, offline.
// A module script: deferred, never blocks rendering.

const root = document.documentElement;
const THEME_KEY = "errorkb-theme";

function systemTheme() {
  return matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
}

function applyTheme(theme) {
  root.dataset.theme = theme;
  for (const button of document.querySelectorAll("[data-theme-toggle]")) {
    const next = theme === "dark" ? "light" : "dark";
    button.setAttribute("aria-label", `Switch to ${next} mode`);
    button.title = `Switch to ${next} mode`;
  }
}

function initTheme() {
  // Added only now: without JavaScript it would do nothing.
  document.querySelector("header.topbar")?.insertAdjacentHTML("beforeend", '<button type="button" class="theme-toggle" data-theme-toggle><span aria-hidden="true">◐</span></button>');
  let saved = null;
  try { saved = localStorage.getItem(THEME_KEY); } catch { /* storage may be blocked */ }
  applyTheme(saved === "dark" || saved === "light" ? saved : systemTheme());
  for (const button of document.querySelectorAll("[data-theme-toggle]")) {
    button.addEventListener("click", () => {
      const theme = root.dataset.theme === "dark" ? "light" : "dark";
      applyTheme(theme);
      try { localStorage.setItem(THEME_KEY, theme); } catch { /* not persisted */ }
    });
  }
}

async function copyText(text, button) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // Clipboard API refused (e.g. not a secure context): fall back to a selection copy.
    const area = Object.assign(document.createElement("textarea"), { value: text });
    document.body.append(area);
    area.select();
    document.execCommand("copy");
    area.remove();
  }
  button.classList.add("copied");
  setTimeout(() => button.classList.remove("copied"), 1500);
}

function initCopyButtons() {
  // A copy button works only with JavaScript, so JavaScript adds it (which also keeps a
  // button per section, and the message's, out of every page's HTML).
  for (const anchor of document.querySelectorAll("section.section > h2 > a.anchor")) {
    const button = Object.assign(document.createElement("button"), {
      type: "button",
      className: "copy-link",
      title: "Copy link",
    });
    button.dataset.copyLink = anchor.getAttribute("href");
    button.setAttribute("aria-label", `Copy link to ${anchor.textContent}`);
    anchor.after(button);
  }
  document.querySelector("#message > .message-head")?.insertAdjacentHTML("beforeend", '<button type="button" class="copy-link" data-copy-text aria-label="Copy message template" title="Copy message">Copy</button>');
  document.addEventListener("click", (event) => {
    const button = event.target.closest("[data-copy-link], [data-copy-text]");
    if (!button) return;
    if (button.dataset.copyLink) {
      const url = new URL(button.dataset.copyLink, location.href);
      url.search = "";
      history.replaceState(null, "", button.dataset.copyLink);
      copyText(url.href, button);
    } else {
      // An empty data-copy-text copies its section's message as the page shows it: the page
      // holds the template once.
      const box = button.closest("section");
      const shown = () => `${box.querySelector(".exc").textContent} ${box.querySelector("code").textContent}`;
      copyText(button.dataset.copyText || shown(), button);
    }
  });
}

// Keeps third-party files (Pyodide) and the assets for the next visit, and seen pages for
// offline use: the service worker named by this script's tag (urls.service_worker).
function initOffline() {
  const script = document.querySelector("script[data-service-worker]");
  if (!script || !("serviceWorker" in navigator) || !/^https?:$/.test(location.protocol)) return;
  const first = !navigator.serviceWorker.controller; // this page did not pass through it
  navigator.serviceWorker.register(script.dataset.serviceWorker).catch(() => { /* the site works without it */ });
  if (!first) return;
  // Once it controls the page, what the page fetched so far is listed; the rest passes through it.
  navigator.serviceWorker.addEventListener("controllerchange", () => {
    const urls = [location.href, ...performance.getEntriesByType("resource").map((e) => e.name)];
    navigator.serviceWorker.controller?.postMessage({ keep: urls });
  }, { once: true });
}

// A stack record's advice per engine: the engine a search result came from (?engine=vllm)
// first, in the page and in its table of contents, with a line saying why.
function initEngines() {
  const engines = document.querySelector("[data-engines]");
  const key = new URLSearchParams(location.search).get("engine");
  const mine = key && engines?.querySelector(`:scope > section[id="in-${CSS.escape(key)}"]`);
  if (!mine) return;
  const name = mine.querySelector("h2 a").textContent.replace(/^In /, "");
  const note = Object.assign(document.createElement("p"), { className: "note engine-first" });
  note.textContent = `Your error came from ${name}: its advice first.`;
  engines.prepend(note, mine);
  // Its first piece of advice on the first screen, under the message (and Your case).
  const first = mine.querySelector("ol.solutions > li");
  if (first) {
    const top = Object.assign(document.createElement("div"), { className: "your-case engine-top" });
    const more = Object.assign(document.createElement("a"), { href: `#in-${key}`, textContent: `All of ${name}'s advice` });
    top.append(Object.assign(document.createElement("h2"), { textContent: `In ${name}` }));
    top.append(...[...first.cloneNode(true).childNodes], " ", more);
    document.querySelector("#your-case")?.after(top);
  }
  const entry = document.querySelector(`.toc a[href="#in-${CSS.escape(key)}"]`)?.parentElement;
  const head = document.querySelector('.toc a[href^="#in-"]')?.parentElement;
  if (entry && head && entry !== head) head.before(entry);
}

initTheme();
initCopyButtons();
initEngines();

// A message two engines print: the switch between their pages keeps the values in the
// address, and remembers the engine chosen (search opens its copy first from then on).
function initTwins() {
  let chosen = null;
  try {
    chosen = localStorage.getItem("errorkb-engine");
  } catch { /* storage off */ }
  for (const a of document.querySelectorAll("[data-engine-switch] a")) {
    const engine = a.textContent; // the engine's name, as search remembers it
    // A shared link to the other engine's copy: the visitor's own engine's page, pointed at.
    if (chosen && engine === chosen && !a.hasAttribute("aria-current")) {
      a.classList.add("engine-yours");
      a.title = `You chose ${chosen} last: its page`;
    }
    if (!a.hasAttribute("aria-current")) a.href = a.pathname + location.search;
    a.addEventListener("click", () => {
      try {
        localStorage.setItem("errorkb-engine", engine);
      } catch { /* storage off: the switch still links */ }
    });
  }
}
initTwins();
initOffline();
