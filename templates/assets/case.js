// An error page opened with values in its address (a search result's link, ?v= the
// release the paste names): loaded by search.js only then, so that a page opened without
// values loads none of it. The message as printed, Your case, what passes (try.js).

function el(tag, className, ...children) {
  const node = document.createElement(tag);
  node.className = className;
  node.append(...children);
  return node;
}

// An error page opened from a search result: the pasted message as it was printed (the
// values in its placeholders; Copy copies that), the placeholders' glossary (folded below it),
// then Your case: what the values mean for the check, and what to change.
// An old wording's `{needed_memory_div_GiB_bytes}` takes the page's name (template.page_name).
const pageName = (name) => name.split(/_(?:div|times|pow|mod|mul|plus|minus)_/)[0];
function yourValues(box) {
  const params = new URLSearchParams(location.search);
  const vars = [...document.querySelectorAll("#message code.message var.ph")];
  const named = new Map([...params].map(([k, v]) => [pageName(k), v]));
  const value = (name) => params.get(name) ?? named.get(pageName(name)) ?? null;
  const renames = JSON.parse(box.dataset.renames || "{}"); // an older wording's names: its values too
  const names = new Set([...vars.map((v) => pageName(v.dataset.param)), ...Object.keys(renames)]);
  const mine = [...params].filter(([name]) => names.has(pageName(name)));
  if (!mine.length) return;
  for (const v of vars) {
    const given = value(v.dataset.param);
    if (given === null) continue;
    v.replaceChildren(el("mark", "", given));
    v.title = `{${v.dataset.param}}`;
  }
  const message = document.querySelector("#message");
  const copy = message.querySelector("[data-copy-text]");
  if (copy) {
    const exc = message.querySelector(".message-head .exc").textContent;
    const printed = message.querySelector("code.message").cloneNode(true);
    printed.querySelectorAll("var.ph:not(:has(mark))").forEach((v) => v.remove()); // not in the paste
    copy.dataset.copyText = `${exc} ${printed.textContent}`;
    copy.setAttribute("aria-label", "Copy the message with your values");
  }
  box.querySelector("dl").append(...mine.flatMap(([k, v]) => [el("dt", "", k), el("dd", "", el("mark", "", v))]));
  box.hidden = false;
  // The summary says in general what the answer says for these values: after it.
  const lead = document.querySelector(".error-top > p.lead");
  if (lead) box.parentElement.append(lead);
  const given = { ...Object.fromEntries(mine.map(([k, v]) => [pageName(k), v])), gpus_per_node: params.get("gpus_per_node") };
  // An older wording's placeholders under the names the tests read (answer.py's renamed).
  for (const [old, name] of Object.entries(renames)) {
    if (old in given && !(name in given)) given[name] = given[old];
  }
  settled().then(async () => {
    if ("answering" in box.dataset) return; // the page's own section answers for these values
    const tested = box.dataset.tests && (await tellTests(box, given)); // the condition tested
    const passes = !tested && box.dataset.passes && (await tellWhatPasses(box, given));
    if (tested || passes) box.dataset.answering = "case"; // no section's second answer
    else whyNot(box, given);
  });
}

// A section of the page that may answer for the values itself (the divisor calculator, the
// memory estimate): its script claims the answer (box.dataset.answering) or not, then marks
// its root settled. Your case decides once each has: theirs, else the condition's tests. A
// section whose script never settles (it failed to load) is waited for a few seconds. (The
// full calculator's page has no tests nor passes here: it answers alone, as it always did.)
const settled = () => Promise.all([...document.querySelectorAll("[data-divisors],[data-memory]")]
  .filter((s) => !("settled" in s.dataset))
  .map((s) => new Promise((done) => {
    s.addEventListener("case:settled", done);
    setTimeout(done, 4000);
  })));

// The derived condition tested on the values (answer.py's _tests): whether the check fails
// with them, and the values of the settings it compares that pass.
async function tellTests(box, values) {
  const { testsAnswer } = await import("./tests.js"); // only where #case-tests is
  const groups = JSON.parse(box.dataset.tests);
  const said = testsAnswer(groups, values, await members());
  if (!said) return false;
  const out = box.querySelector("[data-case-try]");
  out.replaceChildren(el("strong", "", ...flags(said.verdict)), ...(said.change ? [" ", ...flags(said.change)] : []));
  out.hidden = false;
  return true;
}

// A flag in the answer as code, never cut at its hyphens on a phone.
function flags(t) {
  return t.split(/(--[\w-]+)/).map((p, i) => (i % 2 ? el("code", "", p) : p));
}

// A membership test's side (members.js): only where the page's tests have one.
const members = () => document.getElementById("case-members") && import("./members.js");

