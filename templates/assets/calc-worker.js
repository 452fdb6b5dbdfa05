// Module worker: Pyodide runs the calculator modules (calc.py and its siblings, each served byte
// for byte). In: {init: {modules: {name: url}, pyodide: folder url}}, {id, request}; a request
// names its module (`module`, default "calc"), whose run(request) answers it.
// Out: {progress: text}, {ready: ms, fetched: urls}, {id, answer}, {failed: text}.

const started = performance.now();
let calcRun = null;
let failed = null;
let booting = null;

const say = (progress) => postMessage({ progress });

function fail(error) {
  failed = explain(error);
  postMessage({ failed });
}

function explain(error) {
  const text = String((error && (error.message || error.reason)) || error || "unknown error");
  if (/unsafe-eval|Content.Security.Policy|blocked by CSP|Refused to compile/i.test(text)) {
    return (
      "This page's Content-Security-Policy does not allow WebAssembly, so the calculator " +
      "cannot run here; it needs script-src 'self' 'wasm-unsafe-eval'. The tables below " +
      `still apply. (${text})`
    );
  }
  return `The calculator could not start: ${text}`;
}

// An empty module: refused exactly when the CSP refuses WebAssembly, fast and clearly.
const EMPTY_WASM = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]);

function fetchText(url) {
  const text = fetch(url).then((r) => {
    if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
    return r.text();
  });
  text.catch(() => {}); // awaited later; avoid an unhandled rejection meanwhile
  return text;
}

async function boot(modules, pyodideUrl) {
  say("Checking WebAssembly…");
  if (typeof WebAssembly !== "object") throw new Error("this browser has no WebAssembly");
  await WebAssembly.compile(EMPTY_WASM);
  say("Loading the Python runtime (1/3)…");
  const names = Object.keys(modules);
  const sources = names.map((name) => fetchText(modules[name]));
  const { loadPyodide } = await import(`${pyodideUrl}pyodide.mjs`);
  say("Starting Python (2/3)…");
  const pyodide = await loadPyodide({
    indexURL: pyodideUrl,
    packages: [],
    stdout: () => {},
    stderr: () => {},
  });
  say("Loading the calculator (3/3)…");
  pyodide.FS.mkdirTree("/errorkb");
  // Each as errorkb_<name>, a name no module of Python's own takes.
  for (const [i, name] of names.entries()) {
    pyodide.FS.writeFile(`/errorkb/errorkb_${name}.py`, await sources[i]);
  }
  pyodide.runPython(
    [
      "import importlib, json, sys",
      "sys.path.insert(0, '/errorkb')",
      `modules = {n: importlib.import_module('errorkb_' + n) for n in ${JSON.stringify(names)}}`,
      "def errorkb_answer(text):",
      "    request = json.loads(text)",
      "    module = modules.get(request.pop('module', 'calc'))",
      "    if not hasattr(module, 'run'):  # none, or the protocol the calculators import",
      "        return json.dumps({'error': 'no such calculator module'})",
      "    return json.dumps(module.run(request))",
    ].join("\n"),
  );
  const answer = pyodide.globals.get("errorkb_answer");
  calcRun = (request) => JSON.parse(answer(JSON.stringify(request)));
  const fetched = performance.getEntriesByType("resource").map((entry) => entry.name);
  postMessage({ ready: Math.round(performance.now() - started), fetched });
}

self.addEventListener("unhandledrejection", (event) => fail(event.reason));
self.addEventListener("error", (event) => fail(event.error || event.message));

self.addEventListener("message", async ({ data }) => {
  if (data.init) {
    booting ??= boot(data.init.modules, data.init.pyodide).catch(fail);
    return;
  }
  await booting;
  if (failed) return; // the failure itself was reported once
  let answer;
  try {
    answer = calcRun(data.request);
  } catch (error) {
    answer = { error: `calculator error: ${error.message || error}` };
  }
  postMessage({ id: data.id, answer });
});