// No section's answer, nothing computed from the values: the page says why, in one line.
async function whyNot(box, values) {
  if ("answering" in box.dataset || !box.querySelector("[data-case-try]").hidden) return;
  if (!box.dataset.tests && document.querySelector("[data-calc]")) return; // it answers on input
  const tests = JSON.parse(box.dataset.tests || "[]").flat();
  const names = tests.flatMap((t) => [t.left, t.right]).flatMap((s) => (s && typeof s === "object" ? Object.values(s) : [s]));
  const given = new Set(Object.keys(values)); // the page's names of the paste's values
  let why = !tests.length ? box.dataset.why : names.some((n) => given.has(n))
    ? "the values its condition compares settle nothing in your paste (one missing, not numbers, or equal once rounded)"
    : "the wording you pasted prints none of the values its condition compares";
  why = (await members())?.cutShort(tests, values) || why;
  const text = `No answer computed from these values: ${why || "the site has no condition of this check to test the values on"}.`;
  box.querySelector("[data-case-answer]").replaceChildren(el("p", "case-source", text));
}

// The values of each setting that would pass the check, computed from the paste's (try.js):
// the nearest either side of the user's, a GPU count within one node (8 assumed until given).
async function tellWhatPasses(box, values) {
  const { valuesToTry, written, nodeOf } = await import("./try.js");
  const lines = [];
  for (const item of JSON.parse(box.dataset.passes)) {
    const found = valuesToTry(item, values);
    if (!found.length) continue;
    const codes = found.flatMap((v, i) => [i ? " or " : "", el("code", "", written(item, v))]);
    const node = nodeOf(item, values);
    const within = node ? "; within " + node : "";
    const what = item.kind ? ` (${item.kind}${within})` : "";
    lines.push(el("span", "", lines.length ? " " : "", "To pass this check: ", ...codes, `${what}.`));
  }
  const out = box.querySelector("[data-case-try]");
  out.replaceChildren(...lines);
  out.hidden = !lines.length;
  return lines.length > 0;
}

// ?v=<release> (a search result names the release the paste names): the message box shows
// the wording that release printed, taken from the History section, so that the values
// fill its placeholders.
const releaseParts = (version) => (String(version).match(/[0-9]+/g) || []).map(Number);
function atOrAfter(a, b) {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i] > b[i];
  return a.length >= b.length;
}
function releaseWording(box) {
  const v = new URLSearchParams(location.search).get("v");
  if (!v || !releaseParts(v).length) return;
  const at = releaseParts(v);
  const printed = (node) => atOrAfter(at, releaseParts(node.dataset.first)) && atOrAfter(releaseParts(node.dataset.last), at);
  if (box.dataset.first && printed(box)) return; // the message is that release's wording
  const wording = [...document.querySelectorAll("#history li[data-first]")].find(printed);
  const code = wording?.querySelector("code.message");
  if (!code) return;
  box.querySelector("code.message").replaceWith(code.cloneNode(true));
  if (wording.dataset.exception) box.querySelector(".message-head .exc").textContent = `${wording.dataset.exception}:`;
  const { first, last } = wording.dataset;
  const releases = first === last ? first : first + " to " + last;
  box.querySelector(".message-head").after(el("p", "muted wording-note", `As ${v} printed it (the wording of ${releases}).`));
}

// Values without ?v=: of the message and its older wordings (the History section), the one
// whose placeholders the values all fill, filling most of them (the shortest of equals);
// the message as it is when none does. Its placeholders without a value are dimmed.
function filledWording(box) {
  const params = new URLSearchParams(location.search);
  if (![...params.keys()].length) return;
  const given = new Set([...params.keys()].map(pageName));
  const fit = (code) => {
    const names = [...code.querySelectorAll("var.ph")].map((v) => pageName(v.dataset.param));
    return names.every((n) => given.has(n)) ? new Set(names).size * 1e6 - code.textContent.length : -1;
  };
  const own = box.querySelector("code.message");
  const best = [own, ...document.querySelectorAll("#history li[data-first] code.message")]
    .reduce((a, b) => (fit(b) > fit(a) ? b : a));
  if (!params.has("v") && best !== own && fit(best) >= 0) {
    own.replaceWith(best.cloneNode(true));
    const exception = best.closest("li")?.dataset.exception;
    if (exception) box.querySelector(".message-head .exc").textContent = `${exception}:`;
  }
  for (const v of box.querySelectorAll("code.message var.ph")) v.classList.toggle("ph-none", !given.has(pageName(v.dataset.param)));
}

document.querySelectorAll("#message").forEach(releaseWording);
document.querySelectorAll("#message").forEach(filledWording);
document.querySelectorAll("[data-your-case]").forEach(yourValues);
